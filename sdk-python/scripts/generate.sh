#!/usr/bin/env bash
# Regenerates src/runlater/_gen/ from ../proto/runlater/v1/*.proto.
#
#   sdk-python/scripts/generate.sh
#
# Tools come from a private venv with exact pins (scripts/codegen-requirements.txt):
# protoc is the one embedded in grpcio-tools, the Connect stubs come from
# protoc-gen-connectrpc with protobuf=google (Google's protobuf runtime messages).
#
# Google's Python generator has no option to prefix import paths, so the protos are
# staged under runlater/_gen/v1/ with their `import "runlater/v1/..."` lines pointing
# there. That makes the generated modules importable as runlater._gen.v1.* without
# touching the generated output. Message full names (runlater.v1.*) are unchanged, so
# the wire format is identical.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sdk="$(cd "$here/.." && pwd)"
proto_root="$(cd "$sdk/../proto" && pwd)"
out="$sdk/src/runlater/_gen"

venv="${RUNLATER_CODEGEN_VENV:-${TMPDIR:-/tmp}/runlater-sdk-python-codegen}"
stamp="$venv/.requirements"
if ! cmp -s "$here/codegen-requirements.txt" "$stamp" 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/codegen-requirements.txt"
  cp "$here/codegen-requirements.txt" "$stamp"
fi

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/runlater/_gen/v1"
for f in "$proto_root"/runlater/v1/*.proto; do
  sed 's#^import "runlater/v1/#import "runlater/_gen/v1/#' "$f" >"$stage/runlater/_gen/v1/$(basename "$f")"
done

rm -rf "$out" "$sdk/src/runlater/pb__gen"
mkdir -p "$out"
"$venv/bin/python" -m grpc_tools.protoc \
  -I "$stage" \
  --python_out="$sdk/src" \
  --pyi_out="$sdk/src" \
  --plugin=protoc-gen-connectrpc="$venv/bin/protoc-gen-connectrpc" \
  --connectrpc_out="$sdk/src" \
  --connectrpc_opt=protobuf=google \
  "$stage"/runlater/_gen/v1/*.proto

# protoc-gen-connectrpc sanitises the leading underscore of "_gen" in its output path
# (it writes runlater/pb__gen/v1/*_connect.py). The stubs import their messages with a
# path relative to the package root (from ..._gen.v1.x_pb2 import ...), so moving the
# files next to the messages is all that is needed; their content stays as generated.
mv "$sdk/src/runlater/pb__gen/v1/"*_connect.py "$out/v1/"
rm -rf "$sdk/src/runlater/pb__gen"

# Package markers (empty files, written here so a regeneration reproduces them).
printf '"""Generated from proto/runlater/v1 by scripts/generate.sh. Do not edit."""\n' >"$out/__init__.py"
printf '"""Generated from proto/runlater/v1 by scripts/generate.sh. Do not edit."""\n' >"$out/v1/__init__.py"
echo "generated into $out"
