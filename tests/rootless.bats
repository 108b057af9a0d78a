#!/usr/bin/env bats
# Rootless: agentrun run by an ordinary user, agentrun-test (.ci/run
# creates it). bats runs as root; every agentrun command here runs as that
# user through runuser, with its own XDG_RUNTIME_DIR under the test's temp
# folder. The binaries are copied into a 0755 folder (the clone may live
# under a 0700 one) and bundles are made there, owned by the user.
# /etc/subuid is read, never edited.

load helpers

RL_USER=agentrun-test

setup_file() {
  export RL_SKIP=
  if [ "$(id -u)" != 0 ]; then RL_SKIP="needs root to switch to $RL_USER"; return 0; fi
  if ! id "$RL_USER" >/dev/null 2>&1; then RL_SKIP="user $RL_USER missing (.ci/run creates it)"; return 0; fi
  if [ "$(cat /proc/sys/user/max_user_namespaces)" = 0 ]; then RL_SKIP="user namespaces disabled on this host"; return 0; fi
  export RL_UID RL_GID RL_BIN=$BATS_FILE_TMPDIR/bin
  RL_UID=$(id -u "$RL_USER") RL_GID=$(id -g "$RL_USER")
  install -d -m 0755 "$RL_BIN"
  install -m 0755 "$AGENTRUN" "$RELAY" "$NETPROXY" "$RL_BIN/"
  # bats's folders are 0700: let the user walk (not list) down to ours
  let_others_walk_to "$BATS_FILE_TMPDIR"
}

setup() {
  [ -z "$RL_SKIP" ] || skip "$RL_SKIP"
  let_others_walk_to "$BATS_TEST_TMPDIR"
  U=$BATS_TEST_TMPDIR/u XDG=$BATS_TEST_TMPDIR/u/xdg
  install -d -m 0755 -o "$RL_USER" -g "$RL_USER" "$U"
  install -d -m 0700 -o "$RL_USER" -g "$RL_USER" "$XDG"
}

