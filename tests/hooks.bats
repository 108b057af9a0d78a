#!/usr/bin/env bats
# OCI hooks: the six stages in order, their namespaces, the state on stdin,
# args and env as given, timeouts, and the failure rule of each stage.

load helpers

setup() {
  B=$BATS_TEST_TMPDIR/bundle
  LOG=$B/rootfs/hooklog          # the same file seen from the host and, after pivot_root, as /hooklog
  make_bundle "$B" sh -c 'echo process >>/hooklog; readlink /proc/self/ns/mnt >/ns-container'
  config_edit "$B" '.root.readonly = false'
  # A hook that appends its first argument to the file named by its second.
  HOOK=$BATS_TEST_TMPDIR/hook.sh
  printf '#!/bin/sh\necho "$1" >>"$2"\n' >"$HOOK"
  chmod +x "$HOOK"
}

teardown() {
  cleanup_containers
  kill_tracked
}

# add_hook STAGE JSON: append a hook object to a stage.
add_hook() {
  config_edit "$B" '.hooks[$s] += [$h]' --arg s "$1" --argjson h "$2"
}

# A hook running the shell script $1 with sh -c (args[0] is argv[0]).
sh_hook() {
  jq -cn --arg c "$1" '{path: "/bin/sh", args: ["sh", "-c", $c]}'
}

@test "all six stages run in order, several hooks per stage in listed order" {
  local st n
  for st in prestart createRuntime createContainer poststart poststop; do
    for n in 1 2; do
      add_hook "$st" "$(jq -cn --arg p "$HOOK" --arg a "$st-$n" --arg l "$LOG" '{path:$p, args:[$p, $a, $l]}')"
    done
  done
  # startContainer paths resolve in the container, after pivot_root: the
  # hook is /hook.sh there and the log /hooklog.
  cp "$HOOK" "$B/rootfs/hook.sh"
  for n in 1 2; do
    add_hook startContainer "$(jq -cn --arg a "startContainer-$n" '{path:"/hook.sh", args:["/hook.sh", $a, "/hooklog"]}')"
  done
  run ar run --bundle "$B" hk-order
  echo "$output"
  [ "$status" -eq 0 ]
  # poststart comes after the process is executed (runtime-spec), so after
  # every startContainer hook; the process's own line may land anywhere after
  # startContainer, so it is checked apart.
  run grep -v '^process$' "$LOG"
  echo "${lines[*]}"
  [ "${lines[*]}" = "prestart-1 prestart-2 createRuntime-1 createRuntime-2 createContainer-1 createContainer-2 startContainer-1 startContainer-2 poststart-1 poststart-2 poststop-1 poststop-2" ]
  run grep -n -x -e process -e startContainer-2 -e poststop-1 "$LOG"
  [[ "${lines[0]}" == *startContainer-2 && "${lines[1]}" == *process && "${lines[2]}" == *poststop-1 ]]
}

@test "createContainer and startContainer run in the container's mount namespace, createRuntime in the runtime's" {
  add_hook createRuntime "$(sh_hook "readlink /proc/self/ns/mnt >$B/ns-createRuntime")"
  add_hook createContainer "$(sh_hook "readlink /proc/self/ns/mnt >$B/rootfs/ns-createContainer")"
  add_hook startContainer "$(sh_hook "readlink /proc/self/ns/mnt >/ns-startContainer")"
  run ar run --bundle "$B" hk-ns
  [ "$status" -eq 0 ]
  local c
  c=$(cat "$B/rootfs/ns-container")
  [ -n "$c" ]
  [ "$(cat "$B/rootfs/ns-createContainer")" = "$c" ]
  [ "$(cat "$B/rootfs/ns-startContainer")" = "$c" ]
  [ "$(cat "$B/ns-createRuntime")" != "$c" ]
  [ "$(cat "$B/ns-createRuntime")" = "$(readlink /proc/self/ns/mnt)" ]
}

@test "createContainer hooks run in the rootfs: a relative path lands in the container" {
  add_hook createContainer "$(sh_hook "pwd -P >cwd-createContainer")"
  run ar run --bundle "$B" hk-cwd
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(cat "$B/rootfs/cwd-createContainer")" = "$(cd "$B/rootfs" && pwd -P)" ]
}

