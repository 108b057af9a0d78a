#!/bin/bash
# What the unixconn supervisor (run.agentrun.unixconn) costs per connect(2).
#
#   sudo tests/bench/unixconn.sh [N]
#
# One agent bundle (`spec --agent`, as root: the agent runs as nobody) with
# two Unix sockets in its workspace, one of them --unix-socket. Inside it,
# tests/unixconn-probe times N connects of each kind (new socket each time):
# to the chosen socket (served by the supervisor's thread for blocking
# sockets), to the other one (refused by the supervisor), and a UDP connect
# (served inline). Then the same bundle without the annotation: every
# connect is the kernel's alone. Prints medians and 90th percentiles in
# microseconds. Everything lives in a temporary folder removed on exit.
set -euo pipefail
BUILDDIR=${AGENTRUN_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
N=${1:-2000}
AGENTRUN=$BUILDDIR/agentrun
PROBE=$BUILDDIR/tests/unixconn-probe
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  "$AGENTRUN" --root "$tmp/root" delete -f ucb-on >/dev/null 2>&1 || true
  "$AGENTRUN" --root "$tmp/root" delete -f ucb-off >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
chmod 755 "$tmp"
ws=$tmp/ws
mkdir -p "$ws" "$tmp/home"
install -m 0755 "$PROBE" "$ws/probe"
"$ws/probe" serve "$ws/chosen.sock" C & pids+=($!)
"$ws/probe" serve "$ws/other.sock" O & pids+=($!)
for _ in $(seq 50); do [ -S "$ws/chosen.sock" ] && [ -S "$ws/other.sock" ] && break; sleep 0.1; done
chown 65534:65534 "$ws" "$tmp/home"

env -u SUDO_UID -u SUDO_GID HOME="$tmp/home" "$AGENTRUN" spec --agent --bundle "$tmp/b" --workspace "$ws" \
  --no-network --unix-socket "$ws/chosen.sock" -- sh -c \
  "./probe bench $ws/chosen.sock $N; ./probe bench $ws/other.sock $N; ./probe bench-udp 127.0.0.1 $N" >/dev/null

echo "with the supervisor:"
"$AGENTRUN" --root "$tmp/root" run -b "$tmp/b" ucb-on
jq 'del(.annotations["run.agentrun.unixconn"], .annotations["run.agentrun.max-sockets"])' "$tmp/b/config.json" >"$tmp/c.json"
mv "$tmp/c.json" "$tmp/b/config.json"
echo "without (the kernel alone, same seccomp profile otherwise):"
"$AGENTRUN" --root "$tmp/root" run -b "$tmp/b" ucb-off