teardown() {
  [ -z "$RL_SKIP" ] || return 0
  local id
  for id in $(ls "$XDG/agentrun" 2>/dev/null); do uar delete -f "$id" >/dev/null 2>&1 || true; done
  kill_tracked
  deleg_remove
  # rootless podman leaves its pause process (the holder of its user
  # namespace) behind: this test's own, by the pid file in its engine.tmp_dir
  local f
  for f in "$U/podman/tmp/pause.pid" "$XDG/libpod/tmp/pause.pid"; do
    [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
  done
  return 0
}

# A command as the user, with a clean environment.
asuser() { runuser -u "$RL_USER" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$U" XDG_RUNTIME_DIR="$XDG" "$@"; }
asuser_env() { runuser -u "$RL_USER" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$U" "$@"; }
uar() { asuser "$RL_BIN/agentrun" "$@"; }

# user_bundle DIR ARGS...: `spec --rootless` written by the user, a busybox
# rootfs it owns, writable, running ARGS without a terminal.
user_bundle() {
  local dir=$1; shift
  install -d -o "$RL_USER" -g "$RL_USER" "$dir"
  make_busybox_rootfs "$dir/rootfs"
  chown -R "$RL_USER:$RL_USER" "$dir/rootfs"
  asuser "$RL_BIN/agentrun" spec --rootless --bundle "$dir" >/dev/null
  local args
  args=$(printf '%s\n' "$@" | jq -R . | jq -s .)
  user_edit "$dir" --argjson a "$args" '.process.args = $a | .process.terminal = false | .root.readonly = false'
}

# Edit a bundle's config.json with jq, keeping it the user's.
user_edit() {
  local dir=$1; shift
  jq "$@" "$dir/config.json" >"$dir/config.json.new" && mv "$dir/config.json.new" "$dir/config.json" &&
    chown "$RL_USER:$RL_USER" "$dir/config.json"
}

# The first subordinate range /etc/subuid (or subgid) grants the user: "START COUNT".
subrange() {
  awk -F: -v u="$RL_USER" -v i="$RL_UID" '($1 == u || $1 == i) { print $2, $3; exit }' "$1" 2>/dev/null
}

need_subids() {
  command -v newuidmap >/dev/null && command -v newgidmap >/dev/null || skip "newuidmap/newgidmap missing (Debian: uidmap)"
  [ -n "$(subrange /etc/subuid)" ] || skip "/etc/subuid has no entry for $RL_USER"
  [ -n "$(subrange /etc/subgid)" ] || skip "/etc/subgid has no entry for $RL_USER"
}

@test "rootless: the state root is \$XDG_RUNTIME_DIR/agentrun; without it, a clear error and never /run" {
  user_bundle "$U/b" true
  run uar run -b "$U/b" st1
  echo "$output"
  [ "$status" -eq 0 ]
  [ -d "$XDG/agentrun" ]
  [ "$(stat -c %u "$XDG/agentrun")" = "$RL_UID" ]
  [ "$(stat -c %a "$XDG/agentrun")" = 700 ]
  # unset
  run asuser_env "$RL_BIN/agentrun" list
  [ "$status" -eq 1 ]
  [[ "$output" == *"no state root: XDG_RUNTIME_DIR is not set; pass --root or set it"* ]]
  run asuser_env "$RL_BIN/agentrun" run -b "$U/b" st2
  [ "$status" -eq 1 ]
  [[ "$output" == *"XDG_RUNTIME_DIR is not set"* ]]
  # set but not ours to write
  install -d -m 0755 "$U/notmine"
  run asuser_env XDG_RUNTIME_DIR="$U/notmine" "$RL_BIN/agentrun" create -b "$U/b" st3
  [ "$status" -eq 1 ]
  [[ "$output" == *"XDG_RUNTIME_DIR=$U/notmine is not writable"* ]]
  [ -z "$(ls "$U/notmine")" ]
  # --root still works without it, and stateless commands need none
  run asuser_env "$RL_BIN/agentrun" --root "$U/own" run -b "$U/b" st4
  [ "$status" -eq 0 ]
  run asuser_env "$RL_BIN/agentrun" features
  [ "$status" -eq 0 ]
  run asuser_env "$RL_BIN/agentrun" sandbox --help
  [ "$status" -eq 0 ]
}

@test "rootless: run with the user's own id mapped alone: root inside is the user, setgroups denied" {
  user_bundle "$U/b" sh -c 'cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups; id -u; touch /root/made'
  run uar run -b "$U/b" single
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "${lines[0]}" | tr -s ' ' | sed 's/^ //')" = "0 $RL_UID 1" ]
  [ "$(echo "${lines[1]}" | tr -s ' ' | sed 's/^ //')" = "0 $RL_GID 1" ]
  [ "${lines[2]}" = deny ]
  [ "${lines[3]}" = 0 ]
  [ "$(stat -c %u:%g "$U/b/rootfs/root/made")" = "$RL_UID:$RL_GID" ]
  [ -z "$(ls "$XDG/agentrun")" ]
}

@test "rootless: create, start, state, list, ps, exec, kill and delete as the user" {
  user_bundle "$U/b" sleep 300
  # the init keeps create's stdio: not through `run`, which would wait for its EOF
  uar create -b "$U/b" life >"$BATS_TEST_TMPDIR/create.out" 2>&1
  [ "$(uar state life | jq -r .status)" = created ]
  run uar start life
  [ "$status" -eq 0 ]
  [ "$(uar state life | jq -r .status)" = running ]
  pid=$(uar state life | jq -r .pid)
  [ "$(stat -c %u /proc/"$pid")" = "$RL_UID" ]
  run uar list
  echo "$output" | grep -q "^life .*running.* $RL_USER\$"
  run uar ps life
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -q "^.* $pid .*sleep 300"
  run uar exec life sh -c 'id -u; cat /proc/1/cmdline | tr "\0" " "'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  [[ "${lines[1]}" == "sleep 300"* ]]
  run uar kill life KILL
  [ "$status" -eq 0 ]
  for _ in $(seq 50); do [ "$(uar state life | jq -r .status)" = stopped ] && break; sleep 0.1; done
  [ "$(uar state life | jq -r .status)" = stopped ]
  run uar delete life
  [ "$status" -eq 0 ]
  [ -z "$(uar list -q)" ]
  [ ! -e "$XDG/agentrun/life" ]
}

@test "rootless: subordinate ranges through newuidmap/newgidmap" {
  need_subids
  read -r us un < <(subrange /etc/subuid)
  read -r gs gn < <(subrange /etc/subgid)
  user_bundle "$U/b" sh -c 'cat /proc/self/uid_map; cat /proc/self/setgroups; id -u; id -G; touch /tmp/f'
  # the process runs as 1000:1000 with a supplementary group, which only a
  # full range (setgroups allowed) can give
  user_edit "$U/b" --argjson us "$us" --argjson un "$un" --argjson gs "$gs" --argjson gn "$gn" --argjson u "$RL_UID" --argjson g "$RL_GID" \
    '.linux.uidMappings = [{containerID: 0, hostID: $u, size: 1}, {containerID: 1, hostID: $us, size: $un}]
     | .linux.gidMappings = [{containerID: 0, hostID: $g, size: 1}, {containerID: 1, hostID: $gs, size: $gn}]
     | .process.user = {uid: 1000, gid: 1000, additionalGids: [1001]}'
  run uar run -b "$U/b" sub
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "${lines[1]}" | tr -s ' ' | sed 's/^ //')" = "1 $us $un" ]
  [ "${lines[2]}" = allow ]
  [ "${lines[3]}" = 1000 ]
  [ "${lines[4]}" = "1000 1001" ]
  [ "$(stat -c %u:%g "$U/b/rootfs/tmp/f")" = "$((us + 999)):$((gs + 999))" ]
}

@test "rootless: container root on a subordinate id (not the user) still starts" {
  need_subids
  read -r us un < <(subrange /etc/subuid)
  read -r gs gn < <(subrange /etc/subgid)
  user_bundle "$U/b" sh -c 'id -u; cat /proc/self/uid_map'
  # the rootfs must belong to the container's root for it to exec anything
  chown -R "$us:$gs" "$U/b/rootfs"
  user_edit "$U/b" --argjson us "$us" --argjson un "$un" --argjson gs "$gs" --argjson gn "$gn" \
    '.linux.uidMappings = [{containerID: 0, hostID: $us, size: $un}]
     | .linux.gidMappings = [{containerID: 0, hostID: $gs, size: $gn}]'
  run uar run -b "$U/b" subroot
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  [ "$(echo "${lines[1]}" | tr -s ' ' | sed 's/^ //')" = "0 $us $un" ]
}

@test "rootless: a mapping the user may not have names /etc/subuid, or newuidmap when it is missing" {
  user_bundle "$U/b" true
  user_edit "$U/b" '.linux.uidMappings = [{containerID: 0, hostID: 0, size: 1}]
                    | .linux.gidMappings = [{containerID: 0, hostID: 0, size: 1}]'
  run uar run -b "$U/b" host-root
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"/etc/subuid"* ]]
  [[ "$output" == *"host uids 0-0 are not yours"* ]]
  [ ! -e "$XDG/agentrun/host-root" ]
  # a range without newuidmap on PATH: the message names the helper
  user_edit "$U/b" --argjson u "$RL_UID" --argjson g "$RL_GID" \
    '.linux.uidMappings = [{containerID: 0, hostID: $u, size: 1}, {containerID: 1, hostID: 100000, size: 10}]
     | .linux.gidMappings = [{containerID: 0, hostID: $g, size: 1}]'
  run runuser -u "$RL_USER" -- env -i PATH="$RL_BIN" HOME="$U" XDG_RUNTIME_DIR="$XDG" "$RL_BIN/agentrun" run -b "$U/b" nohelper
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"newuidmap, which is not on PATH"* ]]
  [ ! -e "$XDG/agentrun/nohelper" ]
}

