#!/usr/bin/env bats
# podman 4.3 driving the runtime under test (agentrun by default; prove the
# suite itself with TEST_RUNTIME=/usr/sbin/runc). Each file gets its own
# podman store, config and image: see tests/clients/podman.bash.

bats_require_minimum_version 1.5.0
load helpers
load clients/podman

setup_file() { podman_setup_file; }
teardown_file() { podman_teardown_file; }
teardown() { podman_teardown; }

# wait_gone PID: true once PID has exited (or is a zombie), within 5 s.
wait_gone() {
  local _
  for _ in $(seq 50); do
    [ -e "/proc/$1" ] || return 0
    [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ] && return 0
    sleep 0.1
  done
  return 1
}

# The pid of a running container's init, as podman knows it.
ctr_pid() { pm inspect --format '{{.State.Pid}}' "$1"; }

# The host path of a container's cgroup in one v1 controller.
ctr_cgroup() {
  local pid=$1 ctrl=$2 rel
  rel=$(awk -F: -v c="$ctrl" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' "/proc/$pid/cgroup")
  [ -n "$rel" ] || return 1
  echo "/sys/fs/cgroup/$ctrl$rel"
}

# cg_read PID V1CONTROLLER V1FILE V2FILE: a cgroup file of the container's,
# from the v1 controller where there is one (hybrid, as here), else cgroup2.
cg_read() {
  local pid=$1 cg rel
  if cg=$(ctr_cgroup "$pid" "$2"); then
    cat "$cg/$3"
  else
    rel=$(awk -F: '$1 == "0" { print $3 }' "/proc/$pid/cgroup")
    cat "/sys/fs/cgroup$rel/$4"
  fi
}

@test "podman: run --rm prints, exits 0 and leaves no container" {
  run pm run --rm "$IMAGE" echo hello from the container
  [ "$status" -eq 0 ]
  [ "$output" = "hello from the container" ]
  run pm ps -a -q
  [ -z "$output" ]
}

@test "podman: run -i passes stdin through" {
  run sh -c "echo piped-in | podman --runtime '$PODMAN_RUNTIME' run -i --rm '$IMAGE' cat"
  [ "$status" -eq 0 ]
  [ "$output" = piped-in ]
}

@test "podman: the process's own exit code is podman's" {
  run pm run --rm "$IMAGE" sh -c 'exit 42'
  [ "$status" -eq 42 ]
  run pm run --rm "$IMAGE" false
  [ "$status" -eq 1 ]
}

@test "podman: a missing command exits 127 and leaves nothing behind" {
  run -127 pm run --rm "$IMAGE" /no/such/binary
  # podman deletes the half-made container with `delete --force`, which must
  # not fail for a container the runtime already cleaned up
  [[ "$output" != *"after creation failed"* ]]
  run -127 pm run --rm "$IMAGE" no-such-command-in-path
  [[ "$output" != *"after creation failed"* ]]
  run pm ps -a -q
  [ -z "$output" ]
  run ls "$PT/rstate"
  [ -z "$output" ]
}

@test "podman: a file that is not executable exits 126" {
  run pm run --rm "$IMAGE" /etc/passwd
  [ "$status" -eq 126 ]
}

@test "podman: run -d, then exec sees the same container" {
  local cid pid
  cid=$(pm run -d "$IMAGE" sleep 1000)
  run pm exec "$cid" sh -c 'cat /proc/1/cmdline | tr "\0" " "'
  [ "$status" -eq 0 ]
  [ "$output" = "sleep 1000 " ]
  # exec's process shares the init's namespaces
  pid=$(ctr_pid "$cid")
  run pm exec "$cid" readlink /proc/self/ns/pid
  [ "$output" = "$(readlink /proc/$pid/ns/pid)" ]
  run pm exec "$cid" readlink /proc/self/ns/mnt
  [ "$output" = "$(readlink /proc/$pid/ns/mnt)" ]
  # its exit code, env, user and workdir
  run pm exec "$cid" sh -c 'exit 5'
  [ "$status" -eq 5 ]
  run pm exec -e GREETING=hi "$cid" sh -c 'echo $GREETING'
  [ "$output" = hi ]
  run pm exec -u 65534 -w /tmp "$cid" sh -c 'echo $(id -u) $(pwd)'
  [ "$output" = "65534 /tmp" ]
  run -127 pm exec "$cid" /no/such/binary
  run -126 pm exec "$cid" /etc/passwd
}

@test "podman: exec -i passes stdin through" {
  local cid
  cid=$(pm run -d "$IMAGE" sleep 1000)
  run sh -c "echo via-exec | podman --runtime '$PODMAN_RUNTIME' exec -i '$cid' cat"
  [ "$status" -eq 0 ]
  [ "$output" = via-exec ]
}

@test "podman: exec -t gets a terminal" {
  need_cmd script
  local cid
  cid=$(pm run -d "$IMAGE" sleep 1000)
  run script -qec "podman --runtime '$PODMAN_RUNTIME' exec -t '$cid' sh -c 'tty; stty size'" /dev/null
  [ "$status" -eq 0 ]
  [[ "$output" == */dev/pts/* ]]
  # without -t, no terminal
  run pm exec "$cid" tty
  [ "$status" -ne 0 ]
}

@test "podman: run -t gets a terminal through the console socket" {
  need_cmd script
  run script -qec "podman --runtime '$PODMAN_RUNTIME' run --rm -t '$IMAGE' sh -c 'tty; exit 3'" /dev/null
  [ "$status" -eq 3 ]
  [[ "$output" == */dev/pts/0* ]]
}

@test "podman: logs has stdout and stderr" {
  local cid
  cid=$(pm run -d "$IMAGE" sh -c 'echo to-stdout; echo to-stderr >&2')
  run pm wait "$cid"
  [ "$output" = 0 ]
  run pm logs "$cid"
  [[ "$output" == *to-stdout* ]]
  [[ "$output" == *to-stderr* ]]
}

@test "podman: stop sends SIGTERM to the init" {
  local cid
  cid=$(pm run -d "$IMAGE" sh -c 'trap "exit 7" TERM; echo ready; while :; do sleep 0.1; done')
  until pm logs "$cid" | grep -q ready; do sleep 0.1; done
  run pm stop -t 10 "$cid"
  [ "$status" -eq 0 ]
  run pm inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$cid"
  [ "$output" = "exited 7" ]
}

@test "podman: stop falls back to SIGKILL" {
  local cid start
  # sleep as pid 1 has no handler, so SIGTERM does nothing
  cid=$(pm run -d "$IMAGE" sleep 1000)
  start=$SECONDS
  run pm stop -t 1 "$cid"
  [ "$status" -eq 0 ]
  [ $((SECONDS - start)) -lt 10 ]
  run pm inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$cid"
  [ "$output" = "exited 137" ]
}

@test "podman: kill delivers the signal asked for" {
  local cid
  cid=$(pm run -d "$IMAGE" sh -c 'trap "exit 9" USR1; echo ready; while :; do sleep 0.1; done')
  until pm logs "$cid" | grep -q ready; do sleep 0.1; done
  run pm kill -s USR1 "$cid"
  [ "$status" -eq 0 ]
  run pm wait "$cid"
  [ "$output" = 9 ]
  cid=$(pm run -d "$IMAGE" sleep 1000)
  run pm kill "$cid"
  [ "$status" -eq 0 ]
  run pm wait "$cid"
  [ "$output" = 137 ]
}

@test "podman: rm -f removes a running container and its process" {
  local cid pid
  cid=$(pm run -d "$IMAGE" sleep 1000)
  pid=$(ctr_pid "$cid")
  [ -d "/proc/$pid" ]
  run pm rm -f -t 0 "$cid"
  [ "$status" -eq 0 ]
  run pm ps -a -q --no-trunc
  [[ "$output" != *"$cid"* ]]
  wait_gone "$pid"
  # the runtime forgot it too
  [ ! -e "$PT/rstate/$cid" ]
}

@test "podman: inspect reports the live state" {
  local cid pid
  cid=$(pm run -d "$IMAGE" sleep 1000)
  run pm inspect --format '{{.State.Status}} {{.State.Running}} {{.OCIRuntime}}' "$cid"
  [ "$output" = "running true $PODMAN_RUNTIME" ]
  pid=$(ctr_pid "$cid")
  [ "$pid" -gt 1 ]
  grep -q sleep "/proc/$pid/cmdline"
  run pm container exists "$cid"
  [ "$status" -eq 0 ]
}

@test "podman: top lists the container's processes" {
  local cid
  cid=$(pm run -d "$IMAGE" sleep 1000)
  run pm top "$cid" pid comm args
  [ "$status" -eq 0 ]
  [[ "$output" == *"sleep 1000"* ]]
  # pid as the container sees it
  [[ "${lines[1]}" =~ ^1[[:space:]] ]]
}

@test "podman: pause freezes and unpause thaws" {
  local cid pid
  cid=$(pm run -d "$IMAGE" sleep 1000)
  pid=$(ctr_pid "$cid")
  run pm pause "$cid"
  [ "$status" -eq 0 ]
  run pm inspect --format '{{.State.Status}}' "$cid"
  [ "$output" = paused ]
  [[ "$(cg_read "$pid" freezer freezer.state cgroup.events)" == *@(FROZEN|frozen 1)* ]]
  run pm unpause "$cid"
  [ "$status" -eq 0 ]
  run pm inspect --format '{{.State.Status}}' "$cid"
  [ "$output" = running ]
  [[ "$(cg_read "$pid" freezer freezer.state cgroup.events)" == *@(THAWED|frozen 0)* ]]
  run pm exec "$cid" true
  [ "$status" -eq 0 ]
}

@test "podman: --network none leaves only a private loopback" {
  run pm run --rm --network none "$IMAGE" sh -c 'ls /sys/class/net; readlink /proc/self/ns/net'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = lo ]
  [ "${#lines[@]}" -eq 2 ]
  [ "${lines[1]}" != "$(readlink /proc/self/ns/net)" ]
}

