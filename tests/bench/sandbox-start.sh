#!/usr/bin/env bash
# Start-up of `agentrun sandbox -- /bin/true` against bubblewrap with an
# equivalent command line (host system read-only, tmpfs home and /tmp, the
# workspace read-write, every namespace unshared, a new session, no
# capabilities), measured side by side with hyperfine. bwrap gets no
# seccomp filter (it takes compiled BPF on an fd), and no cgroup: agentrun
# does both, so the comparison is in bwrap's favour.
#   usage: tests/bench/sandbox-start.sh      (RUNS=50 WARMUP=5 by default)
# Needs root, hyperfine, bwrap, jq. Prints the medians and the ratio
# (issue 7 target: agentrun within 1.5x of bwrap).
set -euo pipefail
BUILDDIR=${AGENTRUN_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
AGENTRUN=$BUILDDIR/agentrun
RUNS=${RUNS:-50}
WARMUP=${WARMUP:-5}
for c in hyperfine bwrap jq; do
  command -v "$c" >/dev/null || { echo "needs $c" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }

T=$(mktemp -d /tmp/agentrun-bench-sb.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 711 "$T"
WS=$T/ws HOMEDIR=$T/home
mkdir -p "$WS" "$HOMEDIR"
chown 65534:65534 "$WS" "$HOMEDIR"

# bwrap: the same confinement where bwrap has an equivalent
bw=(bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL
  --uid 65534 --gid 65534)
for d in /usr /etc /opt; do [ -d "$d" ] && bw+=(--ro-bind "$d" "$d"); done
for d in /bin /sbin /lib /lib32 /lib64 /libx32; do
  if [ -L "$d" ]; then bw+=(--symlink "$(readlink "$d")" "$d")
  elif [ -d "$d" ]; then bw+=(--ro-bind "$d" "$d"); fi
done
bw+=(--proc /proc --dev /dev --tmpfs /tmp --tmpfs "$HOMEDIR" --bind "$WS" "$WS" --chdir "$WS"
  --clearenv --setenv PATH /usr/bin:/bin --setenv HOME "$HOMEDIR" /bin/true)
"${bw[@]}"   # it must work before it is timed

cd "$WS"
SB="env -u SUDO_UID HOME=$HOMEDIR $AGENTRUN --root $T/state sandbox -- /bin/true"
$SB

hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$T/r.json" \
  -n agentrun "$SB" -n bwrap "$(printf '%q ' "${bw[@]}")" >&2
a=$(jq '.results[] | select(.command == "agentrun") | .median' "$T/r.json")
b=$(jq '.results[] | select(.command == "bwrap") | .median' "$T/r.json")
awk -v a="$a" -v b="$b" 'BEGIN {
  printf "median agentrun sandbox: %.2f ms\nmedian bwrap:            %.2f ms\nratio: %.2fx (target <= 1.5x)\n",
         a * 1000, b * 1000, a / b }'
