#!/usr/bin/env bats
# process.*: user, env, cwd, rlimits, umask, capabilities, no_new_privs,
# hostname, sysctl, oomScoreAdj, ioPriority, scheduler, fd hygiene.

load helpers

setup() { B=$BATS_TEST_TMPDIR/b; }
teardown() { cleanup_containers; kill_tracked; }

runc_out() { ar run -b "$B" "p$RANDOM" 2>&1; }

@test "process: user uid/gid/additionalGids and umask" {
  make_bundle "$B" sh -c 'id -u; id -g; id -G; umask'
  config_edit "$B" '.process.user = {"uid":1000,"gid":1001,"additionalGids":[5,6],"umask":63}'
  run runc_out
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1000 ]
  [ "${lines[1]}" = 1001 ]
  [[ " ${lines[2]} " == *" 5 "* && " ${lines[2]} " == *" 6 "* ]]
  [ "${lines[3]}" = 0077 ]
}

@test "process: env and args are exactly the config's" {
  make_bundle "$B" sh -c 'env | sort'
  config_edit "$B" '.process.env = ["PATH=/bin", "FOO=bar baz", "EMPTY="]'
  run runc_out
  [ "$status" -eq 0 ]
  [[ "$output" == *"FOO=bar baz"* ]]
  [[ "$output" == *"EMPTY="* ]]
  ! [[ "$output" == *BATS* ]]
}

@test "process: cwd is created when missing" {
  make_bundle "$B" pwd
  config_edit "$B" '.process.cwd = "/work/deep/dir" | .root.readonly = false'
  run runc_out
  [ "$status" -eq 0 ]
  [ "$output" = /work/deep/dir ]
}

@test "process: rlimits are applied" {
  make_bundle "$B" sh -c 'ulimit -n; ulimit -Hn'
  config_edit "$B" '.process.rlimits = [{"type":"RLIMIT_NOFILE","soft":321,"hard":654}]'
  run runc_out
  [ "${lines[0]}" = 321 ]
  [ "${lines[1]}" = 654 ]
}

@test "process: the five capability sets, unknown names rejected" {
  # a non-root user keeps exactly what is asked (root would get its
  # permitted set recomputed by execve)
  make_bundle "$B" sh -c 'grep ^Cap /proc/self/status'
  config_edit "$B" '.process.user = {"uid":1000,"gid":1000} | .process.capabilities = {"bounding":["CAP_CHOWN","CAP_KILL","CAP_NET_RAW"],"effective":["CAP_CHOWN","CAP_KILL"],"permitted":["CAP_CHOWN","CAP_KILL"],"inheritable":["CAP_CHOWN","CAP_KILL"],"ambient":["CAP_KILL"]}'
  run runc_out
  [ "$status" -eq 0 ]
  # CHOWN=0 KILL=5 NET_RAW=13
  [[ "$output" == *"CapBnd:	0000000000002021"* ]]
  [[ "$output" == *"CapInh:	0000000000000021"* ]]
  [[ "$output" == *"CapAmb:	0000000000000020"* ]]
  [[ "$output" == *"CapPrm:	0000000000000020"* ]]
  [[ "$output" == *"CapEff:	0000000000000020"* ]]
  config_edit "$B" '.process.capabilities.effective += ["CAP_BOGUS"]'
  run runc_out
  [ "$status" -eq 1 ]
  [[ "$output" == *CAP_BOGUS* ]]
}

@test "process: ambient capabilities survive a non-root user" {
  make_bundle "$B" sh -c 'grep -E "^Cap(Eff|Amb)" /proc/self/status'
  config_edit "$B" '.process.user = {"uid":1000,"gid":1000} | .process.capabilities = {"bounding":["CAP_NET_BIND_SERVICE"],"effective":["CAP_NET_BIND_SERVICE"],"permitted":["CAP_NET_BIND_SERVICE"],"inheritable":["CAP_NET_BIND_SERVICE"],"ambient":["CAP_NET_BIND_SERVICE"]}'
  run runc_out
  [[ "$output" == *"CapAmb:	0000000000000400"* ]]
  [[ "$output" == *"CapEff:	0000000000000400"* ]]
}