@test "podman: --network ns:PATH joins an existing network namespace" {
  # what podman does for every bridge (CNI/netavark) network: it makes the
  # namespace, and the runtime joins it by path
  unshare --net sleep 1000 &
  local holder=$! want i
  disown "$holder" # no "Killed" notice when teardown kills it
  track_pid "$holder"
  for i in $(seq 50); do
    want=$(readlink "/proc/$holder/ns/net")
    [ "$want" != "$(readlink /proc/self/ns/net)" ] && break
    sleep 0.05
  done
  [ "$want" != "$(readlink /proc/self/ns/net)" ]
  run pm run --rm --network "ns:/proc/$holder/ns/net" "$IMAGE" sh -c 'readlink /proc/self/ns/net; ls /sys/class/net'
  kill_tracked
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$want" ]
  [ "${lines[1]}" = lo ]
}

@test "podman: --network host, --pid host and --ipc host share the host's" {
  run pm run --rm --network host --pid host --ipc host "$IMAGE" \
    sh -c 'readlink /proc/self/ns/net; readlink /proc/self/ns/pid; readlink /proc/self/ns/ipc'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$(readlink /proc/self/ns/net)" ]
  [ "${lines[1]}" = "$(readlink /proc/self/ns/pid)" ]
  [ "${lines[2]}" = "$(readlink /proc/self/ns/ipc)" ]
}

