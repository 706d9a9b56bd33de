#!/usr/bin/env bash
# A real Redis Cluster on loopback for tests: 3 masters and 3 replicas, one directory per
# node under DIR, on free ports, with a short cluster-node-timeout (1000 ms) so a killed
# master's replica takes over within about two seconds.
#
#   scripts/redis-cluster.sh start DIR   starts it (reuses a running one), prints its store URL
#   scripts/redis-cluster.sh restart DIR starts again the nodes of DIR that are not running
#   scripts/redis-cluster.sh stop DIR    stops every node started under DIR
#
# scripts/services.sh redis-cluster starts the shared one under .run/redis-cluster; the
# failover test starts its own (it kills a master, which would disturb other tests).
# Nodes run with appendonly yes, appendfsync everysec and maxmemory-policy noeviction, the
# settings docs/redis.md recommends.
set -euo pipefail
cmd="${1:-}"
dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|restart|stop DIR" >&2; exit 2; }
nodes=6
log() { echo "redis-cluster: $*" >&2; }

# A free port whose cluster bus port (port + 10000) is free too, so below 55536.
free_port() {
  python3 -c '
import random, socket
while True:
    port = random.randint(20000, 55000)
    try:
        for p in (port, port + 10000):
            s = socket.socket(); s.bind(("127.0.0.1", p)); s.close()
        print(port); break
    except OSError:
        pass'
}

url_of() { echo "redis+cluster://$(sed 's/^/127.0.0.1:/' "$dir/ports" | paste -sd, -)"; }

# Healthy: every recorded node answers, the cluster says ok, and every replica is in sync
# with its master (a WAIT 1 right after start would otherwise time out).
healthy() {
  local ports="${1:-$dir/ports}" port info
  [ -f "$ports" ] || return 1
  while read -r port; do
    info=$(redis-cli -p "$port" info replication 2>/dev/null) || return 1
    if grep -q '^role:slave' <<<"$info"; then grep -q '^master_link_status:up' <<<"$info" || return 1; fi
  done <"$ports"
  redis-cli -p "$(head -1 "$ports")" cluster info 2>/dev/null | grep -q '^cluster_state:ok'
}

# Node $1 on port $2; its directory keeps nodes.conf, so a restarted node rejoins the cluster.
start_node() {
  redis-server --port "$2" --bind 127.0.0.1 --dir "$dir/node-$1" --daemonize yes \
    --pidfile "$dir/node-$1/redis.pid" --logfile "$dir/node-$1/redis.log" --save "" \
    --appendonly yes --appendfsync everysec --maxmemory-policy noeviction \
    --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 1000 \
    --repl-diskless-sync-delay 0 >&2
}

# Starts again every node that is not running (a killed master comes back as a replica).
restart() {
  [ -f "$dir/ports" ] || { log "no cluster under $dir"; return 1; }
  local i=0 port
  while read -r port; do
    i=$((i + 1))
    redis-cli -p "$port" ping >/dev/null 2>&1 || start_node "$i" "$port"
  done <"$dir/ports"
}

stop() {
  [ -d "$dir" ] || return 0
  local pidfile
  for pidfile in "$dir"/node-*/redis.pid; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  rm -f "$dir/ports"
}

start() {
  if healthy; then
    url_of
    return 0
  fi
  stop
  rm -rf "$dir"
  mkdir -p "$dir"
  local i port addrs=()
  for i in $(seq 1 "$nodes"); do
    port=$(free_port)
    mkdir -p "$dir/node-$i"
    start_node "$i" "$port"
    echo "$port" >>"$dir/ports.new"
    addrs+=("127.0.0.1:$port")
  done
  while read -r port; do
    for _ in $(seq 1 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$port" ping >/dev/null || { log "node on $port did not start; see $dir/node-*/redis.log"; return 1; }
  done <"$dir/ports.new"
  redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes >"$dir/create.log" 2>&1 ||
    { log "redis-cli --cluster create failed; see $dir/create.log"; return 1; }
  # Every node must agree, and every replica be in sync, before the URL is handed out.
  for _ in $(seq 1 200); do healthy "$dir/ports.new" && break; sleep 0.1; done
  healthy "$dir/ports.new" || { log "the cluster did not become healthy; see $dir/node-*/redis.log"; return 1; }
  mv "$dir/ports.new" "$dir/ports"
  log "redis cluster on ports $(paste -sd' ' "$dir/ports")"
  url_of
}

case "$cmd" in
  start) start ;;
  restart) restart ;;
  stop) stop ;;
  *) echo "usage: $0 start|restart|stop DIR" >&2; exit 2 ;;
esac
