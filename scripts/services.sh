#!/usr/bin/env bash
# Installs (if missing) and starts the test services on loopback, each with its own data
# directory under .run/, on a free port. Idempotent: a service already started by this
# script is reused. Prints shell exports for the URLs, so callers do:
#   eval "$(scripts/services.sh redis mariadb)"
# which sets RUNLATER_TEST_REDIS_URL and RUNLATER_TEST_MYSQL_URL.
#   scripts/services.sh redis-cluster  starts a Redis Cluster (3 masters, 3 replicas, under
#   .run/redis-cluster; scripts/redis-cluster.sh) and sets RUNLATER_TEST_REDIS_CLUSTER_URL.
#   scripts/services.sh chromium  installs Debian's Chromium for the dashboard's browser
#   tests (nothing to start: playwright-core launches it) and sets RUNLATER_TEST_CHROMIUM.
#   scripts/services.sh stop     stops what this script started.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
run="$root/.run"
mkdir -p "$run"

log() { echo "services: $*" >&2; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]} (apt)"
  export DEBIAN_FRONTEND=noninteractive
  # Another apt run (e.g. a parallel install) holds the lock: wait for it.
  for _ in $(seq 1 120); do
    if apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; then return 0; fi
    sleep 2
  done
  log "could not install ${missing[*]}"
  return 1
}

start_redis() {
  apt_install redis-server
  local dir="$run/redis" port
  mkdir -p "$dir"
  if [ -f "$dir/port" ] && redis-cli -p "$(cat "$dir/port")" ping >/dev/null 2>&1; then
    port=$(cat "$dir/port")
  else
    port=$(free_port)
    # appendonly with fsync every second: the durability setting docs/redis.md recommends.
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --daemonize yes \
      --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --save "" \
      --appendonly yes --appendfsync everysec --maxmemory-policy noeviction >&2
    for _ in $(seq 1 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$port" ping >/dev/null || { log "redis did not start; see $dir/redis.log"; return 1; }
    echo "$port" >"$dir/port"
    log "redis on 127.0.0.1:$port"
  fi
  echo "export RUNLATER_TEST_REDIS_URL=redis://127.0.0.1:$port"
}

start_redis_cluster() {
  apt_install redis-server redis-tools
  local url
  url=$("$root/scripts/redis-cluster.sh" start "$run/redis-cluster") || return 1
  echo "export RUNLATER_TEST_REDIS_CLUSTER_URL=$url"
}

start_mariadb() {
  apt_install mariadb-server mariadb-client
  local dir="$run/mariadb" port
  mkdir -p "$dir"
  if [ -f "$dir/port" ] && mariadb-admin --protocol=tcp -h127.0.0.1 -P"$(cat "$dir/port")" -uroot ping >/dev/null 2>&1; then
    port=$(cat "$dir/port")
  else
    port=$(free_port)
    if [ ! -d "$dir/data/mysql" ]; then
      mariadb-install-db --user="$(id -un)" --datadir="$dir/data" --auth-root-authentication-method=normal \
        --skip-test-db >"$dir/install.log" 2>&1 || { log "mariadb-install-db failed; see $dir/install.log"; return 1; }
    fi
    # Durable settings (flush the log at every commit), as the benchmarks assume.
    nohup mariadbd --no-defaults --user="$(id -un)" --datadir="$dir/data" --socket="$dir/mariadb.sock" \
      --pid-file="$dir/mariadb.pid" --port="$port" --bind-address=127.0.0.1 --skip-name-resolve \
      --innodb-flush-log-at-trx-commit=1 --innodb-buffer-pool-size=512M --max-connections=500 \
      --log-error="$dir/mariadb.err" >/dev/null 2>&1 &
    for _ in $(seq 1 300); do
      mariadb-admin --protocol=tcp -h127.0.0.1 -P"$port" -uroot ping >/dev/null 2>&1 && break
      sleep 0.1
    done
    mariadb-admin --protocol=tcp -h127.0.0.1 -P"$port" -uroot ping >/dev/null 2>&1 || { log "mariadb did not start; see $dir/mariadb.err"; return 1; }
    echo "$port" >"$dir/port"
    log "mariadb on 127.0.0.1:$port"
  fi
  echo "export RUNLATER_TEST_MYSQL_URL=mysql://root@127.0.0.1:$port/runlater_test"
}

start_chromium() {
  # Debian's package, not a browser build that playwright downloads (there is none here).
  apt_install chromium
  local bin=/usr/bin/chromium
  [ -x "$bin" ] || { log "chromium is not at $bin"; return 1; }
  echo "export RUNLATER_TEST_CHROMIUM=$bin"
}

stop_all() {
  if [ -f "$run/redis/redis.pid" ]; then kill "$(cat "$run/redis/redis.pid")" 2>/dev/null || true; rm -f "$run/redis/port"; fi
  if [ -f "$run/mariadb/mariadb.pid" ]; then kill "$(cat "$run/mariadb/mariadb.pid")" 2>/dev/null || true; rm -f "$run/mariadb/port"; fi
  "$root/scripts/redis-cluster.sh" stop "$run/redis-cluster"
}

[ $# -gt 0 ] || set -- redis mariadb
for service in "$@"; do
  case "$service" in
    redis) start_redis ;;
    redis-cluster) start_redis_cluster ;;
    mariadb | mysql) start_mariadb ;;
    chromium) start_chromium ;;
    stop) stop_all ;;
    *) log "unknown service $service (redis, redis-cluster, mariadb, chromium, stop)"; exit 2 ;;
  esac
done
