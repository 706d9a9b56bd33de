#!/usr/bin/env bash
# Runs every check and test suite of the repository, from nothing:
#   Node 24 (if the machine's is older), npm ci, Redis, a Redis Cluster and MariaDB (apt, loopback),
#   proto lint/format, generated-code drift, typecheck, the build (SDK, server, dashboard),
#   Biome (format, lint, import boundaries), the TypeScript suites (server, stores, SDK, CLI,
#   the dashboard in Chromium, the packed SDK), the Python SDK suite, the Java SDK suite,
#   the conformance matrix, and the matrix again with auth and TLS on (memory store).
# Prints a table and a final line `N passed, N failed`; exits non-zero if anything failed.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=node-env.sh
source scripts/node-env.sh
reports="$root/.run/reports"
rm -rf "$reports"
mkdir -p "$reports"
checks="$reports/checks.txt"
: >"$checks"

step() { printf '\n=== %s\n' "$*"; }
check() {
  local name="$1"
  shift
  step "$name"
  if "$@"; then echo "pass $name" >>"$checks"; else echo "fail $name" >>"$checks"; fi
}

step "install (npm ci)"
if [ "${CI:-}" = "true" ] || [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund || { echo "npm ci failed"; echo "0 passed, 1 failed"; exit 1; }
fi

step "services (Redis, a Redis Cluster, MariaDB on loopback; Chromium for the dashboard's browser tests)"
if services="$(scripts/services.sh redis redis-cluster mariadb chromium)"; then
  eval "$services"
  echo "pass services" >>"$checks"
else
  echo "fail services (scripts/services.sh)" >>"$checks"
fi

check "buf lint" npx buf lint
check "buf format" npx buf format -d --exit-code
check "generated TypeScript is current" bash -c 'npx buf generate && test -z "$(git status --porcelain -- sdk-ts/src/gen server/src/gen)" || { git status --short -- sdk-ts/src/gen server/src/gen; false; }'
check "typecheck" npx tsc -p tsconfig.json
check "typecheck the dashboard (server/ui)" npx tsc -p server/ui/tsconfig.json
check "build: sdk-ts/dist and server/dist (scripts/build.mjs)" node scripts/build.mjs
check "dashboard builds within its size budget (npm run build:ui)" npm run --silent build:ui
check "format, lint and import boundaries (biome ci)" npx biome ci .
check "import boundaries match docs/architecture.md (scripts/layers.mjs)" node scripts/layers.mjs --check

step "TypeScript suites (vitest)"
mkdir -p "$reports/ts"
npx vitest run --reporter=default --reporter=json --outputFile.json="$reports/ts/vitest.json"

if [ -f sdk-python/ci.sh ]; then
  step "Python SDK (sdk-python/ci.sh)"
  mkdir -p "$reports/sdk-python"
  bash sdk-python/ci.sh "$reports/sdk-python/junit.xml" || [ -s "$reports/sdk-python/junit.xml" ] || echo "fail sdk-python (no report)" >>"$checks"
fi

if [ -f sdk-java/ci.sh ]; then
  step "Java SDK (sdk-java/ci.sh)"
  mkdir -p "$reports/sdk-java"
  bash sdk-java/ci.sh
  cp sdk-java/target/surefire-reports/TEST-*.xml "$reports/sdk-java/" 2>/dev/null || echo "fail sdk-java (no report)" >>"$checks"
fi

step "conformance (conformance/run.sh: scenarios × SDKs × protocols × stores)"
mkdir -p "$reports/conformance"
bash conformance/run.sh "$reports/conformance/junit.xml" || [ -s "$reports/conformance/junit.xml" ] || echo "fail conformance (no report)" >>"$checks"

# The matrix once more as production runs: auth (an admin token), a cluster secret and TLS.
# Memory store only (the stores do not see tokens or TLS); about a minute more, since the
# drivers and server the run above built are reused.
step "conformance with auth and TLS (CONFORMANCE_SECURE=1, memory store: every SDK and protocol)"
mkdir -p "$reports/conformance-secure"
CONFORMANCE_SECURE=1 CONFORMANCE_STORES=memory CONFORMANCE_BUILT=1 bash conformance/run.sh "$reports/conformance-secure/junit.xml" ||
  [ -s "$reports/conformance-secure/junit.xml" ] || echo "fail conformance-secure (no report)" >>"$checks"

step "summary"
node scripts/summarize.mjs "$reports"
