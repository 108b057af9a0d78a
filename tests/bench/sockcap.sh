#!/bin/bash
# What the socket cap (--max-sockets, run.agentrun.max-sockets) costs: per
# socket(2) and accept(2), and at start.
#
#   sudo tests/bench/sockcap.sh [N]
#
# Inside `agentrun sandbox` (as root: the agent runs as nobody),
# tests/unixconn-probe times N socket(2) calls with 0 and with 100 loopback
# connections open (the count reads one line per socket of ours and the
# namespace's TCP table each time), and N accepts; then the same with
# --max-sockets unlimited (the kernel alone). Then hyperfine compares the
# start of `sandbox -- true` with and without the cap. Medians and 90th
# percentiles in microseconds. Everything lives in a temporary folder
# removed on exit.
set -euo pipefail
BUILDDIR=${AGENTRUN_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
N=${1:-2000}
AGENTRUN=$BUILDDIR/agentrun
PROBE=$BUILDDIR/tests/unixconn-probe
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/ws" "$tmp/home"
install -m 0755 "$PROBE" "$tmp/ws/probe"
chown 65534:65534 "$tmp/ws" "$tmp/home"
sb() { env -u SUDO_UID -u SUDO_GID HOME="$tmp/home" "$AGENTRUN" --root "$tmp/root" sandbox -q --workspace "$tmp/ws" "$@"; }

for cap in 4096 256 unlimited; do
  echo "--max-sockets $cap:"
  sb --max-sockets $cap -- sh -c "./probe bench-socket 0 $N; ./probe bench-socket 100 $N; ./probe bench-accept $N"
done
hyperfine -N -w 5 -r "${RUNS:-60}" \
  "env HOME=$tmp/home $AGENTRUN --root $tmp/root sandbox -q --workspace $tmp/ws -- true" \
  "env HOME=$tmp/home $AGENTRUN --root $tmp/root sandbox -q --workspace $tmp/ws --max-sockets unlimited -- true"
