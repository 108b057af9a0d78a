#!/usr/bin/env bash
# `make bench`: agentrun side by side with crun, runc and bubblewrap (start
# latency of /bin/true in one busybox bundle, peak RSS), `agentrun sandbox`
# against bwrap with an equivalent command line (tests/bench/sandbox-start.sh,
# ROUNDS/RUNS passed through as SANDBOX_ROUNDS/SANDBOX_RUNS), then the network
# path (tests/bench/relay.sh: netproxy + relay against socat and direct
# loopback) and podman with agentrun against podman with runc
# (tests/bench/podman.sh). Prints medians and ratios, writes
# tests/bench/results.md (keeping its hand-written analysis section) and, with
# gnuplot, tests/bench/results.png.
#   knobs: BENCH_RUNS (hyperfine runs per runtime, 30), BENCH_RSS_RUNS (9),
#          BENCH_SANDBOX=0 / BENCH_NET=0 / BENCH_PODMAN=0 / BENCH_CLIENTS=0 to leave a part out,
#          BENCH_BYTES / RUNS for relay.sh, ROUNDS / RUNS for podman.sh
#          (passed through; defaults below keep `make bench` near 5 minutes).
# Needs root, hyperfine, jq, busybox; crun/runc/bwrap/podman/gnuplot when present.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILDDIR=${AGENTRUN_BUILDDIR:-$SRC}
AGENTRUN=${AGENTRUN_BIN:-$BUILDDIR/agentrun}
OUT=${BENCH_OUT:-$SRC/tests/bench}
RUNS=${BENCH_RUNS:-30}
RSS_RUNS=${BENCH_RSS_RUNS:-9}
command -v hyperfine >/dev/null || { echo "bench: needs hyperfine" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench: needs jq" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (runtimes with namespaces)" >&2; exit 1; }

T=$(mktemp -d /tmp/agentrun-bench-run.XXXXXX)
cleanup() {
  local r
  for r in "$T"/root-*; do
    [ -d "$r" ] || continue
    case $r in
      *agentrun*) "$AGENTRUN" --root "$r" delete -f bench 2>/dev/null || true ;;
      *runc*) runc --root "$r" delete -f bench 2>/dev/null || true ;;
      *crun*) crun --root "$r" delete -f bench 2>/dev/null || true ;;
    esac
  done
  rm -rf "$T"
}
trap cleanup EXIT

# One busybox bundle for every runtime: agentrun's default config, /bin/true.
B=$T/bundle
mkdir -p "$B/rootfs"/{bin,proc,sys,dev,tmp,etc}
cp "$(command -v busybox)" "$B/rootfs/bin/busybox"
for a in sh true; do ln -s busybox "$B/rootfs/bin/$a"; done
"$AGENTRUN" spec --bundle "$B" >/dev/null
# One config every runtime accepts, so all run the same container: ociVersion
# 1.0.2 and no cgroup namespace or mount, which crun 1.8.1 refuses here (below).
jq '.ociVersion = "1.0.2" | .process.args = ["/bin/true"] | .process.terminal = false
    | .mounts |= map(select(.type != "cgroup")) | .linux.namespaces |= map(select(.type != "cgroup"))
    | del(.linux.resources)' "$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
# crun 1.8.1 refuses this machine's hybrid cgroup layout (v1 controllers plus
# cgroup2 at /sys/fs/cgroup/unified with hugetlb enabled) even with
# --cgroup-manager=disabled: it runs in a private mount namespace whose
# /sys/fs/cgroup is an empty tmpfs (made once, outside the timed commands).
# For a like-for-like row, one agentrun row runs without cgroups too.
cat >"$T/nocg.sh" <<'SH'
#!/bin/sh
mount -t tmpfs -o mode=0755 tmpfs /sys/fs/cgroup && exec "$@"
SH
chmod +x "$T/nocg.sh"
NAMES=() CMDS=() WRAP=()
add() { NAMES+=("$1"); CMDS+=("$2"); WRAP+=("${3:-}"); }
add agentrun "$AGENTRUN --root $T/root-agentrun run -b $B bench"
add "agentrun (no cgroup)" "$AGENTRUN --root $T/root-agentrun-nocg --cgroup-manager disabled run -b $B bench"
if command -v crun >/dev/null; then
  add "crun (no cgroup)" "crun --root $T/root-crun --cgroup-manager=disabled run -b $B bench" \
    "unshare -m --propagation private $T/nocg.sh"
fi
if command -v runc >/dev/null; then
  add runc "runc --root $T/root-runc run -b $B bench"
fi
if command -v bwrap >/dev/null; then
  add bubblewrap "bwrap --unshare-all --die-with-parent --bind $B/rootfs / --proc /proc --dev /dev /bin/true"
fi