# True when the user could make a cgroup next to agentrun's default parent.
user_can_cgroup() {
  local m
  for m in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    [ -d "$m/agentrun" ] && m=$m/agentrun
    asuser test -w "$m" && return 0
  done
  return 1
}

@test "rootless: cgroups are skipped without a writable one; limits then fail closed" {
  user_can_cgroup && skip "a cgroup is writable by $RL_USER here (delegated): nothing is skipped"
  user_bundle "$U/b" true
  run uar --debug run -b "$U/b" nocg
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"rootless: no cgroup for the container"* ]]
  refute ls -d /sys/fs/cgroup/*/agentrun/nocg /sys/fs/cgroup/agentrun/nocg 2>/dev/null
  user_edit "$U/b" '.linux.resources.pids.limit = 10'
  run uar run -b "$U/b" limited
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"asks for limits, which need a cgroup"* ]]
  [ ! -e "$XDG/agentrun/limited" ]
}

# A delegated subtree the way systemd's Delegate=yes makes one: a cgroup
# named $1 in every hierarchy, owned by the user, cpuset initialised from its
# parent. Removed (children first) by deleg_remove once its processes are gone.
deleg_make() {
  local h d
  for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    [ -f "$h/cgroup.procs" ] && [ ! -L "${h%/}" ] || continue
    d=${h%/}/$1
    mkdir "$d" || return 1
    if [ -f "$d/cpuset.cpus" ]; then
      cat "${h%/}/cpuset.cpus" >"$d/cpuset.cpus" && cat "${h%/}/cpuset.mems" >"$d/cpuset.mems" || return 1
    fi
    chown -R "$RL_USER:$RL_USER" "$d" || return 1
    echo "$d" >>"$BATS_TEST_TMPDIR/deleg"
  done
}

deleg_remove() {
  local d
  [ -f "$BATS_TEST_TMPDIR/deleg" ] || return 0
  while read -r d; do
    find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done <"$BATS_TEST_TMPDIR/deleg"
}

@test "rootless: a delegated cgroup writable by the user is used, and its limits bite" {
  local name=ar-deleg-$$-$RANDOM
  deleg_make "$name" || { deleg_remove; skip "cannot make a delegated cgroup here"; }
  user_bundle "$U/b" sh -c 'cat /proc/self/cgroup; for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 3 & done; wait'
  user_edit "$U/b" --arg p "/$name/c1" '.linux.cgroupsPath = $p | .linux.resources.pids.limit = 8'
  # The user's launcher sits in the delegated cgroup, as a systemd user
  # session does: cgroup2 lets a process move only between cgroups whose
  # common ancestor it may write.
  local launcher=$BATS_TEST_TMPDIR/launch.sh
  printf '%s\n' 'for f in "$@"; do echo $$ >"$f"; done' \
    "exec runuser -u $RL_USER -- env -i PATH=/usr/bin:/bin HOME=$U XDG_RUNTIME_DIR=$XDG $RL_BIN/agentrun run -b $U/b deleg" \
    >"$launcher"
  local procs=()
  while read -r d; do procs+=("$d/cgroup.procs"); done <"$BATS_TEST_TMPDIR/deleg"
  run sh "$launcher" "${procs[@]}"
  echo "$output"
  deleg_remove
  # the container's processes were in NAME/c1 of the pids hierarchy, and the
  # eighth process could not be forked
  [[ "$output" == *":pids:/$name/c1"* ]]
  [[ "$output" == *"fork"* ]]
  # delete removed the container's cgroups (what is left is the test's own)
  ! ls -d /sys/fs/cgroup/*/"$name"/c1 2>/dev/null
}

