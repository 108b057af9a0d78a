#!/usr/bin/env bats
# agentrun sandbox: its pid 1 (agentrun's own init: out of the agent's reach,
# reaps, forwards signals), the end of a run by signal or by agentrun's
# death, the caller's terminal (a pty only for a person at a terminal, never
# a terminal fd of the caller handed in) and job control at that terminal.
# Run as root, the agent runs as nobody (65534); the points a person meets
# (signals, job control, the terminal) are checked as well as the plain user
# agentrun-test without XDG_RUNTIME_DIR and through sudo for that user
# (agentrun_as in helpers). Everything lives under $BATS_TEST_TMPDIR.

load helpers

setup() {
  sandbox_setup "the agent's uid is made nobody"
  need_cmd python3 jq
  write_helpers
}

teardown() {
  [ -z "${TMUX_SOCK:-}" ] || tmux -S "$TMUX_SOCK" kill-server 2>/dev/null || true
  sandbox_teardown
}

write_helpers() {
  # ptrace pid 1 as its child would, and read what only a tracer may
  cat >"$WS/probe.py" <<'EOF'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(0x4206, 1, 0, 0)  # PTRACE_SEIZE
print("ptrace:", "attached" if r == 0 else os.strerror(ctypes.get_errno()))
for f in ("environ", "mem"):
    try:
        open("/proc/1/" + f, "rb").read(1)
        print(f + ": read")
    except OSError as e:
        print(f + ":", e.strerror)
EOF
  # ptyrun.py OUT CMD...: CMD with a terminal as stdin and stderr, stdout
  # to the file OUT; prints what reached the terminal
  cat >"$T/ptyrun.py" <<'EOF'
import os, pty, subprocess, sys
m, s = pty.openpty()
with open(sys.argv[1], "wb") as out:
    p = subprocess.Popen(sys.argv[2:], stdin=s, stdout=out, stderr=s, start_new_session=True)
os.close(s)
seen = b""
while True:
    try:
        d = os.read(m, 4096)
    except OSError:
        break
    if not d:
        break
    seen += d
sys.stdout.write(seen.decode(errors="replace"))
sys.exit(p.wait())
EOF
  chmod 0644 "$WS/probe.py"
}

gone() { [ ! -e "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status"; }

# pid 1 takes the command's ids and drops its capabilities right after the
# command's start (it waits, suspended, for the command's execve until then):
# the probes wait (2 s at most) for its permitted set to be empty, then read.
own_init() {
  run sb_as -- sh -c 'i=0; while ! grep -q "^CapPrm:[[:space:]]*0*\$" /proc/1/status && [ $i -lt 200 ]; do i=$((i+1)); sleep 0.01; done; grep -E "^(Name|CapPrm|CapEff|CapBnd|NoNewPrivs):" /proc/1/status; echo "me=$$ parent=$PPID"; python3 probe.py'
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx 'Name:[[:space:]]*agentrun-init'
  for c in CapPrm CapEff CapBnd; do echo "$output" | grep -qx "$c:[[:space:]]*0000000000000000"; done
  echo "$output" | grep -qx 'NoNewPrivs:[[:space:]]*1'
  echo "$output" | grep -Eqx 'me=[0-9]+ parent=1'
  refute grep -q 'me=1 ' <<<"$output"
  echo "$output" | grep -qx 'ptrace: Operation not permitted'
  echo "$output" | grep -qx 'environ: Permission denied'
  echo "$output" | grep -qx 'mem: Permission denied'
}

@test "pid 1: agentrun's own init, no capabilities, not dumpable; the command cannot ptrace it" {
  own_init
}

@test "pid 1: agentrun's own init, no capabilities, out of the command's reach, as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  own_init
}

@test "pid 1: agentrun's own init, no capabilities, out of the command's reach, through sudo for a plain user" {
  as_sudo_user
  own_init
}