@test "podman: --read-only makes the root read-only" {
  run pm run --rm --read-only "$IMAGE" touch /newfile
  [ "$status" -ne 0 ]
  [[ "$output" == *"Read-only file system"* ]]
  # podman still mounts a writable /tmp
  run pm run --rm --read-only "$IMAGE" touch /tmp/ok
  [ "$status" -eq 0 ]
  run pm run --rm "$IMAGE" touch /newfile
  [ "$status" -eq 0 ]
}

@test "podman: --cap-drop all leaves no capabilities" {
  run pm run --rm --cap-drop all "$IMAGE" grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -eq 5 ]
  [ "$(echo "$output" | awk '{ print $2 }' | sort -u)" = 0000000000000000 ]
  run pm run --rm --cap-drop all "$IMAGE" chown 65534 /tmp
  [ "$status" -ne 0 ]
  # the default set has CAP_CHOWN, so the check above means something
  run pm run --rm "$IMAGE" chown 65534 /tmp
  [ "$status" -eq 0 ]
}

@test "podman: --security-opt no-new-privileges sets NoNewPrivs" {
  run pm run --rm --security-opt no-new-privileges "$IMAGE" grep NoNewPrivs /proc/self/status
  [[ "$output" =~ NoNewPrivs:[[:space:]]+1 ]]
  run pm run --rm "$IMAGE" grep NoNewPrivs /proc/self/status
  [[ "$output" =~ NoNewPrivs:[[:space:]]+0 ]]
}