# Each must work before its time means anything.
for i in "${!NAMES[@]}"; do
  out=$(${WRAP[$i]} sh -c "${CMDS[$i]}" 2>&1 </dev/null) || { echo "bench: ${NAMES[$i]} cannot run /bin/true: $out" >&2; exit 1; }
done

echo "== start latency of /bin/true in a busybox bundle ($RUNS runs each, load average $(cut -d' ' -f1-3 /proc/loadavg))"
# One hyperfine per runtime (crun's inside its namespace), merged after.
for i in "${!NAMES[@]}"; do
  ${WRAP[$i]} hyperfine -N --style basic --warmup 3 --runs "$RUNS" --export-json "$T/start.$i.json" \
    -n "${NAMES[$i]}" "${CMDS[$i]}" >"$T/hyperfine.$i.txt" 2>&1 || { cat "$T/hyperfine.$i.txt" >&2; exit 1; }
  grep -E 'Time|Range' "$T/hyperfine.$i.txt" | sed "s/^/${NAMES[$i]}: /"
done
jq -s '{ results: [.[].results[]] }' "$T"/start.*.json >"$T/start.json"

# Peak RSS (KiB) of the runtime's process tree: getrusage of the waited-for
# children, through GNU time when installed, else python's resource module.
peak_rss() {
  if [ -x /usr/bin/time ]; then
    $2 /usr/bin/time -f '%M' -o "$T/rss" sh -c "exec $1" >/dev/null 2>&1 </dev/null; cat "$T/rss"
  else
    $2 python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1], shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "exec $1"
  fi
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: >"$T/table"
for i in "${!NAMES[@]}"; do
  for r in $(seq "$RSS_RUNS"); do peak_rss "${CMDS[$i]}" "${WRAP[$i]}"; done | median >"$T/rss.$i"
  jq -r --arg n "${NAMES[$i]}" '
    def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    .results[] | select(.command == $n) | [(.times | median * 1000), (.mean * 1000), (.stddev * 1000)] | @tsv' \
    "$T/start.json" | { IFS=$'\t' read -r med mean sd; printf '%s\t%s\t%s\t%s\t%s\n' "${NAMES[$i]}" "$med" "$mean" "$sd" "$(cat "$T/rss.$i")"; } >>"$T/table"
done
AR_MED=$(awk -F'\t' 'NR == 1 { print $2 }' "$T/table")
AR_RSS=$(awk -F'\t' 'NR == 1 { print $5 }' "$T/table")

{
  echo "# agentrun benchmark results"
  echo
  echo "Measured by \`make bench\` (tests/bench/run.sh) on $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Runtimes: $("$AGENTRUN" --version | head -n 1)$(command -v crun >/dev/null && echo ", $(crun --version | head -n 1)")$(command -v runc >/dev/null && echo ", $(runc --version | head -n 1)")$(command -v bwrap >/dev/null && echo ", $(bwrap --version)")."
  echo "crun 1.8.1 refuses a hybrid cgroup layout (v1 controllers, cgroup2 beside them), so it runs with \`--cgroup-manager=disabled\`; the \"agentrun (no cgroup)\" row is the like-for-like comparison. bubblewrap makes no cgroup and applies no seccomp or capability setup: it is the floor."
  echo
  echo "## Start latency of /bin/true in a busybox bundle ($RUNS runs each) and peak RSS (median of $RSS_RUNS)"
  echo
  echo "| runtime | median ms | mean ms | stddev ms | vs agentrun | peak RSS KiB | RSS vs agentrun |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  awk -F'\t' -v a="$AR_MED" -v r="$AR_RSS" '{ printf "| %s | %.1f | %.1f | %.1f | %.2fx | %d | %.2fx |\n", $1, $2, $3, $4, $2 / a, $5, $5 / r }' "$T/table"
} >"$T/results.md"
sed -n '/^| runtime/,$p' "$T/results.md"

# agentrun sandbox against bwrap, in alternating rounds (its script says why).
if [ "${BENCH_SANDBOX:-1}" != 0 ] && [ -x "$SRC/tests/bench/sandbox-start.sh" ] && command -v bwrap >/dev/null; then
  echo "== agentrun sandbox -- /bin/true against bwrap (tests/bench/sandbox-start.sh)"
  if ROUNDS=${SANDBOX_ROUNDS:-15} RUNS=${SANDBOX_RUNS:-8} AGENTRUN_BUILDDIR=$BUILDDIR \
       "$SRC/tests/bench/sandbox-start.sh" >"$T/sb.txt" 2>&1; then
    tail -n 6 "$T/sb.txt"   # the medians, the two ratios, the CPU time
    { echo; echo "## agentrun sandbox -- /bin/true against bwrap with an equivalent command line (tests/bench/sandbox-start.sh)"
      echo; sed 's/^/    /' "$T/sb.txt"; } >>"$T/results.md"
  else
    echo "bench: sandbox-start.sh failed:"; tail -n 5 "$T/sb.txt"
    printf '\n## agentrun sandbox\n\nsandbox-start.sh failed: %s\n' "$(tail -n 1 "$T/sb.txt")" >>"$T/results.md"
  fi
