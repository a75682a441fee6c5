#!/usr/bin/env bash
# The Python package's tests (python/tests): build its wheel with maturin, install it in a
# virtual environment with what the tests need (python/requirements-test.txt, from PyPI),
# and run pytest against the release binary, which the differential tests compare with.
# tools/test.sh runs this after the Rust tests. The environment is target/py-venv
# (OSTLEDB_VENV to change it), made with $PYTHON (default python3, 3.11 or later).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=${OSTLEDB_VENV:-target/py-venv}
if [ ! -x "$venv/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r python/requirements-test.txt
rm -rf target/wheels
"$venv/bin/maturin" build --release -m python/Cargo.toml -o target/wheels
wheel=$(ls target/wheels/ostledb-*.whl)
echo "tools/python-test.sh: $wheel, $(stat -c %s "$wheel") bytes"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel"
cargo build --release --bin ostledb
OSTLEDB_BIN=target/release/ostledb "$venv/bin/python" -m pytest -q python/tests
