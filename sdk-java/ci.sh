#!/usr/bin/env bash
# Builds and tests the Java SDK: code generation from ../proto, compile, and the JUnit suite
# against a real server (started by the tests via scripts/runlater, or RUNLATER_TARGET).
# CI calls this from the repo root; Surefire XML reports land in sdk-java/target/surefire-reports.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
rm -rf target/surefire-reports # so the summary below counts this run only
mvn -B -q -Dstyle.color=never verify "$@"
status=$?
# Small files, one concept each: no hand-written Java file over 500 lines (generated code lives
# in target/ and is not counted).
for f in $(find src -name '*.java'); do
  lines=$(wc -l <"$f")
  if [ "$lines" -gt 500 ]; then
    echo "sdk-java: $f has $lines lines; split it (500 at most)"
    status=1
  fi
done
echo # Maven 3.8 leaves colour-reset codes without a newline; start the summary on a fresh line.
# -q hides Surefire's own summary, so print one from the XML reports.
python3 - <<'PY' || true
import glob, xml.etree.ElementTree as ET
t = f = s = 0
for path in glob.glob("target/surefire-reports/TEST-*.xml"):
    r = ET.parse(path).getroot()
    t += int(r.get("tests", 0)); s += int(r.get("skipped", 0))
    f += int(r.get("failures", 0)) + int(r.get("errors", 0))
print(f"sdk-java: {t - f - s} passed, {f} failed, {s} skipped")
PY
exit $status
