"""The type stubs say what the extension module does: mypy's stubtest compares every
name, signature and default of ``ostledb/_ostledb.pyi`` with the compiled module, and
mypy checks the package in strict mode."""

import subprocess
import sys


def run(*args):
    r = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_stubs_match_the_extension_module():
    assert "Success" in run("mypy.stubtest", "ostledb._ostledb")


def test_the_package_type_checks_strictly():
    assert "Success" in run("mypy", "--strict", "-p", "ostledb")
