#!/usr/bin/env bats
# create / start / state / kill / delete / run / list / ps on busybox bundles.

load helpers

setup() { B=$BATS_TEST_TMPDIR/b; }
teardown() { cleanup_containers; kill_tracked; }

status_of() { ar state "$1" | jq -r .status; }

@test "lifecycle: create waits, start execs, state follows every phase, delete removes" {
  make_bundle "$B" sh -c 'echo started >/dev/shm/x; sleep 100'
  # the init keeps create's stdio: not a pipe `run` would wait on
  ar create -b "$B" c1 >"$BATS_TEST_TMPDIR/create.out" 2>&1
  [ "$(status_of c1)" = created ]
  pid=$(ar state c1 | jq -r .pid)
  [ "$pid" -gt 1 ]
  # the init waits: it has not exec'd sleep yet (still our binary's image)
  [ "$(readlink /proc/$pid/exe)" != "$(readlink -f $B/rootfs/bin/busybox)" ]
  [ "$(ar state c1 | jq -r .bundle)" = "$(cd "$B" && pwd -P)" ]
  [ "$(ar state c1 | jq -r .rootfs)" = "$(cd "$B/rootfs" && pwd -P)" ]
  ar state c1 | jq -e '.created | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T.*\\.[0-9]{9}Z$")'
  run ar start c1
  [ "$status" -eq 0 ]
  [ "$(status_of c1)" = running ]
  run ar start c1
  [ "$status" -ne 0 ]
  run ar delete c1
  [ "$status" -ne 0 ]
  [[ "$output" == *"not stopped"* ]]
  ar kill c1 KILL
  for i in $(seq 50); do [ "$(status_of c1)" = stopped ] && break; sleep 0.1; done
  [ "$(status_of c1)" = stopped ]
  [ "$(ar state c1 | jq -r .pid)" = 0 ]
  ar delete c1
  [ ! -e "$ROOT/c1" ]
  run ar state c1
  [ "$status" -ne 0 ]
}

@test "lifecycle: run returns the exit status, 128+N on signal" {
  make_bundle "$B" sh -c 'exit 7'
  run ar run -b "$B" r1
  [ "$status" -eq 7 ]
  [ ! -e "$ROOT/r1" ]
  # pid 1 of a pid namespace ignores default-handled signals: share the host's
  config_edit "$B" '.process.args = ["sh","-c","kill -TERM $$; sleep 5"] | .linux.namespaces |= map(select(.type != "pid"))'
  run ar run -b "$B" r2
  [ "$status" -eq 143 ]
}

@test "lifecycle: run forwards signals to the container" {
  make_bundle "$B" sh -c 'trap "echo got-term; exit 42" TERM; while :; do sleep 0.1; done'
  "$AGENTRUN" --root "$ROOT" run -b "$B" r3 >"$BATS_TEST_TMPDIR/out" 2>&1 &
  rp=$!
  track_pid $rp
  for i in $(seq 100); do [ "$(ar state r3 2>/dev/null | jq -r .status)" = running ] && break; sleep 0.1; done
  [ "$(ar state r3 | jq -r .status)" = running ] || { cat "$BATS_TEST_TMPDIR/out"; false; }
  sleep 0.3
  kill -TERM $rp
  wait $rp || st=$?
  [ "${st:-0}" -eq 42 ]
  grep -q got-term "$BATS_TEST_TMPDIR/out"
}

@test "lifecycle: run --keep leaves a stopped container, -d detaches" {
  make_bundle "$B" true
  ar run --keep -b "$B" k1
  [ "$(status_of k1)" = stopped ]
  ar delete k1
  config_edit "$B" '.process.args = ["sleep","100"]'
  ar run -d -b "$B" d1
  [ "$(status_of d1)" = running ]
  ar delete -f d1
  [ ! -e "$ROOT/d1" ]
}

@test "lifecycle: the runtime is not the container's init and leaves after create" {
  make_bundle "$B" sleep 100
  ar create -b "$B" --pid-file "$BATS_TEST_TMPDIR/pid" p1
  pid=$(cat "$BATS_TEST_TMPDIR/pid")
  [ "$pid" = "$(ar state p1 | jq -r .pid)" ]
  ar start p1
  sleep 0.2
  [ "$(cat /proc/$pid/comm)" = sleep ]
  # pid 1 inside is the container process itself
  [ "$(grep NSpid /proc/$pid/status | awk '{print $NF}')" = 1 ]
}