@test "rootless: root of a user namespace that is not the host's (podman's case) counts as rootless" {
  need_cmd unshare
  user_bundle "$U/b" sh -c 'cat /proc/self/uid_map; echo ok > /dev/null && echo devnull-ok; touch /root/made'
  # inside `unshare -r` the user's id is 0: the config maps that 0 (the
  # container sees its map relative to that namespace)
  user_edit "$U/b" '.linux.uidMappings = [{containerID: 0, hostID: 0, size: 1}]
                    | .linux.gidMappings = [{containerID: 0, hostID: 0, size: 1}]'
  run asuser unshare -r "$RL_BIN/agentrun" run -b "$U/b" inns
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "${lines[0]}" | tr -s ' ' | sed 's/^ //')" = "0 0 1" ]
  [ "${lines[1]}" = devnull-ok ]
  [ "$(stat -c %u "$U/b/rootfs/root/made")" = "$RL_UID" ]
  # and with no user namespace of its own: devices are bound, not made
  user_edit "$U/b" 'del(.linux.uidMappings, .linux.gidMappings) | .linux.namespaces |= map(select(.type != "user"))'
  run asuser unshare -r "$RL_BIN/agentrun" run -b "$U/b" inns2
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[1]}" = devnull-ok ]
}

@test "rootless: user namespaces disabled by sysctl: the error names max_user_namespaces" {
  need_cmd unshare
  user_bundle "$U/b" true
  user_edit "$U/b" '.linux.uidMappings = [{containerID: 0, hostID: 0, size: 1}]
                    | .linux.gidMappings = [{containerID: 0, hostID: 0, size: 1}]'
  # the limit is per user namespace: set to 0 in a private one, never the host's
  run asuser unshare -r sh -c 'echo 0 >/proc/sys/user/max_user_namespaces && exec "$0" run -b "$1" nouserns' \
    "$RL_BIN/agentrun" "$U/b"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"/proc/sys/user/max_user_namespaces is 0"* ]]
  [ "$(cat /proc/sys/user/max_user_namespaces)" != 0 ]
}

