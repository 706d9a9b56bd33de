#!/usr/bin/env bash
# No-op handler throughput of the Java worker on the memory store, poll against stream.
# Usage: sdk-java/bench.sh [--jobs 20000] [--concurrency 4] [--rounds 3]
# Starts its own server (scripts/runlater serve --store memory), unless RUNLATER_TARGET is set.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
mvn -B -q -Dstyle.color=never test-compile
mvn -B -q -Dstyle.color=never dependency:build-classpath -Dmdep.includeScope=test \
  -Dmdep.outputFile=target/bench-classpath.txt >/dev/null
exec java -cp "target/test-classes:target/classes:$(cat target/bench-classpath.txt)" \
  dev.runlater.bench.WorkerBench "$@"