@test "lifecycle: --pid-file never writes through a symlink planted at its temp name" {
  make_bundle "$B" sleep 100
  echo keep > "$BATS_TEST_TMPDIR/victim"
  ln -s "$BATS_TEST_TMPDIR/victim" "$BATS_TEST_TMPDIR/pid.tmp"
  ar create -b "$B" --pid-file "$BATS_TEST_TMPDIR/pid" pf1
  [ "$(cat "$BATS_TEST_TMPDIR/victim")" = keep ]
  [ ! -L "$BATS_TEST_TMPDIR/pid" ]
  [ "$(cat "$BATS_TEST_TMPDIR/pid")" = "$(ar state pf1 | jq -r .pid)" ]
  ar start pf1
  ln -s "$BATS_TEST_TMPDIR/victim" "$BATS_TEST_TMPDIR/xp.tmp"
  ar exec -d --pid-file "$BATS_TEST_TMPDIR/xp" pf1 sleep 100
  [ "$(cat "$BATS_TEST_TMPDIR/victim")" = keep ]
  [ ! -L "$BATS_TEST_TMPDIR/xp" ]
  [ "$(cat "/proc/$(cat "$BATS_TEST_TMPDIR/xp")/comm")" = sleep ]
}

@test "lifecycle: kill by name, SIG name and number; --all" {
  make_bundle "$B" sh -c 'trap "exit 3" USR1; while :; do sleep 0.1; done'
  for sig in USR1 SIGUSR1 10; do
    ar run -d -b "$B" "k-$sig"
    sleep 0.3
    ar kill "k-$sig" "$sig"
    for i in $(seq 50); do [ "$(status_of k-$sig)" = stopped ] && break; sleep 0.1; done
    [ "$(status_of k-$sig)" = stopped ]
  done
  config_edit "$B" '.process.args = ["sh","-c","sleep 100 & sleep 100"]'
  ar run -d -b "$B" kall
  ar kill --all kall KILL
  for i in $(seq 50); do [ "$(status_of kall)" = stopped ] && break; sleep 0.1; done
  [ "$(status_of kall)" = stopped ]
  run ar kill kall KILL
  [ "$status" -ne 0 ]
}

@test "lifecycle: delete -f kills a running container and cleans a half state" {
  make_bundle "$B" sleep 100
  ar run -d -b "$B" f1
  pid=$(ar state f1 | jq -r .pid)
  ar delete -f f1
  [ ! -e "$ROOT/f1" ]
  ! kill -0 "$pid" 2>/dev/null || [ "$(awk '{print $3}' /proc/$pid/stat)" = Z ]
  mkdir -p "$ROOT/half"
  run ar delete half
  [ "$status" -ne 0 ]
  ar delete -f half
  [ ! -e "$ROOT/half" ]
}

@test "lifecycle: list and ps, table and json" {
  make_bundle "$B" sh -c 'sleep 100 & sleep 100 & wait'
  ar run -d -b "$B" l1
  ar create -b "$B" l2
  run ar list -q
  [ "${lines[0]}" = l1 ]
  [ "${lines[1]}" = l2 ]
  ar list --format json | jq -e 'length == 2 and (map(.status) | sort == ["created","running"])'
  run ar list
  [[ "${lines[0]}" == ID* ]]
  # the owner is whoever made the state folder: root here
  [[ "${lines[1]}" == l1*" root" ]]
  ar list --format json | jq -e 'map(.owner) == ["root","root"]'
  # the shell and its two sleeps, once both are forked (up to 10 s)
  for _ in $(seq 100); do
    n=$(ar ps --format json l1 | jq length)
    [ "$n" -ge 3 ] && break
    sleep 0.1
  done
  [ "$n" -eq 3 ]
  ar ps --format json l1 | jq -e --argjson p "$(ar state l1 | jq .pid)" 'index($p) != null'
  run ar ps l1
  [[ "${lines[0]}" == *PID* ]]
  [ "${#lines[@]}" -eq 4 ]
  # ps options after the id; only the container's lines, its own pids
  run ar ps l1 -o pid,comm
  [ "$status" -eq 0 ]
  [ "$(echo "${lines[0]}" | awk '{print $1, $2}')" = "PID COMMAND" ]
  [ "${#lines[@]}" -eq 4 ]
  [ "$(printf '%s\n' "${lines[@]:1}" | awk '{print $2}' | sort | uniq -c | awk '{print $1, $2}' | tr '\n' ' ')" = "1 sh 2 sleep " ]
  for l in "${lines[@]:1}"; do
    p=$(echo "$l" | awk '{print $1}')
    ar ps --format json l1 | jq -e --argjson p "$p" 'index($p) != null'
  done
  run ar ps l1 -o comm
  [ "$status" -ne 0 ]
  [[ "$output" == *"no PID column"* ]]
  run ar ps --format json l1 -ef
  [ "$status" -ne 0 ]
}

