#!/usr/bin/env bats
# exec: joining every namespace, the cgroup and the root of a container.

load helpers

setup() {
  B=$BATS_TEST_TMPDIR/b
  make_bundle "$B" sleep 1000
  config_edit "$B" '.hostname = "inside"'
  ar run -d -b "$B" x1
  PID=$(ar state x1 | jq -r .pid)
}
teardown() { cleanup_containers; kill_tracked; }

@test "exec: joins every namespace and the cgroup of the container" {
  run ar exec x1 sh -c 'hostname; for n in pid net ipc uts mnt; do readlink /proc/self/ns/$n; done; cat /proc/self/cgroup | tail -1; echo $$'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = inside ]
  for i in 1 2 3 4 5; do
    n=$(echo "${lines[$i]}" | cut -d: -f1)
    [ "${lines[$i]}" = "$(readlink /proc/$PID/ns/$n)" ]
  done
  [ "${lines[6]}" = "$(tail -1 /proc/$PID/cgroup)" ]
  [ "${lines[7]}" -gt 1 ]        # a pid of the container's namespace
}

@test "exec: exit status and 128+N" {
  run ar exec x1 sh -c 'exit 9'
  [ "$status" -eq 9 ]
  run ar exec x1 sh -c 'kill -KILL $$'
  [ "$status" -eq 137 ]
}

@test "exec: --env, --cwd, --user, --cap, --no-new-privs" {
  run ar exec -e FOO=bar --cwd /tmp x1 sh -c 'echo $FOO; pwd; echo $PATH'
  [ "${lines[0]}" = bar ]
  [ "${lines[1]}" = /tmp ]
  [ -n "${lines[2]}" ]
  run ar exec -u 1000:1001 x1 sh -c 'id -u; id -g'
  [ "${lines[0]}" = 1000 ]
  [ "${lines[1]}" = 1001 ]
  run ar exec --cap CAP_SYS_ADMIN x1 grep CapBnd /proc/self/status
  # CAP_SYS_ADMIN is bit 21
  [ $(( 0x$(echo "$output" | awk '{print $2}') >> 21 & 1 )) -eq 1 ]
  run ar exec x1 grep CapBnd /proc/self/status
  [ $(( 0x$(echo "$output" | awk '{print $2}') >> 21 & 1 )) -eq 0 ]
  config_edit "$B" '.process.noNewPrivileges = false'
  run ar exec --no-new-privs x1 grep NoNewPrivs /proc/self/status
  [[ "$output" == *1 ]]
}

@test "exec: --user NAME[:GROUP] from the container's /etc/passwd and /etc/group" {
  printf 'agent:x:1234:2345:agent:/home/agent:/bin/sh\n' >>"$B/rootfs/etc/passwd"
  printf 'agents:x:2345:\ntools:x:3456:other,agent\nbuild:x:4567:agent\nnot:x:5678:agentx\n' >>"$B/rootfs/etc/group"
  run ar exec -u agent x1 sh -c 'id -u; id -g; id -G'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1234 ]
  [ "${lines[1]}" = 2345 ]
  [[ " ${lines[2]} " == *" 3456 "* ]]
  [[ " ${lines[2]} " == *" 4567 "* ]]
  [[ " ${lines[2]} " != *" 5678 "* ]]
  run ar exec -u agent:tools x1 sh -c 'id -u; id -g'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1234 ]
  [ "${lines[1]}" = 3456 ]
  run ar exec -u 42:build x1 sh -c 'id -u; id -g; id -G'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 42 ]
  [ "${lines[1]}" = 4567 ]
  [ "${lines[2]}" = 4567 ]
  run ar exec -u nosuch x1 true
  [ "$status" -ne 0 ]
  [[ "$output" == *'no user "nosuch"'*/etc/passwd* ]]
  run ar exec -u agent:nosuch x1 true
  [ "$status" -ne 0 ]
  [[ "$output" == *'no group "nosuch"'*/etc/group* ]]
}

@test "exec: --user names never come from the host's files" {
  # an absolute symlink in the image resolves inside the container's root
  rm "$B/rootfs/etc/passwd"
  ln -s /etc/passwd.img "$B/rootfs/etc/passwd"
  printf 'img:x:77:77::/:/bin/sh\n' >"$B/rootfs/etc/passwd.img"
  run ar exec -u img x1 id -u
  [ "$status" -eq 0 ]
  [ "$output" = 77 ]
  # a relative escape ends at the container's root: the host has
  # /etc/passwd- with root in it, the container has no such file
  [ -f /etc/passwd- ] || skip "needs the host's /etc/passwd-"
  rm "$B/rootfs/etc/passwd"
  ln -s ../../../../../../etc/passwd- "$B/rootfs/etc/passwd"
  run ar exec -u root x1 true
  [ "$status" -ne 0 ]
  [[ "$output" == *'no user "root"'* ]]
}

@test "exec: -p process.json" {
  cat >"$BATS_TEST_TMPDIR/p.json" <<'JSON'
{"args":["sh","-c","echo $X; id -u; pwd"],"env":["PATH=/bin","X=from-json"],"cwd":"/etc","user":{"uid":7,"gid":7}}
JSON
  run ar exec -p "$BATS_TEST_TMPDIR/p.json" x1
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = from-json ]
  [ "${lines[1]}" = 7 ]
  [ "${lines[2]}" = /etc ]
}

