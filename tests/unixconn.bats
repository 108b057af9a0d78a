#!/usr/bin/env bats
# run.agentrun.unixconn: connect(2) and sendto(2) under the supervisor.
# The sandbox can see a host socket inside its workspace; only the
# --unix-socket one may be connected, by absolute or relative path, by a
# non-dumpable client, and whatever a second thread does to the address;
# sockets bound inside the sandbox connect (tmux, multiprocessing, an
# ssh-agent). TCP through the netproxy (the control) still connects; the
# supervisor lives outside the sandbox's pid namespace, out of its reach; a
# dead supervisor means ENOSYS, never an unchecked connect. As root (the
# agent runs as nobody) and as agentrun-test.

load helpers

PROBE_BIN=$BUILDDIR/tests/unixconn-probe

setup() {
  sandbox_setup "the unprivileged run is a test of its own, through runuser"
  [ -x "$PROBE_BIN" ] || skip "tests/unixconn-probe not built"
  # the probe must be visible inside: the workspace is
  install -m 0755 "$PROBE_BIN" "$WS/probe"
}

teardown() { sandbox_teardown; }

# The host pids of the unixconn supervisors of container ID ("ar-unixconn ID").
supervisors() {
  ps -eo pid=,args= | awk -v id="$1" '$2 == "ar-unixconn" && $3 == id && NF == 3 { print $1 }'
}

# The id of the one sandbox running in $ROOT.
sandbox_id() {
  wait_for bash -c "ls '$ROOT' | grep -q '^sandbox-'" || return 1
  ls "$ROOT" | grep '^sandbox-'
}

# A host server on PATH answering LINE to each connection.
serve() {
  "$WS/probe" serve "$1" "$2" &
  track_pid $!
  local i
  for i in $(seq 50); do [ -S "$1" ] && return 0; sleep 0.1; done
  return 1
}

# Both sockets inside the workspace, both visible in the sandbox.
two_servers() {
  serve "$WS/chosen.sock" CHOSEN
  serve "$WS/other.sock" OTHER
}

# The same checks for whoever runs the sandbox (root here, agentrun-test below).
check_lines() {
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx "abs-chosen ok CHOSEN"
  echo "$output" | grep -qx "abs-other refused EACCES"
  echo "$output" | grep -qx "rel-chosen ok CHOSEN"
  echo "$output" | grep -qx "rel-other refused EACCES"
  echo "$output" | grep -qx "dotdot-other refused EACCES"
  echo "$output" | grep -qx "nodump-chosen ok CHOSEN"
  echo "$output" | grep -qx "nodump-other refused EACCES"
  echo "$output" | grep -qx "missing refused ENOENT"
  echo "$output" | grep -qx "magic refused EACCES"
  echo "$output" | grep -qx "link-other refused EACCES"
  echo "$output" | grep -qx "link-chosen ok CHOSEN"
}

# An O_PATH fd of the other socket, connected through its /proc magic link:
# the kernel alone would follow it.
MAGIC='import errno, os, socket
fd = os.open("other.sock", os.O_PATH)
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("/proc/%d/fd/%d" % (os.getpid(), fd)); print("ok")
except OSError as e:
    print("refused", errno.errorcode[e.errno])'
export MAGIC

PROBES='p=./probe
echo "abs-chosen $($p connect "$PWD/chosen.sock")"
echo "abs-other $($p connect "$PWD/other.sock")"
echo "rel-chosen $($p connect chosen.sock)"
echo "rel-other $($p connect other.sock)"
mkdir -p sub; cd sub
echo "dotdot-other $(../probe connect ../other.sock)"
cd ..
echo "nodump-chosen $($p nodump connect chosen.sock)"
echo "nodump-other $($p nodump connect other.sock)"
echo "missing $($p connect "$PWD/none.sock")"
ln -sf other.sock link-other.sock; ln -sf chosen.sock link-chosen.sock
echo "link-other $($p connect link-other.sock)"
echo "link-chosen $($p connect link-chosen.sock)"
echo "magic $(python3 -c "$MAGIC")"'

