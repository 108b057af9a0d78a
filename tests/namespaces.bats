#!/usr/bin/env bats
# linux.namespaces: new ones of every type, joined by path, user ns maps,
# time offsets.

load helpers

setup() { B=$BATS_TEST_TMPDIR/b; }
teardown() { cleanup_containers; kill_tracked; }

userns_bundle() {
  make_bundle "$B" "$@"
  chown -R 100000:100000 "$B/rootfs"
  # the container's root is host uid 100000: it must be able to reach the
  # rootfs through our (otherwise private) temp folders
  local d=$B
  while [ "$d" != / ] && [ "${d#$BATS_RUN_TMPDIR}" != "$d" ]; do chmod o+x "$d"; d=$(dirname "$d"); done
  config_edit "$B" '.linux.namespaces += [{"type":"user"}]
    | .linux.uidMappings = [{"containerID":0,"hostID":100000,"size":65536}]
    | .linux.gidMappings = [{"containerID":0,"hostID":100000,"size":65536}]
    | .mounts |= map(select(.type != "cgroup"))'
}

@test "namespaces: each listed type is new, the others are the host's" {
  make_bundle "$B" sh -c 'for n in pid net ipc uts mnt cgroup; do readlink /proc/self/ns/$n; done'
  config_edit "$B" '.linux.namespaces = [{"type":"pid"},{"type":"network"},{"type":"ipc"},{"type":"uts"},{"type":"mount"}]'
  run ar run -b "$B" n1
  [ "$status" -eq 0 ]
  for i in 0 1 2 3 4; do
    n=$(echo "${lines[$i]}" | cut -d: -f1)
    [ "${lines[$i]}" != "$(readlink /proc/self/ns/$n)" ]
  done
  [ "${lines[5]}" = "$(readlink /proc/self/ns/cgroup)" ]
}

# A new network namespace starts with lo down: 127.0.0.1 is then
# "Network is unreachable". runc brings it up; so must we, in a user
# namespace too (podman --network none, ctr run, rootless pods).
lo_check='ip -o link show lo; nc -l -p 7777 -e echo lo-ok & sleep 0.3; nc 127.0.0.1 7777 </dev/null; wait'

@test "namespaces: lo is up in a new network namespace, 127.0.0.1 reachable" {
  make_bundle "$B" sh -c "$lo_check"
  run ar run -b "$B" lo1
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == *"<LOOPBACK,UP,LOWER_UP>"* ]]
  [[ "$output" == *lo-ok* ]]
}

@test "namespaces: lo is up in a new network namespace under a user namespace" {
  userns_bundle sh -c "$lo_check"
  run ar run -b "$B" lo2
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == *"<LOOPBACK,UP,LOWER_UP>"* ]]
  [[ "$output" == *lo-ok* ]]
}

# sysfs shows the network namespace of whoever mounts it: the init's own
# new one, never the host's, with and without a user namespace (where the
# kernel lets only the namespace's owner mount it).
@test "namespaces: sysfs shows the container's network namespace, not the host's" {
  [ "$(ls /sys/class/net)" != lo ] || skip "the host has no interface but lo: nothing tells the two apart"
  make_bundle "$B" sh -c 'ls /sys/class/net; readlink /proc/self/ns/net'
  run ar run -b "$B" sys1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = lo ] && [ "${#lines[@]}" -eq 2 ]
  [ "${lines[1]}" != "$(readlink /proc/self/ns/net)" ]
  rm -rf "$B"
  userns_bundle sh -c 'ls /sys/class/net; readlink /proc/self/ns/net'
  run ar run -b "$B" sys2
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = lo ] && [ "${#lines[@]}" -eq 2 ]
  [ "${lines[1]}" != "$(readlink /proc/self/ns/net)" ]
}

@test "namespaces: a new cgroup namespace is rooted at the container's cgroup" {
  make_bundle "$B" sh -c 'tail -1 /proc/self/cgroup'
  config_edit "$B" '.linux.namespaces += [{"type":"cgroup"}]'
  run ar run -b "$B" n2
  [ "$status" -eq 0 ]
  [ "$output" = "0::/" ]
}

@test "namespaces: joined by path" {
  make_bundle "$B" sleep 100
  config_edit "$B" '.hostname = "first"'
  ar run -d -b "$B" host1
  pid=$(ar state host1 | jq -r .pid)
  B2=$BATS_TEST_TMPDIR/b2
  make_bundle "$B2" sh -c 'hostname; readlink /proc/self/ns/net'
  config_edit "$B2" ".linux.namespaces |= map(if .type == \"uts\" then .path = \"/proc/$pid/ns/uts\" elif .type == \"network\" then .path = \"/proc/$pid/ns/net\" else . end) | del(.hostname)"
  run ar run -b "$B2" guest1
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = first ]
  [ "${lines[1]}" = "$(readlink /proc/$pid/ns/net)" ]
}

@test "namespaces: a path of the wrong type or missing is an error naming it" {
  make_bundle "$B" true
  config_edit "$B" '.linux.namespaces |= map(if .type == "ipc" then .path = "/proc/self/ns/net" else . end)'
  run ar run -b "$B" bad1
  [ "$status" -eq 1 ]
  [[ "$output" == *"ipc namespace /proc/self/ns/net: not a ipc namespace"* ]]
  config_edit "$B" '.linux.namespaces |= map(if .type == "ipc" then .path = "/nonexistent/ns" else . end)'
  run ar run -b "$B" bad2
  [ "$status" -eq 1 ]
  [[ "$output" == *"/nonexistent/ns"* ]]
  [ -z "$(ls "$ROOT")" ]
}

