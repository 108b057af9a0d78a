#!/usr/bin/env bash
# Network path benchmark: bulk throughput from inside a network namespace
# through agentrun-netproxy + agentrun-relay to a host sink, against a
# direct loopback TCP connection and the same chain built with socat
# (TCP -> Unix socket -> TCP); connection setup p50/p99; RSS of the server
# and the relay idle and with 1000 open connections.
#   usage: tests/bench/relay.sh            (BENCH_BYTES=2G RUNS=5 by default)
# Needs root (unshare --net, nsenter), python3 and socat.
set -euo pipefail
BUILDDIR=${AGENTRUN_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
RELAY=$BUILDDIR/agentrun-relay
NETPROXY=$BUILDDIR/agentrun-netproxy
BYTES=${BENCH_BYTES:-$((2 * 1024 * 1024 * 1024))}
RUNS=${RUNS:-5}
CONNS=${CONNS:-1000}
T=$(mktemp -d /tmp/agentrun-bench.XXXXXX)
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for p in $(server_pids); do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT

cat >"$T/tool.py" <<'PY'
import resource, socket, sys, time, threading
_h = resource.getrlimit(resource.RLIMIT_NOFILE)[1]; resource.setrlimit(resource.RLIMIT_NOFILE, (_h, _h))
cmd = sys.argv[1]
if cmd == "sink":      # accept, read everything fast, answer the byte count at EOF
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", int(sys.argv[2]))); ls.listen(4096)
    def serve(c):
        buf = bytearray(4 << 20); n = 0
        while True:
            k = c.recv_into(buf)
            if not k: break
            n += k
        c.sendall(str(n).encode()); c.close()
    while True:
        c, _ = ls.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
elif cmd == "echo":    # 1-byte echo for setup latency, holds connections open
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", int(sys.argv[2]))); ls.listen(4096)
    import selectors
    sel = selectors.DefaultSelector(); sel.register(ls, selectors.EVENT_READ)
    while True:
        for key, _ in sel.select():
            if key.fileobj is ls:
                c, _ = ls.accept(); c.setblocking(False); sel.register(c, selectors.EVENT_READ)
            else:
                try:
                    d = key.fileobj.recv(4096)
                except OSError:
                    d = b""
                if d: key.fileobj.send(d)
                else: sel.unregister(key.fileobj); key.fileobj.close()
elif cmd == "send":    # send N bytes, half-close, wait for the sink's count; print GB/s and own CPU ms
    host, port, total = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    buf = memoryview(bytearray(4 << 20))
    s = socket.create_connection((host, port))
    cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2]) * 1000
    t = time.perf_counter(); c = cpu(); left = total
    while left:
        left -= s.send(buf[:min(left, len(buf))])
    s.shutdown(socket.SHUT_WR)
    got = int(s.recv(64).decode()); dt = time.perf_counter() - t
    assert got == total, (got, total)
    print("%.3f %.0f" % (total / dt / 1e9, cpu() - c))
