#!/usr/bin/env bats
# agentrun check: the escape battery passes with the default options, and
# fails, naming the probe, when an option opens a hole on purpose.

load helpers

setup() {
  OUT=$BATS_TEST_TMPDIR/out
  sandbox_setup "the unprivileged path has its own tests, run as agentrun-test" "$OUT"
  mkdir -p "$FHOME/.ssh"
  echo SSH-SECRET >"$FHOME/.ssh/id_test"
  chown -R "$AGENT_UID:$AGENT_UID" "$FHOME"
}

teardown() { sandbox_teardown; }

check() { env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" check --workspace "$WS" "$@"; }

@test "check: every probe holds with the default options" {
  run check --out "$OUT"
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -q '^PASS'
  refute grep -q '^CROSSED' <<<"$output"
  # the battery really ran: every probe reported, so none can pass by being skipped
  for p in inherited-fd "read-credential:$FHOME/.ssh/id_test" write-outside:/usr write-outside:/etc \
    "write-outside:$FHOME" host-loopback outside-address:10.255.255.1 resolve-denied-name see-host-process \
    effective-capability create-user-namespace mount tiocsti write-proc-sys write-sys \
    "control-write:$WS" "control-write:$OUT" unixconn:visible-host-socket; do
    echo "$output" | grep -q "^ok  *$p" || { echo "missing: $p"; false; }
  done
  # a listening host socket in the workspace, visible: refused by the unixconn supervisor
  echo "$output" | grep -E '^ok +unixconn:visible-host-socket +expected: refused +got: Permission denied$'
  # nothing of the probes is left on the host
  [ -z "$(find "$WS" "$OUT" "$FHOME" -name '.agentrun-probe-*')" ]
}

@test "check --json: a report with one entry per probe" {
  run check --json
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | jq .ok)" = true ]
  [ "$(echo "$output" | jq .crossed)" = 0 ]
  [ "$(echo "$output" | jq '.probes | length')" -gt 15 ]
  [ "$(echo "$output" | jq '[.probes[] | select(.ok | not)] | length')" = 0 ]
}

@test "check: --rw of the home is a hole, and the write probe says so" {
  # refused unless asked for on purpose
  run check --rw "$FHOME"
  [ "$status" -ne 0 ]
  [[ "$output" == *"--rw $FHOME: holds the home folder"*"--allow-home"* ]]
  run check --allow-home --rw "$FHOME"
  echo "$output"
  [ "$status" -eq 1 ]
  echo "$output" | grep -q "^CROSSED  *write-outside:$FHOME "
  echo "$output" | grep -q '^FAIL'
  [ -z "$(find "$FHOME" -name '.agentrun-probe-*')" ]
}

@test "check: a --ro bind of the home keeps the credentials masked" {
  run check --ro "$FHOME"
  [ "$status" -eq 0 ]
  echo "$output" | grep -q "^ok  *read-credential:$FHOME/.ssh/id_test "
  # and the bind itself worked: the home is read-only, not a tmpfs
  echo "$output" | grep -q "^ok  *write-outside:$FHOME .*Read-only file system"
}

@test "check: the allowed endpoint is the control that must work" {
  need_cmd socat python3
  port=$(free_port)
  socat TCP-LISTEN:"$port",bind=127.0.0.1,fork,reuseaddr EXEC:cat &
  track_pid $!
  for i in $(seq 50); do bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null && break; sleep 0.1; done
  run check --allow "echo.test:443=127.0.0.1:$port"
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -q '^ok  *control-allowed-endpoint:echo.test:443'
  echo "$output" | grep -q '^ok  *resolve-denied-name:example.com'
  # an allowed endpoint whose upstream is down: the control fails, so does check
  dead=$(free_port)
  run check --allow "dead.test:443=127.0.0.1:$dead"
  [ "$status" -eq 1 ]
  echo "$output" | grep -q '^CROSSED  *control-allowed-endpoint:dead.test:443'
}

@test "check: as the unprivileged user agentrun-test, every probe holds" {
  id agentrun-test >/dev/null 2>&1 || skip "user agentrun-test missing (.ci/run creates it)"
  [ "$(cat /proc/sys/user/max_user_namespaces)" != 0 ] || skip "user namespaces disabled"
  chown -R agentrun-test "$WS" "$FHOME"
  install -d -m 0700 -o agentrun-test -g agentrun-test "$T/xdg"
  run runuser -u agentrun-test -- env -i PATH=/usr/local/bin:/usr/bin:/bin XDG_RUNTIME_DIR="$T/xdg" HOME="$FHOME" \
    "$(public_bin)/agentrun" check --workspace "$WS"
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -q '^PASS'
  refute grep -q '^CROSSED' <<<"$output"
  # the runtime ran rootless: no state or private folder of root's was used,
  # and nothing is left in the user's once the janitor of the last probe's
  # run is done (it removes the private folder after the return)
  wait_for bash -c "[ \"\$(ls '$T/xdg')\" = agentrun ]"
  [ -z "$(ls "$T/xdg/agentrun")" ]
}
