#!/usr/bin/env bats
# Bad input: one clear line, exit 1, and nothing left behind.

load helpers

setup() {
  B=$BATS_TEST_TMPDIR/b
  make_bundle "$B" sleep 100
}

# mounts of this test's bundle seen from the host (a leak shows here; the
# host-wide count moves with whatever else runs on the machine)
bundle_mounts() { grep -c " $BATS_TEST_TMPDIR" /proc/self/mountinfo || true; }
teardown() { cleanup_containers; kill_tracked; }

# nothing left: no state entry, no new mount, no container process
nothing_left() {
  [ -z "$(ls "$ROOT" 2>/dev/null)" ]
  [ "$(bundle_mounts)" -eq 0 ]
  ! grep -qs "$B" /proc/[0-9]*/cmdline
}

one_line() {
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "${lines[0]}" == *"$1"* ]]
}

@test "errors: missing bundle" {
  run ar create -b "$BATS_TEST_TMPDIR/nope" e1
  one_line "nope: No such file or directory"
  nothing_left
}

@test "errors: missing rootfs" {
  config_edit "$B" '.root.path = "missing-rootfs"'
  run ar create -b "$B" e1
  one_line "missing-rootfs: No such file or directory"
  nothing_left
}

@test "errors: args[0] not in the rootfs, as runc words it" {
  config_edit "$B" '.process.args = ["no-such-binary"]'
  run ar create -b "$B" e1
  one_line 'exec: "no-such-binary": executable file not found in $PATH'
  nothing_left
  config_edit "$B" '.process.args = ["/etc/passwd"]'
  run ar run -b "$B" e2
  one_line 'exec: "/etc/passwd": permission denied'
  nothing_left
}

@test "errors: missing mount source" {
  config_edit "$B" '.mounts += [{"destination":"/mnt","type":"bind","source":"/nonexistent-src-'$$'","options":["bind"]}]'
  run ar create -b "$B" e1
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "${lines[0]}" == *nonexistent-src* ]]
  nothing_left
}

@test "errors: duplicate id leaves the first container alone" {
  ar create -b "$B" dup >/dev/null 2>&1
  pid=$(ar state dup | jq -r .pid)
  run ar create -b "$B" dup
  one_line 'container "dup" already exists'
  [ "$(ar state dup | jq -r .status)" = created ]
  [ "$(ar state dup | jq -r .pid)" = "$pid" ]
}

@test "errors: unknown id for every command" {
  for cmd in start state delete kill ps; do
    run ar $cmd ghost
    one_line 'container "ghost" does not exist'
  done
  run ar exec ghost true
  [ "$status" -eq 255 ]   # runc's status when exec itself fails
  status=1 one_line 'container "ghost" does not exist'
}

# containerd's runc shim kills every exited task before deleting it and
# takes three phrases of runc's as "already gone": "container not running",
# "no such process" (any case), "does not exist". Any other wording makes it
# retry the exit forever (StopContainer fails, the pod is never removed).
@test "errors: kill of an exited container says \"container not running\"" {
  config_edit "$B" '.process.args = ["true"]'
  ar run -d -b "$B" k1 </dev/null >/dev/null
  for _ in $(seq 50); do [ "$(ar state k1 | jq -r .status)" = stopped ] && break; sleep 0.1; done
  run ar kill k1 KILL
  one_line "container not running"
  run ar update --pids-limit 5 k1
  [[ "$output" == *"container not running"* ]]
}

@test "errors: kill of an init reaped under it says \"no such process\"" {
  ar run -d -b "$B" k2 </dev/null >/dev/null
  AGENTRUN_FAULT=kill-reaped run ar kill k2 TERM
  [ "$status" -eq 1 ]
  [[ "${output,,}" == *"no such process"* ]] || { echo "$output"; false; }
}

@test "errors: kill and delete of an unknown container say \"does not exist\"" {
  run ar kill ghost KILL
  one_line "does not exist"
  run ar delete ghost
  one_line "does not exist"
}

# Docker maps a start error naming the command and "no such file or
# directory" to 127 (runc's Go words, lower case); 125 otherwise.
@test "errors: a missing absolute command is \"no such file or directory\", as runc words it" {
  config_edit "$B" '.process.args = ["/nonexistent"]'
  run ar create -b "$B" e3
  one_line 'exec: "/nonexistent": stat /nonexistent: no such file or directory'
  nothing_left
}

# main names the command and nothing else does: the parser and the commands'
# messages never repeat it (sandbox, check and trust used to say it twice).
@test "errors: every command is named once, as agentrun: CMD: message" {
  for cmd in create run start state kill delete list ps exec update pause resume events spec validate \
             sandbox check trust; do
    run ar $cmd --bogus
    [ "$status" -ne 0 ]
    [ "${lines[0]}" = "agentrun: $cmd: unknown option --bogus" ] || { echo "$cmd: $output"; false; }
  done
  run ar spec --agent --bogus
  [ "${lines[0]}" = "agentrun: spec --agent: unknown option --bogus" ] || { echo "$output"; false; }
  run ar --bogus
  [ "${lines[0]}" = "agentrun: unknown option --bogus" ] || { echo "$output"; false; }
  run ar delete ghost
  [ "$output" = 'agentrun: delete: container "ghost" does not exist' ] || { echo "$output"; false; }
  run ar kill
  [ "$output" = "agentrun: kill: missing container id" ] || { echo "$output"; false; }
  run ar check extra
  [ "$output" = 'agentrun: check: unexpected argument "extra" (check runs its own probes)' ] || { echo "$output"; false; }
}

@test "errors: invalid ids" {
  for id in ../evil .hidden 'a/b' ''; do
    run ar create -b "$B" "$id"
    [ "$status" -eq 1 ]
    [ "${#lines[@]}" -eq 1 ]
  done
  nothing_left
}

@test "errors: unknown signal" {
  ar run -d -b "$B" s1
  run ar kill s1 SIGNOPE
  one_line 'unknown signal "SIGNOPE"'
  [ "$(ar state s1 | jq -r .status)" = running ]
}

@test "errors: terminal without a console socket when detached" {
  config_edit "$B" '.process.terminal = true'
  run ar create -b "$B" t1
  one_line "console-socket"
  nothing_left
}

@test "errors: a namespace path of the wrong type is named" {
  config_edit "$B" '.linux.namespaces |= map(if .type == "network" then .path = "/proc/self/ns/uts" else . end)'
  run ar create -b "$B" ns1
  one_line "network namespace /proc/self/ns/uts: not a network namespace"
  nothing_left
}

@test "errors: an unknown capability is rejected" {
  config_edit "$B" '.process.capabilities.bounding += ["CAP_NOT_REAL"]'
  run ar create -b "$B" cap1
  [ "$status" -eq 1 ]
  [[ "$output" == *CAP_NOT_REAL* ]]
  nothing_left
}

@test "errors: a failing step in the init undoes the create" {
  # an rlimit above the hard limit cannot be set here (no CAP_SYS_RESOURCE)
  hard=$(ulimit -Hn)
  [ "$hard" != unlimited ] || skip "nofile hard limit is unlimited"
  config_edit "$B" ".process.rlimits = [{\"type\":\"RLIMIT_NOFILE\",\"soft\":$((hard + 1)),\"hard\":$((hard + 1))}]"
  run ar create -b "$B" rl1
  one_line "setrlimit RLIMIT_NOFILE"
  nothing_left
}
