#!/usr/bin/env bats
# valgrind memcheck over a representative subset of commands: zero errors and
# no definite or indirect leaks. The container's own processes are not
# followed (--trace-children=no): after clone they run with the runtime's
# image, but their lifetime ends in execve, which valgrind cannot follow
# across namespaces anyway; ASan covers them (see configure --enable-sanitizers).

load helpers

setup() {
  need_cmd valgrind jq
  # ASan reserves its shadow memory at start, which valgrind refuses
  if grep -qa __asan_init "$AGENTRUN"; then skip "an ASan build (--enable-sanitizers) cannot run under valgrind"; fi
  B=$BATS_TEST_TMPDIR/b
  VLOG=$BATS_TEST_TMPDIR/vg
  mkdir -p "$VLOG"
}

teardown() {
  cleanup_containers
  kill_tracked
}

# vg NAME ARGS...: the runtime under memcheck; its exit status is kept.
# Errors make valgrind exit 99, which no agentrun command uses.
vg() {
  local name=$1; shift
  valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
    --trace-children=no --child-silent-after-fork=yes --track-fds=no \
    --log-file="$VLOG/$name.%p" "$AGENTRUN" --root "$ROOT" "$@"
}

# After the commands ran: every valgrind log says zero errors.
assert_no_reports() {
  local f bad=0
  for f in "$VLOG"/*; do
    grep -q 'ERROR SUMMARY: 0 errors' "$f" && continue
    # logs of processes that exec'd or were killed have no summary: then
    # they must at least hold no error block
    if ! grep -q 'ERROR SUMMARY' "$f" && ! grep -qE '== (Invalid|Conditional|Syscall param|Source and|Mismatched)' "$f"; then
      continue
    fi
    echo "== $f"; cat "$f"; bad=1
  done
  [ "$bad" -eq 0 ]
}

@test "valgrind: spec, validate, features, --version, --help" {
  mkdir -p "$B"
  run vg spec spec --bundle "$B"
  [ "$status" -eq 0 ]
  run vg spec-agent spec --agent --bundle "$BATS_TEST_TMPDIR/agent"
  mkdir -p "$B/rootfs"
  run vg validate validate --bundle "$B"
  [ "$status" -ne 99 ]
  run vg features features
  [ "$status" -eq 0 ]
  echo "$output" | jq -e .ociVersionMax
  run vg version --version
  [ "$status" -eq 0 ]
  run vg help --help
  [ "$status" -ne 99 ]
  # a bad config: the error path frees what it parsed
  echo '{"ociVersion": "1.0.2", "process": {"args": 7}}' >"$B/config.json"
  run vg validate-bad validate --bundle "$B"
  [ "$status" -ne 0 ]
  [ "$status" -ne 99 ]
  assert_no_reports
}

@test "valgrind: state and list of a live container" {
  make_bundle "$B" sleep 30
  # create itself re-executes from a sealed copy (see below): natively
  ar create -b "$B" v2
  run vg state state v2
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq -r .status)" = created ]
  run vg list list
  [ "$status" -eq 0 ]
  [[ "$output" == *v2* ]]
  run vg list-json list --format json
  [ "$status" -ne 99 ]
  ar delete -f v2
  run vg state-missing state v2
  [ "$status" -ne 0 ]
  [ "$status" -ne 99 ]
  assert_no_reports
}

# valgrind before 3.20 knows neither pidfd_open (434) nor execveat with
# AT_EMPTY_PATH; the commands built on them cannot run under it.
vg_knows_pidfd() {
  ! valgrind --tool=none --trace-children=yes python3 -c 'import os; os.pidfd_open(os.getpid())' 2>&1 \
    | grep -q 'unhandled amd64-linux syscall: 434'
}

@test "valgrind: start, kill, delete" {
  need_cmd python3
  vg_knows_pidfd || skip "$(valgrind --version) does not handle pidfd_open, which start/kill/delete use"
  make_bundle "$B" sleep 30
  ar create -b "$B" v3
  run vg start start v3
  [ "$status" -eq 0 ]
  run vg kill kill v3 KILL
  [ "$status" -eq 0 ]
  run vg delete delete -f v3
  [ "$status" -eq 0 ]
  assert_no_reports
}

@test "valgrind: run of /bin/true" {
  make_bundle "$B" true
  run vg run run -b "$B" v1
  echo "$output"
  if [[ "$output" == *"re-exec agentrun from its sealed copy"* ]]; then
    skip "$(valgrind --version) cannot run execveat(AT_EMPTY_PATH), which create/run/exec use to re-execute from a sealed memfd (CVE-2019-5736); the ASan build covers them"
  fi
  [ "$status" -eq 0 ]
  assert_no_reports
}
