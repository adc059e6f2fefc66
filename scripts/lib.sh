# Shared by scripts/demo and scripts/cluster: starting cronwheel processes in the background, waiting for
# them, and talking to the admin's REST API. Source it; it defines functions only.

# A random secret (hex), without needing openssl.
cw_secret() { head -c "${1:-24}" /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# cw_start <name> <run dir> <command...>: starts a process in the background, its output in
# <run dir>/logs/<name>.log and its pid in <run dir>/pids/<name>.pid.
cw_start() {
  local name="$1" dir="$2"; shift 2
  mkdir -p "$dir/logs" "$dir/pids"
  nohup "$@" >>"$dir/logs/$name.log" 2>&1 &
  echo $! >"$dir/pids/$name.pid"
}

# cw_stop <run dir>: SIGTERM to everything started there, then SIGKILL after 15 s.
cw_stop() {
  local dir="$1" pid f
  [ -d "$dir/pids" ] || return 0
  for f in "$dir"/pids/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; done
  for _ in $(seq 1 150); do
    local alive=0
    for f in "$dir"/pids/*.pid; do [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for f in "$dir"/pids/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f"); kill -9 "$pid" 2>/dev/null || true; rm -f "$f"
  done
}

# cw_wait_http <url> <seconds>: until the URL answers 2xx.
cw_wait_http() {
  local url="$1" secs="${2:-30}"
  for _ in $(seq 1 $((secs * 10))); do curl -fsS -o /dev/null "$url" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

# cw_port_free <port>
cw_port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# REST calls as the console's admin user. cw_login <base url> <password> sets CW_BASE, CW_COOKIES, CW_CSRF.
cw_login() {
  CW_BASE="$1"; CW_COOKIES="$(mktemp)"; CW_CSRF=""
  local out code
  out=$(curl -sS -c "$CW_COOKIES" -w '\n%{http_code}' -H 'Content-Type: application/json' \
        -d "{\"username\":\"admin\",\"password\":\"$2\"}" "$CW_BASE/api/v1/auth/login")
  code=$(tail -n1 <<<"$out")
  if [ "$code" = 200 ]; then
    CW_CSRF=$(head -n -1 <<<"$out" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("csrf_token",""))')
  elif [ "$code" != 404 ]; then
    echo "login as admin failed (HTTP $code): $(head -n -1 <<<"$out")" >&2; return 1
  fi
}
# cw_api <method> <path> [json body]: prints the response body; fails on HTTP >= 400. POST and PUT always
# carry a body ({} by default): the admin needs a Content-Length.
cw_api() {
  local args=(-sS -f -b "$CW_COOKIES" -X "$1" -H 'Content-Type: application/json')
  [ -n "$CW_CSRF" ] && args+=(-H "X-CSRF-Token: $CW_CSRF")
  if [ $# -ge 3 ]; then args+=(-d "$3"); elif [ "$1" = POST ] || [ "$1" = PUT ]; then args+=(-d '{}'); fi
  curl "${args[@]}" "$CW_BASE$2"
}
# cw_json <python expression over `d`>: reads JSON on stdin.
cw_json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
