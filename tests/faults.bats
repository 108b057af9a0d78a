#!/usr/bin/env bats
# Fault injection: the runtime killed with SIGKILL at each named phase of
# create, start, exec and delete (AGENTRUN_FAULT=<phase>, common/fault.c),
# after which `delete --force` must leave no mount, cgroup, state folder,
# process or hook-spawned helper behind. Also: a full state filesystem,
# EMFILE, a hung hook, and a relay killed mid-stream.

load helpers

setup() {
  B=$BATS_TEST_TMPDIR/b
  ID=f$$-$BATS_TEST_NUMBER
  SMALL=$BATS_TEST_TMPDIR/small
}

teardown() {
  cleanup_containers
  kill_tracked
  if mountpoint -q "$SMALL" 2>/dev/null; then umount -l "$SMALL"; fi
  # cgroups a failed test leaves (named after this test's own id), once empty
  find /sys/fs/cgroup -maxdepth 6 -depth -type d -name "*$ID*" -exec rmdir {} \; 2>/dev/null || true
}

# Every trace a container with id $1 can leave on the host. Its processes
# are found by cgroup (the container's cgroup is named after the id) and by
# command line (a runtime process waiting in create names the id).
leftover_pids() {
  local id=$1 p
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" != "$$" ] || continue
    if grep -qs -- "$id" "$p/cgroup" || { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qw -- "$id"; then
      echo "${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)"
    fi
  done
}
# find fails when another container's cgroup vanishes during the walk: not ours
leftover_cgroups() { find /sys/fs/cgroup -maxdepth 6 -type d -name "*$1*" 2>/dev/null || true; }
# Mounts are counted where this test can own them: other suites may mount
# in the host namespace at the same time, so a global count would be noise.
leftover_mounts() { grep -F -e "$BATS_TEST_TMPDIR" -e "$ID" /proc/self/mountinfo | grep -vF -- " $SMALL " || true; }

# Wait up to 5 s for the container's processes to go, then check every trace.
assert_clean() {
  local id=$1 i out
  for i in $(seq 50); do
    [ -z "$(leftover_pids "$id")" ] && break
    sleep 0.1
  done
  out=$(leftover_pids "$id"); [ -z "$out" ] || { echo "processes left: $out"; return 1; }
  out=$(leftover_cgroups "$id"); [ -z "$out" ] || { echo "cgroups left: $out"; return 1; }
  out=$(leftover_mounts); [ -z "$out" ] || { echo "mounts left: $out"; return 1; }
  [ ! -e "$ROOT/$id" ] || { echo "state folder left: $(ls -la "$ROOT/$id")"; return 1; }
}

# A createRuntime hook that leaves a helper process behind the way the
# netproxy hook leaves its server: outside the container's cgroup, living as
# long as the container's init (the state on stdin names its pid). It must
# not outlive delete --force.
with_helper_hook() {
  local helper=$BATS_TEST_TMPDIR/helper.sh watch=$BATS_TEST_TMPDIR/watch.sh
  # alive while the pid exists and is not a zombie, as the server's pidfd
  # sees it (this machine's pid 1 can be slow to reap an orphaned init)
  cat >"$watch" <<'WATCH'
#!/bin/sh
while st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) && [ "${st%% *}" != Z ]; do sleep 0.1; done
WATCH
  printf '#!/bin/sh\n# %s\npid=$(jq -r .pid)\nsetsid %s "$pid" </dev/null >/dev/null 2>&1 &\necho $! >"%s"\n' \
    "$ID" "$watch" "$BATS_TEST_TMPDIR/helper.pid" >"$helper"
  chmod +x "$helper" "$watch"
  config_edit "$B" '.hooks.createRuntime = [{"path": $p, "args": [$p, $id]}]' --arg p "$helper" --arg id "$ID"
}
helper_gone() {
  local hp
  [ -s "$BATS_TEST_TMPDIR/helper.pid" ] || return 0
  hp=$(cat "$BATS_TEST_TMPDIR/helper.pid")
  track_pid "$hp"
  # it polls the init every 0.1 s: give it a few of those to notice
  local i
  for i in $(seq 50); do
    kill -0 "$hp" 2>/dev/null || return 0
    sleep 0.1
  done
  return 1
}

