#!/usr/bin/env bats
# The Kubernetes path: containerd's CRI plugin (tests/clients/cri.bash)
# driven over gRPC by the project's own small client, through the runtime
# handlers of contrib/containerd/config.toml: every step with runc first,
# then agentrun. The pod lifecycle must end: a container that exits is
# reported EXITED with its code, and Stop/Remove of containers and pods
# return (containerd kills every exited task and reads runc's words for
# "already gone").

bats_require_minimum_version 1.5.0
load helpers
load clients/cri

setup_file() { cri_setup_file; }
teardown_file() { cri_teardown_file; }
teardown() { cri_teardown; }

# j FIELD JSON: one field of a response.
j() { jq -r "$1" <<<"$2"; }

# pod_config NAME: a pod's config. The pod has the node's network: a pod
# network needs a CNI plugin that gives it an address (a bridge on the
# host), which tests do not make.
pod_config() {
  jq -nc --arg n "$1" --arg logs "$CR/logs/$1" --arg cg "/$CR_CGROUP" '{
    metadata: {name: $n, uid: ("uid-" + $n), namespace: "artest"}, log_directory: $logs,
    linux: {cgroup_parent: $cg, security_context: {namespace_options: {network: "NODE"}}}}'
}

# pod RT NAME: run a pod sandbox with handler RT; its id on stdout.
pod() {
  local out
  out=$(cri RunPodSandbox "$(jq -nc --arg rt "$1" --argjson c "$(pod_config "$2")" '{runtime_handler: $rt, config: $c}')") \
    || return 1
  j .pod_sandbox_id "$out" | tee -a "$CR/pods"
}

# ctr_in POD POD-NAME NAME ARGS...: create and start a container; its id on stdout.
ctr_in() {
  local pod=$1 pname=$2 name=$3 out id
  shift 3
  # (jq's --args would take a "-c" among them as its own option)
  local cmd
  cmd=$(printf '%s\n' "$@" | jq -R . | jq -sc .)
  out=$(cri CreateContainer "$(jq -nc --arg p "$pod" --arg n "$name" --arg img "$CRI_BUSYBOX" \
    --argjson sc "$(pod_config "$pname")" --argjson cmd "$cmd" '{
    pod_sandbox_id: $p,
    config: {metadata: {name: $n}, image: {image: $img}, command: $cmd, log_path: ($n + ".log")},
    sandbox_config: $sc}')") || return 1
  id=$(j .container_id "$out")
  cri StartContainer "{\"container_id\":\"$id\"}" >/dev/null || return 1
  echo "$id"
}

status_of() { cri ContainerStatus "{\"container_id\":\"$1\"}"; }

