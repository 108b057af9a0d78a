#!/usr/bin/env bats
# process.terminal: console socket (SCM_RIGHTS), consoleSize, foreground relay.

load helpers

setup() {
  B=$BATS_TEST_TMPDIR/b
  need_cmd python3 script
  SOCK=$BATS_TEST_TMPDIR/console.sock
  OUT=$BATS_TEST_TMPDIR/console.out
}
teardown() { cleanup_containers; kill_tracked; }

start_receiver() {
  python3 "$SRCDIR/tests/console-socket.py" "$SOCK" "$OUT" "$@" >"$BATS_TEST_TMPDIR/recv.log" &
  track_pid $!
  RECV=$!
  for i in $(seq 50); do [ -S "$SOCK" ] && return 0; sleep 0.1; done
  return 1
}

@test "tty: the pty master goes to --console-socket, consoleSize applies" {
  make_bundle "$B" sh -c 'tty; stty size; test -t 0 && test -t 1 && test -t 2 && echo all-tty'
  config_edit "$B" '.process.terminal = true | .process.consoleSize = {"height": 33, "width": 101}'
  start_receiver
  ar run -d --console-socket "$SOCK" -b "$B" t1
  wait $RECV
  grep -q '^/dev/pts/[0-9]' "$OUT"
  grep -q '33 101' "$OUT"
  grep -q all-tty "$OUT"
}

@test "tty: input written to the master reaches the process" {
  make_bundle "$B" sh -c 'read line; echo "got:$line"'
  config_edit "$B" '.process.terminal = true'
  start_receiver $'hello\n'
  ar create --console-socket "$SOCK" -b "$B" t2 >/dev/null 2>&1
  ar start t2
  wait $RECV
  grep -q 'got:hello' "$OUT"
}

@test "tty: a foreground run relays the pty to the runtime's stdio" {
  make_bundle "$B" sh -c 'tty; echo relayed; exit 5'
  config_edit "$B" '.process.terminal = true'
  run script -qec "$AGENTRUN --root $ROOT run -b $B t3" /dev/null </dev/null
  [[ "$output" == *"/dev/pts/"* ]]
  [[ "$output" == *relayed* ]]
  # script returns the child's status
  [ "$status" -eq 5 ]
}

@test "tty: end of piped input reaches the process on the pty as end of file" {
  # a tty's end of file is not sticky: a program sees it once, as a user's ^D
  make_bundle "$B" sh -c 'echo "count:$(wc -c)"'
  config_edit "$B" '.process.terminal = true'
  # the last line has no newline: it must still arrive, then end of file
  run timeout 20 sh -c "printf 'one\\ntwo' | '$AGENTRUN' --root '$ROOT' run -b '$B' t5"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"count:7"* ]]
  # and with nothing at all on stdin
  run timeout 20 sh -c "'$AGENTRUN' --root '$ROOT' run -b '$B' t6 </dev/null"
  [ "$status" -eq 0 ]
  [[ "$output" == *"count:0"* ]]
  # exec -t as well
  make_bundle "$B.x" sleep 100
  ar run -d -b "$B.x" t7
  run timeout 20 sh -c "printf 'a\\nb\\n' | '$AGENTRUN' --root '$ROOT' exec -t t7 sh -c 'wc -l'"
  [ "$status" -eq 0 ]
  [[ "$output" == *2* ]]
}

@test "tty: exec -t with a console socket" {
  make_bundle "$B" sleep 100
  ar run -d -b "$B" t4
  start_receiver
  ar exec -d -t --console-socket "$SOCK" t4 sh -c 'tty; echo exec-tty'
  wait $RECV
  grep -q exec-tty "$OUT"
  grep -q '^/dev/pts/' "$OUT"
}

@test "tty: the pty comes from the container's devpts, not the host's" {
  make_bundle "$B" ls -1 /dev/pts
  config_edit "$B" '.process.terminal = true'
  start_receiver
  ar run -d --console-socket "$SOCK" -b "$B" t5
  wait $RECV
  # a fresh devpts instance: the container sees only its own pty 0
  [ "$(tr -d '\r' <"$OUT" | grep -v ptmx | tr '\n' ' ')" = "0 " ]
}

# The runtime-spec: with process.terminal, /dev/console is the pty (runc
# binds it there). docker run -t and podman run -t programs look for it.
@test "tty: /dev/console is the process's pty when process.terminal is set" {
  make_bundle "$B" sh -c 'stat -c "%t:%T" /dev/console "$(tty)"; echo via-console >/dev/console'
  config_edit "$B" '.process.terminal = true'
  start_receiver
  ar run -d --console-socket "$SOCK" -b "$B" t8
  wait $RECV
  cat "$OUT"
  # the same device numbers, and what is written there reaches the master
  [ "$(tr -d '\r' <"$OUT" | sed -n 1p)" = "$(tr -d '\r' <"$OUT" | sed -n 2p)" ]
  [[ "$(tr -d '\r' <"$OUT" | sed -n 1p)" == 88:* ]]
  grep -q via-console "$OUT"
}

@test "tty: without a terminal there is no /dev/console bound" {
  make_bundle "$B" sh -c 'test -e /dev/console && echo console-exists || echo no-console'
  run ar run -b "$B" t9
  [[ "$output" == *no-console* ]]
}

@test "tty: the pty is owned by the process's uid and the tty group, for run and exec" {
  make_bundle "$B" sh -c 'stat -c %u:%g $(tty)'
  config_edit "$B" '.process.terminal = true | .process.user = {uid: 1000, gid: 100}'
  start_receiver
  ar run -d --console-socket "$SOCK" -b "$B" t10
  wait $RECV
  [ "$(tr -d '\r' <"$OUT" | grep -v '^$' | tail -1)" = 1000:5 ]
  make_bundle "$B.x" sleep 100
  ar run -d -b "$B.x" t11
  rm -f "$SOCK"
  start_receiver
  ar exec -d -t --user 1001:100 --console-socket "$SOCK" t11 sh -c 'stat -c %u:%g $(tty)'
  wait $RECV
  [ "$(tr -d '\r' <"$OUT" | grep -v '^$' | tail -1)" = 1001:5 ]
}

@test "tty: a read-only /dev still gets the terminal over /dev/console" {
  make_bundle "$B" sh -c 'grep "^tmpfs /dev " /proc/mounts; stat -c "%t:%T" /dev/console'
  config_edit "$B" '.process.terminal = true | .mounts |= map((select(.destination == "/dev") | .options += ["ro"]) // .)'
  start_receiver
  ar run -d --console-socket "$SOCK" -b "$B" t12
  wait $RECV
  cat "$OUT"
  grep -q 'tmpfs /dev tmpfs ro,' "$OUT"
  grep -q '^88:' "$OUT"
}
