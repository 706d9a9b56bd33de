#!/usr/bin/env bash
# CI for the Python SDK. Run from anywhere (CI calls it from the repo root):
#
#   sdk-python/ci.sh path/to/junit.xml
#
# 1. checks that src/runlater/_gen matches proto/ (scripts/generate.sh, pinned protoc);
# 2. builds the sdist and the wheel (python -m build) in a fresh venv under a temp dir and
#    installs the wheel with test deps (tests/test_package.py installs it once more, into a
#    clean venv with the lowest dependency versions allowed);
# 3. lints: ruff check, ruff format --check, mypy --strict;
# 4. runs pytest against the installed wheel (not src/), which starts a real server
#    through scripts/runlater, and writes the JUnit report to $1.
# Needs only python3 (>= 3.10) and PyPI; exits non-zero on any failure.
set -euo pipefail

junit="${1:?usage: sdk-python/ci.sh JUNIT_XML}"
mkdir -p "$(dirname "$junit")"
junit="$(cd "$(dirname "$junit")" && pwd)/$(basename "$junit")"
sdk="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

work="$(mktemp -d "${TMPDIR:-/tmp}/runlater-sdk-python-ci.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1

echo "== generated code is up to date"
cp -r "$sdk/src/runlater/_gen" "$work/gen-before"
RUNLATER_CODEGEN_VENV="$work/codegen-venv" "$sdk/scripts/generate.sh"
find "$sdk/src/runlater/_gen" -name __pycache__ -prune -exec rm -rf {} +
find "$work/gen-before" -name __pycache__ -prune -exec rm -rf {} +
if ! diff -r "$work/gen-before" "$sdk/src/runlater/_gen"; then
  echo "src/runlater/_gen is stale: run sdk-python/scripts/generate.sh and commit the result" >&2
  exit 1
fi

echo "== build the sdist and the wheel"
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip install --quiet build==1.6.1
# No --wheel: the wheel is built from the sdist, which proves the sdist is complete.
"$py" -m build --outdir "$work/dist" "$sdk"
wheel="$(ls "$work"/dist/runlater-*.whl)"
export RUNLATER_DIST="$work/dist"

echo "== install $(basename "$wheel") with test dependencies"
"$py" -m pip install --quiet "${wheel}[test]"

status=0
echo "== lint: ruff and mypy (strict)"
"$py" -m pip install --quiet ruff==0.17.6 mypy==2.4.1 types-protobuf==7.35.1.20260906
cd "$sdk"
"$py" -m ruff check --no-cache src tests examples bench || status=1
"$py" -m ruff format --no-cache --check src tests examples bench || status=1
"$py" -m mypy --cache-dir "$work/mypy-cache" || status=1

# pytest last, so its summary line closes the output.
echo "== pytest against the installed package"
# Prove the import resolves to the venv's site-packages, not to src/.
"$py" -c 'import runlater, sys; f = runlater.__file__; print("runlater from", f); sys.exit("site-packages" not in f)'
"$py" -m pytest -p no:cacheprovider --junitxml="$junit" tests || status=$?
exit "$status"