@test "as agentrun-test (a nested user namespace): pid 1 out of reach, the pty the user's, Ctrl-C reaches the command" {
  id agentrun-test >/dev/null 2>&1 || skip "user agentrun-test missing (.ci/run creates it)"
  [ "$(cat /proc/sys/user/max_user_namespaces)" -ge 2 ] || skip "user.max_user_namespaces leaves no room for two"
  local bin tuid
  bin=$(public_bin)
  tuid=$(id -u agentrun-test)
  chown agentrun-test "$WS" "$FHOME"
  asuser() { runuser -u agentrun-test -- env -u XDG_RUNTIME_DIR HOME="$FHOME" sh -c 'cd "$0" && exec "$@"' "$WS" "$@"; }
  run asuser "$bin/agentrun" sandbox -- sh -c 'i=0; while ! grep -q "^CapPrm:[[:space:]]*0*\$" /proc/1/status && [ $i -lt 200 ]; do i=$((i+1)); sleep 0.01; done; grep -E "^(Name|CapPrm|CapEff|CapBnd|NoNewPrivs):" /proc/1/status
    cat /proc/1/uid_map; python3 probe.py'
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx 'Name:[[:space:]]*agentrun-init'
  for c in CapPrm CapEff CapBnd; do echo "$output" | grep -qx "$c:[[:space:]]*0000000000000000"; done
  echo "$output" | grep -qx 'NoNewPrivs:[[:space:]]*1'
  # pid 1 lives in the nested user namespace, as the command does
  echo "$output" | grep -Eqx "[[:space:]]*$tuid[[:space:]]+0[[:space:]]+1"
  echo "$output" | grep -qx 'ptrace: Operation not permitted'
  echo "$output" | grep -qx 'environ: Permission denied'
  echo "$output" | grep -qx 'mem: Permission denied'
  # a terminal: the pty is the user's inside, and ^C is the command's SIGINT
  cat >"$T/ctrlc.py" <<'EOF2'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
seen = b""
def read_until(want, t):
    global seen
    end = time.time() + t
    while want not in seen and time.time() < end:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                d = os.read(fd, 1024)
            except OSError:
                return
            if not d:
                return
            seen += d
read_until(b"ready", 20)
os.write(fd, b"\x03")
read_until(b"got-INT", 10)
_, st = os.waitpid(pid, 0)
print(seen.decode(errors="replace").replace("\r", ""))
print("exit", os.waitstatus_to_exitcode(st))
EOF2
  chmod 644 "$T/ctrlc.py"
  run asuser python3 "$T/ctrlc.py" "$bin/agentrun" sandbox -- sh -c \
    'stat -c "tty-owner=%u" "$(tty)"; trap "echo got-INT; exit 7" INT; echo ready; while :; do sleep 0.1; done'
  echo "$output"
  echo "$output" | grep -qx "tty-owner=$tuid"
  echo "$output" | grep -q "got-INT\$"
  [ "${lines[-1]}" = "exit 7" ]
}

sigkill_takes_all() {
  need_cmd socat
  # a missing .claude held by a folder, as for Claude Code: the janitor
  # removes folders too
  echo '{"folders": [".claude"]}' >"$T/folders.json"
  chmod 644 "$T/folders.json"
  start_cmd sleep --allow "echo.test:443=127.0.0.1:9" --profile "$T/folders.json" -- sleep 1000
  track_pid "$INIT"
  track_pid "$CMD"
  ns=$(stat -L -c %i "/proc/$INIT/ns/net")
  in_netns() {
    local p
    for p in /proc/[0-9]*; do [ "$(stat -L -c %i "$p/ns/net" 2>/dev/null)" = "$ns" ] && echo "${p#/proc/}"; done
    return 0
  }
  # pid 1, the command and the netproxy server (the unixconn supervisor
  # lives on the host, outside the sandbox's namespaces)
  [ "$(in_netns | wc -l)" -ge 3 ]
  LEFT_TMPDIR=$(dirname "$(jq -r .bundle "$STATE/state.json")")
  # the run made placeholders for the protected names; the person replaces
  # one with a file of their own and writes into another meanwhile. agentrun
  # is held still for it: its watch stops a run whose placeholder was
  # replaced, which could end it before the SIGKILL this is about
  [ -f "$WS/.bashrc" ]
  [ -f "$WS/.vscode" ]
  [ -d "$WS/.claude" ]
  kill -STOP "$AR_PID"
  rm "$WS/.profile" && touch "$WS/.profile"
  echo "export A=1" >>"$WS/.envrc"
  kill -KILL "$AR_PID"
  # su and sudo stop themselves when the command they wait for stops
  kill -CONT "$SB" 2>/dev/null || true
  wait "$SB" || true
  wait_for gone "$INIT"
  wait_for gone "$CMD"
  wait_for test -z "$(in_netns)"
  wait_for bash -c "[ ! -e '$LEFT_TMPDIR' ] && [ ! -e '$STATE' ]"
  wait_for bash -c "! pgrep -f -- '--containe[r] $ID' >/dev/null"
  # the janitor removed the placeholders that were still as made, only those
  wait_for bash -c "[ ! -e '$WS/.bashrc' ]"
  [ ! -e "$WS/.vscode" ]
  [ ! -e "$WS/.claude" ]
  [ ! -e "$WS/.mcp.json" ]
  [ -f "$WS/.profile" ]
  grep -qx "export A=1" "$WS/.envrc"
}

