#!/usr/bin/env bash
# Where a start of `agentrun sandbox -- /bin/true` spends its time, phase by
# phase, without a diagnostic build: RUNS starts back to back in a
# workspace of the script's own (on the disk, as sandbox-start.sh's;
# WS_TMPFS=1: a tmpfs of a private mount namespace), each with `--debug
# --log FILE --log-format json`, whose lines carry the time to the
# nanosecond. For each line (numbers, ids and paths left out, so that the
# runs' lines match), the median time from the line before it (in time order:
# the container's init logs too), the first from just before the exec, and
# "(exit)" to just after agentrun's exit (its "at": the whole start); and
# the median time from the start to it. The lines are those the tree logs at
# --debug (runtime and sandbox), which each cost a few microseconds.
#   usage: tests/bench/sandbox-phases.sh   (RUNS=60 by default)
# Needs root, jq and a built tree.
set -euo pipefail
if [ -n "${WS_TMPFS:-}" ] && [ -z "${AR_BENCH_PRIVATE_NS:-}" ]; then
  exec env AR_BENCH_PRIVATE_NS=1 unshare -m --propagation private bash "$0" "$@"
fi
BUILDDIR=${AGENTRUN_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
AGENTRUN=$BUILDDIR/agentrun
RUNS=${RUNS:-60}
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }
[ -x "$AGENTRUN" ] || { echo "needs a built tree ($AGENTRUN)" >&2; exit 2; }

T=$(mktemp -d /tmp/agentrun-bench-phases.XXXXXX)
[ -z "${AR_BENCH_PRIVATE_NS:-}" ] || mount -t tmpfs -o mode=700 agentrun-bench "$T"
STATE=$(mktemp -d /dev/shm/agentrun-bench-phases-state.XXXXXX)
trap '[ -z "${AR_BENCH_PRIVATE_NS:-}" ] || { cd / && umount "$T"; } || true; rm -rf "$T" "$STATE"' EXIT
chmod 711 "$T"
mkdir -p "$T/ws" "$T/home" "$T/logs"
chown 65534:65534 "$T/ws" "$T/home"
unset SUDO_UID SUDO_GID
export HOME=$T/home
cd "$T/ws"
echo "workspace: $T/ws ($(stat -f -c %T "$T")), state root: $STATE, $RUNS runs"

for i in $(seq "$RUNS"); do
  t0=$EPOCHREALTIME
  "$AGENTRUN" --debug --log "$T/logs/$i.json" --log-format json --root "$STATE" sandbox -- /bin/true 2>/dev/null
  echo "$t0 $EPOCHREALTIME" >"$T/logs/$i.times"
done

# each run: "seconds since its start<TAB>line", in time order, "(exit)" last
for i in $(seq "$RUNS"); do
  read -r t0 t1 <"$T/logs/$i.times"
  jq -r '(.time | capture("^(?<s>[^.]+)(?<f>\\.[0-9]+)?Z$")) as $c
    | "\(($c.s + "Z" | fromdateiso8601))\($c.f // "")\t\(.msg | gsub("/[^ ,()]+"; "PATH") | gsub("[0-9a-f]{6,}|[0-9]+"; "#"))"' "$T/logs/$i.json" |
    awk -F'\t' -v t0="$t0" -v t1="$t1" '{ printf "%.6f\t%s\n", $1 - t0, $2 } END { printf "%.6f\t(exit)\n", t1 - t0 }' |
    sort -n -k1,1
done | awk -F'\t' -v runs="$RUNS" '
  function med(list,   n, v, i, j, t) { n = split(list, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
  $2 == "(exit)" { gap[$2] = gap[$2] " " ($1 - prev) * 1e6; at[$2] = at[$2] " " $1 * 1e6; prev = 0; next }
  { gap[$2] = gap[$2] " " ($1 - prev) * 1e6; at[$2] = at[$2] " " $1 * 1e6; seen[$2]++; prev = $1 }
  END {
    for (k in gap) { n = split(at[k], x, " "); if (k != "(exit)" && n < runs / 2) continue
      printf "%10.0f %8.0f  %s\n", med(at[k]), med(gap[k]), k }
  }' | sort -n | awk 'BEGIN { printf "%10s %8s  %s\n", "at (us)", "gap (us)", "line (medians; the gap: from the line before)" } { print }'
