#!/usr/bin/env bats
# Docker (Debian's docker.io 20.10) driving agentrun, each step with runc
# first: the same command through `--runtime runc` and `--runtime agentrun`
# must give the same result. dockerd and its containerd are private to this
# file (tests/clients/docker.bash), started once.

bats_require_minimum_version 1.5.0
load helpers
load clients/docker

setup_file() { docker_setup_file; }
teardown_file() { docker_teardown_file; }
teardown() { docker_teardown; }

# both FN: run FN with RT=runc, then RT=agentrun; say which one failed.
both() {
  local rt
  for rt in runc agentrun; do
    RT=$rt "$@" || { echo "failed with --runtime $rt" >&2; return 1; }
  done
}

drun() { dk run --runtime "$RT" "$@" 2>"$BATS_TEST_TMPDIR/$RT.err"; }

step_run_rm() {
  run drun --rm "$DIMAGE" echo hello from docker
  [ "$status" -eq 0 ] && [ "$output" = "hello from docker" ] || { echo "$output"; cat "$BATS_TEST_TMPDIR/$RT.err"; return 1; }
  [ -z "$(dk ps -aq)" ]
}

@test "docker: run --rm" {
  both step_run_rm
}

step_exit_codes() {
  run drun --rm "$DIMAGE" sh -c 'exit 7'
  [ "$status" -eq 7 ] || { echo "exit 7 gave $status"; return 1; }
  # not executable: 126; missing: 127 (Docker maps the runtime's words)
  run drun --rm "$DIMAGE" /etc/passwd
  [ "$status" -eq 126 ] || { echo "not executable gave $status"; cat "$BATS_TEST_TMPDIR/$RT.err"; return 1; }
  run -127 drun --rm "$DIMAGE" /nonexistent
  [ "$status" -eq 127 ] || { echo "missing gave $status"; cat "$BATS_TEST_TMPDIR/$RT.err"; return 1; }
  run -127 drun --rm "$DIMAGE" no-such-command
  [ "$status" -eq 127 ] || { echo "not in PATH gave $status"; return 1; }
}

@test "docker: exit codes 7, 126 (not executable), 127 (missing)" {
  both step_exit_codes
}