# fault PHASE CMD...: run the runtime with the phase armed; it must die of SIGKILL.
fault() {
  local phase=$1; shift
  # stdio to a file, not a pipe: a process the killed runtime started may
  # hold it open for its whole life
  status=0
  AGENTRUN_FAULT="$phase" "$AGENTRUN" --root "$ROOT" "$@" </dev/null >"$BATS_TEST_TMPDIR/fault.out" 2>&1 || status=$?
  echo "$phase: status $status: $(cat "$BATS_TEST_TMPDIR/fault.out")"
  [ "$status" -eq 137 ] || { echo "the fault point $phase did not fire (is it wired?)"; return 1; }
}

# After the kill: delete --force must succeed (or find nothing) and clean all.
force_delete_and_check() {
  run ar delete --force "$ID"
  echo "delete --force: status $status: $output"
  [ "$status" -eq 0 ] || [ ! -e "$ROOT/$ID" ]
  assert_clean "$ID"
}

create_phase() {
  make_bundle "$B" sleep 1000
  with_helper_hook
  fault "$1" create -b "$B" "$ID"
  force_delete_and_check
  helper_gone || { echo "the createRuntime hook's helper outlived delete --force"; return 1; }
}

@test "fault: create killed after the state folder is made" { create_phase create-after-state; }
@test "fault: create killed after clone" { create_phase create-after-clone; }
@test "fault: create killed after the cgroup is made" { create_phase create-after-cgroup; }
@test "fault: create killed after the init reported its pid" { create_phase create-after-pid; }
@test "fault: create killed after the createRuntime hooks ran" { create_phase create-after-hooks; }
@test "fault: create killed after state.json, before commit" { create_phase create-before-commit; }

start_phase() {
  make_bundle "$B" sleep 1000
  ar create -b "$B" "$ID"
  fault "$1" start "$ID"
  force_delete_and_check
}

@test "fault: start killed before releasing the init" { start_phase start-before-release; }
@test "fault: start killed before the poststart hooks" { start_phase start-before-poststart; }

exec_phase() {
  make_bundle "$B" sleep 1000
  ar run -d -b "$B" "$ID" </dev/null >/dev/null 2>&1
  fault "$1" exec "$ID" sleep 1001
  # the container itself survives a dead exec
  [ "$(ar state "$ID" | jq -r .status)" = running ]
  force_delete_and_check
}

@test "fault: exec killed after clone" { exec_phase exec-after-clone; }
@test "fault: exec killed after joining the cgroup" { exec_phase exec-after-cgroup; }
@test "fault: exec killed while waiting for its process" { exec_phase exec-before-wait; }

delete_phase() {
  make_bundle "$B" sleep 1000
  with_helper_hook
  ar run -d -b "$B" "$ID" </dev/null >/dev/null 2>&1
  fault "$1" delete --force "$ID"
  force_delete_and_check
  helper_gone || { echo "the createRuntime hook's helper outlived delete --force"; return 1; }
}

@test "fault: delete killed after killing the init" { delete_phase delete-after-kill; }
@test "fault: delete killed after removing the cgroup" { delete_phase delete-after-cgroup; }
@test "fault: delete killed before removing the state folder" { delete_phase delete-before-remove; }

@test "fault: a full state filesystem fails create cleanly" {
  make_bundle "$B" sleep 1000
  mkdir -p "$SMALL"
  mount -t tmpfs -o size=64k,mode=0700 tmpfs "$SMALL"
  # fill it, leaving no block free
  dd if=/dev/zero of="$SMALL/fill" bs=4k 2>/dev/null || true
  [ "$(df --output=avail "$SMALL" | tail -n 1 | tr -d ' ')" -eq 0 ]
  run "$AGENTRUN" --root "$SMALL" create -b "$B" "$ID"
  echo "status $status: $output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"No space left on device"* ]]
  ROOT=$SMALL assert_clean "$ID"
  # with room again the same id works, and nothing half-made blocks it
  rm -f "$SMALL/fill"
  run "$AGENTRUN" --root "$SMALL" run -b "$B" "$ID" true
  "$AGENTRUN" --root "$SMALL" delete -f "$ID" 2>/dev/null || true
  ROOT=$SMALL assert_clean "$ID"
}