@test "rootless: run.agentrun.nested-userns: the process in a nested user namespace, the IPC limits set, exec joins it" {
  [ "$(cat /proc/sys/user/max_user_namespaces)" -ge 2 ] || skip "user.max_user_namespaces leaves no room for two"
  user_bundle "$U/b" sleep 300
  user_edit "$U/b" --arg ids "$RL_UID:$RL_GID" --argjson u "$RL_UID" --argjson g "$RL_GID" '
    .annotations["run.agentrun.nested-userns"] = $ids | .process.user = {uid: $u, gid: $g}
    | .process.capabilities = {} | .process.noNewPrivileges = true
    | .linux.sysctl = {"kernel.shmmax": "1048576", "user.max_user_namespaces": "5", "user.max_ipc_namespaces": "0"}'
  cp "$U/b/config.json" "$BATS_TEST_TMPDIR/good.json"
  uar create -b "$U/b" nest >"$BATS_TEST_TMPDIR/create.out" 2>&1
  run uar start nest
  [ "$status" -eq 0 ]
  run uar exec nest sh -c 'id -u; id -g; cat /proc/self/uid_map /proc/self/gid_map /proc/sys/kernel/shmmax \
    /proc/sys/user/max_user_namespaces /proc/sys/user/max_ipc_namespaces; cat /proc/1/uid_map'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$RL_UID" ]
  [ "${lines[1]}" = "$RL_GID" ]
  [ "$(echo ${lines[2]})" = "$RL_UID 0 1" ]
  [ "$(echo ${lines[3]})" = "$RL_GID 0 1" ]
  [ "${lines[4]}" = 1048576 ]
  # none of its own in the nested namespace, whatever the spec says
  [ "${lines[5]}" = 0 ]
  [ "${lines[6]}" = 0 ]
  # the container's process lives there too
  [ "$(echo ${lines[7]})" = "$RL_UID 0 1" ]
  run uar exec nest sh -c 'echo 1 >/proc/sys/kernel/shmmax'
  [ "$status" -ne 0 ]
  run uar kill nest KILL
  [ "$status" -eq 0 ]
  for _ in $(seq 50); do [ "$(uar state nest | jq -r .status)" = stopped ] && break; sleep 0.1; done
  run uar delete nest
  [ "$status" -eq 0 ]
  # what the nested namespace cannot map is refused before anything runs
  local bad
  for bad in '.annotations["run.agentrun.nested-userns"] = "0:0"' \
    '.annotations["run.agentrun.nested-userns"] = "12x:5"' \
    '.process.user.additionalGids = [4242]' \
    '.linux.uidMappings = [{"containerID": 1, "hostID": '"$RL_UID"', "size": 1}]'; do
    install -m 0644 -o "$RL_USER" -g "$RL_USER" "$BATS_TEST_TMPDIR/good.json" "$U/b/config.json"
    user_edit "$U/b" "$bad"
    run uar run -b "$U/b" nestbad
    echo "$output"
    [ "$status" -ne 0 ]
    [[ "$output" == *"run.agentrun.nested-userns"* ]]
  done
}

@test "rootless: spec --rootless is runc's rootless spec, and the user can run it" {
  need_cmd runc
  install -d -o "$RL_USER" "$U/runc" "$U/ours"
  runuser -u "$RL_USER" -- sh -c "cd '$U/runc' && runc spec --rootless"
  runuser -u "$RL_USER" -- sh -c "cd '$U/ours' && '$RL_BIN/agentrun' spec --rootless"
  diff <(jq -S 'del(.hostname, .ociVersion)' "$U/runc/config.json") <(jq -S 'del(.hostname, .ociVersion)' "$U/ours/config.json")
  [ "$(jq -c .linux.uidMappings "$U/ours/config.json")" = "[{\"containerID\":0,\"hostID\":$RL_UID,\"size\":1}]" ]
  make_busybox_rootfs "$U/ours/rootfs"
  chown -R "$RL_USER:$RL_USER" "$U/ours/rootfs"
  user_edit "$U/ours" '.process.terminal = false | .process.args = ["sh", "-c", "id -u"]'
  run uar run -b "$U/ours" runcspec
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = 0 ]
}

sb_user() {
  asuser "$RL_BIN/agentrun" sandbox --workspace "$U/ws" "$@"
}

