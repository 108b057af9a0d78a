#!/usr/bin/env bash
# Start-up of `agentrun sandbox -- /bin/true` against bubblewrap, measured
# side by side with hyperfine, with two bwrap command lines:
# - "bwrap" (the equivalent line): what bwrap can do of what sandbox does by
#   default, read from the spec sandbox runs (`agentrun spec --agent` in the
#   workspace, the same code path): its mounts (the host's folders and the
#   workspace's protected names that exist bound read-only, /proc, /dev,
#   /dev/shm, mqueue, the tmpfs home and /tmp), its masked paths that exist
#   (a read-only tmpfs over a folder, /dev/null over a file), its read-only
#   paths, the read-only root, hostname, ids, environment and working folder,
#   every namespace unshared, a new session, no capabilities, death with the
#   parent, and the agent seccomp filter itself, compiled by this tree
#   (tests/bench/seccomp-export) and handed over on an fd. Nothing is given
#   to bwrap that sandbox does not do. What bwrap cannot do stays sandbox's
#   alone: the placeholders of the protected names that do not exist, the
#   memory and pids cgroup, the sysctls, the rlimits, Landlock, the connect
#   filter and its supervisor, the janitor.
# - "bwrap-min" (the minimal line, the only one before): the host read-only,
#   tmpfs home and /tmp, the workspace read-write, every namespace unshared,
#   a new session, no capabilities; no seccomp filter, masks or protected
#   names.
#   usage: tests/bench/sandbox-start.sh   (ROUNDS=15 RUNS=8 WARMUP=1 by default)
# The state root is on a tmpfs, as sandbox's is wherever it runs by default
# (/run/agentrun as root and $XDG_RUNTIME_DIR/agentrun as a user are tmpfs
# on a systemd host, its private folder without one is in /dev/shm); on
# this VM /run and /tmp are on the disk. STATE_ON_DISK=1 puts it in the
# temporary folder instead. The workspace is on the disk in either case.
# On a shared machine the load changes by the second, so one hyperfine of
# each in turn compares two different machines: instead there are ROUNDS
# rounds, each timing the three (the order rotating), and the ratios are
# taken within a round. Prints each round, then the median of the rounds'
# medians and ratios with their range (the target: agentrun within 1.3x of
# the equivalent bwrap line).
# WS_TMPFS=1 puts the workspace (and home) on a tmpfs of a private mount
# namespace instead: this VM's disk is an ext4 without a journal, where a
# file created soon after others were removed in the same inode group costs
# a scan past each of them (ext4's recently_deleted), so the protected
# names' placeholders cost from 0.1 to several ms a run depending on what
# the machine (other users included) removed there in the last half
# minute; bwrap makes none. The default stays the disk. WS_EXT4=1 puts them
# on a journaled ext4 instead (a loop image in /var/tmp, mounted in a private
# mount namespace): a disk as most machines have one, where ext4 does not
# look at recently freed inodes (needs mkfs.ext4 and a loop device).
# Needs root, hyperfine, bwrap, jq, perl (to rewind the filter's fd between
# bwrap runs) and a built tree (agentrun, tests/bench/seccomp-export).
set -euo pipefail
if { [ -n "${WS_TMPFS:-}" ] || [ -n "${WS_EXT4:-}" ]; } && [ -z "${AR_BENCH_PRIVATE_NS:-}" ]; then
  exec env AR_BENCH_PRIVATE_NS=1 unshare -m --propagation private bash "$0" "$@"
