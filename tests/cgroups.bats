#!/usr/bin/env bats
# cgroups: paths, limits that bite from inside a container, update,
# pause/resume, events, cleanup on delete; on this host's layout (hybrid
# here) and on cgroup2 alone, mounted in a private mount namespace.
# Every cgroup lives under a parent unique to the test, removed in teardown.

load helpers

CG=/sys/fs/cgroup

setup() {
  [ -d "$CG" ] || skip "no /sys/fs/cgroup"
  PARENT="artest-$BATS_ROOT_PID-$BATS_TEST_NUMBER"
  ID="cg$BATS_TEST_NUMBER-$$"
  B=$BATS_TEST_TMPDIR/bundle
}

teardown() {
  cleanup_containers
  kill_tracked
  local d
  for d in "$CG"/*/"$PARENT" "$CG/agentrun/$ID" "$CG"/*/agentrun/"$ID"; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  true
}

# Every hierarchy's directory for cgroup path $1 that exists.
cg_dirs() {
  local d
  for d in "$CG"/*/"${1#/}"; do
    [ -d "$d" ] && echo "$d"
  done
  true
}

v1_mounted() { awk -v m="$CG/$1" '$5 == m && / - cgroup /' /proc/self/mountinfo | grep -q .; }

need_v1() {
  local c
  for c in "$@"; do v1_mounted "$c" || skip "needs the v1 $c hierarchy mounted at $CG/$c"; done
}

# A busybox bundle under our own cgroup parent.
bundle() {
  make_bundle "$B" "$@"
  config_edit "$B" ".linux.cgroupsPath = \"/$PARENT/c\""
}

# Start detached and wait until running.
start_detached() {
  ar run -d -b "$B" "$ID" </dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/run.err" || {
    cat "$BATS_TEST_TMPDIR/run.err"
    return 1
  }
}

state_status() { ar state "$ID" | jq -r .status; }

@test "cgroups: limits land in the v1 files of the container's cgroup, and delete removes every directory" {
  need_v1 memory pids cpu
  bundle sleep 100
  config_edit "$B" '.linux.resources.memory = {"limit": 67108864, "reservation": 33554432, "swappiness": 10}
    | .linux.resources.pids = {"limit": 20} | .linux.resources.cpu = {"shares": 512, "quota": 50000, "period": 100000}'
  start_detached
  [ "$(cat $CG/memory/$PARENT/c/memory.limit_in_bytes)" = 67108864 ]
  [ "$(cat $CG/memory/$PARENT/c/memory.soft_limit_in_bytes)" = 33554432 ]
  [ "$(cat $CG/memory/$PARENT/c/memory.swappiness)" = 10 ]
  [ "$(cat $CG/pids/$PARENT/c/pids.max)" = 20 ]
  [ "$(cat $CG/cpu/$PARENT/c/cpu.shares)" = 512 ]
  [ "$(cat $CG/cpu/$PARENT/c/cpu.cfs_quota_us)" = 50000 ]
  pid=$(ar state "$ID" | jq -r .pid)
  grep -qx "$pid" $CG/memory/$PARENT/c/cgroup.procs
  # every hierarchy has the container, the unified half of a hybrid too
  [ "$(cg_dirs "$PARENT/c" | wc -l)" -ge 3 ]
  ar delete -f "$ID"
  [ -z "$(cg_dirs "$PARENT/c")" ]
  [ -z "$(cg_dirs "$PARENT")" ]   # the parent we made goes too
}

@test "cgroups: a process over the memory limit is OOM-killed inside the container" {
  need_v1 memory
  # sort holds its whole input in memory: 100 MB against 32 MB
  bundle sh -c 'head -c 100000000 /dev/zero | tr "\\0" a | sort >/dev/null; echo "rc=$?"'
  config_edit "$B" '.linux.resources.memory = {"limit": 33554432, "swap": 33554432}'
  run ar run -b "$B" "$ID"
  echo "status=$status output=$output"
  # the OOM killer picks its victim: sort (then the shell reports rc=137), or
  # at times the shell itself, the init (then the container exits 137)
  [[ "$output" == *"rc=137"* ]] || [ "$status" -eq 137 ]
}

@test "cgroups: the same process completes without the limit (the OOM test can fail)" {
  bundle sh -c 'head -c 100000000 /dev/zero | tr "\\0" a | sort >/dev/null; echo "rc=$?"'
  run ar run -b "$B" "$ID"
  [[ "$output" == *"rc=0"* ]] || { echo "$output"; false; }
}

@test "cgroups: a fork over pids.max fails inside the container" {
  need_v1 pids
  bundle sh -c 'i=0; while [ $i -lt 12 ]; do sleep 2 & i=$((i+1)); done; wait; echo end'
  config_edit "$B" '.linux.resources.pids = {"limit": 5}'
  run ar run -b "$B" "$ID"
  [[ "$output" == *"can't fork"* || "$output" == *"Resource temporarily unavailable"* ]] || { echo "$output"; false; }
}

@test "cgroups: update changes live limits (flags and --resources -)" {
  need_v1 memory pids cpu
  bundle sleep 100
  config_edit "$B" '.linux.resources.memory = {"limit": 67108864} | .linux.resources.pids = {"limit": 20}'
  start_detached
  ar update --memory 128m --memory-swap 256m --pids-limit 7 --cpu-shares 300 "$ID"
  [ "$(cat $CG/memory/$PARENT/c/memory.limit_in_bytes)" = 134217728 ]
  [ "$(cat $CG/memory/$PARENT/c/memory.memsw.limit_in_bytes)" = 268435456 ]
  [ "$(cat $CG/pids/$PARENT/c/pids.max)" = 7 ]
  [ "$(cat $CG/cpu/$PARENT/c/cpu.shares)" = 300 ]
  echo '{"pids": {"limit": 9}, "cpu": {"quota": 20000, "period": 100000}}' | ar update --resources - "$ID"
  [ "$(cat $CG/pids/$PARENT/c/pids.max)" = 9 ]
  [ "$(cat $CG/cpu/$PARENT/c/cpu.cfs_quota_us)" = 20000 ]
  # lowering the limit below memsw needs the other write order
  ar update --memory 32m --memory-swap 32m "$ID"
  [ "$(cat $CG/memory/$PARENT/c/memory.memsw.limit_in_bytes)" = 33554432 ]
  run ar update --memory lots "$ID"
  [ "$status" -ne 0 ]
  [[ "$output" == *"--memory"* ]]
  # devices are accepted and left as they are (CRI sends them), as runc does
  if v1_mounted devices; then
    before=$(cat $CG/devices/$PARENT/c/devices.list)
    ar update --resources - "$ID" <<<'{"devices": [{"allow": true, "access": "rwm"}], "pids": {"limit": 11}}'
    [ "$(cat $CG/devices/$PARENT/c/devices.list)" = "$before" ]
    [ "$(cat $CG/pids/$PARENT/c/pids.max)" = 11 ]
  fi
}

# What Docker sends when the user set no such limit: zeros. runc reads them
# as "not asked"; writing them gives cpu.shares 2 and EINVAL/ERANGE errors.
@test "cgroups: zeros are unset at create (Docker's cpu.shares 0, blockIO.weight 0, reservation 0, quota 0)" {
  need_v1 memory pids cpu blkio
  bundle sleep 100
  config_edit "$B" '.linux.resources = {"memory": {"limit": 0, "reservation": 0, "swap": 0, "kernel": 0, "kernelTCP": 0},
    "cpu": {"shares": 0, "quota": 0, "period": 0, "realtimeRuntime": 0, "realtimePeriod": 0, "cpus": "", "mems": ""},
    "blockIO": {"weight": 0, "leafWeight": 0}, "pids": {"limit": 0}}'
  start_detached
  d=$CG/cpu/$PARENT/c
  [ "$(cat $d/cpu.shares)" = "$(cat $CG/cpu/cpu.shares)" ]
  [ "$(cat $d/cpu.cfs_quota_us)" = -1 ]
  [ "$(cat $CG/pids/$PARENT/c/pids.max)" = max ]
  [ "$(cat $CG/memory/$PARENT/c/memory.soft_limit_in_bytes)" = "$(cat $CG/memory/$PARENT/memory.soft_limit_in_bytes)" ]
  [ "$(cat $CG/memory/$PARENT/c/memory.limit_in_bytes)" = "$(cat $CG/memory/$PARENT/memory.limit_in_bytes)" ]
  # no kernel-memory warning for a zero
  ! grep -q "memory.kernel" "$BATS_TEST_TMPDIR/run.err"
}

@test "cgroups: update with Docker's zeros changes only what it names" {
  need_v1 memory pids cpu
  bundle sleep 100
  config_edit "$B" '.linux.resources = {"memory": {"limit": 67108864, "reservation": 33554432}, "cpu": {"shares": 512}, "pids": {"limit": 20}}'
  start_detached
  m=$CG/memory/$PARENT/c c=$CG/cpu/$PARENT/c
  # docker update --memory 96m --memory-swap 192m
  ar update --resources - "$ID" <<<'{"memory":{"limit":100663296,"reservation":0,"swap":201326592,"kernel":0},
    "cpu":{"shares":0,"quota":0,"period":0},"blockIO":{"weight":0},"pids":{"limit":0}}'
  [ "$(cat $m/memory.limit_in_bytes)" = 100663296 ]
  [ "$(cat $m/memory.memsw.limit_in_bytes)" = 201326592 ]
  [ "$(cat $m/memory.soft_limit_in_bytes)" = 33554432 ]
  [ "$(cat $c/cpu.shares)" = 512 ]
  [ "$(cat $CG/pids/$PARENT/c/pids.max)" = 20 ]
  # docker update --cpus 0.5 --pids-limit 33: memory limit 0 is "leave it"
  ar update --resources - "$ID" <<<'{"memory":{"limit":0,"reservation":0,"swap":0,"kernel":0},
    "cpu":{"shares":0,"quota":50000,"period":100000},"blockIO":{"weight":0},"pids":{"limit":33}}'
  [ "$(cat $c/cpu.cfs_quota_us)" = 50000 ]
  [ "$(cat $CG/pids/$PARENT/c/pids.max)" = 33 ]
  [ "$(cat $m/memory.limit_in_bytes)" = 100663296 ]
}

@test "cgroups: a refused update leaves every old limit in place" {
  need_v1 memory pids cpu
  bundle sleep 100
  config_edit "$B" '.linux.resources = {"memory": {"limit": 67108864, "swap": 134217728}, "pids": {"limit": 20}, "cpu": {"shares": 512}}'
  start_detached
  m=$CG/memory/$PARENT/c
  # the kernel refuses a quota under 1 ms after memory, pids and shares
  run ar update --memory 96m --memory-swap 192m --pids-limit 30 --cpu-shares 300 --cpu-quota 500 "$ID"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *cfs_quota_us* ]]
  [ "$(cat $m/memory.limit_in_bytes)" = 67108864 ]
  [ "$(cat $m/memory.memsw.limit_in_bytes)" = 134217728 ]
  [ "$(cat $CG/pids/$PARENT/c/pids.max)" = 20 ]
  [ "$(cat $CG/cpu/$PARENT/c/cpu.shares)" = 512 ]
  [ "$(cat $CG/cpu/$PARENT/c/cpu.cfs_quota_us)" = -1 ]
  # a swap below the limit: refused before anything is written
  run ar update --memory 200m --memory-swap 100m "$ID"
  [ "$status" -ne 0 ]
  [ "$(cat $m/memory.limit_in_bytes)" = 67108864 ]
}

@test "cgroups: update takes options after the id, --cpu-share, and --memory -1 lifts swap too" {
  need_v1 memory cpu
  bundle sleep 100
  config_edit "$B" '.linux.resources = {"memory": {"limit": 67108864, "swap": 134217728}}'
  start_detached
  m=$CG/memory/$PARENT/c
  ar update "$ID" --cpu-share 256 --memory -1
  [ "$(cat $CG/cpu/$PARENT/c/cpu.shares)" = 256 ]
  [ "$(cat $m/memory.limit_in_bytes)" = "$(cat $CG/memory/memory.limit_in_bytes)" ]
  [ "$(cat $m/memory.memsw.limit_in_bytes)" = "$(cat $CG/memory/memory.memsw.limit_in_bytes)" ]
  ar update --memory 32m "$ID" --memory-swap 64m
  [ "$(cat $m/memory.memsw.limit_in_bytes)" = 67108864 ]
  run ar update "$ID" --pids-limit 3 "$ID"
  [ "$status" -ne 0 ]
  [[ "$output" == *"exactly one container id"* ]]
}

@test "cgroups: update orders quota and period as a parent's quota needs (v1)" {
  need_v1 cpu
  # the parent allows half a CPU; the container has it all
  mkdir -p "$CG/cpu/$PARENT"
  echo 50000 >"$CG/cpu/$PARENT/cpu.cfs_quota_us"
  bundle sleep 100
  config_edit "$B" '.linux.resources.cpu = {"quota": 50000, "period": 100000}'
  start_detached
  c=$CG/cpu/$PARENT/c
  # period first would pass through 50000/50000, over the parent's half
  ar update --cpu-quota 25000 --cpu-period 50000 "$ID"
  [ "$(cat $c/cpu.cfs_quota_us)" = 25000 ]
  [ "$(cat $c/cpu.cfs_period_us)" = 50000 ]
  # and back: quota first would pass through 50000/50000
  ar update --cpu-quota 50000 --cpu-period 100000 "$ID"
  [ "$(cat $c/cpu.cfs_quota_us)" = 50000 ]
  [ "$(cat $c/cpu.cfs_period_us)" = 100000 ]
}

@test "cgroups: the new pids limit bites after update" {
  need_v1 pids
  bundle sh -c 'sleep 3; i=0; while [ $i -lt 8 ]; do sleep 2 & i=$((i+1)); done; wait; echo end'
  start_detached
  ar update --pids-limit 3 "$ID"
  for _ in $(seq 50); do [ "$(state_status)" = stopped ] && break; sleep 0.2; done
  [ "$(state_status)" = stopped ]
  grep -q '^max [1-9]' "$CG/pids/$PARENT/c/pids.events"
}

@test "cgroups: pause freezes every process and state says paused; resume thaws" {
  bundle sleep 100
  start_detached
  ar pause "$ID"
  [ "$(state_status)" = paused ]
  if v1_mounted freezer; then
    [ "$(cat $CG/freezer/$PARENT/c/freezer.state)" = FROZEN ]
  fi
  if [ -f "$CG/unified/$PARENT/c/cgroup.events" ] && ! v1_mounted freezer; then
    grep -q "frozen 1" "$CG/unified/$PARENT/c/cgroup.events"
  fi
  run ar pause "$ID"
  [ "$status" -ne 0 ]
  ar resume "$ID"
  [ "$(state_status)" = running ]
  run ar resume "$ID"
  [ "$status" -ne 0 ]
  [[ "$output" == *"not paused"* ]]
}

@test "cgroups: kill --all and delete -f leave no cgroup behind after SIGKILL" {
  bundle sh -c 'sleep 100 & sleep 100 & wait'
  start_detached
  [ -n "$(cg_dirs "$PARENT/c")" ]
  ar kill --all "$ID" KILL
  ar delete -f "$ID"
  [ -z "$(cg_dirs "$PARENT/c")" ]
}

@test "cgroups: events --stats prints runc-style JSON" {
  need_v1 memory pids
  bundle sleep 100
  config_edit "$B" '.linux.resources.pids = {"limit": 50}'
  start_detached
  run ar events --stats "$ID"
  [ "$status" -eq 0 ]
  echo "$output" | jq -e '.type == "stats" and .id == "'"$ID"'"'
  echo "$output" | jq -e '.data.memory.usage.usage > 0'
  echo "$output" | jq -e '.data.pids.current >= 1 and .data.pids.limit == 50'
  echo "$output" | jq -e '.data.cpu.usage.total > 0'
}

@test "cgroups: events streams stats at --interval and an oom event on OOM kill" {
  need_v1 memory
  bundle sh -c 'sleep 1; head -c 100000000 /dev/zero | tr "\\0" a | sort >/dev/null; sleep 100'
  config_edit "$B" '.linux.resources.memory = {"limit": 33554432, "swap": 33554432}'
  start_detached
  timeout 4 "$AGENTRUN" --root "$ROOT" events --interval 500ms "$ID" >"$BATS_TEST_TMPDIR/ev" || true
  cat "$BATS_TEST_TMPDIR/ev"
  [ "$(jq -r 'select(.type == "stats") | .id' <"$BATS_TEST_TMPDIR/ev" | wc -l)" -ge 3 ]
  jq -e -s 'map(select(.type == "oom")) | length >= 1' <"$BATS_TEST_TMPDIR/ev"
}

@test "cgroups: default path is agentrun/<id>, relative paths go under agentrun/" {
  need_v1 memory
  make_bundle "$B" sleep 100
  config_edit "$B" 'del(.linux.cgroupsPath)'
  start_detached
  [ -d "$CG/memory/agentrun/$ID" ]
  ar delete -f "$ID"
  [ ! -d "$CG/memory/agentrun/$ID" ]
  config_edit "$B" ".linux.cgroupsPath = \"$ID-rel\""
  start_detached
  [ -d "$CG/memory/agentrun/$ID-rel" ]
  ar delete -f "$ID"
  [ ! -d "$CG/memory/agentrun/$ID-rel" ]
}

@test "cgroups: paths that leave the hierarchy are refused" {
  bundle true
  config_edit "$B" '.linux.cgroupsPath = "/a/../../etc"'
  run ar run -b "$B" "$ID"
  [ "$status" -ne 0 ]
  [[ "$output" == *cgroupsPath* ]]
}

@test "cgroups: --cgroup-manager disabled creates no cgroup" {
  bundle sleep 100
  "$AGENTRUN" --root "$ROOT" --cgroup-manager disabled run -d -b "$B" "$ID" </dev/null >/dev/null
  [ -z "$(cg_dirs "$PARENT/c")" ]
  run ar pause "$ID"
  [ "$status" -ne 0 ]
}

@test "cgroups: --systemd-cgroup fails clearly without systemd as PID 1" {
  [ ! -d /run/systemd/system ] || skip "systemd is PID 1 here"
  bundle true
  config_edit "$B" '.linux.cgroupsPath = "system.slice:agentrun:x"'
  run "$AGENTRUN" --root "$ROOT" --systemd-cgroup run -b "$B" "$ID"
  [ "$status" -ne 0 ]
  [[ "$output" == *"systemd is not running as PID 1"* ]]
  # the systemd form under cgroupfs is a mistake, said as such
  run ar run -b "$B" "$ID"
  [ "$status" -ne 0 ]
  [[ "$output" == *"--systemd-cgroup"* ]]
}

@test "cgroups: a controller that is not mounted is an error naming it (net_cls)" {
  v1_mounted net_cls && skip "net_cls is mounted here"
  bundle true
  config_edit "$B" '.linux.resources.network = {"classID": 1048577}'
  run ar run -b "$B" "$ID"
  [ "$status" -ne 0 ]
  [[ "$output" == *net_cls* ]]
  [ -z "$(cg_dirs "$PARENT/c")" ]
}

@test "cgroups: kernel memory is ignored with a warning" {
  need_v1 memory
  bundle true
  config_edit "$B" '.linux.resources.memory = {"kernel": 1048576}'
  run ar run -b "$B" "$ID"
  [ "$status" -eq 0 ]
  [[ "$output" == *"memory.kernel is ignored"* ]]
}

@test "cgroups: v1 device rules: a denied device cannot be created or opened" {
  need_v1 devices
  bundle sh -c 'cat /dev/null && echo null-ok; mknod /dev/loopx b 7 0; head -c1 /dev/loopx >/dev/null; echo done'
  config_edit "$B" '.process.capabilities.bounding += ["CAP_MKNOD"] | .process.capabilities.effective += ["CAP_MKNOD"] | .process.capabilities.permitted += ["CAP_MKNOD"]'
  run ar run -b "$B" "$ID"
  [[ "$output" == *null-ok* ]]
  [[ "$output" == *"Operation not permitted"* ]] || { echo "$output"; false; }
}

@test "cgroups: resources.devices governs linux.devices nodes too" {
  need_v1 devices
  [ -c /dev/kmsg ] || skip "no /dev/kmsg here"
  bundle sh -c 'head -c1 /dev/kmsg; echo "rc=$?"'
  config_edit "$B" '.linux.resources.devices = [{"allow": false, "access": "rwm"}]
                    | .linux.devices = [{"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11}]
                    | .process.capabilities.bounding += ["CAP_SYSLOG"] | .process.capabilities.effective += ["CAP_SYSLOG"]
                    | .process.capabilities.permitted += ["CAP_SYSLOG"]'
  run ar run -b "$B" "$ID"
  echo "$output"
  [[ "$output" == *"Operation not permitted"* && "$output" == *rc=1* ]]
  # allowed, the same node reads (CAP_SYSLOG covers dmesg_restrict)
  config_edit "$B" '.linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 11, "access": "r"}]'
  run ar run -b "$B" "$ID-2"
  echo "$output"
  [[ "$output" == *rc=0* ]]
}

@test "cgroups: device access is a set of r, w and m in any order; 'a' denies all in a deny rule, grants nothing in an allow" {
  need_v1 devices
  [ -c /dev/kmsg ] || skip "no /dev/kmsg here"
  bundle sh -c 'head -c1 /dev/kmsg >/dev/null; echo "rc=$?"'
  config_edit "$B" '.linux.resources.devices = [{"allow": false, "access": "rwm"},
                                                {"allow": true, "type": "c", "major": 1, "minor": 11, "access": "mr"}]
                    | .linux.devices = [{"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11}]
                    | .process.capabilities.bounding += ["CAP_SYSLOG"] | .process.capabilities.effective += ["CAP_SYSLOG"]
                    | .process.capabilities.permitted += ["CAP_SYSLOG"]'
  run ar run -b "$B" "$ID"
  echo "$output"
  [[ "$status" -eq 0 && "$output" == *rc=0* ]]
  # runc's own suite denies with "rwa": read here as every access
  config_edit "$B" '.linux.resources.devices += [{"allow": false, "type": "c", "major": 1, "minor": 11, "access": "rwa"}]'
  run ar run -b "$B" "$ID-2"
  echo "$output"
  [[ "$status" -eq 0 && "$output" == *rc=1* ]]
  # in an allow rule 'a' adds nothing: "wa" lets the node be written, not read
  config_edit "$B" '.linux.resources.devices[1].access = "wa" | del(.linux.resources.devices[2])'
  run ar run -b "$B" "$ID-3"
  echo "$output"
  [[ "$status" -eq 0 && "$output" == *rc=1* ]]
  # a letter outside the set is refused, naming where
  config_edit "$B" '.linux.resources.devices[1].access = "rx"'
  run ar run -b "$B" "$ID-4"
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux.resources.devices[1].access"*'"rx"'* ]]
}

@test "cgroups: a linux.devices node the rules deny is made all the same (no host twin needed), and stays denied" {
  need_v1 devices
  [ ! -e /dev/agentrun-test-nodev ] || skip "the host has a /dev/agentrun-test-nodev"
  bundle sh -c 'stat -c "%F %t:%T %a %u" /dev/agentrun-test-nodev; head -c1 /dev/agentrun-test-nodev; echo "rc=$?"'
  # 10:666 is no device the host has: the node can only be made, not bound
  config_edit "$B" '.linux.resources.devices = [{"allow": false, "access": "rwm"}]
                    | .linux.devices = [{"path": "/dev/agentrun-test-nodev", "type": "c", "major": 10, "minor": 666,
                                         "fileMode": 432, "uid": 0, "gid": 0}]'
  run ar run -b "$B" "$ID"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"character special file a:29a 660 0"* ]]
  # the cgroup denies it: EPERM, not the driver's ENXIO
  [[ "$output" == *"Operation not permitted"* && "$output" == *rc=1* ]]
  grep -q cgroup2 /proc/filesystems || return 0
  export AGENTRUN ROOT B ID PARENT
  run in_v2 'ar run -b "$B" "$ID-v2" 2>&1'
  echo "$output"
  [[ "$output" == *"character special file a:29a 660 0"* ]]
  [[ "$output" == *"Operation not permitted"* && "$output" == *rc=1* ]]
}

@test "cgroups: a pre-existing frozen cgroup is refused at once and left as it was" {
  need_v1 freezer
  mkdir -p "$CG/freezer/$PARENT/c"
  echo FROZEN >"$CG/freezer/$PARENT/c/freezer.state"
  bundle true
  run timeout 20 "$AGENTRUN" --root "$ROOT" run -d -b "$B" "$ID"
  [ "$status" -eq 1 ]
  [[ "$output" == *"container's cgroup unexpectedly frozen"* ]]
  [ ! -e "$ROOT/$ID" ]
  [ "$(cat "$CG/freezer/$PARENT/c/freezer.state")" = FROZEN ]
  echo THAWED >"$CG/freezer/$PARENT/c/freezer.state"
}

@test "cgroups: a second container in a cgroup that holds processes gets runc's warning" {
  bundle sleep 100
  start_detached
  run ar run -d -b "$B" "$ID-2" </dev/null
  [ "$status" -eq 0 ]
  [[ "$output" == *"container's cgroup is not empty: 1 process(es) found"* ]]
}

@test "cgroups: hugetlb limits and unified keys go to the cgroup2 half on a hybrid host" {
  [ -f $CG/unified/cgroup.controllers ] || skip "not a hybrid layout"
  grep -qw hugetlb $CG/unified/cgroup.controllers || skip "hugetlb is not bound to cgroup2 here"
  bundle sleep 100
  config_edit "$B" '.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 4194304}]'
  start_detached
  [ "$(cat $CG/unified/$PARENT/c/hugetlb.2MB.max)" = 4194304 ]
  ar delete -f "$ID"
  config_edit "$B" '.linux.resources.unified = {"hugetlb.2MB.max": "8388608"}'
  start_detached
  [ "$(cat $CG/unified/$PARENT/c/hugetlb.2MB.max)" = 8388608 ]
}

# --- cgroup2 alone, in a private mount namespace -------------------------

# Run $1 as a script in a private mount namespace where /sys/fs/cgroup is
# cgroup2 alone (the same hierarchy the host shows at /sys/fs/cgroup/unified
# on a hybrid host). The v1 mounts stay in mountinfo, covered: agentrun must
# consider only the mounts a path lookup can reach.
in_v2() {
  need_cmd unshare
  unshare -m --propagation private sh -euc '
    mount -t cgroup2 none /sys/fs/cgroup
    ar() { "$AGENTRUN" --root "$ROOT" "$@"; }
    '"$1" 
}

@test "cgroups v2: create, freeze, device eBPF, hugetlb and delete on cgroup2 alone" {
  grep -q cgroup2 /proc/filesystems || skip "no cgroup2"
  export AGENTRUN ROOT B ID PARENT
  bundle sh -c 'cat /dev/null && echo null-ok; mknod /dev/loopx b 7 0; head -c1 /dev/loopx >/dev/null; sleep 100'
  config_edit "$B" '.process.capabilities.bounding += ["CAP_MKNOD"] | .process.capabilities.effective += ["CAP_MKNOD"] | .process.capabilities.permitted += ["CAP_MKNOD"]'
  hp=false
  grep -qw hugetlb "$CG/unified/cgroup.controllers" 2>/dev/null && hp=true
  if $hp; then config_edit "$B" '.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 2097152}]'; fi
  run in_v2 '
    ar run -d -b "$B" "$ID" </dev/null >"$B/out" 2>&1
    d=/sys/fs/cgroup/$PARENT/c
    test -d "$d"
    pid=$(ar state "$ID" | jq -r .pid)
    grep -qx "$pid" "$d/cgroup.procs"
    if '"$hp"'; then test "$(cat "$d/hugetlb.2MB.max")" = 2097152; fi
    ar pause "$ID"
    test "$(ar state "$ID" | jq -r .status)" = paused
    grep -q "frozen 1" "$d/cgroup.events"
    ar resume "$ID"
    test "$(ar state "$ID" | jq -r .status)" = running
    ar events --stats "$ID" | jq -e ".type == \"stats\""
    sleep 0.5
    ar delete -f "$ID"
    test ! -d "$d"
    test ! -d "/sys/fs/cgroup/$PARENT"
    cat "$B/out"
    echo v2-ok'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *v2-ok* ]]
}

@test "cgroups v2: the device eBPF program denies what the rules deny" {
  grep -q cgroup2 /proc/filesystems || skip "no cgroup2"
  export AGENTRUN ROOT B ID PARENT
  bundle sh -c 'cat /dev/null && echo null-ok; mknod /dev/loopx b 7 0; head -c1 /dev/loopx >/dev/null; echo done'
  config_edit "$B" '.process.capabilities.bounding += ["CAP_MKNOD"] | .process.capabilities.effective += ["CAP_MKNOD"] | .process.capabilities.permitted += ["CAP_MKNOD"]'
  run in_v2 'ar run -b "$B" "$ID" 2>&1'
  echo "$output"
  [[ "$output" == *null-ok* ]]
  [[ "$output" == *"Operation not permitted"* ]]
  [[ "$output" == *done* ]]
}

@test "cgroups v2: zeros ask for no controller (Docker's reservation 0, shares 0, blockIO.weight 0)" {
  grep -q cgroup2 /proc/filesystems || skip "no cgroup2"
  grep -qw memory "$CG/unified/cgroup.controllers" 2>/dev/null && skip "memory is bound to cgroup2 here"
  export AGENTRUN ROOT B ID PARENT
  bundle true
  config_edit "$B" '.linux.resources = {"memory": {"limit": 0, "reservation": 0, "swap": 0}, "cpu": {"shares": 0, "quota": 0, "period": 0},
    "blockIO": {"weight": 0}, "pids": {"limit": 0}}'
  run in_v2 'ar run -b "$B" "$ID" 2>&1 && echo zero-ok'
  echo "$output"
  [[ "$output" == *zero-ok* ]]
}

@test "cgroups v2: a refused update leaves the old limits in place" {
  grep -q cgroup2 /proc/filesystems || skip "no cgroup2"
  grep -qw hugetlb "$CG/unified/cgroup.controllers" 2>/dev/null || skip "hugetlb is not bound to cgroup2 here"
  export AGENTRUN ROOT B ID PARENT
  bundle sleep 100
  config_edit "$B" '.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 4194304}]'
  run in_v2 '
    ar run -d -b "$B" "$ID" </dev/null >/dev/null 2>&1
    d=/sys/fs/cgroup/$PARENT/c
    # the hugetlb write goes through, the unified one after it is refused
    if echo "{\"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": 8388608}],
              \"unified\": {\"hugetlb.2MB.rsvd.max\": \"lots\"}}" | ar update --resources - "$ID" 2>&1; then
      echo update-succeeded
    fi
    echo "limit=$(cat "$d/hugetlb.2MB.max")"
    ar delete -f "$ID"'
  echo "$output"
  [[ "$output" != *update-succeeded* ]]
  [[ "$output" == *"limit=4194304"* ]]
}

@test "cgroups v2: a limit whose controller cgroup2 lacks is an error naming it" {
  grep -q cgroup2 /proc/filesystems || skip "no cgroup2"
  grep -qw memory "$CG/unified/cgroup.controllers" 2>/dev/null && skip "memory is bound to cgroup2 here"
  export AGENTRUN ROOT B ID PARENT
  bundle true
  config_edit "$B" '.linux.resources.memory = {"limit": 33554432}'
  run in_v2 'ar run -b "$B" "$ID" 2>&1'
  [ "$status" -ne 0 ]
  [[ "$output" == *"memory controller is not available"* ]]
  [ -z "$(cg_dirs "$PARENT")" ]
}

@test "cgroups v2: exec --cgroup joins a sub-cgroup of the container's on cgroup2 alone" {
  grep -q cgroup2 /proc/filesystems || skip "no cgroup2"
  export AGENTRUN ROOT B ID PARENT
  bundle sleep 100
  run in_v2 '
    ar run -d -b "$B" "$ID" </dev/null >/dev/null 2>&1
    d=/sys/fs/cgroup/$PARENT/c
    mkdir "$d/sub"
    ar exec --cgroup sub "$ID" cat /proc/self/cgroup
    ar exec --cgroup .. "$ID" true 2>&1 || true
    ar exec --cgroup nonexistent "$ID" true 2>&1 || true
    ar delete -f "$ID"
    rmdir "$d/sub" 2>/dev/null || true'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"0::/$PARENT/c/sub"* ]]
  [[ "$output" == *".. is not a sub cgroup path"* ]]
  [[ "$output" == *"/nonexistent/cgroup.procs: no such file"* ]]
}
