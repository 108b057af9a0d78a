#!/usr/bin/env bats
# containerd 1.6 (ctr and the runc v2 shim) driving the runtime under test
# (agentrun by default; prove the suite itself with TEST_RUNTIME=/usr/sbin/runc).
# containerd is private to this file: see tests/clients/containerd.bash.

bats_require_minimum_version 1.5.0
load helpers
load clients/containerd

setup_file() { containerd_setup_file; }
teardown_file() { containerd_teardown_file; }
teardown() { containerd_teardown; }

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

# The host pid of a task's init.
task_pid() { c tasks ls | awk -v id="$1" '$1 == id { print $2 }'; }
task_status() { c tasks ls | awk -v id="$1" '$1 == id { print $3 }'; }

# run_detached [CTR-RUN-OPTIONS...] ID ARGS...: start ID running ARGS in the
# background and wait until it runs.
run_detached() {
  local opts=()
  while [[ "$1" == -* ]]; do opts+=("$1" "$2"); shift 2; done
  local id=$1; shift
  crun_ -d "${opts[@]}" "$CIMAGE" "$id" "$@" >/dev/null || return 1
  local i
  for i in $(seq 50); do
    [ "$(task_status "$id")" = RUNNING ] && return 0
    sleep 0.1
  done
  return 1
}

@test "containerd: the image made for the tests is there" {
  run c images ls -q
  [[ "$output" == *"$CIMAGE"* ]]
}

@test "containerd: ctr run --rm with --runc-binary runs the runtime under test" {
  run crun_ --rm "$CIMAGE" t-run echo hello from ctr
  [ "$status" -eq 0 ]
  [ "$output" = "hello from ctr" ]
  run c containers ls -q
  [[ "$output" != *t-run* ]]
  # the shim kept the runtime's state where it was told
  [ ! -e "$CT/runc/$CNS/t-run" ]
}

@test "containerd: the shim really runs the binary it was given" {
  local log=$BATS_TEST_TMPDIR/argv.log
  "$CLIENTS/argv-wrapper.sh" "$RUNTIME" "$BATS_TEST_TMPDIR/$(runtime_name)" "" "$log"
  run c run --runc-binary "$BATS_TEST_TMPDIR/$(runtime_name)" --runc-root "$CT/runc" --rm "$CIMAGE" t-bin true
  [ "$status" -eq 0 ]
  grep -q "'create'" "$log"
  grep -q "'start'" "$log"
  grep -q "'delete'" "$log"
}

@test "containerd: the task's exit code is ctr's" {
  run crun_ --rm "$CIMAGE" t-exit sh -c 'exit 42'
  [ "$status" -eq 42 ]
}

@test "containerd: a missing or non-executable command fails the run with runc's words" {
  # the same words as runc's (case aside), which CRI clients show to users
  run crun_ --rm "$CIMAGE" t-missing /no/such/binary
  echo "$output"
  [ "$status" -ne 0 ]
  echo "$output" | grep -qi "no such file or directory"
  run crun_ --rm "$CIMAGE" t-notinpath no-such-command
  echo "$output"
  [ "$status" -ne 0 ]
  echo "$output" | grep -qi 'executable file not found in \$PATH'
  run crun_ --rm "$CIMAGE" t-noexec /etc/passwd
  echo "$output"
  [ "$status" -ne 0 ]
  echo "$output" | grep -qi "permission denied"
  run c containers ls -q
  [[ "$output" != *t-missing* ]]
  [[ "$output" != *t-noexec* ]]
}

@test "containerd: run -d, then exec with its own exec id" {
  run_detached t-exec sleep 1000
  local pid
  pid=$(task_pid t-exec)
  run c tasks exec --exec-id e1 t-exec sh -c 'cat /proc/1/cmdline | tr "\0" " "; echo; readlink /proc/self/ns/pid'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "sleep 1000 " ]
  [ "${lines[1]}" = "$(readlink /proc/$pid/ns/pid)" ]
  run c tasks exec --exec-id e2 t-exec sh -c 'exit 6'
  [ "$status" -eq 6 ]
  run c tasks exec --exec-id e3 --cwd /tmp --user 65534 t-exec sh -c 'echo $(id -u) $(pwd)'
  [ "$output" = "65534 /tmp" ]
}

@test "containerd: exec a process and list it with tasks ps" {
  run_detached t-ps sleep 1000
  c tasks exec -d --exec-id bg t-ps sleep 999 >/dev/null
  local i
  for i in $(seq 30); do
    c tasks ps t-ps | awk 'NR > 1' | wc -l | grep -q 2 && break
    sleep 0.1
  done
  run c tasks ps t-ps
  [ "$(echo "$output" | awk 'NR > 1' | wc -l)" -eq 2 ]
}

@test "containerd: kill delivers the signal asked for, then delete" {
  local out=$BATS_TEST_TMPDIR/out job
  crun_ --rm "$CIMAGE" t-kill sh -c 'trap "exit 9" USR1; echo ready; while :; do sleep 0.1; done' >"$out" 2>&1 &
  job=$!
  track_pid "$job"
  local i
  for i in $(seq 50); do grep -q ready "$out" && break; sleep 0.1; done
  run c tasks kill -s USR1 t-kill
  [ "$status" -eq 0 ]
  local rc=0
  wait "$job" || rc=$?
  [ "$rc" -eq 9 ]
  # --rm deleted the task and the container, and the runtime's state
  run c containers ls -q
  [[ "$output" != *t-kill* ]]
  [ ! -e "$CT/runc/$CNS/t-kill" ]
}