fi

# The network path, from the netproxy engineer's script.
if [ "${BENCH_NET:-1}" != 0 ] && [ -x "$SRC/tests/bench/relay.sh" ]; then
  echo "== network path (tests/bench/relay.sh)"
  if BENCH_BYTES=${BENCH_BYTES:-$((512 * 1024 * 1024))} RUNS=${RUNS_NET:-3} AGENTRUN_BUILDDIR=$BUILDDIR \
       "$SRC/tests/bench/relay.sh" >"$T/net.txt" 2>&1; then
    cat "$T/net.txt"
    { echo; echo "## Network path: netproxy + relay against socat and direct loopback (tests/bench/relay.sh)"; echo
      echo "| path | GB/s |"; echo "| --- | ---: |"
      grep -E 'GB/s$' "$T/net.txt" | sed -E 's/^(.*[^ ]) +([0-9.]+) GB\/s$/| \1 | \2 |/'
      echo; grep -vE 'GB/s$| Killed ' "$T/net.txt" | sed 's/^/    /'; } >>"$T/results.md"
    grep -E 'GB/s$' "$T/net.txt" | sed -E 's/^(.*[^ ]) +([0-9.]+) GB\/s$/\1\t\2/' >"$T/net.tsv"
  else
    echo "bench: relay.sh failed:"; tail -n 5 "$T/net.txt"
    printf '\n## Network path\n\nrelay.sh failed: %s\n' "$(tail -n 1 "$T/net.txt")" >>"$T/results.md"
  fi
fi

# podman with agentrun against podman with runc, from the podman engineer's script.
if [ "${BENCH_PODMAN:-1}" != 0 ] && [ -x "$SRC/tests/bench/podman.sh" ] && command -v podman >/dev/null; then
  echo "== podman run --rm IMAGE true (tests/bench/podman.sh)"
  if ROUNDS=${ROUNDS:-2} RUNS=${RUNS_PODMAN:-5} WARMUP=1 AGENTRUN_BUILDDIR=$BUILDDIR \
       "$SRC/tests/bench/podman.sh" >"$T/podman.txt" 2>&1; then
    tail -n 1 "$T/podman.txt"
    printf '\n## podman\n\n%s\n' "$(tail -n 1 "$T/podman.txt")" >>"$T/results.md"
  else
    echo "bench: podman.sh failed:"; tail -n 5 "$T/podman.txt"
    printf '\n## podman\n\npodman.sh failed: %s\n' "$(tail -n 1 "$T/podman.txt")" >>"$T/results.md"
  fi
fi

# Docker and the CRI path, agentrun against runc (tests/bench/clients.sh).
if [ "${BENCH_CLIENTS:-1}" != 0 ] && [ -x "$SRC/tests/bench/clients.sh" ] && command -v dockerd >/dev/null; then
  echo "== docker run --rm and the CRI container cycle (tests/bench/clients.sh)"
  if "$SRC/tests/bench/clients.sh" >"$T/clients.txt" 2>"$T/clients.err"; then
    tail -n 2 "$T/clients.txt"
    printf '\n## Docker and CRI\n\n%s\n\n%s\n\n    %s\n' "$(tail -n 2 "$T/clients.txt" | head -n 1)" \
      "$(tail -n 1 "$T/clients.txt")" "$(tail -n 3 "$T/clients.txt" | head -n 1)" >>"$T/results.md"
  else
    echo "bench: clients.sh failed:"; tail -n 5 "$T/clients.err"
    printf '\n## Docker and CRI\n\nclients.sh failed: %s\n' "$(tail -n 1 "$T/clients.err")" >>"$T/results.md"
  fi
fi

printf '\nRerun with `make bench` (knobs at the top of tests/bench/run.sh).\n' >>"$T/results.md"
# The analysis below the generated sections is written by hand: carried over.
if [ -f "$OUT/results.md" ] && grep -q '^## Analysis and other measurements$' "$OUT/results.md"; then
  { echo; sed -n '/^## Analysis and other measurements$/,$p' "$OUT/results.md"; } >>"$T/results.md"
fi
cp "$T/results.md" "$OUT/results.md"
echo "== wrote $OUT/results.md"

if command -v gnuplot >/dev/null; then
  cut -f1,2,5 "$T/table" >"$T/start.tsv"
  [ -s "$T/net.tsv" ] || printf 'n/a\t0\n' >"$T/net.tsv"
  gnuplot -e "startdata='$T/start.tsv'; netdata='$T/net.tsv'; outfile='$OUT/results.png'" "$SRC/tests/bench/plot.gp"
  echo "== wrote $OUT/results.png"
else
  echo "bench: gnuplot not installed, no plot"
fi