@test "process: noNewPrivileges" {
  make_bundle "$B" sh -c 'grep NoNewPrivs /proc/self/status'
  config_edit "$B" '.process.noNewPrivileges = true'
  run runc_out
  [[ "$output" == *"NoNewPrivs:	1"* ]]
  config_edit "$B" '.process.noNewPrivileges = false'
  run runc_out
  [[ "$output" == *"NoNewPrivs:	0"* ]]
}

@test "process: hostname, domainname and sysctl stay inside the container" {
  host_before=$(hostname)
  fwd_before=$(cat /proc/sys/net/ipv4/ip_forward)
  make_bundle "$B" sh -c 'hostname; cat /proc/sys/kernel/domainname; cat /proc/sys/net/ipv4/ip_forward'
  want=$((1 - fwd_before))
  config_edit "$B" ".hostname = \"box\" | .domainname = \"example.test\" | .linux.sysctl = {\"net.ipv4.ip_forward\": \"$want\"}"
  run runc_out
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = box ]
  [ "${lines[1]}" = example.test ]
  [ "${lines[2]}" = "$want" ]
  [ "$(hostname)" = "$host_before" ]
  [ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$fwd_before" ]
}

@test "process: oomScoreAdj, ioPriority, scheduler" {
  make_bundle "$B" sh -c 'cat /proc/self/oom_score_adj; cat /proc/self/sched | grep -m1 policy'
  config_edit "$B" '.process.oomScoreAdj = 500 | .process.ioPriority = {"class":"IOPRIO_CLASS_IDLE","priority":0} | .process.scheduler = {"policy":"SCHED_BATCH","nice":5}'
  run runc_out
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 500 ]
  [[ "${lines[1]}" == *3 ]]   # SCHED_BATCH
}

@test "process: personality LINUX32" {
  make_bundle "$B" uname -m
  config_edit "$B" '.linux.personality = {"domain":"LINUX32"}'
  run runc_out
  [ "$status" -eq 0 ]
  [ "$output" = i686 ] || [ "$output" = armv8l ] || [ "$output" = i386 ]
}

@test "process: only stdio is open in the container; --preserve-fds passes more" {
  make_bundle "$B" ls /proc/self/fd
  exec 7>"$BATS_TEST_TMPDIR/leak"
  run ar run -b "$B" fd1
  exec 7>&-
  [ "$status" -eq 0 ]
  # 0 1 2 and the fd ls opens for the listing
  [ "$(echo "$output" | tr '\n' ' ')" = "0 1 2 3 " ]
  config_edit "$B" '.process.args = ["sh","-c","echo via-fd3 >&3"]'
  # fd 3 is bats' own: replace it in a subshell only
  ( exec 3>"$BATS_TEST_TMPDIR/kept"; "$AGENTRUN" --root "$ROOT" run --preserve-fds 1 -b "$B" fd2 )
  grep -q via-fd3 "$BATS_TEST_TMPDIR/kept"
}

@test "process: --preserve-fds passes the caller's fds, never the runtime's own" {
  # The caller leaves 3..10 closed except 6: the runtime's own files may land
  # on those numbers, and must still close at exec.
  make_bundle "$B" sh -c 'for f in 3 4 5 6 7 8 9 10; do [ -e /proc/self/fd/$f ] && echo "$f $(readlink /proc/self/fd/$f)"; done; true'
  run bash -c 'exec 3>&- 4>&- 5>&- 7>&- 8>&- 9>&- 10>&- 6>"$1/passed"; shift; "$@"' bash "$BATS_TEST_TMPDIR" \
    "$AGENTRUN" --root "$ROOT" run --preserve-fds 8 -b "$B" pf1
  [ "$status" -eq 0 ]
  [ "$output" = "6 $BATS_TEST_TMPDIR/passed" ]
  config_edit "$B" '.process.args = ["sleep","100"]'
  ar run -d -b "$B" pf2
  run bash -c 'exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- 10>&-; "$@"' bash \
    "$AGENTRUN" --root "$ROOT" exec --preserve-fds 8 pf2 sh -c 'ls /proc/self/fd | tr "\n" " "'
  [ "$status" -eq 0 ]
  [ "$output" = "0 1 2 3 " ]
}