# wait_state ID STATE SECONDS
wait_state() {
  local i
  for i in $(seq $(($3 * 10))); do
    [ "$(j .status.state "$(status_of "$1")")" = "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

# The container's v1 cgroup file (CRI's cgroupfs path is parent/id).
cg() { cat "/sys/fs/cgroup/$2/$CR_CGROUP/$1/$3"; }

# both FN: FN with RT=runc, then RT=agentrun.
both() {
  local rt
  for rt in runc agentrun; do
    RT=$rt "$@" || { echo "failed with the $rt handler" >&2; return 1; }
  done
}

@test "cri: the CRI plugin is up with the snippet's handlers" {
  run cri Version '{"version": "v1"}'
  [ "$status" -eq 0 ]
  [ "$(j .runtime_name "$output")" = containerd ]
  [ "$(j .runtime_api_version "$output")" = v1 ]
}

step_lifecycle() {
  local p c t0 t1 out
  p=$(pod "$RT" "life-$RT") || return 1
  c=$(ctr_in "$p" "life-$RT" main sh -c 'echo up; trap "exit 0" TERM; while :; do sleep 0.1; done') || return 1
  wait_state "$c" CONTAINER_RUNNING 10 || { echo "never running"; return 1; }
  out=$(cri ExecSync "{\"container_id\":\"$c\",\"cmd\":[\"sh\",\"-c\",\"echo in-exec; exit 4\"],\"timeout\":10}") || return 1
  [ "$(j .stdout "$out")" = in-exec$'\n' ] || [ "$(j .stdout "$out")" = in-exec ] || { echo "$out"; return 1; }
  [ "$(j .exit_code "$out")" = 4 ] || { echo "$out"; return 1; }
  # UpdateContainerResources (sends the container's device rules too)
  cri UpdateContainerResources "{\"container_id\":\"$c\",\"linux\":{\"cpu_shares\":512,\"cpu_quota\":50000,\"cpu_period\":100000,\"memory_limit_in_bytes\":134217728}}" >/dev/null || return 1
  if [ -d /sys/fs/cgroup/cpu ] && [ -d /sys/fs/cgroup/memory ]; then
    echo "$(cg "$c" cpu cpu.shares) $(cg "$c" cpu cpu.cfs_quota_us) $(cg "$c" memory memory.limit_in_bytes)" >"$BATS_TEST_TMPDIR/limits.$RT"
  fi
  t0=$(date +%s)
  cri StopContainer "{\"container_id\":\"$c\",\"timeout\":10}" >/dev/null || return 1
  out=$(status_of "$c")
  [ "$(j .status.state "$out")" = CONTAINER_EXITED ] && [ "$(j .status.exit_code "$out")" = 0 ] || { echo "$out"; return 1; }
  cri RemoveContainer "{\"container_id\":\"$c\"}" >/dev/null || return 1
  ! status_of "$c" >/dev/null 2>&1 || { echo "still there after RemoveContainer"; return 1; }
  cri StopPodSandbox "{\"pod_sandbox_id\":\"$p\"}" >/dev/null || return 1
  cri RemovePodSandbox "{\"pod_sandbox_id\":\"$p\"}" >/dev/null || return 1
  t1=$(date +%s)
  [ $((t1 - t0)) -lt 30 ] || { echo "stop and remove took $((t1 - t0)) s"; return 1; }
  [ -z "$(cctr containers ls -q)" ] || { cctr containers ls; return 1; }
}

@test "cri: RunPodSandbox, Create/StartContainer, ExecSync, UpdateContainerResources, Stop/Remove container and pod" {
  both step_lifecycle
  if [ -e "$BATS_TEST_TMPDIR/limits.runc" ]; then
    cat "$BATS_TEST_TMPDIR"/limits.*
    [ "$(cat "$BATS_TEST_TMPDIR/limits.agentrun")" = "512 50000 134217728" ]
    diff "$BATS_TEST_TMPDIR/limits.runc" "$BATS_TEST_TMPDIR/limits.agentrun"
  fi
}

step_exit_code() {
  local p c out
  p=$(pod "$RT" "exit-$RT") || return 1
  c=$(ctr_in "$p" "exit-$RT" quits sh -c 'exit 3') || return 1
  # containerd kills the exited task before deleting it; on a wording it
  # does not know it retries forever and the state never leaves RUNNING
  wait_state "$c" CONTAINER_EXITED 5 || { echo "not EXITED within 5 s: $(status_of "$c")"; return 1; }
  out=$(status_of "$c")
  [ "$(j .status.exit_code "$out")" = 3 ] || { echo "$out"; return 1; }
  cri RemoveContainer "{\"container_id\":\"$c\"}" >/dev/null || return 1
  cri StopPodSandbox "{\"pod_sandbox_id\":\"$p\"}" >/dev/null || return 1
  cri RemovePodSandbox "{\"pod_sandbox_id\":\"$p\"}" >/dev/null || return 1
  ! grep -q "failed to handle container TaskExit event" "$CR/containerd.log" || { grep TaskExit "$CR/containerd.log" | tail -3; return 1; }
}

@test "cri: a container exiting 3 is reported EXITED with code 3 within seconds" {
  both step_exit_code
}