elif cmd == "setup":   # N sequential connect + 1-byte round trips; print p50 p99 in ms
    host, port, n = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    lat = []
    for i in range(n):
        t = time.perf_counter()
        s = socket.create_connection((host, port)); s.sendall(b"x"); assert s.recv(1) == b"x"
        lat.append((time.perf_counter() - t) * 1000); s.close()
    lat.sort()
    print("%.3f %.3f" % (lat[len(lat) // 2], lat[int(len(lat) * 0.99)]))
elif cmd == "hold":    # open N connections, say so, and wait
    host, port, n = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    socks = []
    for i in range(n):
        s = socket.create_connection((host, port)); s.sendall(b"x"); s.recv(1); socks.append(s)
    print("open", flush=True); sys.stdin.read()
PY
py() { exec python3 "$T/tool.py" "$@"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { local i; for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return; sleep 0.05; done; return 1; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
server_pids() {
  [ -n "${NETNS_INO:-}" ] || return 0
  local p
  for p in /proc/[0-9]*; do
    [ "$(stat -L -c %i "$p/ns/net" 2>/dev/null)" = "$NETNS_INO" ] && [ "${p#/proc/}" != "${CPID:-}" ] \
      && echo "${p#/proc/}"
  done
  return 0
}

SINK=$(free_port); ECHO=$(free_port)
(py sink "$SINK") & SINK_PID=$!; PIDS+=($SINK_PID)
(py echo "$ECHO") & PIDS+=($!)
wait_port "$SINK"; wait_port "$ECHO"
"$RELAY" --dir "$T/s" --allow "sink.test:443=127.0.0.1:$SINK" --allow "echo.test:80=127.0.0.1:$ECHO" \
  2>/dev/null & RELAY_PID=$!; PIDS+=($RELAY_PID)
# The socat chain's host half.
socat UNIX-LISTEN:"$T/socat.sock",fork TCP:127.0.0.1:"$SINK" & PIDS+=($!)
unshare --net sleep 100000 & CPID=$!; PIDS+=($CPID)
# Until unshare has made the namespace, the pid is still in ours.
for i in $(seq 100); do
  [ "$(readlink /proc/$CPID/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break; sleep 0.05
done
NETNS_INO=$(stat -L -c %i /proc/$CPID/ns/net)
echo "{\"ociVersion\":\"1.2.0\",\"id\":\"bench\",\"status\":\"creating\",\"pid\":$CPID,\"bundle\":\"/\"}" |
  "$NETPROXY" --no-dns --route "sink.test:443=127.77.0.2=$T/s/sink.test:443.sock" \
    --route "echo.test:80=127.77.0.3=$T/s/echo.test:80.sock"
SERVER_PID=$(server_pids | head -1)
IN="nsenter --net=/proc/$CPID/ns/net"
# The socat chain's container half.
$IN socat TCP-LISTEN:443,bind=127.77.0.4,fork,reuseaddr UNIX-CONNECT:"$T/socat.sock" & PIDS+=($!)
sleep 0.3

# CPU time (utime + stime, ms) of a process: the cost per GB is steadier
# than GB/s on a box shared with other work.
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) * 1000 / hz}' "/proc/$1/stat"; }
printf 'bulk: %s bytes, median of %s runs (load average %s)\n' "$BYTES" "$RUNS" "$(cut -d' ' -f1-3 /proc/loadavg)"
# CPU ms of the sink and of the chain's processes while one send runs,
# appended to $T/cpu.NAME; the sender reports its own.
cpu_of() {
  local name=$1 a b; shift
  a=$(for p in "$SINK_PID" ${CHAIN_PIDS:-}; do cpu_ms "$p"; done | paste -sd' ')
  "$@" | tee -a "$T/$name" >/dev/null
  b=$(for p in "$SINK_PID" ${CHAIN_PIDS:-}; do cpu_ms "$p"; done | paste -sd' ')
  echo "$(tail -1 "$T/$name" | cut -d' ' -f2) $a $b" >>"$T/cpu.$name"
}
for i in $(seq "$RUNS"); do
  CHAIN_PIDS="" cpu_of direct py send 127.0.0.1 "$SINK" "$BYTES"
  CHAIN_PIDS="$SERVER_PID $RELAY_PID" cpu_of agentrun $IN python3 "$T/tool.py" send 127.77.0.2 443 "$BYTES"
  $IN python3 "$T/tool.py" send 127.77.0.4 443 "$BYTES" >>"$T/socat"
done
col1() { cut -d' ' -f1 "$1"; }
D=$(col1 "$T/direct" | median); A=$(col1 "$T/agentrun" | median); S=$(col1 "$T/socat" | median)
printf '%-34s %8s GB/s\n' "direct loopback TCP" "$D" \
  "netproxy + relay (splice)" "$A" "socat TCP->UDS->TCP" "$S"
printf 'every run (GB/s): direct %s; agentrun %s; socat %s\n' "$(col1 "$T/direct" | sort -n | paste -sd' ')" \
  "$(col1 "$T/agentrun" | sort -n | paste -sd' ')" "$(col1 "$T/socat" | sort -n | paste -sd' ')"
awk -v a="$A" -v d="$D" -v s="$S" 'BEGIN {
  printf "ratio agentrun/direct %.2f (target >= 0.80)   agentrun/socat %.2f (target >= 1.50)\n", a/d, a/s }'

# Per GB, summed over the runs: sender, sink, and for agentrun server and relay.
GB=$(awk -v b="$BYTES" -v n="$RUNS" 'BEGIN {print b * n / 1e9}')
awk -v gb="$GB" '{ snd += $1; sink += $3 - $2 } END {
  printf "CPU per GB moved, direct: %.0f ms (sender %.0f, sink %.0f)\n", (snd + sink) / gb, snd / gb, sink / gb }' "$T/cpu.direct"
awk -v gb="$GB" '{ snd += $1; sink += $5 - $2; srv += $6 - $3; rel += $7 - $4 } END {
  printf "CPU per GB moved, agentrun: %.0f ms (sender %.0f, server %.0f, relay %.0f, sink %.0f)\n",
    (snd + sink + srv + rel) / gb, snd / gb, srv / gb, rel / gb, sink / gb }' "$T/cpu.agentrun"

read -r p50 p99 < <($IN python3 "$T/tool.py" setup 127.77.0.3 80 1000)
read -r d50 d99 < <(py setup 127.0.0.1 "$ECHO" 1000)
printf 'connection setup + 1-byte round trip (1000 sequential): p50 %s ms p99 %s ms (direct: p50 %s ms p99 %s ms)\n' \
  "$p50" "$p99" "$d50" "$d99"

printf 'RSS idle: server %s KiB, relay %s KiB\n' "$(rss_kb "$SERVER_PID")" "$(rss_kb "$RELAY_PID")"
mkfifo "$T/hold.in"
$IN python3 "$T/tool.py" hold 127.77.0.3 80 "$CONNS" <"$T/hold.in" >"$T/hold.out" & HOLD=$!; PIDS+=($HOLD)
exec 9>"$T/hold.in"
for i in $(seq 600); do grep -q open "$T/hold.out" 2>/dev/null && break; sleep 0.1; done
printf 'RSS with %s open connections: server %s KiB, relay %s KiB\n' "$CONNS" \
  "$(rss_kb "$SERVER_PID")" "$(rss_kb "$RELAY_PID")"
exec 9>&-