@test "stdin carries the state: id, pid, bundle, status per stage" {
  add_hook createRuntime "$(sh_hook "cat >$B/state-createRuntime")"
  add_hook poststop "$(sh_hook "cat >$B/state-poststop")"
  run ar run --bundle "$B" hk-state
  [ "$status" -eq 0 ]
  local s=$B/state-createRuntime
  [ "$(jq -r .id "$s")" = hk-state ]
  [ "$(jq -r .status "$s")" = creating ]
  [ "$(jq -r .pid "$s")" -gt 0 ]
  [ "$(jq -r .bundle "$s")" = "$(cd "$B" && pwd -P)" ] || [ "$(jq -r .bundle "$s")" = "$B" ]
  [ "$(jq -r .ociVersion "$s")" != null ]
  [ "$(jq -r .id "$B/state-poststop")" = hk-state ]
  [ "$(jq -r .status "$B/state-poststop")" = stopped ]
}

@test "args and env are passed exactly as given (args[0] is argv[0], no inherited env)" {
  # /proc/$$/cmdline shows argv as the kernel got it; env lists the environment.
  printf '%s\n' 'tr "\0" " " </proc/$$/cmdline >"$1/argv"; env >"$1/env"' >"$BATS_TEST_TMPDIR/args.sh"
  add_hook createRuntime "$(jq -cn --arg s "$BATS_TEST_TMPDIR/args.sh" --arg b "$B" \
    '{path:"/bin/sh", args:["my-argv0", $s, $b, "one"], env:["FOO=bar baz", "AR_TEST=1"]}')"
  export AR_SHOULD_NOT_LEAK=1
  run ar run --bundle "$B" hk-args
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(cat "$B/argv")" = "my-argv0 $BATS_TEST_TMPDIR/args.sh $B one " ]
  grep -qx 'FOO=bar baz' "$B/env"
  grep -qx 'AR_TEST=1' "$B/env"
  refute grep -q AR_SHOULD_NOT_LEAK "$B/env"
  ! grep -q '^HOME=' "$B/env"
}

@test "hook output goes to the runtime's log, not /dev/null" {
  add_hook createRuntime "$(sh_hook 'echo out-from-hook; echo err-from-hook >&2')"
  run ar --log "$BATS_TEST_TMPDIR/runtime.log" run --bundle "$B" hk-out
  [ "$status" -eq 0 ]
  grep -q out-from-hook "$BATS_TEST_TMPDIR/runtime.log"
  grep -q err-from-hook "$BATS_TEST_TMPDIR/runtime.log"
}

@test "a hook that outlives its timeout is killed, create fails naming it, nothing is left" {
  add_hook createRuntime "$(jq -cn --arg p "$B/hook-pid" '{path:"/bin/sh", args:["sh","-c","echo $$ >\($p); exec sleep 60"], timeout:1}')"
  local t0=$SECONDS
  run ar create --bundle "$B" hk-timeout
  [ "$status" -ne 0 ]
  [ $((SECONDS - t0)) -lt 20 ]
  [[ "$output" == *"/bin/sh"* && "$output" == *createRuntime* && "$output" == *"timed out after 1 s"* ]]
  local pid
  pid=$(cat "$B/hook-pid")
  track_pid "$pid"
  refute kill -0 "$pid" 2>/dev/null
  run ar state hk-timeout
  [ "$status" -ne 0 ]
  [ ! -e "$ROOT/hk-timeout" ]
}

@test "failing prestart, createRuntime or createContainer hook: create fails and is undone" {
  local st
  for st in prestart createRuntime createContainer; do
    config_edit "$B" 'del(.hooks)'
    add_hook "$st" "$(sh_hook 'exit 3')"
    run ar create --bundle "$B" "hk-fail-$st"
    [ "$status" -ne 0 ]
    [[ "$output" == *"$st"* && "$output" == *"status 3"* ]]
    run ar state "hk-fail-$st"
    [ "$status" -ne 0 ]
    [ ! -e "$ROOT/hk-fail-$st" ]
    [ ! -e "$LOG" ]                  # the process never ran
  done
}

