#!/usr/bin/env bash
# The README's test command: install what the tests need when it is missing, then run
# every test: `cargo test --release` (extra arguments passed on), then the Python
# package's tests (tools/python-test.sh: a virtual environment in target/py-venv with the
# packages of python/requirements-test.txt from PyPI, the wheel built and installed, pytest).
#
# The browser test (tests/browser.rs) drives Debian's Chromium through chromedriver
# (packages chromium and chromium-driver, /usr/bin/chromium and /usr/bin/chromedriver);
# they are installed with apt-get when missing (as root, or through sudo), as is GNU
# time (package time) for the test of tools/whole-game.sh. A test fails, naming them,
# when they cannot be had.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

need=()
# GNU time, which tools/whole-game.sh (and its test in tests/cli.rs) times stages with.
[ -x /usr/bin/time ] || need+=(time)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
if [ ${#need[@]} -gt 0 ]; then
    echo "tools/test.sh: installing ${need[*]} for the tests" >&2
    sudo=()
    [ "$(id -u)" = 0 ] || sudo=(sudo)
    if ! { "${sudo[@]}" apt-get install -y -q "${need[@]}" >/dev/null 2>&1 ||
        { "${sudo[@]}" apt-get update -q >/dev/null && "${sudo[@]}" apt-get install -y -q "${need[@]}" >/dev/null; }; }; then
        echo "tools/test.sh: could not install ${need[*]}; the browser test or the whole-game script's will fail (apt-get install ${need[*]})" >&2
    fi
fi
cargo test --release "$@"
exec tools/python-test.sh
