"""The README's Python example runs, here on the 4x4 game's database (its phase (4,4)
exists there too, with 901,350 positions: the example's sample of a million is made
half a million, as a sample is at most its phase), and draws its plot."""

import os
import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def example():
    text = README.read_text()
    m = re.search(r"<!-- python-example[^>]*-->\n```python\n(.*?)```", text, re.S)
    assert m, "README.md lost its Python example"
    return m.group(1)


def test_the_readme_example_runs_and_draws(db44_path, tmp_path):
    (tmp_path / "ostle.db").symlink_to(db44_path)
    script = tmp_path / "example.py"
    text = example()
    assert "db.sample((4, 4), 1_000_000, seed=1)" in text
    script.write_text(text.replace("1_000_000, seed=1", "500_000, seed=1"))
    r = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env={**os.environ, "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert re.match(r"won \d+\.\d%, lost \d+\.\d%, drawn \d+\.\d%; longest win \d+ plies", r.stdout), r.stdout
    png = tmp_path / "win-distances.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
