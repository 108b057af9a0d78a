#!/usr/bin/env bash
# Docker and the Kubernetes path through agentrun against runc, side by side
# on the same private daemons as tests/docker.bats and tests/cri.bats:
#  - `docker run --rm IMAGE true` (hyperfine, rounds alternating which
#    runtime goes first);
#  - the CRI create-start-stop-remove cycle of one container in a running
#    pod, timed inside one CRI client process (no Node start-up in it).
# Prints the medians and agentrun/runc, the last two lines one per client.
#   usage: tests/bench/clients.sh   (ROUNDS=4 RUNS=10 WARMUP=2 by default)
# Needs root, docker.io, containerd, node (grpc-js from the npm cache),
# hyperfine, jq, busybox, gcc.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export AGENTRUN_BUILDDIR=${AGENTRUN_BUILDDIR:-$SRC} AGENTRUN_SRCDIR=${AGENTRUN_SRCDIR:-$SRC}
ROUNDS=${ROUNDS:-4}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}

T=$(mktemp -d /tmp/agentrun-bench-clients.XXXXXX)
# The client helpers are written for bats; give them its variables.
export BATS_FILE_TMPDIR=$T BATS_RUN_TMPDIR=$T BATS_TEST_TMPDIR=$T
skip() { echo "bench: cannot run: $*" >&2; exit 1; }
# shellcheck source=../helpers.bash
. "$SRC/tests/helpers.bash"
# shellcheck source=../clients/docker.bash
. "$SRC/tests/clients/docker.bash"
# shellcheck source=../clients/cri.bash
. "$SRC/tests/clients/cri.bash"
need_cmd hyperfine jq

cleanup() {
  set +e
  docker_teardown_file
  cri_teardown_file
  rm -rf "$T"
}
trap cleanup EXIT

median='def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;'

# --- docker run --rm IMAGE true ---------------------------------------------
docker_setup_file
dcmd() { echo "env DOCKER_CONFIG=$DK/cfg $DOCKER -H unix://$DK/docker.sock run --rm --runtime $1 $DIMAGE true"; }
for rt in agentrun runc; do
  out=$($(dcmd "$rt") 2>&1) || { echo "bench: docker --runtime $rt cannot run a container: $out" >&2; exit 1; }
done
for r in $(seq "$ROUNDS"); do
  ar=(-n agentrun "$(dcmd agentrun)")
  rc=(-n runc "$(dcmd runc)")
  if [ $((r % 2)) -eq 1 ]; then set -- "${ar[@]}" "${rc[@]}"; else set -- "${rc[@]}" "${ar[@]}"; fi
  hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" --export-json "$T/docker$r.json" "$@" >&2
done
docker_line=$(jq -rs "$median"'
  length as $rounds | [.[].results[]] | group_by(.command)
  | map({ key: .[0].command, value: (map(.times) | add | median) }) | from_entries as $m
  | "docker run --rm IMAGE true, median of \($rounds) rounds: "
    + "agentrun \($m.agentrun * 1000 | round) ms, runc \($m.runc * 1000 | round) ms, "
    + "agentrun/runc \(($m.agentrun / $m.runc * 100 | round) / 100)"' "$T"/docker*.json)
docker_teardown_file
DK=

# --- CRI create, start, stop, remove -----------------------------------------
cri_setup_file
for rt in agentrun runc; do
  pc=$(jq -nc --arg n "bench-$rt" --arg logs "$CR/logs/bench-$rt" --arg cg "/$CR_CGROUP" '{
    metadata: {name: $n, uid: ("uid-" + $n), namespace: "artest"}, log_directory: $logs,
    linux: {cgroup_parent: $cg, security_context: {namespace_options: {network: "NODE"}}}}')
  pod=$(cri RunPodSandbox "$(jq -nc --arg rt "$rt" --argjson c "$pc" '{runtime_handler: $rt, config: $c}')" | jq -r .pod_sandbox_id)
  echo "$pod" >>"$CR/pods"
  jq -nc --arg p "$pod" --arg img "$CRI_BUSYBOX" --argjson sc "$pc" '{
    pod_sandbox_id: $p, sandbox_config: $sc,
    config: {metadata: {name: "cycle"}, image: {image: $img}, command: ["sleep", "100"], log_path: "cycle.log"}}' \
    >"$T/create.$rt.json"
  cri cycle "{\"n\": $WARMUP, \"create\": $(cat "$T/create.$rt.json")}" >/dev/null
done
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then order="agentrun runc"; else order="runc agentrun"; fi
  for rt in $order; do
    cri cycle "{\"n\": $RUNS, \"create\": $(cat "$T/create.$rt.json")}" | jq -c --arg rt "$rt" '{rt: $rt, ms}' >>"$T/cri.jsonl"
  done
done
cri_line=$(jq -rs "$median"'
  (length / 2) as $rounds | group_by(.rt) | map({ key: .[0].rt, value: (map(.ms) | add | median) }) | from_entries as $m
  | "CRI create+start+stop+remove, median of \($rounds) rounds: "
    + "agentrun \($m.agentrun | round) ms, runc \($m.runc | round) ms, "
    + "agentrun/runc \(($m.agentrun / $m.runc * 100 | round) / 100)"' "$T/cri.jsonl")
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$docker_line"
echo "$cri_line"
