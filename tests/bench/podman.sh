#!/usr/bin/env bash
# `podman run --rm IMAGE true` through agentrun and through runc, side by side
# with hyperfine, on the same private podman store (the one podman.bats uses:
# tests/clients/podman.bash), and prints the medians and agentrun/runc.
#   usage: tests/bench/podman.sh      (RUNS=30 WARMUP=3 by default;
#          RUNC=/usr/sbin/runc, AGENTRUN=<builddir>/agentrun to compare others)
# Needs root, podman, conmon, busybox, hyperfine, jq, python3.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export AGENTRUN_BUILDDIR=${AGENTRUN_BUILDDIR:-$SRC} AGENTRUN_SRCDIR=${AGENTRUN_SRCDIR:-$SRC}
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-3}
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

hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$T/result.json" \
  -n agentrun "podman --runtime $AR_WRAPPER run --rm $IMAGE true" \
  -n runc "podman --runtime $RUNC_WRAPPER run --rm $IMAGE true"

jq -r '
  (.results | map({ (.command): .median }) | add) as $m
  | "median agentrun \($m.agentrun * 1000 | floor) ms, runc \($m.runc * 1000 | floor) ms, "
    + "agentrun/runc \(($m.agentrun / $m.runc * 100 | round) / 100)"' "$T/result.json"
