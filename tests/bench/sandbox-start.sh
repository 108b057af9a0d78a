#!/usr/bin/env bash
# Start-up of `agentrun sandbox -- /bin/true` against bubblewrap with an
# equivalent command line (host system read-only, tmpfs home and /tmp, the
# workspace read-write, every namespace unshared, a new session, no
# capabilities), measured side by side with hyperfine. bwrap gets no
# seccomp filter (it takes compiled BPF on an fd), and no cgroup: agentrun
# does both, so the comparison is in bwrap's favour.
#   usage: tests/bench/sandbox-start.sh   (ROUNDS=15 RUNS=8 WARMUP=1 by default)
# The state root is on a tmpfs, as sandbox's is wherever it runs by default
# (/run/agentrun as root and $XDG_RUNTIME_DIR/agentrun as a user are tmpfs
# on a systemd host, its private folder without one is in /dev/shm); on
# this VM /run and /tmp are on the disk. STATE_ON_DISK=1 puts it in the
# temporary folder instead. The workspace is on the disk in either case.
# On a shared machine the load changes by the second, so one hyperfine of
# each in turn compares two different machines: instead there are ROUNDS
# rounds, each timing both (the order alternating), and the ratio is taken
# within a round. Prints each round, then the median of the rounds' medians
# and ratios with their range (the target: agentrun within 1.3x of bwrap).
# WS_TMPFS=1 puts the workspace (and home) on a tmpfs of a private mount
# namespace instead: this VM's disk is an ext4 without a journal, where a
# file created soon after others were removed in the same inode group costs
# a scan past each of them (ext4's recently_deleted), so the protected
# names' placeholders cost from 0.1 to several ms a run depending on what
# the machine (other users included) removed there in the last half
# minute; bwrap makes none. The default stays the disk.
# Needs root, hyperfine, bwrap, jq.
set -euo pipefail
if [ -n "${WS_TMPFS:-}" ] && [ -z "${AR_BENCH_PRIVATE_NS:-}" ]; then
  exec env AR_BENCH_PRIVATE_NS=1 unshare -m --propagation private bash "$0" "$@"
fi
BUILDDIR=${AGENTRUN_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
AGENTRUN=$BUILDDIR/agentrun
ROUNDS=${ROUNDS:-15}
RUNS=${RUNS:-8}
WARMUP=${WARMUP:-1}
for c in hyperfine bwrap jq; do
  command -v "$c" >/dev/null || { echo "needs $c" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }

T=$(mktemp -d /tmp/agentrun-bench-sb.XXXXXX)
[ -z "${AR_BENCH_PRIVATE_NS:-}" ] || mount -t tmpfs -o mode=700 agentrun-bench "$T"
STATE=$T/state
if [ -z "${STATE_ON_DISK:-}" ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
  STATE=$(mktemp -d /dev/shm/agentrun-bench-sb-state.XXXXXX)
fi
trap '[ -z "${AR_BENCH_PRIVATE_NS:-}" ] || { cd / && umount "$T"; } || true; rm -rf "$T"; [ "$STATE" = "$T/state" ] || rm -rf "$STATE"' EXIT
echo "state root: $STATE ($(stat -f -c %T "$(dirname "$STATE")")), workspace: $T/ws ($(stat -f -c %T "$T"))"
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
# the environment is set here, not by an `env` in front: its exec would be
# timed too, and bwrap has none
unset SUDO_UID SUDO_GID
export HOME=$HOMEDIR
SB="$AGENTRUN --root $STATE sandbox -- /bin/true"
$SB

BW=$(printf '%q ' "${bw[@]}")
: >"$T/rounds"
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order=(-n agentrun "$SB" -n bwrap "$BW"); else order=(-n bwrap "$BW" -n agentrun "$SB"); fi
  hyperfine -N --style none --warmup "$WARMUP" --runs "$RUNS" --export-json "$T/r.json" "${order[@]}" \
    >"$T/hf.log" 2>&1 || { cat "$T/hf.log" >&2; exit 1; }
  a=$(jq '.results[] | select(.command == "agentrun") | .median' "$T/r.json")
  b=$(jq '.results[] | select(.command == "bwrap") | .median' "$T/r.json")
  awk -v r="$r" -v a="$a" -v b="$b" -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
    printf "round %d: agentrun %.2f ms, bwrap %.2f ms, ratio %.2fx (load %s)\n", r, a * 1000, b * 1000, a / b, l }'
  echo "$a $b" >>"$T/rounds"
done
awk '
  function med(v, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
  { a[NR] = $1 * 1000; b[NR] = $2 * 1000; q[NR] = $1 / $2 }
  END {
    n = NR; lo = hi = q[1]; for (i = 1; i <= n; i++) { if (q[i] < lo) lo = q[i]; if (q[i] > hi) hi = q[i] }
    printf "median agentrun sandbox: %.2f ms\nmedian bwrap:            %.2f ms\n", med(a, n), med(b, n)
    printf "ratio: %.2fx, rounds %.2fx to %.2fx (target <= 1.3x)\n", med(q, n), lo, hi }' "$T/rounds"

# CPU time, which the machine's load changes far less than the elapsed
# time: perf stat's task-clock counts every process of a run (the
# supervisor and the janitor too, which hyperfine's rusage of waited-for
# children would leave out). Rounds alternate as above.
if command -v perf >/dev/null && perf stat -x, -e task-clock true >/dev/null 2>&1; then
  : >"$T/cpu"
  for r in $(seq "${CPU_ROUNDS:-5}"); do
    # shellcheck disable=SC2086
    perf stat -x, -r "$RUNS" -e task-clock -o "$T/ps" $SB >/dev/null 2>&1 </dev/null
    echo "agentrun $(awk -F, '$3 == "task-clock" { print $1 }' "$T/ps")" >>"$T/cpu"
    perf stat -x, -r "$RUNS" -e task-clock -o "$T/ps" "${bw[@]}" >/dev/null 2>&1 </dev/null
    echo "bwrap $(awk -F, '$3 == "task-clock" { print $1 }' "$T/ps")" >>"$T/cpu"
  done
  awk '
    function med(v, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
    $1 == "agentrun" { a[++na] = $2 } $1 == "bwrap" { b[++nb] = $2; q[nb] = a[nb] / $2 }
    END { printf "CPU time (perf stat task-clock, every process), median of %d rounds: agentrun %.2f ms, bwrap %.2f ms, ratio %.2fx\n",
                 nb, med(a, na), med(b, nb), med(q, nb) }' "$T/cpu"
fi