@test "pid 1: SIGKILL of agentrun takes the command, its pid 1, the netproxy server, bundle and state with it" {
  sigkill_takes_all
}

@test "pid 1: SIGKILL of agentrun takes everything with it, as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  sigkill_takes_all
}

@test "pid 1: SIGKILL of agentrun takes everything with it, through sudo for a plain user" {
  as_sudo_user
  sigkill_takes_all
}

# A command without handlers ends at once on SIGTERM, SIGINT, SIGHUP sent to
# agentrun, with 128+N, and nothing of the run is left.
signals_end_at_once() {
  local sig num st t0
  for sig in TERM INT HUP; do
    start_cmd sleep -- sleep 1000
    grep -q "^Uid:[[:space:]]*$WHO_UID[[:space:]]" "/proc/$CMD/status"
    num=$(kill -l "$sig")
    t0=$(date +%s%N)
    kill -"$sig" "$AR_PID"
    st=0
    wait "$SB" || st=$?
    echo "$sig: status $st in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    cat "$T/err"
    [ "$st" -eq $((128 + num)) ]
    [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 1000 ]   # within a second; the grace would be 10 s
    refute grep -q "did not stop" "$T/err"
    wait_for gone "$CMD"
    [ ! -e "$STATE" ]
  done
}

@test "signals: a command without handlers ends at once on SIGTERM, SIGINT, SIGHUP, with 128+N" {
  signals_end_at_once
}

@test "signals: a command without handlers ends at once, as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  signals_end_at_once
}

@test "signals: a command without handlers ends at once, through sudo for a plain user" {
  as_sudo_user
  signals_end_at_once
}

own_handler() {
  start_cmd sh -- sh -c 'trap "echo got-term >&2; exit 7" TERM; while :; do sleep 0.1; done'
  grep -q "^Uid:[[:space:]]*$WHO_UID[[:space:]]" "/proc/$CMD/status"
  kill -TERM "$AR_PID"
  st=0
  wait "$SB" || st=$?
  cat "$T/err"
  [ "$st" -eq 7 ]
  grep -qx got-term "$T/err"
}

@test "signals: a command's own handler runs, and its exit status is the sandbox's" {
  own_handler
}

@test "signals: a command's own handler runs, as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  own_handler
}

@test "signals: a command's own handler runs, through sudo for a plain user" {
  as_sudo_user
  own_handler
}

orphans_reaped() {
  # the command reaps only its own children (a shell would reap all): the
  # orphans, `true`s whose shell has exited, are pid 1's to reap
  cat >"$WS/orphans.py" <<'EOF'
import os, subprocess, time
ok = 0
for i in range(60):
    try:
        subprocess.run(["sh", "-c", "true &"], check=True)
        ok += 1
    except Exception as e:
        print("failed:", e)
    time.sleep(0.01)
time.sleep(0.3)
z = 0
for d in filter(str.isdigit, os.listdir("/proc")):
    try:
        z += "\nState:\tZ" in open("/proc/%s/status" % d).read()
    except OSError:
        pass
print("uid=%d" % os.getuid())
print("ok=%d" % ok)
print("zombies=%d" % z)
EOF
  chmod 0644 "$WS/orphans.py"
  run sb_as --pids 64 -- python3 orphans.py
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx "uid=$WHO_UID"
  echo "$output" | grep -qx 'ok=60'
  echo "$output" | grep -qx 'zombies=0'
  ! echo "$output" | grep -q 'failed'
}

