#!/usr/bin/env bash
# No-op handler throughput of one Java worker at its defaults, on the memory store (one JSON line a run).
# Usage: sdk-java/bench.sh [--url URL] [--jobs 20000] [--runs 3] [--warmup 5000] [--concurrency N] [--mode stream|poll] [--ack-delay-ms N] [--latency N]
# Starts its own server (scripts/runlater serve --store memory) unless --url names one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
mvn -B -q -Dstyle.color=never test-compile
mvn -B -q -Dstyle.color=never dependency:build-classpath -Dmdep.includeScope=test \
  -Dmdep.outputFile=target/bench-classpath.txt >/dev/null
exec java -cp "target/test-classes:target/classes:$(cat target/bench-classpath.txt)" \
  dev.runlater.bench.WorkerBench "$@"
