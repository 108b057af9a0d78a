#!/usr/bin/env bats
# --systemd-cgroup through D-Bus. This machine has no systemd as PID 1, so a
# real dbus-daemon runs on a private bus in the test's folder and
# tests/systemd-fake.py plays systemd's Manager on it: dbus-python parsing
# agentrun's messages checks the wire format, and the fake's log says what
# agentrun asked for. tests/dbus-broken.py is a bus that misbehaves. The
# fake's cgroups live under a parent unique to the test, removed in teardown.

load helpers

CG=/sys/fs/cgroup
PY=/usr/bin/python3

setup() {
  [ -d "$CG" ] || skip "no /sys/fs/cgroup"
  T=$BATS_TEST_TMPDIR
  PARENT="arsd-$BATS_ROOT_PID-$BATS_TEST_NUMBER"
  ID="sd$BATS_TEST_NUMBER-$$"
  UNIT="arsd-$ID.scope"
  SCOPE="/$PARENT/test.slice/$UNIT"
  B=$T/bundle
  # where the fake makes scopes: cgroup2, as systemd does (the unified half
  # of a hybrid host, or the root of a pure v2 one)
  if [ "$(stat -f -c %T "$CG/unified" 2>/dev/null)" = cgroup2fs ]; then
    CGROOT=$CG/unified
  elif [ "$(stat -f -c %T "$CG")" = cgroup2fs ]; then
    CGROOT=$CG
  else
    skip "no cgroup2 mount for the fake manager's scopes"
  fi
}