@test "exec: -d with --pid-file, and ps sees the process" {
  ar exec -d --pid-file "$BATS_TEST_TMPDIR/xp" x1 sleep 500
  p=$(cat "$BATS_TEST_TMPDIR/xp")
  [ "$(cat /proc/$p/comm)" = sleep ]
  ar ps --format json x1 | jq -e --argjson p "$p" 'index($p) != null'
}

@test "exec: rlimits of the container apply, a missing binary is reported" {
  run ar exec x1 nosuchcmd
  [ "$status" -eq 255 ]   # runc's status for a failure of exec itself
  [[ "$output" == *'exec: "nosuchcmd": executable file not found in $PATH'* ]]
  [ "$(ar exec x1 sh -c 'ulimit -n')" = "$(jq '.process.rlimits[] | select(.type=="RLIMIT_NOFILE") | .soft' "$B/config.json")" ]
}

@test "exec: refused in a stopped container" {
  ar kill x1 KILL
  for i in $(seq 50); do [ "$(ar state x1 | jq -r .status)" = stopped ] && break; sleep 0.1; done
  run ar exec x1 true
  [ "$status" -eq 255 ]   # runc's status for a failure of exec itself
  [[ "$output" == *stopped* ]]
}

@test "exec: only stdio is open in the exec'd process" {
  exec 7>"$BATS_TEST_TMPDIR/leak"
  run ar exec x1 ls /proc/self/fd
  exec 7>&-
  [ "$(echo "$output" | tr '\n' ' ')" = "0 1 2 3 " ]
}

@test "exec: runtime failures exit 255, as runc's" {
  run ar exec --pid-file /non-existent/directory x1 true
  [ "$status" -eq 255 ]
  run ar exec x1 no-such-binary
  [ "$status" -eq 255 ]
  [[ "$output" == *"executable file not found"* ]]
  run ar exec no_such_container true
  [ "$status" -eq 255 ]
  run ar exec x1 false
  [ "$status" -eq 1 ]
}

@test "exec: --additional-gids adds to the user's groups" {
  run ar exec --user 1000:1000 --additional-gids 100 --additional-gids 65534 x1 id -G
  [ "$status" -eq 0 ]
  [ "$output" = "1000 100 65534" ]
}

@test "exec: -p from a pipe and /dev/fd/N; process.user may be left out" {
  local p='{"args":["sh","-c","echo from-pipe; id -u"],"cwd":"/","env":["PATH=/bin"]}'
  run ar exec -p <(echo "$p") x1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = $'from-pipe\n0' ]
  run bash -c 'exec 5< <(echo "$1"); "$2" --root "$3" exec -p /dev/fd/5 x1' _ "$p" "$AGENTRUN" "$ROOT"
  [ "$status" -eq 0 ]
  [ "$output" = $'from-pipe\n0' ]
}

@test "exec: a paused container is refused, unless --ignore-paused" {
  ar pause x1
  run timeout 10 "$AGENTRUN" --root "$ROOT" exec x1 echo ok
  [ "$status" -eq 255 ]
  [[ "$output" == *"cannot exec in a paused container"* ]]
  (sleep 1; ar resume x1) &
  track_pid $!
  run timeout 20 "$AGENTRUN" --root "$ROOT" exec --ignore-paused x1 echo ok
  [ "$status" -eq 0 ]
  [ "$output" = ok ]
}

@test "exec: --cgroup joins a sub-cgroup; a parent or a missing one is refused" {
  local cg
  cg=$(ar state x1 | jq -r .cgroupPath 2>/dev/null)
  local mnt=/sys/fs/cgroup/memory
  [ -d "$mnt" ] || mnt=/sys/fs/cgroup/unified
  [ -d "$mnt" ] && grep -q "$mnt" /proc/self/mountinfo || skip "no memory or unified cgroup mount"
  local own
  own=$(awk -F: -v m="$(basename "$mnt")" '($2 == m) || (m == "unified" && $2 == "") { print $3 }' /proc/"$PID"/cgroup)
  [ -d "$mnt$own" ] || skip "the container's cgroup is not at $mnt$own"
  run ar exec --cgroup .. x1 true
  [ "$status" -ne 0 ]
  [[ "$output" == *".. is not a sub cgroup path"* ]]
  run ar exec --cgroup nonexistent x1 true
  [ "$status" -ne 0 ]
  [[ "$output" == *"adding pid "*"/nonexistent/cgroup.procs: no such file"* ]]
  run ar exec --cgroup whaaat:/ x1 true
  [ "$status" -ne 0 ]
  [[ "$output" == *"unknown controller"* ]]
  mkdir "$mnt$own/sub"
  local ctl=memory
  [ "$(basename "$mnt")" = unified ] && ctl=""
  run ar exec --cgroup "$ctl:sub" x1 cat /proc/self/cgroup
  rmdir "$mnt$own/sub" 2>/dev/null || true
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"$own/sub"* ]]
}