@test "podman: --security-opt seccomp=FILE applies the profile" {
  local prof=$BATS_TEST_TMPDIR/seccomp.json
  cat >"$prof" <<'EOS'
{ "defaultAction": "SCMP_ACT_ALLOW",
  "syscalls": [ { "names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1 } ] }
EOS
  run pm run --rm --security-opt "seccomp=$prof" "$IMAGE" mkdir /tmp/d
  [ "$status" -ne 0 ]
  [[ "$output" == *"Operation not permitted"* ]]
  run pm run --rm --security-opt "seccomp=$prof" "$IMAGE" grep '^Seccomp:' /proc/self/status
  [[ "$output" =~ Seccomp:[[:space:]]+2 ]]
  run pm run --rm "$IMAGE" mkdir /tmp/d
  [ "$status" -eq 0 ]
  # podman's default profile is applied too
  run pm run --rm "$IMAGE" grep '^Seccomp:' /proc/self/status
  [[ "$output" =~ Seccomp:[[:space:]]+2 ]]
  run pm run --rm --security-opt seccomp=unconfined "$IMAGE" grep '^Seccomp:' /proc/self/status
  [[ "$output" =~ Seccomp:[[:space:]]+0 ]]
}

@test "podman: --memory, --pids-limit and --cpus land in the container's cgroups" {
  local cid pid
  cid=$(pm run -d --memory 64m --pids-limit 50 --cpus 0.5 "$IMAGE" sleep 1000)
  pid=$(ctr_pid "$cid")
  grep -q "$cid" "/proc/$pid/cgroup"
  [ "$(cg_read "$pid" memory memory.limit_in_bytes memory.max)" -eq $((64 * 1024 * 1024)) ]
  [ "$(cg_read "$pid" pids pids.max pids.max)" = 50 ]
  local quota period
  if ctr_cgroup "$pid" cpu >/dev/null; then
    quota=$(cg_read "$pid" cpu cpu.cfs_quota_us -)
    period=$(cg_read "$pid" cpu cpu.cfs_period_us -)
  else
    read -r quota period < <(cg_read "$pid" - - cpu.max)
  fi
  [ $((quota * 2)) -eq "$period" ]
}

@test "podman: --pids-limit is enforced" {
  run pm run --rm --pids-limit 5 "$IMAGE" sh -c 'for i in 1 2 3 4 5 6 7 8; do sleep 5 & done; wait'
  [[ "$output" == *"Resource temporarily unavailable"* || "$output" == *"can't fork"* ]]
}

@test "podman: --user, --workdir and -e" {
  run pm run --rm --user 65534:65534 --workdir /tmp -e AGENT_VAR=set-by-test "$IMAGE" \
    sh -c 'echo $(id -u):$(id -g) $(pwd) $AGENT_VAR'
  [ "$status" -eq 0 ]
  [ "$output" = "65534:65534 /tmp set-by-test" ]
}

@test "podman: --hostname, --sysctl and --ulimit" {
  run pm run --rm --hostname agentbox --sysctl net.ipv4.ip_forward=1 --sysctl kernel.shm_rmid_forced=1 \
    --ulimit nofile=512:512 --ulimit nproc=1024:1024 "$IMAGE" \
    sh -c 'hostname; cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/shm_rmid_forced; ulimit -n; ulimit -u'
  [ "$status" -eq 0 ]
  [ "${lines[*]}" = "agentbox 1 1 512 1024" ]
  # namespaced: the host's values are untouched
  [ "$(hostname)" != agentbox ]
}

@test "podman: --uidmap runs in a user namespace" {
  run pm run --rm --uidmap 0:100000:65536 --gidmap 0:100000:65536 "$IMAGE" \
    sh -c 'cat /proc/self/uid_map /proc/self/gid_map; id -u; touch /tmp/f && stat -c %u /tmp/f'
  [ "$status" -eq 0 ]
  [ "$(echo ${lines[0]})" = "0 100000 65536" ]
  [ "$(echo ${lines[1]})" = "0 100000 65536" ]
  [ "${lines[2]}" = 0 ]
  [ "${lines[3]}" = 0 ]
}

@test "podman: --init runs podman's init as pid 1" {
  [ -x /usr/libexec/podman/catatonit ] || skip "podman's init (the catatonit package) is not installed"
  run pm run --rm --init "$IMAGE" cat /proc/1/cmdline
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ "$output" == *podman-init* ]]
}

@test "podman: --device adds the device node" {
  [ -c /dev/fuse ] || skip "no /dev/fuse on this machine"
  run pm run --rm --device /dev/fuse "$IMAGE" stat -c '%t:%T' /dev/fuse
  [ "$status" -eq 0 ]
  [ "$output" = "$(stat -c '%t:%T' /dev/fuse)" ]
  run pm run --rm "$IMAGE" test -e /dev/fuse
  [ "$status" -ne 0 ]
}

@test "podman: -v binds a host directory, :ro read-only" {
  local vol=$BATS_TEST_TMPDIR/vol
  mkdir -p "$vol"
  echo from-host >"$vol/in"
  run pm run --rm -v "$vol:/data" "$IMAGE" sh -c 'cat /data/in; echo from-ctr >/data/out'
  [ "$status" -eq 0 ]
  [ "$output" = from-host ]
  [ "$(cat "$vol/out")" = from-ctr ]
  run pm run --rm -v "$vol:/data:ro" "$IMAGE" touch /data/nope
  [ "$status" -ne 0 ]
  [ ! -e "$vol/nope" ]
}

@test "podman: --tmpfs mounts a tmpfs, with the image's content copied up" {
  run pm run --rm --tmpfs /scratch:size=1m "$IMAGE" sh -c 'grep " /scratch " /proc/mounts; echo x >/scratch/f && cat /scratch/f'
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == "tmpfs /scratch tmpfs "* ]]
  [ "${lines[1]}" = x ]
  # podman marks its tmpfs mounts tmpcopyup: what the image had there is
  # copied in, and writes stay in the tmpfs
  run pm run --rm --tmpfs /srv/seed "$IMAGE" sh -c \
    'grep -c " /srv/seed tmpfs " /proc/mounts; cat /srv/seed/sub/hello; echo changed >/srv/seed/sub/hello'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1 ]
  [ "${lines[1]}" = seeded ]
  run pm run --rm "$IMAGE" cat /srv/seed/sub/hello
  [ "$output" = seeded ]
}

@test "podman: --cgroups=disabled runs without a cgroup of its own" {
  is_runc && skip "runc has no --cgroup-manager disabled (podman refuses it)"
  local cid pid
  cid=$(pm run -d --cgroups=disabled "$IMAGE" sleep 1000)
  pid=$(ctr_pid "$cid")
  run cat "/proc/$pid/cgroup"
  [[ "$output" != *"$cid"* ]]
  run pm exec "$cid" echo still-usable
  [ "$output" = still-usable ]
}

@test "podman: the runtime is found by name through contrib's [engine.runtimes]" {
  is_runc && skip "checks the agentrun entry of contrib/containers.conf"
  run podman --runtime agentrun info --format '{{.Host.OCIRuntime.Path}}'
  echo "$output"
  [ "$status" -eq 0 ]
  [ -x "$output" ]
  run podman --runtime agentrun run --rm "$IMAGE" echo by-name
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = by-name ]
}