@test "fault: EMFILE at any low fd limit fails cleanly or succeeds" {
  make_bundle "$B" true
  local n
  need_cmd prlimit
  for n in 4 6 8 10 12 16 24 32; do
    local out st=0
    out=$(prlimit --nofile=$n:$n "$AGENTRUN" --root "$ROOT" run -b "$B" "$ID-$n" 2>&1) || st=$?
    echo "nofile $n: status $st: $out"
    # a failure is an exit status with a message, never a crash (signal)
    [ "$st" -lt 128 ]
    [ "$st" -eq 0 ] || [ -n "$out" ]
    ar delete -f "$ID-$n" >/dev/null 2>&1 || true
    assert_clean "$ID-$n"
  done
}

@test "fault: a hung createRuntime hook times out and leaves nothing" {
  make_bundle "$B" sleep 1000
  local secs=$((1000 + RANDOM % 1000))
  config_edit "$B" '.hooks.createRuntime = [{"path": "/bin/sleep", "args": ["sleep", $s], "timeout": 1}]' --arg s "$secs"
  local t0=$SECONDS
  run ar create -b "$B" "$ID"
  echo "status $status: $output"
  [ "$status" -ne 0 ]
  [ $((SECONDS - t0)) -lt 10 ]
  ar delete -f "$ID" >/dev/null 2>&1 || true
  assert_clean "$ID"
  ! pgrep -f "^sleep $secs\$"
}

@test "fault: a relay killed mid-stream ends the client's connection, and a new relay serves" {
  [ -x "$RELAY" ] || skip "agentrun-relay not built"
  need_cmd python3
  local T=$BATS_TEST_TMPDIR port
  mkdir -p "$T/s"
  # an upstream that sends forever
  python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    try:
        while True: c.sendall(b"x" * 65536)
    except OSError: c.close()
' >"$T/port" &
  track_pid $!
  for i in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
  port=$(cat "$T/port")
  "$RELAY" --dir "$T/s" --allow "up.test:443=127.0.0.1:$port" 2>"$T/relay.err" &
  local rp=$!
  track_pid $rp
  for i in $(seq 50); do [ -S "$T/s/up.test:443.sock" ] && break; sleep 0.1; done
  # a client reading through the relay; the relay dies under it
  python3 -c '
import socket, sys, time
c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); c.settimeout(10)
n = 0
t = time.time()
try:
    while True:
        d = c.recv(65536)
        if not d: break
        n += len(d)
        if n > (1 << 20) and not getattr(sys, "sent", 0):
            open(sys.argv[2], "w").write("streaming\n"); sys.sent = 1
except OSError as e:
    print("error", e)
print("ended after", n, "bytes in", round(time.time() - t, 1), "s")
' "$T/s/up.test:443.sock" "$T/streaming" >"$T/client.out" 2>&1 &
  local cp=$!
  track_pid $cp
  for i in $(seq 50); do [ -s "$T/streaming" ] && break; sleep 0.1; done
  [ -s "$T/streaming" ]
  kill -9 $rp
  wait $cp
  cat "$T/client.out"
  grep -q "ended after" "$T/client.out"
  # no relay process is left, and a new relay takes over the stale socket
  refute kill -0 $rp 2>/dev/null
  "$RELAY" --dir "$T/s" --allow "up.test:443=127.0.0.1:$port" 2>"$T/relay2.err" &
  track_pid $!
  for i in $(seq 50); do grep -q listening "$T/relay2.err" && break; sleep 0.1; done
  grep -q listening "$T/relay2.err"
}