@test "lifecycle: commands on one id are serialised by a lock" {
  make_bundle "$B" sleep 100
  ar run -d -b "$B" s1
  # hold the state folder lock as another command would
  exec {fd}<"$ROOT/s1"
  flock -x $fd
  ( ar delete -f s1; echo done >"$BATS_TEST_TMPDIR/deleted" ) &
  track_pid $!
  sleep 0.5
  [ ! -e "$BATS_TEST_TMPDIR/deleted" ]
  flock -u $fd
  exec {fd}<&-
  for i in $(seq 50); do [ -e "$BATS_TEST_TMPDIR/deleted" ] && break; sleep 0.1; done
  [ -e "$BATS_TEST_TMPDIR/deleted" ]
  [ ! -e "$ROOT/s1" ]
}

@test "lifecycle: 50 run cycles leave mounts, processes and state entries as they were" {
  make_bundle "$B" true
  m0=$(count_mounts)
  for i in $(seq 50); do ar run -b "$B" "leak$i"; done
  [ "$(ls "$ROOT" | wc -l)" -eq 0 ]
  # nothing of ours is mounted on the host; the host-wide count moves only
  # with other work on the machine (a leak per run would add 50)
  refute grep -q " $BATS_TEST_TMPDIR" /proc/self/mountinfo
  m1=$(count_mounts)
  [ $((m1 - m0)) -lt 10 ]
  # no process of ours is left: none runs in the bundle's rootfs or names
  # this test's folder on its command line (a leaked init would do both)
  local p left=0
  for p in /proc/[0-9]*; do
    [[ "$(readlink "$p/root" 2>/dev/null) $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" == *"$BATS_TEST_TMPDIR"* ]] &&
      left=$((left + 1))
  done
  [ "$left" -eq 0 ]
}

@test "lifecycle: --root is created 0700 when missing" {
  make_bundle "$B" true
  r=$BATS_TEST_TMPDIR/newroot/sub
  "$AGENTRUN" --root "$r" run -b "$B" n1
  [ "$(stat -c %a "$r")" = 700 ]
}