@test "unixconn: only the --unix-socket one connects, by any path, also from a non-dumpable client" {
  two_servers
  run sb -e MAGIC --unix-socket "$WS/chosen.sock" -- bash -c "$PROBES"
  check_lines
  # the control: the host itself reaches both
  run "$WS/probe" connect "$WS/other.sock"
  [ "$output" = "ok OTHER" ]
}

@test "unixconn: the connect filter is compiled once, then loaded from the cache; a damaged entry is compiled again" {
  two_servers
  sbd() { env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" --debug --root "$ROOT" sandbox --workspace "$WS" "$@"; }
  run sbd -- ./probe connect other.sock
  echo "$output"
  [ "$output" != "${output/unixconn connect filter v1*: compiled/}" ]
  grep -qx "refused EACCES" <<<"$output"
  run sbd -- ./probe connect other.sock
  echo "$output"
  [ "$output" != "${output/unixconn connect filter v1*instructions from the cache/}" ]
  grep -qx "refused EACCES" <<<"$output"
  # every entry damaged (the agent profile's too): neither is loaded, the
  # connect is still refused
  local f
  for f in "$ROOT"/.seccomp-cache/*.bpf; do printf 'garbage' >"$f"; done
  run sbd -- ./probe connect other.sock
  echo "$output"
  [ "$output" != "${output/unixconn connect filter v1*: compiled/}" ]
  grep -qx "refused EACCES" <<<"$output"
}

@test "unixconn: without --unix-socket no pathname socket connects, not even one in the workspace" {
  two_servers
  run sb -- sh -c './probe connect chosen.sock; ./probe connect other.sock; echo done'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | grep -c '^refused EACCES$')" -eq 2 ]
  [[ "$output" != *"ok "* ]]
}

@test "unixconn: a second thread rewriting the address never gets through" {
  two_servers
  run sb --unix-socket "$WS/chosen.sock" -- ./probe race "$WS/chosen.sock" "$WS/other.sock" 3000
  echo "$output"
  # exit 2 and "escaped" would mean a connect reached other.sock
  [ "$status" -eq 0 ]
  [[ "$output" == "held "* ]]
}

@test "unixconn: TCP through the netproxy and abstract sockets of the sandbox's own still connect" {
  need_cmd socat
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  socat TCP-LISTEN:"$port",bind=127.0.0.1,fork,reuseaddr SYSTEM:'echo TCP-UPSTREAM' &
  track_pid $!
  for i in $(seq 50); do bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null && break; sleep 0.1; done
  run sb --allow "echo.test:443=127.0.0.1:$port" -- bash -c '
    exec 3<>/dev/tcp/echo.test/443 && head -n1 <&3
    socat ABSTRACT-LISTEN:agentrun-unixconn-test SYSTEM:"echo ABSTRACT-OWN" & sleep 0.5
    socat -u ABSTRACT-CONNECT:agentrun-unixconn-test -'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *TCP-UPSTREAM* ]]
  [[ "$output" == *ABSTRACT-OWN* ]]
}

@test "unixconn: the supervisor is out of the agent's reach, and its own filter cannot take connect over" {
  two_servers
  # The escape: a filter of the agent's own with a new listener, whose
  # thread answers CONTINUE, would take precedence over ours for connect.
  # seccomp(2) refuses the listener; a filter of its own allowing connect
  # does not override the notification. The supervisor is in no pid
  # namespace of the sandbox: not in its /proc, nothing to signal or ptrace.
  run sb --unix-socket "$WS/chosen.sock" -- bash -c '
    ./probe newlistener other.sock; ./probe allowfilter other.sock; ./probe connect chosen.sock
    for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = ar-unixconn ] && echo "visible ${p#/proc/}"; done
    echo end'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "newlistener refused EPERM" ]
  [ "${lines[1]}" = "refused EACCES" ]
  [ "${lines[2]}" = "refused EACCES" ]
  [ "${lines[3]}" = "ok CHOSEN" ]
  [[ "$output" != *visible* ]]
  [[ "$output" != *escaped* ]]
  [ "${lines[4]}" = end ]
}

@test "unixconn: the supervisor lives on the host as the agent's uid, and dies with the sandbox" {
  two_servers
  sb --unix-socket "$WS/chosen.sock" -- sh -c './probe connect chosen.sock >"$PWD/first"
    while [ ! -e "$PWD/go" ]; do sleep 0.1; done' 3>&- &
  local sbp=$! id pid
  track_pid $sbp
  id=$(sandbox_id)
  wait_for test -s "$WS/first"
  pid=$(supervisors "$id")
  echo "id $id supervisor $pid"
  [ -n "$pid" ]
  [ "$(cat "$WS/first")" = "ok CHOSEN" ]
  # the host's pid namespace, the agent's uid, nothing to gain
  [ "$(readlink /proc/$pid/ns/pid)" = "$(readlink /proc/self/ns/pid)" ]
  grep -q "^Uid:[[:space:]]*$AGENT_UID[[:space:]]" /proc/$pid/status
  grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$pid/status
  touch "$WS/go"
  wait $sbp
  wait_for bash -c "! kill -0 $pid"
}

@test "unixconn: with the supervisor gone, connect fails with ENOSYS" {
  two_servers
  sb --unix-socket "$WS/chosen.sock" -- sh -c './probe connect chosen.sock >"$PWD/before"
    while [ ! -e "$PWD/go" ]; do sleep 0.1; done
    { ./probe connect chosen.sock; ./probe connect other.sock; ./probe newlistener other.sock; echo end; } >"$PWD/after"' 3>&- &
  track_pid $!
  local id pid
  id=$(sandbox_id)
  wait_for test -s "$WS/before"
  pid=$(supervisors "$id")
  [ -n "$pid" ]
  kill -9 "$pid"
  # dead (a zombie of the sandbox's runtime until it exits, not reaped by it)
  wait_for bash -c "[ ! -e /proc/$pid ] || [ \"\$(cut -d' ' -f3 /proc/$pid/stat)\" = Z ]"
  touch "$WS/go"
  wait_for grep -q end "$WS/after"
  cat "$WS/before" "$WS/after"
  [ "$(cat "$WS/before")" = "ok CHOSEN" ]
  [ "$(sed -n 1p "$WS/after")" = "refused ENOSYS" ]
  [ "$(sed -n 2p "$WS/after")" = "refused ENOSYS" ]
  # the escape once the listener is gone: a listener of its own, refused
  [ "$(sed -n 3p "$WS/after")" = "newlistener refused EPERM" ]
  [ "$(sed -n 4p "$WS/after")" = "refused ENOSYS" ]
}

@test "unixconn: without a network namespace of its own, Landlock's abstract scope still holds and only chosen sockets connect" {
  need_cmd socat
  two_servers
  local name=agentrun-unixconn-$$-$RANDOM
  socat ABSTRACT-LISTEN:"$name",fork SYSTEM:'echo HOST-ABSTRACT' &
  track_pid $!
  wait_for socat -u ABSTRACT-CONNECT:"$name" - >/dev/null
  env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" spec --agent --bundle "$T/b" --workspace "$WS" \
    --unix-socket "$WS/chosen.sock" -- sh -c "socat -u ABSTRACT-CONNECT:$name - 2>&1 | tail -n1
      ./probe own /tmp; ./probe connect chosen.sock; true"
  jq -e '.annotations["run.agentrun.landlock"] | fromjson | .scope | index("abstract-unix-socket")' "$T/b/config.json" \
    >/dev/null || skip "no Landlock abstract scope on this kernel"
  # the host's network namespace: its sysctls are not the container's to
  # set, nor its sockets the container's to count (the socket cap)
  config_edit "$T/b" '.linux.namespaces |= map(select(.type != "network"))
    | .linux.sysctl |= with_entries(select(.key | startswith("net.") | not))
    | del(.annotations["run.agentrun.max-sockets"])'
  run ar run -b "$T/b" unixconn-hostnet
  echo "$output"
  [ "$status" -eq 0 ]
  # the supervisor is outside the Landlock domain: it refuses for it
  [[ "${lines[0]}" == *"Operation not permitted"* ]]
  [[ "$output" != *HOST-ABSTRACT* ]]
  # sockets bound in a shared namespace cannot be told from the host's
  [ "${lines[1]}" = "own-stream refused EACCES" ]
  [ "${lines[3]}" = "ok CHOSEN" ]
}

@test "unixconn: datagrams with an address reach the --unix-socket one only" {
  "$WS/probe" dgram-serve "$WS/host-dgram.sock" "$T/host.out" &
  track_pid $!
  "$WS/probe" dgram-serve "$WS/chosen-dgram.sock" "$T/chosen.out" &
  track_pid $!
  wait_for test -S "$WS/host-dgram.sock"
  wait_for test -S "$WS/chosen-dgram.sock"
  # sendto, sendmsg with msg_name, and sendmsg carrying an fd (SCM_RIGHTS)
  run sb --unix-socket "$WS/chosen-dgram.sock" -- sh -c '
    ./probe sendto host-dgram.sock to-host; ./probe sendto "$PWD/host-dgram.sock" to-host-abs
    ./probe sendmsg host-dgram.sock msg-host; ./probe sendfd host-dgram.sock fd-host
    ./probe sendto chosen-dgram.sock to-chosen; ./probe sendmsg chosen-dgram.sock msg-chosen
    ./probe sendfd chosen-dgram.sock fd-chosen'
  echo "$output"
  [ "${lines[0]}" = "refused EACCES" ]
  [ "${lines[1]}" = "refused EACCES" ]
  [ "${lines[2]}" = "refused EACCES" ]
  [ "${lines[3]}" = "refused EACCES" ]
  [ "${lines[4]}" = "sent" ]
  [ "${lines[5]}" = "sent" ]
  [ "${lines[6]}" = "sent" ]
  wait_for grep -q fd-chosen "$T/chosen.out"
  cat "$T/chosen.out"
  [ "$(cat "$T/chosen.out")" = "$(printf '%s\n' to-chosen msg-chosen 'fd-chosen +fd')" ]
  [ ! -e "$T/host.out" ]
}

@test "unixconn: sockets bound inside the sandbox connect, in the workspace, /tmp and HOME" {
  two_servers
  run sb -- sh -c './probe own "$PWD"; ./probe own /tmp; ./probe own "$HOME"; ./probe connect other.sock; true'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | grep -c '^own-stream ok$')" -eq 3 ]
  [ "$(echo "$output" | grep -c '^own-dgram ok$')" -eq 3 ]
  # a host socket in the same folder stays refused
  [ "${lines[6]}" = "refused EACCES" ]
}

@test "unixconn: tmux and Python's multiprocessing.Manager work inside" {
  need_cmd tmux python3
  run sb -- sh -c '
    python3 -c "import multiprocessing; m = multiprocessing.Manager(); d = m.dict(); d[1] = 2; print(\"manager\", d[1]); m.shutdown()"
    tmux -L t new-session -d "sleep 30" && tmux -L t list-sessions -F "tmux #{session_windows}" && tmux -L t kill-server'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"manager 2"* ]]
  [[ "$output" == *"tmux 1"* ]]
}

# ssh-agent started inside binds its socket in the sandbox; ssh-add
# connects to it (exit 1 "no identities" is a connection, 2 is none) and
# loads a key made inside.
SSH_AGENT_INSIDE='eval "$(ssh-agent -a "$HOME/agent.sock")" >/dev/null; ssh-add -l; echo "list=$?";
  ssh-keygen -q -t ed25519 -N "" -C made-inside -f "$HOME/k" && ssh-add -q "$HOME/k" && ssh-add -l; ssh-agent -k >/dev/null'

check_ssh_agent_inside() {
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"The agent has no identities."* ]]
  [[ "$output" == *list=1* ]]
  [[ "$output" == *"made-inside (ED25519)"* ]]
}

@test "unixconn: an ssh-agent started inside: ssh-add connects and loads a key" {
  need_cmd ssh-agent ssh-add ssh-keygen
  run sb -- sh -c "$SSH_AGENT_INSIDE"
  check_ssh_agent_inside
}

@test "unixconn: an ssh-agent started inside, as a plain user without XDG_RUNTIME_DIR" {
  need_cmd ssh-agent ssh-add ssh-keygen
  id agentrun-test >/dev/null 2>&1 || skip "user agentrun-test missing (.ci/run creates it)"
  [ "$(cat /proc/sys/user/max_user_namespaces)" != 0 ] || skip "user namespaces disabled"
  chown agentrun-test "$WS" "$FHOME"
  run env -u XDG_RUNTIME_DIR su -s /bin/sh -c 'cd "$1" && shift && exec "$@"' -- agentrun-test sh "$WS" \
    env HOME="$FHOME" "$(public_bin)/agentrun" sandbox -- sh -c "$SSH_AGENT_INSIDE"
  check_ssh_agent_inside
}

@test "unixconn: a supervisor killed as it starts leaves connect failing with ENOSYS" {
  two_servers
  # The init does not wait for its supervisor: the command may run before
  # the supervisor has its listener. Killed then, it takes the listener (in
  # flight or received) with it: no connect goes through unchecked.
  AGENTRUN_FAULT=unixconn-supervisor-start run sb --unix-socket "$WS/chosen.sock" -- bash -c '
    ./probe connect chosen.sock; ./probe connect other.sock; echo end'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "refused ENOSYS" ]
  [ "${lines[1]}" = "refused ENOSYS" ]
  [ "${lines[2]}" = end ]
}

@test "unixconn: a supervisor that cannot start fails the sandbox and takes the command down" {
  two_servers
  # It says why through exec.fifo; start fails with that and kills the
  # init, which may already run the command: it must not live on.
  AGENTRUN_FAULT=unixconn-supervisor-error run sb --unix-socket "$WS/chosen.sock" -- bash -c 'sleep 2; touch survived'
  echo "$output"
  [ "$status" -eq 125 ]
  echo "$output" | grep -q 'unixconn supervisor: take uid 65534 gid 65534'
  # nothing left: no state, and the command never gets to its touch
  [ -z "$(ls -A "$ROOT" 2>/dev/null | grep -v '^\.seccomp-cache$')" ]
  sleep 3
  [ ! -e "$WS/survived" ]
}

@test "unixconn: a handover to the supervisor that fails fails the sandbox and takes the command down" {
  # Handed over while the command's process makes its last steps: our pid 1
  # waits for it before it lets go of exec.fifo, and a failure is start's,
  # the command (which may run already) killed with the init.
  AGENTRUN_FAULT=unixconn-handover run sb -- bash -c 'sleep 2; touch survived'
  echo "$output"
  [ "$status" -eq 125 ]
  echo "$output" | grep -q 'hand the listener to the unixconn supervisor: sendmsg'
  [ -z "$(ls -A "$ROOT" 2>/dev/null | grep -v '^\.seccomp-cache$')" ]
  sleep 3
  [ ! -e "$WS/survived" ]
}

@test "unixconn: a bundle's annotation is checked before the container starts" {
  make_bundle "$T/b" true
  config_edit "$T/b" '.annotations["run.agentrun.unixconn"] = "[\"relative.sock\"]"'
  run ar run -b "$T/b" unixconn-bad
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *'annotation run.agentrun.unixconn: $[0]: not an absolute path'* ]]
  config_edit "$T/b" '.annotations["run.agentrun.unixconn"] = "[\"/missing.sock\"]"'
  run ar run -b "$T/b" unixconn-missing
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *'annotation run.agentrun.unixconn: $[0]: /missing.sock: No such file or directory'* ]]
  # the annotation's former name is refused, never ignored
  config_edit "$T/b" 'del(.annotations["run.agentrun.unixconn"]) | .annotations["run.agentrun.unix-connect"] = "[]"'
  run ar run -b "$T/b" unixconn-old
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *'annotation run.agentrun.unix-connect: now named run.agentrun.unixconn'* ]]
  [ ! -e "$ROOT/unixconn-old" ]
}

@test "unixconn: as the unprivileged user agentrun-test" {
  id agentrun-test >/dev/null 2>&1 || skip "user agentrun-test missing (.ci/run creates it)"
  [ "$(cat /proc/sys/user/max_user_namespaces)" != 0 ] || skip "user namespaces disabled"
  two_servers
  chown agentrun-test "$WS" "$FHOME"
  install -d -m 0700 -o agentrun-test -g agentrun-test "$T/xdg"
  run runuser -u agentrun-test -- env XDG_RUNTIME_DIR="$T/xdg" HOME="$FHOME" MAGIC="$MAGIC" \
    bash -c "cd '$WS' && '$(public_bin)/agentrun' sandbox -e MAGIC --unix-socket '$WS/chosen.sock' -- bash -c '$PROBES'"
  check_lines
  run runuser -u agentrun-test -- env XDG_RUNTIME_DIR="$T/xdg" HOME="$FHOME" \
    bash -c "cd '$WS' && '$(public_bin)/agentrun' sandbox --unix-socket '$WS/chosen.sock' -- ./probe race '$WS/chosen.sock' '$WS/other.sock' 3000"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == "held "* ]]
}

@test "unixconn: a process joining with exec is under its own supervisor, on the host" {
  two_servers
  env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" spec --agent --bundle "$T/b" --workspace "$WS" \
    --unix-socket "$WS/chosen.sock" -- sleep 60
  ar run -d -b "$T/b" unixconn-exec </dev/null >/dev/null 2>&1 3>&-
  [ "$(supervisors unixconn-exec | wc -l)" -eq 1 ]
  run ar exec --cwd "$WS" unixconn-exec bash -c './probe connect chosen.sock; ./probe connect other.sock
    ./probe own /tmp
    for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = ar-unixconn ] && echo visible; done; sleep 1'
  echo "$output"
  [ "${lines[0]}" = "ok CHOSEN" ]
  [ "${lines[1]}" = "refused EACCES" ]
  [ "${lines[2]}" = "own-stream ok" ]
  [ "${lines[3]}" = "own-dgram ok" ]
  [[ "$output" != *visible* ]]
  # the exec's own supervisor is gone with its process; the init's stays
  export -f supervisors
  wait_for bash -c '[ "$(supervisors unixconn-exec | wc -l)" -eq 1 ]'
  ar delete -f unixconn-exec
  wait_for bash -c '[ -z "$(supervisors unixconn-exec)" ]' 
}

# sshd as agentrun-test: an unprivileged sshd needs no privilege separation
# folder (/run/sshd) and logs in only its own user; host key, config and
# authorized keys live in the test's folder. The key lives only in an
# ssh-agent run as the sandbox's uid (it serves no other), forwarded with
# --unix-socket; the ssh client inside makes itself non-dumpable.
@test "unixconn: git over ssh through a forwarded ssh-agent, against the test's own sshd" {
  need_cmd ssh ssh-agent ssh-add ssh-keygen git setpriv
  [ -x /usr/sbin/sshd ] || skip "sshd missing (openssh-server)"
  id agentrun-test >/dev/null 2>&1 || skip "user agentrun-test missing (.ci/run creates it)"
  local d=$T/sshd a=$T/agent port sock
  mkdir -p "$d" "$a"
  ssh-keygen -q -t ed25519 -N '' -f "$d/host_key"
  ssh-keygen -q -t ed25519 -N '' -C unixconn-git -f "$a/id"
  cp "$a/id.pub" "$d/authorized_keys"
  git init -q -b main "$d/src"
  echo FROM-THE-SSH-REMOTE >"$d/src/README"
  git -C "$d/src" add README
  git -C "$d/src" -c user.name=t -c user.email=t@t commit -qm first
  git clone -q --bare "$d/src" "$d/repo.git"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  printf '%s\n' "Port $port" "ListenAddress 127.0.0.1" "HostKey $d/host_key" "PidFile $d/sshd.pid" \
    "AuthorizedKeysFile $d/authorized_keys" "StrictModes no" "UsePAM no" "PasswordAuthentication no" \
    "KbdInteractiveAuthentication no" "AllowUsers agentrun-test" >"$d/sshd_config"
  chown -R agentrun-test:agentrun-test "$d"
  chown -R "$AGENT_UID:$AGENT_UID" "$a"
  chmod 700 "$a"
  runuser -u agentrun-test -- /usr/sbin/sshd -D -e -f "$d/sshd_config" 2>"$T/sshd.log" &
  track_pid $!
  for i in $(seq 50); do bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null && break; sleep 0.1; done
  bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null || { cat "$T/sshd.log"; skip "sshd cannot run here"; }
  # runuser waits for sshd as its child: sshd's own pid goes too
  track_pid "$(cat "$d/sshd.pid")"
  sock=$a/agent.sock
  setpriv --reuid "$AGENT_UID" --regid "$AGENT_UID" --clear-groups ssh-agent -D -a "$sock" >/dev/null &
  track_pid $!
  for i in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
  SSH_AUTH_SOCK=$sock setpriv --reuid "$AGENT_UID" --regid "$AGENT_UID" --clear-groups ssh-add "$a/id" 2>/dev/null
  rm -f "$a/id"   # from now on the key exists only in the agent
  local ssh_cmd="ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes"
  run sb --unix-socket "$sock" -e SSH_AUTH_SOCK="$sock" -e GIT_SSH_COMMAND="$ssh_cmd" \
    --allow "git.test:22=127.0.0.1:$port" -- \
    sh -c "git clone -q ssh://agentrun-test@git.test:22$d/repo.git clone && cat clone/README && git -C clone ls-remote origin"
  echo "$output"
  cat "$T/sshd.log"
  [ "$status" -eq 0 ]
  [[ "$output" == *FROM-THE-SSH-REMOTE* ]]
  [[ "$output" == *refs/heads/main* ]]
  # the control: without the forwarded agent the same clone is refused
  run sb -e GIT_SSH_COMMAND="$ssh_cmd" --allow "git.test:22=127.0.0.1:$port" -- \
    git clone -q "ssh://agentrun-test@git.test:22$d/repo.git" clone2
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"Permission denied (publickey)"* ]]
}

@test "unixconn: a connect stuck on a full backlog stalls no other connect" {
  "$WS/probe" hold "$WS/full.sock" &
  track_pid $!
  serve "$WS/chosen.sock" CHOSEN
  for i in $(seq 50); do [ -S "$WS/full.sock" ] && break; sleep 0.1; done
  sb --unix-socket "$WS/full.sock" --unix-socket "$WS/chosen.sock" -- ./probe stall "$WS/full.sock" "$WS/chosen.sock" \
    >"$T/out" 2>&1 3>&- &
  local sbp=$! id pid
  track_pid $sbp
  id=$(sandbox_id)
  wait_for bash -c "ps -eo args= | grep -qx 'ar-unixconn $id'"
  pid=$(supervisors "$id")
  wait_for grep -q "count the threads" "$T/out"
  cat "$T/out"
  grep Threads /proc/$pid/status
  # the child is gone: the thread that connected for it was interrupted
  grep -q '^Threads:[[:space:]]*1$' /proc/$pid/status
  wait $sbp
  mapfile -t lines <"$T/out"
  [ "${lines[1]}" = "child still-blocked" ]
  [[ "${lines[0]}" == "ok-while-stalled "* ]]
  [ "${lines[0]#ok-while-stalled }" -lt 1000 ]
}

@test "unixconn: the socket cap's annotation is checked before the container starts" {
  make_bundle "$T/b" true
  local v
  for v in 0 -3 ten 65537 ''; do
    config_edit "$T/b" ".annotations = {\"run.agentrun.unixconn\": \"[]\", \"run.agentrun.max-sockets\": \"$v\"}"
    run ar run -b "$T/b" sockcap-bad
    echo "$v: $output"
    [ "$status" -ne 0 ]
    [[ "$output" == *"annotation run.agentrun.max-sockets: \"$v\": not a count from 1 to 65536"* ]]
  done
  # the count is the supervisor's, and the network namespace's: both needed
  config_edit "$T/b" '.annotations = {"run.agentrun.max-sockets": "8"}'
  run ar run -b "$T/b" sockcap-alone
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *'annotation run.agentrun.max-sockets: needs the annotation run.agentrun.unixconn'* ]]
  config_edit "$T/b" '.annotations = {"run.agentrun.unixconn": "[]", "run.agentrun.max-sockets": "8"}
    | .linux.namespaces |= map(select(.type != "network"))'
  run ar run -b "$T/b" sockcap-hostnet
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"annotation run.agentrun.max-sockets: needs a network namespace of the container's own"* ]]
  [ ! -e "$ROOT/sockcap-hostnet" ]
}

@test "unixconn: the supervisors of a container and of an exec are in the container's cgroups, frozen with it, gone with it" {
  make_bundle "$T/b" sleep 60
  config_edit "$T/b" '.annotations = {"run.agentrun.unixconn": "[]", "run.agentrun.max-sockets": "8"}
    | .linux.resources.memory = {"limit": 67108864}'
  local id=unixconn-cg-$$ init sup p path
  ar create -b "$T/b" "$id"
  ar start "$id"
  init=$(ar state "$id" | jq -r .pid)
  track_pid "$init"
  sup=$(supervisors "$id")
  [ -n "$sup" ]
  track_pid "$sup"
  # every hierarchy's line (the unified one too) as the container's init has it
  diff "/proc/$init/cgroup" "/proc/$sup/cgroup"
  grep -q "/$id\$" "/proc/$sup/cgroup"
  ar exec -d "$id" sleep 50
  wait_for bash -c "[ \$(ps -eo args= | grep -c '^ar-unixconn $id\$') = 2 ]"
  for p in $(supervisors "$id"); do
    track_pid "$p"
    diff "/proc/$init/cgroup" "/proc/$p/cgroup"
    ar ps --format json "$id" | jq -e --argjson p "$p" 'index($p) != null' >/dev/null
  done
  # paused, it is frozen with the container (it serves no one meanwhile)
  ar pause "$id"
  path=$(awk -F: '$2 == "freezer" { print $3 }' "/proc/$sup/cgroup")
  if [ -n "$path" ]; then
    [ "$(cat "/sys/fs/cgroup/freezer$path/freezer.state")" = FROZEN ]
    grep -qx "$sup" "/sys/fs/cgroup/freezer$path/cgroup.procs"
  fi
  ar resume "$id"
  # delete kills what is in the cgroup, and removes it in every hierarchy
  ar delete -f "$id"
  wait_for test -z "$(supervisors "$id")"
  [ -z "$(find /sys/fs/cgroup -maxdepth 4 -name "$id")" ]
}

@test "unixconn: on cgroup2 the supervisor starts in the container's cgroup" {
  local mnt id=unixconn-cg2-$$ init sup
  mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
  [ -n "$mnt" ] || skip "no cgroup2 mounted"
  make_bundle "$T/b" sleep 60
  config_edit "$T/b" '.annotations = {"run.agentrun.unixconn": "[]", "run.agentrun.max-sockets": "8"}'
  # the runtime on cgroup2 alone (the cgroup2 half, on a hybrid host like this one)
  export AGENTRUN_CGROUP_ROOT=$mnt
  ar create -b "$T/b" "$id"
  ar start "$id"
  init=$(ar state "$id" | jq -r .pid)
  track_pid "$init"
  sup=$(supervisors "$id")
  [ -n "$sup" ]
  track_pid "$sup"
  [ "$(grep '^0::' "/proc/$sup/cgroup")" = "$(grep '^0::' "/proc/$init/cgroup")" ]
  grep -q "^0::.*/$id\$" "/proc/$sup/cgroup"
  grep -qx "$sup" "$mnt$(sed -n 's/^0:://p' "/proc/$init/cgroup")/cgroup.procs"
  ar delete -f "$id"
  wait_for test -z "$(supervisors "$id")"
  [ -z "$(find "$mnt" -maxdepth 3 -name "$id")" ]
}
