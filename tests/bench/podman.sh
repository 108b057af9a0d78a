#!/usr/bin/env bash
# `podman run --rm IMAGE true` through agentrun and through runc, side by side
# with hyperfine, on the same private podman store (the one podman.bats uses:
# tests/clients/podman.bash), and prints the medians and agentrun/runc.
#   usage: tests/bench/podman.sh      (ROUNDS=4 RUNS=10 WARMUP=2 by default;
#          RUNC=/usr/sbin/runc, AGENTRUN=<builddir>/agentrun to compare others)
# Needs root, podman, conmon, busybox, hyperfine, jq, python3.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export AGENTRUN_BUILDDIR=${AGENTRUN_BUILDDIR:-$SRC} AGENTRUN_SRCDIR=${AGENTRUN_SRCDIR:-$SRC}
ROUNDS=${ROUNDS:-4}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-2}
RUNC=${RUNC:-$(command -v runc)}

T=$(mktemp -d /tmp/agentrun-bench-podman.XXXXXX)
# podman.bash and helpers.bash are written for bats; give them its variables.
export BATS_FILE_TMPDIR=$T BATS_RUN_TMPDIR=$T BATS_TEST_TMPDIR=$T
skip() { echo "bench: cannot run: $*" >&2; exit 1; }
# shellcheck source=../helpers.bash
. "$SRC/tests/helpers.bash"
[ -z "${AGENTRUN_BIN:-}" ] || AGENTRUN=$AGENTRUN_BIN
# shellcheck source=../clients/podman.bash
. "$SRC/tests/clients/podman.bash"
need_cmd hyperfine jq

cleanup() {
  set +e
  podman_teardown_file
  rm -rf "$T"
}
trap cleanup EXIT

RUNTIME=$AGENTRUN
podman_setup_file
AR_WRAPPER=$PODMAN_RUNTIME
RUNTIME=$RUNC
RUNC_WRAPPER=$(podman_runtime_path)

# Both must work before their times mean anything.
for w in "$AR_WRAPPER" "$RUNC_WRAPPER"; do
  out=$(podman --runtime "$w" run --rm "$IMAGE" echo ok 2>&1) ||
    { echo "bench: $(basename "$w") cannot run a container: $out" >&2; exit 1; }
done

# Rounds alternate which runtime goes first, so drift in the machine's load
# (other builds, page cache) does not favour either; the medians are over
# every run of every round.
for r in $(seq "$ROUNDS"); do
  ar=(-n agentrun "podman --runtime $AR_WRAPPER run --rm $IMAGE true")
  rc=(-n runc "podman --runtime $RUNC_WRAPPER run --rm $IMAGE true")
  if [ $((r % 2)) -eq 1 ]; then set -- "${ar[@]}" "${rc[@]}"; else set -- "${rc[@]}" "${ar[@]}"; fi
  hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" --export-json "$T/round$r.json" "$@"
done

jq -rs '
  def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  length as $rounds
  | [.[].results[]] | group_by(.command)
  | map({ key: .[0].command, value: (map(.times) | add | median) }) | from_entries as $m
  | "podman run --rm IMAGE true, median of \($rounds) rounds: "
    + "agentrun \($m.agentrun * 1000 | round) ms, runc \($m.runc * 1000 | round) ms, "
    + "agentrun/runc \(($m.agentrun / $m.runc * 100 | round) / 100)"' "$T"/round*.json
