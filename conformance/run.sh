#!/usr/bin/env bash
# Runs the whole conformance matrix: every scenario × every SDK driver (TypeScript, Python,
# Java) × every wire protocol each SDK offers × every store (memory, SQLite, Redis, MariaDB).
#
#   conformance/run.sh [REPORT]        REPORT: JUnit XML (*.xml) or JSON (*.json) path
#
# Builds what the drivers need first: a Python venv with the SDK (.tools/conformance-venv)
# and the Java driver (mvn test-compile + its classpath). Redis and MariaDB come from
# scripts/services.sh; a store whose service cannot start is skipped with a warning
# (scripts/test-all.sh reports the service failure itself). The Redis store uses
# database 15 and MariaDB the database runlater_conformance, because the runner's Reset
# deletes every queue of the store it runs on.
# The SQLite store gets a new file under .run/conformance each run.
# A Redis Cluster (scripts/services.sh redis-cluster) runs too, for the TypeScript SDK over
# connect-binary only (about 15 s; the store is the same code as redis, so one SDK and one
# protocol are enough to exercise the cluster), in a second report beside REPORT
# (<name>-redis-cluster.<ext>).
# CONFORMANCE_STORES picks stores (default "memory sqlite redis mysql redis-cluster").
# Extra runner flags can be passed in CONFORMANCE_ARGS (e.g. "--sdk ts --scenario run-after").
# CONFORMANCE_BUILT=1 skips building the Java driver and the server (a run just before did).
# CONFORMANCE_SECURE=1 runs every server with auth and TLS (the runner's --secure: a random
# admin token, a random cluster secret, certificates from scripts/test-certs.sh).
# Ends with `N passed, N failed`; exits non-zero if any case failed.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=../scripts/node-env.sh
source scripts/node-env.sh
secure=()
[[ "${CONFORMANCE_SECURE:-0}" == 1 ]] && secure=(--secure)
report="${1:-$root/.run/conformance/report${secure:+-secure}.xml}"
# Stores to run on: any of memory, sqlite, redis, mysql, redis-cluster (default all five).
wanted=" ${CONFORMANCE_STORES:-memory sqlite redis mysql redis-cluster} "
stores=()
[[ "$wanted" == *" memory "* ]] && stores+=(--store memory)
if [[ "$wanted" == *" sqlite "* ]]; then
  sqlite_file="$root/.run/conformance/runlater.db"
  mkdir -p "$(dirname "$sqlite_file")"
  rm -f "$sqlite_file" "$sqlite_file"-*
  stores+=(--store "sqlite:$sqlite_file")
fi

say() { echo "conformance: $*" >&2; }

# ---- stores
if [[ "$wanted" != *" redis "* ]]; then
  :
elif out="$(scripts/services.sh redis 2>/dev/null)"; then
  eval "$out"
  url="${RUNLATER_TEST_REDIS_URL%/}"
  [[ "$url" =~ ^redis://[^/]+$ ]] && url="$url/15"
  stores+=(--store "$url")
else
  say "WARNING: Redis did not start (scripts/services.sh redis); the redis store is skipped"
fi
if [[ "$wanted" != *" mysql "* ]]; then
  :
elif out="$(scripts/services.sh mariadb 2>/dev/null)"; then
  eval "$out"
  stores+=(--store "${RUNLATER_TEST_MYSQL_URL%/*}/runlater_conformance")
else
  say "WARNING: MariaDB did not start (scripts/services.sh mariadb); the mysql store is skipped"
fi

cluster_url=""
if [[ "$wanted" != *" redis-cluster "* ]]; then
  :
elif out="$(scripts/services.sh redis-cluster 2>/dev/null)"; then
  eval "$out"
  cluster_url="$RUNLATER_TEST_REDIS_CLUSTER_URL"
else
  say "WARNING: the Redis Cluster did not start (scripts/services.sh redis-cluster); it is skipped"
fi

# ---- Python driver: a venv with the SDK installed from this checkout (editable)
venv="$root/.tools/conformance-venv"
stamp="$venv/.sdk-pyproject"
if ! cmp -s sdk-python/pyproject.toml "$stamp" 2>/dev/null; then
  say "installing the Python SDK into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv" &&
    "$venv/bin/pip" install --quiet --disable-pip-version-check -e ./sdk-python &&
    cp sdk-python/pyproject.toml "$stamp" || say "WARNING: the Python SDK did not install; python cases will fail"
fi
export RUNLATER_CONFORMANCE_PYTHON="$venv/bin/python"

# ---- Java driver: compiled with the SDK's own build, run from its test classes
# (CONFORMANCE_BUILT=1: a run just before built it and the server, as in scripts/test-all.sh)
if [[ "${CONFORMANCE_BUILT:-0}" == 1 ]]; then
  say "using the Java driver and the server as the last run built them (CONFORMANCE_BUILT=1)"
else
  say "building the Java driver (mvn test-compile)"
  (
    cd sdk-java &&
      { mvn -B -q -Dstyle.color=never -o test-compile 2>/dev/null || mvn -B -q -Dstyle.color=never test-compile; } &&
      { mvn -B -q -Dstyle.color=never -o dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/conformance-classpath.txt >/dev/null 2>&1 ||
        mvn -B -q -Dstyle.color=never dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/conformance-classpath.txt >/dev/null; }
  ) || say "WARNING: the Java driver did not build; java cases will fail"

  # ---- the server runs from its build (scripts/runlater → server/dist): bring it up to date
  say "building the server (scripts/build.mjs)"
  node scripts/build.mjs || say "WARNING: the build failed; the server may run stale or not at all"
fi

# ---- run
runner=(node node_modules/tsx/dist/cli.mjs conformance/runner/main.ts)
status=0
if [ ${#stores[@]} -gt 0 ]; then
  # shellcheck disable=SC2086
  "${runner[@]}" "${stores[@]}" "${secure[@]}" --report "$report" ${CONFORMANCE_ARGS:-} || status=1
fi
if [ -n "$cluster_url" ]; then
  # shellcheck disable=SC2086
  "${runner[@]}" --store "$cluster_url" --sdk ts --protocol connect-binary "${secure[@]}" \
    --report "${report%.*}-redis-cluster.${report##*.}" ${CONFORMANCE_ARGS:-} || status=1
fi
exit "$status"