@test "pid 1: orphans are reaped: 60 short-lived orphans under --pids 64 all fork" {
  orphans_reaped
}

@test "pid 1: orphans are reaped under --pids 64, as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  orphans_reaped
}

@test "pid 1: orphans are reaped under --pids 64, through sudo for a plain user" {
  as_sudo_user
  orphans_reaped
}

# As a plain user, in the caller's session (runuser): the caller's terminal
# is the point.
terminal_stdout_file() {
  local USER_VIA=runuser
  agentrun_as
  run python3 "$T/ptyrun.py" "$T/out" "${AR[@]}" sandbox --workspace "$WS" -- sh -c 'printf "{\"a\": 1}\n"; printf "line2\n"; echo to-stderr >&2; echo "uid=$(id -u)" >&2
      for fd in 0 1 2; do [ -t $fd ] && echo "fd$fd=tty" >&2; echo "fd$fd=$(readlink /proc/self/fd/$fd | cut -d: -f1)" >&2; done
      python3 -c "
import fcntl, termios
for fd in (0, 1, 2):
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b\"x\"); print(\"tiocsti fd\", fd, \"injected\")
    except OSError as e:
        print(\"tiocsti fd\", fd, e.strerror)
" >&2'
  echo "$output"
  [ "$status" -eq 0 ]
  printf '{"a": 1}\nline2\n' | cmp - "$T/out"
  echo "$output" | grep -q to-stderr
  echo "$output" | grep -q "uid=$WHO_UID"
  refute grep -q '=tty' <<<"$output"
  echo "$output" | grep -q 'fd0=pipe'
  echo "$output" | grep -q 'fd2=pipe'
  refute grep -q injected <<<"$output"
  [ "$(echo "$output" | grep -c '^tiocsti fd ')" -eq 3 ]
}

@test "terminal: with stdin a terminal and stdout a file, the output is byte-exact and no terminal is handed in" {
  terminal_stdout_file
}

@test "terminal: stdin a terminal and stdout a file, as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  terminal_stdout_file
}

@test "terminal: stdin a terminal and stdout a file, through sudo for a plain user" {
  as_sudo_user
  terminal_stdout_file
}

terminal_pipe_pty() {
  need_cmd script
  local USER_VIA=runuser
  # stdin and stdout terminals: a pty, as before
  run script -qec "$(ar_line) -- sh -c '[ -t 0 ] && [ -t 1 ] && echo both-tty'" /dev/null
  echo "$output"
  [[ "$output" == *both-tty* ]]
  # --no-tty: none, though both are terminals
  run script -qec "$(ar_line --no-tty) -- sh -c '[ -t 0 ] || [ -t 1 ] || echo no-tty'" /dev/null
  echo "$output"
  [[ "$output" == *no-tty* ]]
  # -t: a pty though stdout is a pipe
  run bash -c "echo | $(ar_line -t) -- sh -c '[ -t 0 ] && [ -t 1 ] && echo forced-tty' | cat"
  echo "$output"
  [[ "$output" == *forced-tty* ]]
  agentrun_as
  # typed input reaches the command through the pipe; ^D ends it
  run python3 -c '
import os, pty, subprocess, sys, time
m, s = pty.openpty()
p = subprocess.Popen(sys.argv[1:], stdin=s, stdout=subprocess.PIPE, stderr=s, start_new_session=True)
os.close(s)
time.sleep(1.5)
os.write(m, b"typed-line\n")
time.sleep(0.3)
os.write(m, b"\x04")
print(p.communicate(timeout=20)[0].decode(), end="")
sys.exit(p.returncode)' "${AR[@]}" sandbox --workspace "$WS" -- sh -c 'cat; echo eof; id -u'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "typed-line
eof
$WHO_UID" ]
}

@test "terminal: stdin read through the pipe that stands for the caller's terminal; a pty with -t, none with --no-tty" {
  terminal_pipe_pty
}

@test "terminal: the pipe for the caller's terminal, -t and --no-tty, as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  terminal_pipe_pty
}