@test "process: systemd's LISTEN_FDS: those fds, then --preserve-fds ones, with LISTEN_FDS and LISTEN_PID=1" {
  make_bundle "$B" sh -c 'echo "[$LISTEN_FDS $LISTEN_PID]"; ls /proc/self/fd | tr "\n" " "'
  # 3 4: the listening sockets, 5: --preserve-fds 1, 9: not passed
  run bash -c 'exec 3</dev/null 4</dev/null 5</dev/null 9</dev/null; export LISTEN_FDS=2 LISTEN_PID=$$; exec "$@"' \
    bash "$AGENTRUN" --root "$ROOT" run --preserve-fds 1 -b "$B" l1
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "[2 1]" ]
  # and 6: the one ls opens for the listing
  [ "${lines[1]}" = "0 1 2 3 4 5 6 " ]
  # set for another process (LISTEN_PID not ours): nothing passed, nothing set
  run bash -c 'exec 3</dev/null 4</dev/null; export LISTEN_FDS=2 LISTEN_PID=1; exec "$@"' \
    bash "$AGENTRUN" --root "$ROOT" run -b "$B" l2
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "[ ]" ]
  [ "${lines[1]}" = "0 1 2 3 " ]
  run bash -c 'export LISTEN_FDS=x LISTEN_PID=$$; exec "$@"' bash "$AGENTRUN" --root "$ROOT" run -b "$B" l3
  [ "$status" -ne 0 ]
  [[ "$output" == *"LISTEN_FDS=x"* ]]
}

# sleeping PID ID: C, the container's sleep once it runs: PID itself, or
# its child when our pid 1 (container ID i2) runs it.
sleeping() {
  C=$1
  [ "$2" = i1 ] || C=$(tr -d " " </proc/"$1"/task/"$1"/children)
  [ -n "$C" ] && grep -qx sleep /proc/"$C"/comm
}

# fd_links PID: "N TARGET" for each fd PID holds, in order.
fd_links() {
  local f
  for f in $(ls /proc/"$1"/fd | sort -n); do echo "$f $(readlink /proc/"$1"/fd/"$f")"; done
}

@test "process: the init holds none of its caller's fds, nor does our pid 1 or the command" {
  [ "$(id -u)" = 0 ] || skip "reads the init's fds from the host: needs root"
  make_bundle "$B" sleep 100
  local x=$BATS_TEST_TMPDIR/x id pid
  for id in i1 i2; do
    [ "$id" = i1 ] || config_edit "$B" '.annotations["run.agentrun.init"] = "true"'
    # fd 3 (bats') closed: the state folder lands there; 7, 8, 200: the caller's
    (exec 3>&- 7</etc/hostname 8>"$x" 200</dev/null; exec "$AGENTRUN" --root "$ROOT" create -b "$B" "$id") \
      </dev/null >/dev/null 2>&1
    pid=$(ar state "$id" | jq -r .pid)
    run fd_links "$pid"
    echo "init before start: $output"
    [ -z "$(echo "$output" | grep -E "^(7|8|200) |/etc/hostname|$x")" ]
    [ "${lines[3]}" = "3 $ROOT/$id" ]
    # stdio, the state folder and, for our pid 1, the socket to agentrun
    [ "${#lines[@]}" -eq "$([ "$id" = i1 ] && echo 4 || echo 5)" ]
    ar start "$id"
    wait_for sleeping "$pid" "$id"
    run fd_links "$pid"
    echo "init after start: $output"
    [ -z "$(echo "$output" | grep -E "/etc/hostname|$x")" ]
    run fd_links "$C"
    echo "command: $output"
    [ "$(echo "$output" | cut -d' ' -f1 | tr '\n' ' ')" = "0 1 2 " ]
  done
}

@test "process: the agentrun binary cannot be written from inside (CVE-2019-5736)" {
  make_bundle "$B" sleep 100
  config_edit "$B" '.process.capabilities = null'
  ar create -b "$B" cve >/dev/null 2>&1
  pid=$(ar state cve | jq -r .pid)
  # before start the init is still the runtime's image: a sealed memfd, not the file
  exe=$(readlink /proc/$pid/exe)
  [[ "$exe" == "/memfd:agentrun"* ]]
  run sh -c "echo x >> /proc/$pid/exe"
  [ "$status" -ne 0 ]
  sha_before=$(sha256sum "$AGENTRUN" | cut -d' ' -f1)
  ar start cve
  # from an exec'd process, while the runtime joins: the same copy
  run ar exec cve sh -c 'for p in /proc/[0-9]*; do echo x >> $p/exe; done 2>/dev/null; true'
  [ "$(sha256sum "$AGENTRUN" | cut -d' ' -f1)" = "$sha_before" ]
}