@test "containerd: tasks delete and containers delete after the task exits" {
  run_detached t-del sh -c 'sleep 0.5'
  local i
  for i in $(seq 50); do [ "$(task_status t-del)" = STOPPED ] && break; sleep 0.1; done
  [ "$(task_status t-del)" = STOPPED ]
  [ -e "$CT/runc/$CNS/t-del" ]
  run c tasks delete t-del
  [ "$status" -eq 0 ]
  [ ! -e "$CT/runc/$CNS/t-del" ]
  run c containers delete t-del
  [ "$status" -eq 0 ]
}

@test "containerd: kill -a SIGKILL stops the task and its children" {
  run_detached t-killall sh -c 'sleep 1000 & sleep 1000'
  local pid
  pid=$(task_pid t-killall)
  run c tasks kill -a -s KILL t-killall
  [ "$status" -eq 0 ]
  local i
  for i in $(seq 50); do [ "$(task_status t-killall)" = STOPPED ] && break; sleep 0.1; done
  [ "$(task_status t-killall)" = STOPPED ]
  wait_gone "$pid"
}

@test "containerd: pause and resume" {
  run_detached t-pause sleep 1000
  run c tasks pause t-pause
  [ "$status" -eq 0 ]
  [ "$(task_status t-pause)" = PAUSED ]
  run c tasks resume t-pause
  [ "$status" -eq 0 ]
  [ "$(task_status t-pause)" = RUNNING ]
}

@test "containerd: run -t gets a terminal" {
  need_cmd script
  run script -qec "ctr --address '$CT/containerd.sock' --namespace '$CNS' run --runc-binary '$CRUNTIME' --runc-root '$CT/runc' -t --rm '$CIMAGE' t-tty sh -c 'tty; exit 4'" /dev/null
  [ "$status" -eq 4 ]
  [[ "$output" == */dev/pts/0* ]]
}

@test "containerd: exec -t gets a terminal" {
  need_cmd script
  run_detached t-exectty sleep 1000
  run script -qec "ctr --address '$CT/containerd.sock' --namespace '$CNS' tasks exec -t --exec-id tt t-exectty tty" /dev/null
  [ "$status" -eq 0 ]
  [[ "$output" == */dev/pts/* ]]
}

@test "containerd: --read-only, --env and --cwd reach the container" {
  run crun_ --rm --read-only --env AGENT_VAR=set --cwd /tmp "$CIMAGE" t-opts \
    sh -c 'echo $AGENT_VAR $(pwd); touch /x'
  [ "$status" -ne 0 ]
  # stdout and stderr come through separate fifos: no order between them
  [[ "$output" == *"set /tmp"* ]]
  [[ "$output" == *"Read-only file system"* ]]
}

@test "containerd: --memory-limit and --cpus land in the task's cgroup" {
  run_detached --memory-limit $((64 * 1024 * 1024)) --cpus 0.5 t-mem sleep 1000
  local pid rel
  pid=$(task_pid t-mem)
  rel=$(awk -F: '$2 == "memory" { print $3 }' "/proc/$pid/cgroup")
  [[ "$rel" == */t-mem ]]
  [ "$(cat "/sys/fs/cgroup/memory$rel/memory.limit_in_bytes")" -eq $((64 * 1024 * 1024)) ]
  rel=$(awk -F: '$2 == "cpu" { print $3 }' "/proc/$pid/cgroup")
  [ $(($(cat "/sys/fs/cgroup/cpu$rel/cpu.cfs_quota_us") * 2)) -eq "$(cat "/sys/fs/cgroup/cpu$rel/cpu.cfs_period_us")" ]
}

@test "containerd: --with-ns joins an existing network namespace (as CRI pods do)" {
  unshare --net sleep 1000 &
  local holder=$! want _
  disown "$holder" # no "Killed" notice when teardown kills it
  track_pid "$holder"
  for _ in $(seq 50); do
    want=$(readlink "/proc/$holder/ns/net")
    [ "$want" != "$(readlink /proc/self/ns/net)" ] && break
    sleep 0.05
  done
  run crun_ --rm --with-ns "network:/proc/$holder/ns/net" "$CIMAGE" t-ns readlink /proc/self/ns/net
  kill_tracked
  [ "$status" -eq 0 ]
  [ "$output" = "$want" ]
}

@test "containerd: no_new_privs by default, --seccomp applies containerd's profile" {
  run crun_ --rm --seccomp "$CIMAGE" t-sec grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status
  [ "$status" -eq 0 ]
  [[ "$output" =~ NoNewPrivs:[[:space:]]+1 ]]
  [[ "$output" =~ Seccomp:[[:space:]]+2 ]]
  run crun_ --rm --allow-new-privs "$CIMAGE" t-nnp grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status
  [[ "$output" =~ NoNewPrivs:[[:space:]]+0 ]]
  [[ "$output" =~ Seccomp:[[:space:]]+0 ]]
}

@test "containerd: the configured runtime from contrib's config.toml is loaded" {
  # ctr does not read CRI runtime handlers, and the running daemon has the
  # CRI plugin off; `config dump` shows what kubelet's CRI calls would find.
  grep -v '^disabled_plugins' "$CT/config.toml" >"$BATS_TEST_TMPDIR/cri.toml"
  run containerd --config "$BATS_TEST_TMPDIR/cri.toml" config dump
  [ "$status" -eq 0 ]
  python3 - "$output" <<'EOS'
import sys, tomllib
doc = tomllib.loads(sys.argv[1])
rt = doc["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["agentrun"]
assert rt["runtime_type"] == "io.containerd.runc.v2", rt
assert rt["options"]["BinaryName"].endswith("/agentrun"), rt
EOS
}