@test "terminal: the pipe for the caller's terminal, -t and --no-tty, through sudo for a plain user" {
  as_sudo_user
  terminal_pipe_pty
}

# the shell's prompt ends the screen: the job has ended or stopped
prompt_back() { tmux -S "$TMUX_SOCK" capture-pane -p | grep -v '^$' | tail -n 1 | grep -q '[$]$'; }

# wait_for, and on failure what the terminal shows
jc_wait() {
  wait_for "$@" && return 0
  echo "# waited in vain for: $*"
  tmux -S "$TMUX_SOCK" capture-pane -p | sed 's/^/# | /'
  return 1
}

# At the interactive shell a person has as $AS (user_shell).
job_control() {
  need_cmd tmux
  local USER_VIA=shell
  TMUX_SOCK=$T/tmux.sock
  # no child between ticks: dash runs `sleep` by vfork, and a stop that
  # lands between that vfork and the exec stops the child while dash waits,
  # unstoppable, for its exec (on the host too: the job never stops)
  cat >"$WS/ticker.py" <<'EOF'
import signal, time
signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.signal(signal.SIGWINCH, lambda s, f: open("winch", "a").write("winch\n"))
i = 0
while True:
    i += 1
    with open("ticks", "a") as t:
        t.write("tick %d\n" % i)
    time.sleep(0.1)
EOF
  chmod 0644 "$WS/ticker.py"
  local redir
  # stdout a file: no pty, the ^Z is a SIGTSTP to agentrun, forwarded
  for redir in "" ">out.txt"; do
    rm -f "$WS/ticks" "$WS/winch"
    tmux -S "$TMUX_SOCK" new-session -d -x 120 -y 30 "env -i PATH=$PATH TERM=xterm PS1='$ ' $(user_shell)"
    tmux -S "$TMUX_SOCK" send-keys "cd '$WS'; $(ar_line) -- python3 ticker.py $redir" Enter
    jc_wait test -s "$WS/ticks"
    [ "$(stat -c %u "$WS/ticks")" = "$WHO_UID" ]
    sleep 0.5
    tmux -S "$TMUX_SOCK" send-keys C-z
    jc_wait bash -c "tmux -S '$TMUX_SOCK' capture-pane -p | grep -q 'Stopped'"
    # the shell has the terminal: it runs a command of its own
    tmux -S "$TMUX_SOCK" send-keys "echo shell-is-back" Enter
    jc_wait bash -c "tmux -S '$TMUX_SOCK' capture-pane -p | grep -qx 'shell-is-back'"
    # and the command is stopped: no tick for a while
    n1=$(wc -l <"$WS/ticks")
    sleep 1
    n2=$(wc -l <"$WS/ticks")
    [ "$n1" -eq "$n2" ] || { echo "# ticks went on while stopped: $n1 then $n2"; false; }
    tmux -S "$TMUX_SOCK" send-keys "fg" Enter
    jc_wait bash -c "[ \$(wc -l <'$WS/ticks') -gt $n2 ]"
    # on a pty, it is told to redraw
    [ -n "$redir" ] || jc_wait test -s "$WS/winch"
    tmux -S "$TMUX_SOCK" send-keys C-c
    # typed before agentrun has gone, a line would be the command's input
    jc_wait prompt_back
    tmux -S "$TMUX_SOCK" send-keys 'echo "rc=$?"' Enter
    jc_wait bash -c "tmux -S '$TMUX_SOCK' capture-pane -p | grep -qx 'rc=130'"
    tmux -S "$TMUX_SOCK" kill-server
  done
}

@test "job control: Ctrl-Z stops the command and gives the shell back, fg resumes it (pty, and pipes)" {
  job_control
}

