# Sourced by scripts/profile-shape and scripts/trace-send-path: starts
# `guildhall-lab bench "$@"` in the background (its output to $bench_out) and
# waits, bounded, for the server it starts as a child. Sets $bench (the
# bench's PID) and $server (the server's); exits when no server appears.
start_bench_server() {
  "$bin" bench "$@" > "$bench_out" 2>&1 &
  bench=$!
  server=""
  for _ in $(seq 1 100); do
    server=$(pgrep -P "$bench" -f "serve" | head -1 || true)
    [ -n "$server" ] && break
    sleep 0.1
  done
  [ -n "$server" ] || { echo "the bench did not start a server"; kill "$bench" 2>/dev/null; exit 1; }
}