@test "namespaces: user namespace with uid/gid maps" {
  userns_bundle sh -c 'id -u; cat /proc/self/uid_map; cat /proc/self/gid_map; stat -c %u /bin/busybox'
  run ar run -b "$B" u1
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  [ "$(echo ${lines[1]})" = "0 100000 65536" ]
  [ "$(echo ${lines[2]})" = "0 100000 65536" ]
  [ "${lines[3]}" = 0 ]
}

@test "namespaces: user namespace: create, start, exec, delete" {
  userns_bundle sleep 100
  ar create -b "$B" u2 >/dev/null 2>&1
  ar start u2
  pid=$(ar state u2 | jq -r .pid)
  [ "$(awk '/^Uid/ {print $2}' /proc/$pid/status)" = 100000 ]
  run ar exec u2 sh -c 'id -u; readlink /proc/self/ns/user'
  [ "${lines[0]}" = 0 ]
  [ "${lines[1]}" = "$(readlink /proc/$pid/ns/user)" ]
  ar delete -f u2
}

@test "namespaces: time namespace offsets" {
  [ -e /proc/self/ns/time ] || skip "kernel without time namespaces"
  make_bundle "$B" cat /proc/uptime
  config_edit "$B" '.linux.namespaces += [{"type":"time"}] | .linux.timeOffsets = {"boottime":{"secs":864000,"nanosecs":0}}'
  run ar run -b "$B" tm1
  [ "$status" -eq 0 ]
  inside=${output%%.*}
  host=$(cut -d. -f1 /proc/uptime)
  [ $((inside - host)) -ge 863990 ]
  [ $((inside - host)) -le 864010 ]
}

@test "namespaces: sharing the host pid namespace when none is listed" {
  make_bundle "$B" sh -c 'echo $$'
  config_edit "$B" '.linux.namespaces |= map(select(.type != "pid"))'
  run ar run -b "$B" hp1
  [ "$status" -eq 0 ]
  [ "$output" -gt 1 ]
}

# IPC sysctls are the IPC namespace's, owned by the root its user namespace
# maps, or by the host's root when it maps none: the runtime writes them
# then before the init takes a mapped uid (the sandbox's case).
@test "namespaces: IPC sysctls in a user namespace that maps root, and in one that maps a single other uid" {
  local ipc='.linux.sysctl = {"kernel.shmmax": "1048576", "kernel.shm_rmid_forced": "1", "kernel.msgmni": "7"}'
  userns_bundle sh -c 'cat /proc/sys/kernel/shmmax /proc/sys/kernel/shm_rmid_forced /proc/sys/kernel/msgmni'
  config_edit "$B" "$ipc"
  run ar run -b "$B" ipc1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo $output)" = "1048576 1 7" ]
  [ "$(cat /proc/sys/kernel/msgmni)" != 7 ] || [ "$(cat /proc/sys/kernel/shmmax)" != 1048576 ]
  # only uid 1000 mapped, the process runs as it; with and without a
  # cgroup namespace (the init made in two steps, or cloned at once)
  B=$BATS_TEST_TMPDIR/b2
  make_bundle "$B" sh -c 'id -u; cat /proc/sys/kernel/shmmax /proc/sys/kernel/msgmni'
  chown -R 1000:1000 "$B/rootfs"
  local d=$B
  while [ "$d" != / ] && [ "${d#$BATS_RUN_TMPDIR}" != "$d" ]; do chmod o+x "$d"; d=$(dirname "$d"); done
  config_edit "$B" '.linux.namespaces += [{"type":"user"}]
    | .linux.uidMappings = [{"containerID":1000,"hostID":1000,"size":1}]
    | .linux.gidMappings = [{"containerID":1000,"hostID":1000,"size":1}]
    | .process.user = {"uid":1000,"gid":1000}
    | .mounts |= map(select(.type != "cgroup" and .type != "devpts"))'
  config_edit "$B" "$ipc"
  run ar run -b "$B" ipc2
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo $output)" = "1000 1048576 7" ]
  config_edit "$B" '.linux.namespaces |= map(select(.type != "cgroup"))'
  run ar run -b "$B" ipc3
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo $output)" = "1000 1048576 7" ]
}

@test "namespaces: bind sources under a folder the user namespace cannot reach are opened first, for run and exec" {
  userns_bundle sh -c 'cat /mnt/one/f /mnt/two/f; sleep 100'
  local h=$BATS_TEST_TMPDIR/private
  mkdir -p "$h/one" "$h/two"
  echo one >"$h/one/f"; echo two >"$h/two/f"
  chmod 0700 "$h"                       # root's only: uid 100000 cannot walk through it
  config_edit "$B" '.mounts += [{"source": $a, "destination": "/mnt/one", "options": ["bind"]},
                                {"source": $b, "destination": "/mnt/two", "options": ["rbind", "ro"]}]' \
    --arg a "$h/one" --arg b "$h/two"
  ar run -d -b "$B" ub1 </dev/null >"$BATS_TEST_TMPDIR/out" 2>&1 || { cat "$BATS_TEST_TMPDIR/out"; false; }
  run ar exec ub1 cat /mnt/one/f /mnt/two/f
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = $'one\ntwo' ]
  run ar exec ub1 sh -c 'echo x >/mnt/two/g'
  [ "$status" -ne 0 ]                   # ro still applies to a source opened early
}