@test "job control: a command that stops itself and takes SIGCONT late (its handler set after the resume) still gets one" {
  need_cmd tmux
  TMUX_SOCK=$T/tmux.sock
  # what a TUI does with ^Z in raw mode: the terminal back to cooked, then
  # kill(0, SIGTSTP); its handler for SIGCONT comes 30 ms after the resume
  cat >"$WS/late.py" <<'EOF'
import os, signal, termios, time, tty
old = termios.tcgetattr(0)
tty.setraw(0)
open("ready", "w").close()
os.read(0, 1)
termios.tcsetattr(0, termios.TCSANOW, old)
os.kill(0, signal.SIGTSTP)
time.sleep(0.03)
signal.signal(signal.SIGCONT, lambda s, f: open("cont-late", "w").close())
time.sleep(1)
open("done", "w").close()
EOF
  chmod 0644 "$WS/late.py"
  tmux -S "$TMUX_SOCK" new-session -d -x 120 -y 30 "env -i PATH=$PATH TERM=xterm PS1='$ ' $(user_shell)"
  tmux -S "$TMUX_SOCK" send-keys "cd '$WS'; $(ar_line) -- python3 late.py" Enter
  jc_wait test -e "$WS/ready"
  tmux -S "$TMUX_SOCK" send-keys C-z
  jc_wait bash -c "tmux -S '$TMUX_SOCK' capture-pane -p | grep -q 'Stopped'"
  tmux -S "$TMUX_SOCK" send-keys "fg" Enter
  jc_wait test -e "$WS/done"
  [ -e "$WS/cont-late" ]
}

@test "job control: Ctrl-Z then fg (pty, and pipes), as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  job_control
}

@test "job control: Ctrl-Z then fg (pty, and pipes), through sudo for a plain user" {
  as_sudo_user
  job_control
}

@test "pid 1: the run.agentrun.init annotation gives an OCI container the same pid 1, under the process's user" {
  command -v busybox >/dev/null || skip "needs busybox"
  # (make_bundle takes one line per argument)
  make_bundle "$T/b" sh -c 'trap "echo got-term; exit 3" TERM; echo "pid=$$"; i=0; while ! grep -q "^CapPrm:[[:space:]]*0*\$" /proc/1/status && [ $i -lt 200 ]; do i=$((i+1)); sleep 0.01; done; grep "^Uid:" /proc/1/status; while :; do sleep 0.1; done'
  config_edit "$T/b" '.annotations["run.agentrun.init"] = "true" | .process.user = {uid: 1000, gid: 1000}'
  timeout 20 "$AGENTRUN" --root "$ROOT" run -b "$T/b" oci2 >"$T/out" 2>&1 &
  SB=$!
  track_pid $SB
  wait_for grep -q '^Uid:' "$T/out"
  ar kill oci2 TERM
  st=0
  wait "$SB" || st=$?
  cat "$T/out"
  [ "$st" -eq 3 ]
  grep -qx 'pid=2' "$T/out"
  grep -q '^Uid:[[:space:]]*1000[[:space:]]' "$T/out"
  grep -qx 'got-term' "$T/out"
}

hangup_ends() {
  need_cmd tmux setsid
  TMUX_SOCK=$T/tmux.sock
  # in a session of its own, as su -c runs it: the pane's terminal is its
  # stdio, not its controlling terminal, so no SIGHUP comes when it goes
  cat >"$T/run.sh" <<EOF
#!/bin/sh
echo \$\$ >'$T/pid'
cd '$WS' && exec $(ar_line) -- sh -c 'echo started >started; exec sleep 300'
EOF
  chmod 755 "$T/run.sh"
  tmux -S "$TMUX_SOCK" new-session -d -x 80 -y 24 "setsid -w '$T/run.sh'"
  wait_for test -s "$WS/started"
  [ "$(stat -c %u "$WS/started")" = "$WHO_UID" ]
  SB=$(cat "$T/pid")
  track_pid "$SB"
  wait_for agentrun_started
  tmux -S "$TMUX_SOCK" kill-server
  # sleep has no handler: it ends at the hangup, and agentrun with it
  wait_for bash -c "! kill -0 $AR_PID 2>/dev/null && ! kill -0 $SB 2>/dev/null"
}

@test "a terminal that hangs up with no SIGHUP for agentrun (su -c, setsid) ends the command as a hangup would" {
  hangup_ends
}

@test "a terminal that hangs up ends the command, as a plain user without XDG_RUNTIME_DIR (su -c)" {
  as_plain_user
  hangup_ends
}

@test "a terminal that hangs up ends the command, through sudo for a plain user" {
  as_sudo_user
  hangup_ends
}