@test "rootless: sandbox as the user: its workspace, its uid, pids as RLIMIT_NPROC, --memory refused" {
  install -d -o "$RL_USER" -g "$RL_USER" "$U/ws"
  run sb_user -- sh -c 'id -u; id -g; echo made > file; grep "^Max processes" /proc/self/limits'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$RL_UID" ]
  [ "${lines[1]}" = "$RL_GID" ]
  [ "$(stat -c %u:%g "$U/ws/file")" = "$RL_UID:$RL_GID" ]
  if ! user_can_cgroup; then
    [[ "${lines[2]}" == "Max processes"*4096*4096* ]]
    # the limit holds: a sixth process cannot be made
    run sb_user --pids 5 -- sh -c 'for i in 1 2 3 4 5 6 7 8; do sleep 2 & done; wait'
    echo "$output"
    [[ "$output" == *"fork"* ]]
    run sb_user --memory 64m -- true
    [ "$status" -eq 125 ]
    [[ "$output" == *"--memory needs a cgroup"* ]]
    run sb_user --cpus 1 -- true
    [ "$status" -eq 125 ]
  fi
  # nothing left: no state, no private folder (the janitor removes that
  # one once the container's pid 1 is gone, after the return)
  [ -z "$(ls "$XDG/agentrun")" ]
  wait_for bash -c "[ \"\$(ls '$XDG')\" = agentrun ]"
}

@test "rootless: sandbox as the user reaches an allowed endpoint through the relay, and nothing else" {
  need_cmd socat python3
  install -d -o "$RL_USER" -g "$RL_USER" "$U/ws"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  socat TCP-LISTEN:"$port",bind=127.0.0.1,fork,reuseaddr EXEC:cat &
  track_pid $!
  for _ in $(seq 50); do bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null && break; sleep 0.1; done
  run sb_user --allow "echo.test:443=127.0.0.1:$port" -- python3 -c '
import socket
s = socket.create_connection(("echo.test", 443), timeout=5)
s.sendall(b"ping-rootless\n")
print("echo:" + s.recv(100).decode().strip())
try:
    socket.create_connection(("127.0.0.1", '"$port"'), timeout=2)
    print("reached host loopback")
except OSError as e:
    print("refused host loopback")
'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "echo:ping-rootless" ]
  [ "${lines[1]}" = "refused host loopback" ]
  wait_for bash -c "[ \"\$(ls '$XDG')\" = agentrun ]"
}

@test "rootless: check as the user: every probe holds" {
  install -d -o "$RL_USER" -g "$RL_USER" "$U/ws"
  run asuser "$RL_BIN/agentrun" check --workspace "$U/ws"
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -q '^PASS'
  ! echo "$output" | grep -q '^CROSSED'
}

@test "rootless: podman --runtime agentrun as the user" {
  need_cmd podman conmon
  need_subids
  P=$U/podman
  install -d -o "$RL_USER" -g "$RL_USER" "$P" "$P/home" "$P/tmp"
  printf '[storage]\ndriver = "vfs"\ngraphroot = "%s/storage"\nrunroot = "%s/run"\n' "$P" "$P" >"$P/storage.conf"
  printf '[engine]\nlock_type = "file"\ntmp_dir = "%s/tmp"\nevents_logger = "file"\nevents_logfile_path = "%s/events.log"\ncgroup_manager = "cgroupfs"\n[containers]\nnetns = "none"\n' \
    "$P" "$P" >"$P/containers.conf"
  : >"$P/registries.conf"
  make_busybox_rootfs "$P/rootfs"
  tar -C "$P/rootfs" -cf "$P/rootfs.tar" .
  chown -R "$RL_USER:$RL_USER" "$P"
  pmu() {
    runuser -u "$RL_USER" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$P/home" XDG_RUNTIME_DIR="$XDG" \
      XDG_CONFIG_HOME="$P/home/.config" XDG_DATA_HOME="$P/home/.local/share" \
      CONTAINERS_CONF="$P/containers.conf" CONTAINERS_STORAGE_CONF="$P/storage.conf" \
      CONTAINERS_REGISTRIES_CONF="$P/registries.conf" podman --runtime "$RL_BIN/agentrun" "$@"
  }
  run pmu import -q "$P/rootfs.tar" localhost/rl-busybox:test
  echo "$output"
  [ "$status" -eq 0 ] || skip "rootless podman cannot import here: $output"
  run pmu run --rm localhost/rl-busybox:test sh -c 'id -u; cat /proc/self/uid_map'
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx 0
  echo "$output" | tr -s ' ' | grep -q "^ *0 $RL_UID 1$"
  pmu run -d --name rl1 localhost/rl-busybox:test sleep 300 >"$BATS_TEST_TMPDIR/podman-run.out" 2>&1
  run pmu exec rl1 sh -c 'echo exec-ok'
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx exec-ok
  run pmu rm -f -t 0 rl1
  [ "$status" -eq 0 ]
}