@test "lifecycle: AppArmor and SELinux fields are accepted with a debug line where the LSM is not enabled" {
  [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" != Y ] || skip "AppArmor is enabled here"
  [ ! -e /sys/fs/selinux/enforce ] || skip "SELinux is enabled here"
  make_bundle "$B" true
  config_edit "$B" '.process.apparmorProfile = "containers-default" | .process.selinuxLabel = "system_u:system_r:container_t:s0"
                    | .linux.mountLabel = "system_u:object_r:container_file_t:s0"'
  run "$AGENTRUN" validate --bundle "$B"
  [ "$status" -eq 0 ]
  run ar --debug run -b "$B" lsm1
  [ "$status" -eq 0 ]
  [[ "$output" == *'apparmorProfile "containers-default": AppArmor is not enabled on this host'* ]]
  [[ "$output" == *'selinuxLabel "system_u:system_r:container_t:s0": SELinux is not enabled on this host'* ]]
  [[ "$output" == *'mountLabel "system_u:object_r:container_file_t:s0": SELinux is not enabled'* ]]
  make_bundle "$B.s" sleep 100
  ar run -d -b "$B.s" lsm3 </dev/null >/dev/null
  echo '{"args":["true"],"cwd":"/","apparmorProfile":"x"}' >"$BATS_TEST_TMPDIR/p.json"
  run ar exec -p "$BATS_TEST_TMPDIR/p.json" lsm3
  [ "$status" -eq 0 ]
}

# AGENTRUN_LSM_ROOT stands for the host's / for an LSM this host lacks.
fake_lsm_root() {
  L=$BATS_TEST_TMPDIR/lsm
  mkdir -p "$L/sys/module/apparmor/parameters" "$L/proc/thread-self/attr"
  echo Y >"$L/sys/module/apparmor/parameters/enabled"
  : >"$L/proc/thread-self/attr/exec"
}

@test "lifecycle: an enabled AppArmor gets 'exec PROFILE' in attr/apparmor/exec, else attr/exec" {
  [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" != Y ] || skip "AppArmor is enabled here"
  fake_lsm_root
  mkdir -p "$L/proc/thread-self/attr/apparmor"
  : >"$L/proc/thread-self/attr/apparmor/exec"
  make_bundle "$B" true
  config_edit "$B" '.process.apparmorProfile = "containers-default"'
  AGENTRUN_LSM_ROOT=$L ar run -b "$B" lsm-aa1
  [ "$(cat "$L/proc/thread-self/attr/apparmor/exec")" = "exec containers-default" ]
  [ ! -s "$L/proc/thread-self/attr/exec" ]
  rm -r "$L/proc/thread-self/attr/apparmor"
  AGENTRUN_LSM_ROOT=$L ar run -b "$B" lsm-aa2
  [ "$(cat "$L/proc/thread-self/attr/exec")" = "exec containers-default" ]
  # no attr file at all: the profile cannot be applied, so nothing runs
  rm "$L/proc/thread-self/attr/exec"
  run env AGENTRUN_LSM_ROOT="$L" "$AGENTRUN" --root "$ROOT" run -b "$B" lsm-aa3
  [ "$status" -ne 0 ]
  [[ "$output" == *"apparmorProfile"*"attr/exec"* ]]
}

@test "lifecycle: an enabled SELinux gets the exec label, and context= on the mounts it makes" {
  [ ! -e /sys/fs/selinux/enforce ] || skip "SELinux is enabled here"
  fake_lsm_root
  mkdir -p "$L/sys/fs/selinux"
  : >"$L/sys/fs/selinux/enforce"
  make_bundle "$B" true
  config_edit "$B" '.process.selinuxLabel = "system_u:system_r:container_t:s0"'
  AGENTRUN_LSM_ROOT=$L ar run -b "$B" lsm-se1
  [ "$(cat "$L/proc/thread-self/attr/exec")" = "system_u:system_r:container_t:s0" ]
  # a kernel without SELinux refuses context=: proof it is asked for, and the create fails closed
  config_edit "$B" '.linux.mountLabel = "system_u:object_r:container_file_t:s0"'
  run env AGENTRUN_LSM_ROOT="$L" "$AGENTRUN" --root "$ROOT" run -b "$B" lsm-se2
  [ "$status" -ne 0 ]
  [[ "$output" == *"context= (linux.mountLabel)"* ]]
  [ ! -e "$ROOT/lsm-se2" ]
}

@test "lifecycle: kill with signal 0 checks the container is there" {
  make_bundle "$B" sleep 100
  ar run -d -b "$B" k0 </dev/null >/dev/null
  run ar kill k0 0
  [ "$status" -eq 0 ]
  [ "$(status_of k0)" = running ]
  ar kill k0 KILL
  for i in $(seq 50); do [ "$(status_of k0)" = stopped ] && break; sleep 0.1; done
  run ar kill k0 0
  [ "$status" -ne 0 ]
  [[ "$output" == *"not running"* ]]
  run ar kill --all k0 0
  [ "$status" -eq 0 ]
}

@test "lifecycle: kill --all after the init exited reaches what is left in the cgroup" {
  make_bundle "$B" sh -c 'sleep 100 & echo $! >/tmp/left; exit 0'
  config_edit "$B" '.root.readonly = false | .linux.namespaces |= map(select(.type != "pid"))'
  ar run -d -b "$B" kleft </dev/null >/dev/null
  wait_for test -s "$B/rootfs/tmp/left"
  local pid
  pid=$(cat "$B/rootfs/tmp/left")
  track_pid "$pid"
  for i in $(seq 50); do [ "$(status_of kleft)" = stopped ] && break; sleep 0.1; done
  [ "$(status_of kleft)" = stopped ]
  [ "$(cat /proc/$pid/comm)" = sleep ]
  ar kill --all kleft KILL
  for i in $(seq 50); do [ -d /proc/$pid ] && [ "$(awk '{print $3}' /proc/$pid/stat)" != Z ] || break; sleep 0.1; done
  ! [ -d /proc/$pid ] || [ "$(awk '{print $3}' /proc/$pid/stat)" = Z ]
}