step_tty() {
  # /dev/console is the pty too (the runtime-spec's terminal)
  run drun --rm -t "$DIMAGE" sh -c 'tty; stat -c "%t:%T" /dev/console "$(tty)"'
  [ "$status" -eq 0 ] || { echo "$output"; cat "$BATS_TEST_TMPDIR/$RT.err"; return 1; }
  local o=${output//$'\r'/}
  [[ "$o" == /dev/pts/* ]] || { echo "$o"; return 1; }
  [ "$(echo "$o" | sed -n 2p)" = "$(echo "$o" | sed -n 3p)" ] || { echo "$o"; return 1; }
}

@test "docker: run -t gives a pty, bound at /dev/console" {
  both step_tty
}

step_detached() {
  local n=dk-$RT-$$
  drun -d --name "$n" "$DIMAGE" sh -c 'echo started; trap "echo bye; exit 0" TERM; while :; do sleep 0.1; done' >/dev/null
  run dk exec "$n" sh -c 'echo in-exec; exit 3'
  [ "$status" -eq 3 ] && [ "$output" = in-exec ] || { echo "exec: $status $output"; return 1; }
  local _
  for _ in $(seq 30); do dk logs "$n" 2>&1 | grep -q started && break; sleep 0.1; done
  dk logs "$n" 2>&1 | grep -q started || return 1
  dk stop -t 5 "$n" >/dev/null
  [ "$(dk inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$n")" = "exited 0" ] || return 1
  dk logs "$n" 2>&1 | grep -q bye || return 1
  dk rm "$n" >/dev/null
  ! dk inspect "$n" >/dev/null 2>&1
}

@test "docker: run -d, exec, logs, stop, rm" {
  both step_detached
}

step_read_only() {
  run drun --rm --read-only "$DIMAGE" sh -c 'touch /x 2>&1; echo rc=$?'
  [[ "$output" == *"Read-only file system"*"rc=1"* ]] || { echo "$output"; return 1; }
}

@test "docker: --read-only" {
  both step_read_only
}

step_cap_drop() {
  run drun --rm --cap-drop ALL "$DIMAGE" grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status
  [ "$status" -eq 0 ] || return 1
  [ "$(echo "$output" | awk '{ print $2 }' | sort -u)" = 0000000000000000 ] || { echo "$output"; return 1; }
}

@test "docker: --cap-drop ALL" {
  both step_cap_drop
}

# The limits dockerd asks for, read back from the container's cgroup.
limits_of() {
  local f
  for f in memory:memory.limit_in_bytes memory:memory.memsw.limit_in_bytes memory:memory.soft_limit_in_bytes \
    pids:pids.max cpu:cpu.shares cpu:cpu.cfs_quota_us cpu:cpu.cfs_period_us; do
    echo "${f#*:}=$(dk_cgfile "$1" "${f%%:*}" "${f#*:}")"
  done
}

need_v1_cgroups() {
  local c
  for c in memory pids cpu; do
    [ -d "/sys/fs/cgroup/$c" ] || skip "reads v1 cgroup files; no /sys/fs/cgroup/$c here"
  done
}

step_limits() {
  local n=lim-$RT-$$
  drun -d --name "$n" --memory 64m --pids-limit 50 --cpus 0.5 "$DIMAGE" sleep 100 >/dev/null || return 1
  limits_of "$n" >"$BATS_TEST_TMPDIR/limits.$RT"
  # docker update sends every other field as zero: "leave it"
  dk update --memory 96m --memory-swap 192m "$n" >/dev/null || return 1
  dk update --cpus 0.25 --pids-limit 33 "$n" >/dev/null || return 1
  limits_of "$n" >"$BATS_TEST_TMPDIR/updated.$RT"
  dk rm -f "$n" >/dev/null
}

@test "docker: --memory, --pids-limit, --cpus and cpu.shares in the cgroup as runc's; docker update" {
  need_v1_cgroups
  both step_limits
  cat "$BATS_TEST_TMPDIR"/limits.* "$BATS_TEST_TMPDIR"/updated.*
  grep -qx memory.limit_in_bytes=67108864 "$BATS_TEST_TMPDIR/limits.agentrun"
  grep -qx pids.max=50 "$BATS_TEST_TMPDIR/limits.agentrun"
  grep -qx cpu.cfs_quota_us=50000 "$BATS_TEST_TMPDIR/limits.agentrun"
  grep -qx cpu.shares=1024 "$BATS_TEST_TMPDIR/limits.agentrun"
  diff "$BATS_TEST_TMPDIR/limits.runc" "$BATS_TEST_TMPDIR/limits.agentrun"
  grep -qx memory.limit_in_bytes=100663296 "$BATS_TEST_TMPDIR/updated.agentrun"
  grep -qx memory.memsw.limit_in_bytes=201326592 "$BATS_TEST_TMPDIR/updated.agentrun"
  grep -qx pids.max=33 "$BATS_TEST_TMPDIR/updated.agentrun"
  grep -qx cpu.cfs_quota_us=25000 "$BATS_TEST_TMPDIR/updated.agentrun"
  diff "$BATS_TEST_TMPDIR/updated.runc" "$BATS_TEST_TMPDIR/updated.agentrun"
}

step_user() {
  run drun --rm --user 1000:1000 "$DIMAGE" id
  [ "$output" = "uid=1000 gid=1000 groups=1000" ] || { echo "$output"; return 1; }
}

@test "docker: --user" {
  both step_user
}

step_volume() {
  local v=$BATS_TEST_TMPDIR/vol-$RT
  mkdir -p "$v"
  echo from-host >"$v/in"
  run drun --rm -v "$v:/data" "$DIMAGE" sh -c 'cat /data/in; echo from-container >/data/out'
  [ "$output" = from-host ] || { echo "$output"; return 1; }
  [ "$(cat "$v/out")" = from-container ]
}

@test "docker: -v bind volume" {
  both step_volume
}

step_tmpfs() {
  run drun --rm --tmpfs /scratch "$DIMAGE" sh -c 'grep " /scratch " /proc/mounts; echo x >/scratch/f && echo written'
  [[ "$output" == "tmpfs /scratch tmpfs"* ]] && [[ "$output" == *written* ]] || { echo "$output"; return 1; }
}

@test "docker: --tmpfs" {
  both step_tmpfs
}

step_network_none() {
  run drun --rm --network none "$DIMAGE" sh -c \
    'ip -o link show lo; nc -l -p 7777 -e echo lo-ok & sleep 0.3; nc 127.0.0.1 7777 </dev/null; wait'
  [[ "$output" == *"<LOOPBACK,UP,LOWER_UP>"* ]] && [[ "$output" == *lo-ok* ]] || { echo "$output"; return 1; }
}

@test "docker: --network none has lo up" {
  both step_network_none
}

# dockerd's network namespace is the host here: a listener on docker0's
# address there, reached from a container on the default bridge.
step_bridge() {
  local port=$((20000 + RANDOM % 20000)) dpid
  dpid=$(cat "$DK/dockerd.pid.ours")
  nsenter --net=/proc/$dpid/ns/net busybox nc -l -p "$port" -e echo "host-listener-$RT" &
  local l=$!
  sleep 0.3
  # the default route's gateway is docker0's address
  run drun --rm "$DIMAGE" sh -c "gw=\$(ip route | awk '/^default/ { print \$3 }'); echo gw=\$gw; nc -w 5 \$gw $port </dev/null"
  kill "$l" 2>/dev/null; wait "$l" 2>/dev/null
  [[ "$output" == *"host-listener-$RT"* ]] || { echo "$output"; cat "$BATS_TEST_TMPDIR/$RT.err"; return 1; }
}

@test "docker: the default bridge reaches a listener on the (dockerd's namespace) host" {
  need_cmd busybox
  both step_bridge
}