fi
BUILDDIR=${AGENTRUN_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
AGENTRUN=$BUILDDIR/agentrun
ROUNDS=${ROUNDS:-15}
RUNS=${RUNS:-8}
WARMUP=${WARMUP:-1}
for c in hyperfine bwrap jq perl; do
  command -v "$c" >/dev/null || { echo "needs $c" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }

T=$(mktemp -d /tmp/agentrun-bench-sb.XXXXXX)
IMG=
if [ -n "${WS_EXT4:-}" ]; then
  command -v mkfs.ext4 >/dev/null || { echo "WS_EXT4 needs mkfs.ext4" >&2; exit 2; }
  IMG=$(mktemp /var/tmp/agentrun-bench-ext4.XXXXXX)
  truncate -s 512M "$IMG" && mkfs.ext4 -q -F -j "$IMG" && mount -o loop "$IMG" "$T" ||
    { rm -f "$IMG"; rmdir "$T"; echo "WS_EXT4: no journaled ext4 loop mount here" >&2; exit 2; }
  chmod 700 "$T"
elif [ -n "${AR_BENCH_PRIVATE_NS:-}" ]; then
  mount -t tmpfs -o mode=700 agentrun-bench "$T"
fi
STATE=$T/state
if [ -z "${STATE_ON_DISK:-}" ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
  STATE=$(mktemp -d /dev/shm/agentrun-bench-sb-state.XXXXXX)
fi
trap 'exec 9<&-; [ -z "${AR_BENCH_PRIVATE_NS:-}" ] || { cd / && umount "$T"; } || true; rm -rf "$T"; [ -z "$IMG" ] || rm -f "$IMG"; [ "$STATE" = "$T/state" ] || rm -rf "$STATE"' EXIT
echo "state root: $STATE ($(stat -f -c %T "$(dirname "$STATE")")), workspace: $T/ws ($(stat -f -c %T "$T"))"
chmod 711 "$T"
WS=$T/ws HOMEDIR=$T/home
mkdir -p "$WS" "$HOMEDIR"
chown 65534:65534 "$WS" "$HOMEDIR"

SECCOMP_EXPORT=$BUILDDIR/tests/bench/seccomp-export
[ -x "$AGENTRUN" ] && [ -x "$SECCOMP_EXPORT" ] || { echo "needs a built tree ($AGENTRUN, $SECCOMP_EXPORT)" >&2; exit 2; }
# the environment sandbox and spec see is set here, not by an `env` in
# front: its exec would be timed too, and bwrap has none
unset SUDO_UID SUDO_GID
export HOME=$HOMEDIR

# Does PATH exist inside the container the spec in $1 describes? Through
# the mount that holds it: a bind's source on the host, nothing in a fresh
# tmpfs, /proc's entries as the host's /proc has them, else the rootfs.
in_container() {
  local p=$1 spec=$2 best="" src="" type="" d s t
  while IFS=$'\t' read -r t s d; do
    case "$p/" in "${d%/}/"*) if [ ${#d} -gt ${#best} ]; then best=$d src=$s type=$t; fi ;; esac
  done < <(jq -r '.mounts[] | [.type, .source, .destination] | @tsv' "$spec/config.json")
  case $type in
    bind) [ -e "$src${p#"$best"}" ] ;;
    proc) [ -e "$p" ] ;;
    "") [ -e "$spec/rootfs$p" ] ;;
    *) return 1 ;;
  esac
}