teardown() {
  cleanup_containers
  kill_tracked
  local d
  for d in "$CG"/*/"$PARENT" "$CG/$PARENT"; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  true
}

wait_file() {
  local i
  for i in $(seq 200); do
    [ -s "$1" ] && return 0
    sleep 0.05
  done
  echo "timed out waiting for $1"
  return 1
}

# A dbus-daemon on a socket in the test's folder; DBUS_SYSTEM_BUS_ADDRESS
# points agentrun at it.
start_bus() {
  need_cmd dbus-daemon
  "$PY" -c 'import dbus.mainloop.glib; from gi.repository import GLib' 2>/dev/null \
    || skip "needs python3-dbus and python3-gi"
  cat >"$T/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>custom</type>
  <listen>unix:path=$T/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
EOF
  dbus-daemon --config-file="$T/bus.conf" --nofork --print-address=1 >"$T/addr" 2>"$T/bus.err" &
  track_pid $!
  wait_file "$T/addr"
  export DBUS_SYSTEM_BUS_ADDRESS=$(head -n1 "$T/addr")
}

start_fake() {
  "$PY" "$SRCDIR/tests/systemd-fake.py" "$DBUS_SYSTEM_BUS_ADDRESS" "$CGROOT" "$PARENT" "$T/calls.jsonl" \
    "$T/ready" "$@" 2>"$T/fake.err" &
  track_pid $!
  wait_file "$T/ready"
}

start_broken() {
  "$PY" "$SRCDIR/tests/dbus-broken.py" "$T/broken-$1" "$T/ready-$1" "$1" &
  track_pid $!
  wait_file "$T/ready-$1"
  export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$T/broken-$1"
}

# What the fake was asked: each call of method $1, one JSON line.
calls() { jq -c --arg m "$1" 'select(.method == $m)' "$T/calls.jsonl"; }

bundle() {
  make_bundle "$B" "$@"
  config_edit "$B" ".linux.cgroupsPath = \"test.slice:arsd:$ID\""
}

# The scope's file $2 in the hierarchy carrying controller $1 (v1 where
# mounted, else cgroup2).
scope_file() {
  if [ -e "$CG/$1$SCOPE/$2" ]; then echo "$CG/$1$SCOPE/$2"; else echo "$CGROOT$SCOPE/$2"; fi
}

# After a failed create: no state, no scope directory in any hierarchy.
nothing_left() {
  [ ! -e "$ROOT/$ID" ]
  local d
  for d in "$CG"/*"$SCOPE" "$CG$SCOPE"; do
    [ ! -d "$d" ] || { echo "left behind: $d"; return 1; }
  done
}

@test "systemd: --systemd-cgroup starts a transient scope over D-Bus, limits land, delete stops it" {
  start_bus
  start_fake
  bundle sleep 100
  config_edit "$B" '.linux.resources.memory = {"limit": 67108864} | .linux.resources.pids = {"limit": 20}
    | .linux.resources.cpu = {"shares": 512, "quota": 50000, "period": 100000}'
  ar --systemd-cgroup run -d -b "$B" "$ID" </dev/null >/dev/null
  start=$(calls StartTransientUnit)
  [ "$(jq -r .signature <<<"$start")" = "ssa(sv)a(sa(sv))" ]
  [ "$(jq -r '.args[0]' <<<"$start")" = "$UNIT" ]
  [ "$(jq -r '.args[1]' <<<"$start")" = fail ]
  props=$(jq -c '.args[2]' <<<"$start")
  [ "$(jq -r .Slice <<<"$props")" = test.slice ]
  [ "$(jq -r .Delegate <<<"$props")" = true ]
  [ "$(jq -r '.PIDs | length' <<<"$props")" = 1 ]
  [ "$(jq -r .MemoryMax <<<"$props")" = 67108864 ]
  [ "$(jq -r .TasksMax <<<"$props")" = 20 ]
  [ "$(jq -r .CPUWeight <<<"$props")" = 20 ]          # shares 512 in systemd's weight scale
  [ "$(jq -r .CPUQuotaPerSecUSec <<<"$props")" = 500000 ]
  [ "$(jq -r '.args[3] | length' <<<"$start")" = 0 ]
  [ -n "$(calls Subscribe)" ]
  # the init runs in the scope the manager made; the limits are in its files
  pid=$(ar state "$ID" | jq -r .pid)
  grep -qx "$pid" "$CGROOT$SCOPE/cgroup.procs"
  [ "$(cat "$(scope_file pids pids.max)")" = 20 ]
  f=$(scope_file memory memory.limit_in_bytes)
  [ -e "$f" ] || f=$(scope_file memory memory.max)
  [ "$(cat "$f")" = 67108864 ]
  ar ps "$ID" | grep -qw "$pid"
  # exec joins the same scope
  ar exec "$ID" cat /proc/self/cgroup | grep -q "^0::$SCOPE\$"
  ar delete -f "$ID"
  [ "$(calls StopUnit | jq -r '.args[0]')" = "$UNIT" ]
  nothing_left
}

@test "systemd: an error reply from the manager is one line naming it, and nothing is left" {
  start_bus
  start_fake --fail-start "org.freedesktop.DBus.Error.AccessDenied:denied by the test"
  bundle sleep 100
  run ar --systemd-cgroup run -d -b "$B" "$ID"
  [ "$status" -ne 0 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"$UNIT: StartTransientUnit: org.freedesktop.DBus.Error.AccessDenied: denied by the test"* ]]
  nothing_left
}

@test "systemd: a failed start job is an error, and the scope is stopped" {
  start_bus
  start_fake --job-result failed
  bundle sleep 100
  run ar --systemd-cgroup run -d -b "$B" "$ID"
  [ "$status" -ne 0 ]
  [[ "$output" == *"the job of $UNIT finished with result \"failed\""* ]]
  [ "$(calls StopUnit | jq -r '.args[0]')" = "$UNIT" ]
  nothing_left
}

@test "systemd: no bus at DBUS_SYSTEM_BUS_ADDRESS is one clear line" {
  bundle sleep 100
  DBUS_SYSTEM_BUS_ADDRESS="unix:path=$T/nobus" run ar --systemd-cgroup run -d -b "$B" "$ID"
  [ "$status" -ne 0 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"connect to the system bus at unix:path=$T/nobus: No such file or directory"* ]]
  DBUS_SYSTEM_BUS_ADDRESS="tcp:host=localhost,port=1" run ar --systemd-cgroup run -d -b "$B" "$ID"
  [ "$status" -ne 0 ]
  [[ "$output" == *"other transports are not supported"* ]]
  nothing_left
}

@test "systemd: a bus that refuses us, dies mid-reply or sends garbage gives one line and leaves nothing" {
  bundle sleep 100
  local mode want
  for mode in reject truncate byteorder huge; do
    case $mode in
      reject) want="refused EXTERNAL authentication as uid $(id -u)" ;;
      truncate) want="Hello: D-Bus unix:path=$T/broken-truncate: the bus closed the connection" ;;
      byteorder) want="unknown byte order 0x58" ;;
      huge) want="larger than 1048576 bytes" ;;
    esac
    start_broken $mode
    run ar --systemd-cgroup run -d -b "$B" "$ID"
    echo "$mode: $output"
    [ "$status" -ne 0 ]
    [ "${#lines[@]}" -eq 1 ]
    [[ "$output" == *"$want"* ]]
    nothing_left
  done
}

@test "systemd: delete still removes the container when the bus is gone" {
  start_bus
  start_fake
  bundle sleep 100
  ar --systemd-cgroup run -d -b "$B" "$ID" </dev/null >/dev/null
  [ -d "$CGROOT$SCOPE" ]
  kill_tracked   # the fake and the bus
  run ar delete -f "$ID"
  [ "$status" -eq 0 ]
  [[ "$output" == *"warning"*"stop $UNIT"* ]]
  nothing_left
}

@test "systemd: without systemd as PID 1 and no bus address the error says so" {
  [ ! -d /run/systemd/system ] || skip "systemd is PID 1 here"
  bundle true
  run env -u DBUS_SYSTEM_BUS_ADDRESS "$AGENTRUN" --root "$ROOT" --systemd-cgroup run -b "$B" "$ID"
  [ "$status" -ne 0 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"systemd is not running as PID 1"*"DBUS_SYSTEM_BUS_ADDRESS is not set"* ]]
  nothing_left
}

@test "systemd: a create killed after the scope is made is cleaned by delete --force" {
  start_bus
  start_fake
  bundle sleep 1000
  status=0
  AGENTRUN_FAULT=create-after-cgroup "$AGENTRUN" --root "$ROOT" --systemd-cgroup create -b "$B" "$ID" \
    </dev/null >"$T/fault.out" 2>&1 || status=$?
  [ "$status" -eq 137 ]
  [ ! -e "$ROOT/$ID/state.json" ]       # only the pending record says what was made
  [ -d "$CGROOT$SCOPE" ]
  ar delete --force "$ID"
  [ "$(calls StopUnit | jq -r '.args[0]')" = "$UNIT" ]
  nothing_left
}
