#!/usr/bin/env bash
# The README's test command: install what the tests need when it is missing, then run
# every test: `cargo test --release` (extra arguments passed on), then the Python
# package's tests (tools/python-test.sh: a virtual environment in target/py-venv with the
# packages of python/requirements-test.txt from PyPI, the wheel built and installed, pytest).
#
# The browser test (tests/browser.rs) drives Debian's Chromium through chromedriver
# (packages chromium and chromium-driver, /usr/bin/chromium and /usr/bin/chromedriver);
# they are installed with apt-get when missing (as root, or through sudo). The test
# fails, naming them, when they cannot be had.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
if [ ${#need[@]} -gt 0 ]; then
    echo "tools/test.sh: installing ${need[*]} for the browser test" >&2
    sudo=()
    [ "$(id -u)" = 0 ] || sudo=(sudo)
    if ! { "${sudo[@]}" apt-get install -y -q "${need[@]}" >/dev/null 2>&1 ||
        { "${sudo[@]}" apt-get update -q >/dev/null && "${sudo[@]}" apt-get install -y -q "${need[@]}" >/dev/null; }; }; then
        echo "tools/test.sh: could not install ${need[*]}; the browser test will fail (apt-get install ${need[*]})" >&2
    fi
fi
cargo test --release "$@"
exec tools/python-test.sh