# The equivalent bwrap line for the spec in $1 (a bundle of `agentrun spec
# --agent` made in the workspace), running "${@:2}", in the array EQ.
# The filter is read from fd 9.
equivalent_line() {
  local spec=$1 t s d ro mode size p
  shift
  EQ=(bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL
    --uid "$(jq -r .process.user.uid "$spec/config.json")" --gid "$(jq -r .process.user.gid "$spec/config.json")"
    --hostname "$(jq -r .hostname "$spec/config.json")" --seccomp 9)
  # the rootfs's folders and links, as sandbox's bundle has them
  for p in "$spec"/rootfs/*; do
    if [ -L "$p" ]; then EQ+=(--symlink "$(readlink "$p")" "/${p##*/}"); else EQ+=(--dir "/${p##*/}"); fi
  done
  while IFS=$'\t' read -r t s d ro mode size; do
    case $t in
      bind) if [ "$ro" = 1 ]; then EQ+=(--ro-bind "$s" "$d"); else EQ+=(--bind "$s" "$d"); fi ;;
      proc) EQ+=(--proc "$d") ;;
      # bwrap's --dev: a tmpfs with the usual devices and a devpts
      tmpfs) if [ "$d" = /dev ]; then EQ+=(--dev /dev); else EQ+=(${mode:+--perms "$mode"} ${size:+--size "$size"} --tmpfs "$d"); fi ;;
      devpts) ;;
      mqueue) EQ+=(--mqueue "$d") ;;
      *) echo "no bwrap equivalent for a $t mount on $d" >&2; exit 2 ;;
    esac
  done < <(jq -r '.mounts[] | [.type, .source, .destination,
      (if (.options | index("ro")) then 1 else 0 end),
      ((.options[] | select(startswith("mode=")) | ltrimstr("mode=") | if length == 3 then "0" + . else . end) // ""),
      ((.options[] | select(startswith("size=")) | ltrimstr("size=")
        | if endswith("k") then (rtrimstr("k") | tonumber * 1024 | tostring) else . end) // "")] | @tsv' "$spec/config.json")
  # masked paths that exist: a read-only empty tmpfs over a folder, the null
  # device over a file (a device still: bwrap's --ro-bind would make it nodev)
  while read -r p; do
    in_container "$p" "$spec" || continue
    if [ -d "$p" ]; then EQ+=(--perms 0555 --tmpfs "$p" --remount-ro "$p"); else EQ+=(--dev-bind /dev/null "$p"); fi
  done < <(jq -r '.linux.maskedPaths[]' "$spec/config.json")
  # read-only paths that exist; bwrap's --proc already binds /proc/sys,
  # sysrq-trigger, irq and bus read-only over themselves
  while read -r p; do
    case $p in /proc/sys | /proc/sysrq-trigger | /proc/irq | /proc/bus) continue ;; esac
    in_container "$p" "$spec" && EQ+=(--ro-bind "$p" "$p")
  done < <(jq -r '.linux.readonlyPaths[]' "$spec/config.json")
  [ "$(jq -r .root.readonly "$spec/config.json")" = true ] && EQ+=(--remount-ro /)
  EQ+=(--chdir "$(jq -r .process.cwd "$spec/config.json")" --clearenv)
  while IFS='=' read -r s d; do EQ+=(--setenv "$s" "$d"); done < <(jq -r '.process.env[]' "$spec/config.json")
  EQ+=("$@")
}

# The filter, the same program sandbox loads (its spec compiled by this
# tree), rewound before each bwrap run: bwrap reads it to the end from the
# one open file all runs share.
spec_of() { (cd "$2" && "$AGENTRUN" spec --agent --bundle "$1" 2>/dev/null); }
spec_of "$T/spec" "$WS"
"$SECCOMP_EXPORT" "$T/spec/config.json" >"$T/agent.bpf" 2>/dev/null
exec 9<"$T/agent.bpf"
REWIND="perl -e 'open(my \$f, \"<&=9\") or die; sysseek(\$f, 0, 0) or die'"

# The equivalent line confines: a masked file is empty, a protected name
# that exists is read-only, a call the profile refuses fails, the workspace
# is writable. In a folder of its own, with a protected name present.
CHK=$T/chk
# root's: bwrap run by root maps the sandbox's uid to root's
mkdir -p "$CHK/.git/hooks" && touch "$CHK/.envrc"
spec_of "$T/chkspec" "$CHK"
equivalent_line "$T/chkspec" /bin/sh -c '
  cat /etc/shadow >/dev/null && [ -z "$(cat /etc/shadow)" ] || { echo "a masked file is readable"; exit 1; }
  ! (: >>.envrc) 2>/dev/null || { echo ".envrc is writable"; exit 1; }
  ! (: >.git/hooks/pre-commit) 2>/dev/null || { echo ".git/hooks is writable"; exit 1; }
  ! unshare -U true 2>/dev/null || { echo "unshare is allowed"; exit 1; }
  : >ok'
"${EQ[@]}" 9<"$T/agent.bpf" || { echo "the equivalent bwrap line does not confine as sandbox does" >&2; exit 1; }
[ -e "$CHK/ok" ] || { echo "the equivalent bwrap line's check wrote nothing in the workspace" >&2; exit 1; }
echo "equivalent bwrap line checked: masks, protected names, seccomp filter ($(($(stat -c %s "$T/agent.bpf") / 8)) instructions)"

equivalent_line "$T/spec" /bin/true
bw=("${EQ[@]}")
# the minimal line, as before
bm=(bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL
  --uid 65534 --gid 65534)
for d in /usr /etc /opt; do [ -d "$d" ] && bm+=(--ro-bind "$d" "$d"); done
for d in /bin /sbin /lib /lib32 /lib64 /libx32; do
  if [ -L "$d" ]; then bm+=(--symlink "$(readlink "$d")" "$d")
  elif [ -d "$d" ]; then bm+=(--ro-bind "$d" "$d"); fi
done
bm+=(--proc /proc --dev /dev --tmpfs /tmp --tmpfs "$HOMEDIR" --bind "$WS" "$WS" --chdir "$WS"
  --clearenv --setenv PATH /usr/bin:/bin --setenv HOME "$HOMEDIR" /bin/true)
cd "$WS"
# each must work before it is timed
"${bw[@]}" 9<"$T/agent.bpf"
"${bm[@]}"
SB="$AGENTRUN --root $STATE sandbox -- /bin/true"
$SB
[ -n "${SHOW_LINE:-}" ] && printf '%q ' "${bw[@]}" && echo

BW=$(printf '%q ' "${bw[@]}")
BM=$(printf '%q ' "${bm[@]}")
: >"$T/rounds"
for r in $(seq "$ROUNDS"); do
  case $((r % 3)) in
    1) order=(agentrun bwrap bwrap-min) ;;
    2) order=(bwrap bwrap-min agentrun) ;;
    0) order=(bwrap-min agentrun bwrap) ;;
  esac
  args=()
  for n in "${order[@]}"; do
    case $n in
      agentrun) args+=(--prepare "$REWIND" -n agentrun "$SB") ;;
      bwrap) args+=(--prepare "$REWIND" -n bwrap "$BW") ;;
      bwrap-min) args+=(--prepare "$REWIND" -n bwrap-min "$BM") ;;
    esac
  done
  # every command's prepare is the same rewind, so that none waits less
  # between runs; hyperfine takes the options before the commands
  pre=() cmds=()
  for ((i = 0; i < ${#args[@]}; i += 5)); do pre+=("${args[i]}" "${args[i + 1]}"); cmds+=("${args[@]:i+2:3}"); done
  hyperfine -N --style none --warmup "$WARMUP" --runs "$RUNS" --export-json "$T/r.json" "${pre[@]}" "${cmds[@]}" \
    >"$T/hf.log" 2>&1 || { cat "$T/hf.log" >&2; exit 1; }
  a=$(jq '.results[] | select(.command == "agentrun") | .median' "$T/r.json")
  b=$(jq '.results[] | select(.command == "bwrap") | .median' "$T/r.json")
  m=$(jq '.results[] | select(.command == "bwrap-min") | .median' "$T/r.json")
  awk -v r="$r" -v a="$a" -v b="$b" -v m="$m" -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
    printf "round %d: agentrun %.2f ms, bwrap %.2f ms (%.2fx), bwrap-min %.2f ms (%.2fx) (load %s)\n",
      r, a * 1000, b * 1000, a / b, m * 1000, a / m, l }'
  echo "$a $b $m" >>"$T/rounds"
done
awk '
  function med(v, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
  function range(v, n,   i, lo, hi) { lo = hi = v[1]; for (i = 1; i <= n; i++) { if (v[i] < lo) lo = v[i]; if (v[i] > hi) hi = v[i] }
    return sprintf("%.2fx to %.2fx", lo, hi) }
  { a[NR] = $1 * 1000; b[NR] = $2 * 1000; m[NR] = $3 * 1000; q[NR] = $1 / $2; qm[NR] = $1 / $3 }
  END {
    n = NR
    printf "median agentrun sandbox: %.2f ms\nmedian bwrap:            %.2f ms (the equivalent line)\nmedian bwrap-min:        %.2f ms (the minimal line)\n",
      med(a, n), med(b, n), med(m, n)
    rq = range(q, n); rm = range(qm, n)
    printf "ratio to bwrap:     %.2fx, rounds %s (target <= 1.3x)\n", med(q, n), rq
    printf "ratio to bwrap-min: %.2fx, rounds %s\n", med(qm, n), rm }' "$T/rounds"

# CPU time, which the machine's load changes far less than the elapsed
# time: perf stat's task-clock counts every process of a run (the
# supervisor and the janitor too, which hyperfine's rusage of waited-for
# children would leave out). One perf stat a run, so that each bwrap run
# reads the filter from its own start; the three alternate run by run.
if command -v perf >/dev/null && perf stat -x, -e task-clock true >/dev/null 2>&1; then
  : >"$T/cpu"
  cpu_of() { perf stat -x, -e task-clock -o "$T/ps" "$@" >/dev/null 2>&1 </dev/null 9<"$T/agent.bpf"
    awk -F, '$3 == "task-clock" { print $1 }' "$T/ps"; }
  for r in $(seq "${CPU_ROUNDS:-5}"); do
    for i in $(seq "$RUNS"); do
      # shellcheck disable=SC2086
      echo "$r agentrun $(cpu_of $SB)" >>"$T/cpu"
      echo "$r bwrap $(cpu_of "${bw[@]}")" >>"$T/cpu"
      echo "$r bwrap-min $(cpu_of "${bm[@]}")" >>"$T/cpu"
    done
  done
  awk '
    function med(v, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
      return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
    { s[$1, $2] += $3; c[$1, $2]++; if ($1 > nr) nr = $1 }
    END {
      for (r = 1; r <= nr; r++) { a[r] = s[r, "agentrun"] / c[r, "agentrun"]; b[r] = s[r, "bwrap"] / c[r, "bwrap"]
        m[r] = s[r, "bwrap-min"] / c[r, "bwrap-min"]; q[r] = a[r] / b[r]; qm[r] = a[r] / m[r] }
      printf "CPU time (perf stat task-clock, every process), median of %d rounds of means: agentrun %.2f ms, bwrap %.2f ms (%.2fx), bwrap-min %.2f ms (%.2fx)\n",
             nr, med(a, nr), med(b, nr), med(q, nr), med(m, nr), med(qm, nr) }' "$T/cpu"
fi
