#!/usr/bin/env bash
# Can the relay's second hop leave the process? One TCP->TCP hop joined by
# splice (as agentrun-relay does) against the same hop joined in the kernel by
# a BPF sockhash with an sk_skb verdict redirect (tests/bench/sockmap-hop.c),
# with and without a stream parser. Interleaved rounds of bulk throughput and
# CPU; SMALL_N 1-MiB transfers (stalls, zero-window probes); then
# backpressure: how much a sender pushes in PUSH_S seconds through the hop
# into a peer that never reads (bounded by socket buffers, or not).
#   usage: tests/bench/sockmap.sh  (BENCH_BYTES=1G ROUNDS=3 SMALL_N=20 PUSH_S=3)
# Needs root (bpf), a C compiler, python3 and ss.
set -euo pipefail
SRC=$(cd "$(dirname "$0")" && pwd)
BYTES=${BENCH_BYTES:-$((1024 * 1024 * 1024))}
ROUNDS=${ROUNDS:-3}
PUSH_S=${PUSH_S:-3}
SMALL_N=${SMALL_N:-20}
MODES="splice verdict parser"
T=$(mktemp -d /tmp/agentrun-sockmap.XXXXXX)
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT
${CC:-cc} -O2 -Wall -Wextra -Werror -std=gnu11 -pthread -o "$T/hop" "$SRC/sockmap-hop.c"

cat >"$T/tool.py" <<'PY'
import resource, socket, sys, time, threading
cmd, port = sys.argv[1], int(sys.argv[2])
if cmd in ("sink", "nosink"):   # read all and answer the count at EOF / never read
    ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port)); ls.listen(64); held = []
    def serve(c):
        buf = bytearray(4 << 20); n = 0
        while True:
            k = c.recv_into(buf)
            if not k: break
            n += k
        c.sendall(str(n).encode()); c.close()
    while True:
        c, _ = ls.accept()
        if cmd == "nosink": held.append(c)
        else: threading.Thread(target=serve, args=(c,), daemon=True).start()
elif cmd == "send":             # N bytes, half-close, check the count; GB/s and own CPU ms
    total = int(sys.argv[3]); buf = memoryview(bytearray(4 << 20))
    s = socket.create_connection(("127.0.0.1", port))
    cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2]) * 1000
    t = time.perf_counter(); c = cpu(); left = total
    while left:
        left -= s.send(buf[:min(left, len(buf))])
    s.shutdown(socket.SHUT_WR)
    got = int(s.recv(64).decode()); dt = time.perf_counter() - t
    assert got == total, (got, total)
    print("%.3f %.0f" % (total / dt / 1e9, cpu() - c))
elif cmd == "push":             # non-blocking sends for S seconds; MiB accepted
    s = socket.create_connection(("127.0.0.1", port)); s.setblocking(False)
    buf = bytes(1 << 20); n = 0; t = time.time()
    while time.time() - t < float(sys.argv[3]):
        try: n += s.send(buf)
        except BlockingIOError: time.sleep(0.005)
    print("%.1f" % (n / 2**20))
PY
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Waits for the listener without connecting: the hop serves one connection
# at a time, and a probe held open by the non-reading peer would block it.
wait_port() { for _ in $(seq 100); do [ -n "$(ss -Hltn "sport = :$1")" ] && return; sleep 0.05; done; return 1; }
HZ=$(getconf CLK_TCK)
cpu_ms() { awk -v hz="$HZ" '{print ($14 + $15) * 1000 / hz}' "/proc/$1/stat"; }
# The redirect's transmit runs in kworkers (sk_psock_backlog): all of them,
# so other work on the machine shows up here too.
kworker_ms() {
  local f l
  for f in /proc/[0-9]*/stat; do
    { read -r l <"$f"; } 2>/dev/null || continue
    case $l in *"(kworker"*) echo "$l" ;; esac
  done | awk -v hz="$HZ" '{s += $14 + $15} END {print s * 1000 / hz}'
}
# TcpExt TCPWinProbe: zero-window probes sent, machine-wide.
win_probes() {
  awk '/^TcpExt:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "TCPWinProbe") c = i; h = 1 } else print $c }' \
    /proc/net/netstat
}
mem_avail_kb() { awk '/MemAvailable/ {print $2}' /proc/meminfo; }

SINK=$(free_port); NOSINK=$(free_port)
python3 "$T/tool.py" sink "$SINK" & SINK_PID=$!; PIDS+=("$SINK_PID")
python3 "$T/tool.py" nosink "$NOSINK" & PIDS+=($!)
declare -A PORT PID NOPORT
for m in $MODES; do
  PORT[$m]=$(free_port); NOPORT[$m]=$(free_port)
  "$T/hop" "$m" "${PORT[$m]}" "$SINK" & PID[$m]=$!; PIDS+=($!)
  "$T/hop" "$m" "${NOPORT[$m]}" "$NOSINK" & PIDS+=($!)
done
wait_port "$SINK"
for m in $MODES; do wait_port "${PORT[$m]}"; wait_port "${NOPORT[$m]}"; done

printf 'bulk: %s bytes per run, %s interleaved rounds, %s, load average %s\n' "$BYTES" "$ROUNDS" \
  "$(uname -r)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %7s %10s %8s %8s %10s %14s\n' mode GB/s sender_ms sink_ms hop_ms kworker_ms chain_ms/GB
for _ in $(seq "$ROUNDS"); do
  for m in $MODES; do
    s0=$(cpu_ms "$SINK_PID"); h0=$(cpu_ms "${PID[$m]}"); k0=$(kworker_ms)
    read -r gbs snd < <(python3 "$T/tool.py" send "${PORT[$m]}" "$BYTES")
    s1=$(cpu_ms "$SINK_PID"); h1=$(cpu_ms "${PID[$m]}"); k1=$(kworker_ms)
    awk -v m="$m" -v g="$gbs" -v snd="$snd" -v sk="$s1 $s0" -v h="$h1 $h0" -v k="$k1 $k0" -v b="$BYTES" '
      function d(pair, x) { split(pair, x, " "); return x[1] - x[2] }
      BEGIN { sk = d(sk); h = d(h); k = d(k)
        printf "%-8s %7.3f %10.0f %8.0f %8.0f %10.0f %14.0f\n", m, g, snd, sk, h, k, (snd + sk + h + k) * 1e9 / b }'
  done
done
echo "small transfers: $SMALL_N x 1 MiB each, stalled (under 0.02 GB/s: a 200 ms wait or more) and zero-window probes"
for m in $MODES; do
  w0=$(win_probes) stalls=0
  for _ in $(seq "$SMALL_N"); do
    read -r gbs _ < <(python3 "$T/tool.py" send "${PORT[$m]}" $((1024 * 1024)))
    awk -v g="$gbs" 'BEGIN {exit !(g < 0.02)}' && stalls=$((stalls + 1))
  done
  printf '%-8s %3s stalled   %3s window probes\n' "$m" "$stalls" $(($(win_probes) - w0))
done
echo "backpressure: MiB a sender got accepted in ${PUSH_S}s through the hop into a peer that never reads"
for m in $MODES; do
  before=$(mem_avail_kb)
  mib=$(python3 "$T/tool.py" push "${NOPORT[$m]}" "$PUSH_S")
  printf '%-8s %8s MiB   (MemAvailable fell by %s MiB)\n' "$m" "$mib" $(((before - $(mem_avail_kb)) / 1024))
done