@test "a missing hook executable is an error naming it" {
  add_hook createRuntime '{"path":"/nonexistent/hook"}'
  run ar create --bundle "$B" hk-missing
  [ "$status" -ne 0 ]
  [[ "$output" == *"/nonexistent/hook"* ]]
  [ ! -e "$ROOT/hk-missing" ]
}

@test "failing startContainer hook: the process never runs and the container is stopped" {
  add_hook startContainer "$(sh_hook 'exit 4')"
  add_hook poststart "$(sh_hook "echo poststart >$B/poststart-ran")"
  run ar run --bundle "$B" hk-fail-start
  [ "$status" -ne 0 ]
  [[ "$output" == *startContainer*"status 4"* ]]
  [ ! -e "$LOG" ]
  [ ! -e "$ROOT/hk-fail-start" ]
  # create then start: start itself fails with the hook's error, the
  # container is stopped, and poststart never runs
  ar create --bundle "$B" hk-fail-start2 </dev/null >/dev/null 2>&1
  run ar start hk-fail-start2
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == *hk-fail-start2*startContainer*"status 4"* ]]
  [ "$(ar state hk-fail-start2 | jq -r .status)" = stopped ]
  [ ! -e "$LOG" ]
  [ ! -e "$B/poststart-ran" ]
}

@test "failing poststart and poststop hooks are warnings only" {
  add_hook poststart "$(sh_hook 'exit 5')"
  add_hook poststop "$(sh_hook 'exit 6')"
  run ar run --bundle "$B" hk-fail-post
  [ "$status" -eq 0 ]
  [[ "$output" == *poststart* && "$output" == *"status 5"* ]]
  [[ "$output" == *poststop* && "$output" == *"status 6"* ]]
  grep -q process "$LOG"
  [ ! -e "$ROOT/hk-fail-post" ]
}

@test "a poststop hook failing on delete leaves delete successful" {
  add_hook poststop "$(sh_hook 'exit 7')"
  # Not through `run`: the created process holds stdout until it is started.
  ar create --bundle "$B" hk-delete >/dev/null 2>&1 </dev/null
  ar start hk-delete
  local i; for i in $(seq 50); do grep -q process "$LOG" 2>/dev/null && break; sleep 0.1; done
  run ar delete -f hk-delete
  [ "$status" -eq 0 ]
  [[ "$output" == *"status 7"* ]]
  [ ! -e "$ROOT/hk-delete" ]
}

@test "startContainer runs as the process: its user, its capabilities, its seccomp filter" {
  add_hook startContainer "$(sh_hook 'id -u >/tmp/hk-uid; grep CapBnd /proc/self/status >/tmp/hk-bnd; mkdir /tmp/hk-m 2>/tmp/hk-mkdir; true')"
  config_edit "$B" '.process.args = ["sh", "-c", "grep CapBnd /proc/self/status >/tmp/proc-bnd"]
                    | .process.user = {uid: 1000, gid: 1000} | .process.noNewPrivileges = false
                    | .process.capabilities = {bounding: ["CAP_KILL"], effective: ["CAP_KILL"], permitted: ["CAP_KILL"]}
                    | .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
                                        syscalls: [{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO", errnoRet: 28}]}'
  run ar run --bundle "$B" hk-cred
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(cat "$B/rootfs/tmp/hk-uid")" = 1000 ]
  [ "$(cat "$B/rootfs/tmp/hk-bnd")" = "$(cat "$B/rootfs/tmp/proc-bnd")" ]
  [ "$(awk '{print $2}' "$B/rootfs/tmp/hk-bnd")" = 0000000000000020 ]   # CAP_KILL only
  [[ "$(cat "$B/rootfs/tmp/hk-mkdir")" == *"No space left on device"* ]]
  [ ! -e "$B/rootfs/tmp/hk-m" ]
  # a hook the filter kills fails the start, in runc's words
  config_edit "$B" '.linux.seccomp.syscalls[0].action = "SCMP_ACT_KILL" | del(.linux.seccomp.syscalls[0].errnoRet)
                    | .hooks.startContainer[0].args = ["sh", "-c", "exec mkdir /tmp/hk-m"]'
  run ar run --bundle "$B" hk-cred2
  [ "$status" -ne 0 ]
  [[ "$output" == *"error running hook #0"*"bad system call"* ]]
}
