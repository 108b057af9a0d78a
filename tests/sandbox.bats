#!/usr/bin/env bats
# agentrun sandbox: the default confinement seen from inside, the network
# path through the relay, exit status, cleanup, and `spec --agent`.
# Run as root, the agent runs as nobody (65534): its folders are made here
# and given to that uid. Everything lives under $BATS_TEST_TMPDIR.

load helpers

setup() {
  OUT=$BATS_TEST_TMPDIR/out
  sandbox_setup "the unprivileged path has its own tests, run as agentrun-test" "$OUT"
}

teardown() { sandbox_teardown; }

# A command that stops on SIGTERM.
LOOP=(sh -c 'trap "exit 0" TERM; while :; do sleep 0.1; done')

start_echo() {
  need_cmd socat
  ECHO_PORT=$(free_port)
  socat TCP-LISTEN:"$ECHO_PORT",bind=127.0.0.1,fork,reuseaddr EXEC:cat &
  track_pid $!
  wait_for bash -c "exec 3<>/dev/tcp/127.0.0.1/$ECHO_PORT"
}

@test "sandbox: the command's exit status comes back" {
  run sb -- sh -c 'exit 42'
  [ "$status" -eq 42 ]
  run sb -- true
  [ "$status" -eq 0 ]
}

@test "sandbox: when it returns, nothing the command started runs, whatever its status" {
  chown 65534:65534 "$WS"
  # a child left running writes on: it must be dead once sandbox returns
  # (our pid 1 kills and reaps all before it tells the status). Every
  # protected name present: no placeholder, so sandbox returns on that word
  # and does not wait for the pid 1's exit
  (cd "$WS" && mkdir -p .git/hooks .vscode .idea .claude/commands .claude/agents .claude/hooks .claude/skills \
    .gemini .codex .opencode .helix .zed .cursor &&
    touch .git/config .gitmodules .gitconfig .bashrc .bash_profile .profile .bash_logout .zshrc .zprofile \
      .zshenv .envrc .mcp.json .ripgreprc .claude/settings.json .claude/settings.local.json opencode.json \
      opencode.jsonc && echo . >.git/commondir)
  run env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" --debug --root "$ROOT" sandbox --workspace "$WS" -- true
  [[ "$output" == *"protected names held (0 placeholders"* ]]
  for code in 0 3; do
    rm -f "$WS/tick"
    run sb -- sh -c "(while :; do echo t >>tick; done) & while [ ! -s tick ]; do :; done; exit $code"
    [ "$status" -eq "$code" ]
    local n1=$(wc -l <"$WS/tick")
    sleep 0.3
    [ "$(wc -l <"$WS/tick")" = "$n1" ]
  done
}

@test "sandbox: when it returns, the workspace's file system is free: it can be unmounted at once" {
  # a tmpfs of this test's own, in a mount namespace of its own, where the
  # run makes its placeholders: a folder, a file or an inode of it still
  # held by anything of the run (the janitor's working folder, an fd of a
  # placeholder just removed) makes the umount right after busy
  mkdir "$T/mnt"
  run unshare -m --propagation private sh -euc '
    for i in 1 2 3 4 5 6; do
      mount -t tmpfs -o mode=711 agentrun-test "$1"
      mkdir "$1/ws" && chown "$4:$4" "$1/ws"
      (cd "$1/ws" && env -u SUDO_UID -u SUDO_GID HOME="$2" "$3" --root "$5" sandbox -- true)
      umount "$1"
    done' sh "$T/mnt" "$FHOME" "$AGENTRUN" "$AGENT_UID" "$ROOT"
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "sandbox: runs as the invoking uid, never 0, with no capabilities, no_new_privs and seccomp" {
  run sb -- sh -c 'id -u; id -g; grep -E "^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):" /proc/self/status'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$AGENT_UID" ]
  [ "${lines[1]}" = "$AGENT_UID" ]
  for c in CapInh CapPrm CapEff CapBnd CapAmb; do
    echo "$output" | grep -qx "$c:[[:space:]]*0000000000000000"
  done
  echo "$output" | grep -qx 'NoNewPrivs:[[:space:]]*1'
  echo "$output" | grep -qx 'Seccomp:[[:space:]]*2'
  # SUDO_UID=0 is no way to become root inside
  run env SUDO_UID=0 SUDO_GID=0 HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" -- id -u
  [ "$status" -eq 0 ]
  [ "$output" = "$AGENT_UID" ]
}

@test "sandbox: host system read-only, nothing else of the host, an empty writable home" {
  echo host-only >"$T/secret-outside"
  run sb --out "$OUT" -- sh -c '
    echo "pwd=$(pwd)"
    touch /usr/agentrun-x 2>/dev/null && echo usr=writable || echo usr=readonly
    touch /etc/agentrun-x 2>/dev/null && echo etc=writable || echo etc=readonly
    [ -e '"$T/secret-outside"' ] && echo outside=visible || echo outside=hidden
    echo "homefiles=$(ls -A "$HOME" | wc -l)"
    echo hi >"$HOME/x" && echo home=writable
    echo ws >"'"$WS"'/from-inside" && echo ws=writable
    echo out >"'"$OUT"'/from-inside" && echo out=writable
    echo "home=$HOME"
    ls -A /home 2>/dev/null | sed "s/^/homedir=/"'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx "pwd=$WS"
  echo "$output" | grep -qx usr=readonly
  echo "$output" | grep -qx etc=readonly
  echo "$output" | grep -qx outside=hidden
  echo "$output" | grep -qx homefiles=0
  echo "$output" | grep -qx home=writable
  echo "$output" | grep -qx ws=writable
  echo "$output" | grep -qx out=writable
  echo "$output" | grep -qx "home=$FHOME"
  [ "$(cat "$WS/from-inside")" = ws ]
  [ "$(cat "$OUT/from-inside")" = out ]
  # the home inside was a tmpfs: nothing landed in the real one
  [ ! -e "$FHOME/x" ]
  # no host home folder is visible
  local h
  for h in $(ls -A /home 2>/dev/null); do
    refute grep -qx "homedir=$h" <<<"$output"
  done
}

@test "sandbox: credentials stay masked under a --ro bind of the home" {
  mkdir -p "$FHOME/.ssh" "$FHOME/.aws"
  echo SSH-SECRET >"$FHOME/.ssh/id_rsa"
  echo AWS-SECRET >"$FHOME/.aws/credentials"
  echo NETRC-SECRET >"$FHOME/.netrc"
  echo visible >"$FHOME/notes.txt"
  echo MASKED-SECRET >"$FHOME/other-secret"
  chown -R "$AGENT_UID:$AGENT_UID" "$FHOME"
  run sb --ro "$FHOME" --mask "$FHOME/other-secret" -- sh -c '
    cat "$HOME/notes.txt"
    cat "$HOME/.ssh/id_rsa" "$HOME/.aws/credentials" "$HOME/.netrc" "$HOME/other-secret" 2>/dev/null
    touch "$HOME/new" 2>/dev/null && echo home=writable || echo home=readonly
    true'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx visible
  refute grep -q SECRET <<<"$output"
  echo "$output" | grep -qx home=readonly
}

@test "sandbox: the environment is cleared but for the allowlist and --env" {
  run env AGENTRUN_TEST_LEAK=leaked AGENTRUN_TEST_COPY=copied LANG=C.UTF-8 HOME="$FHOME" \
    "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" --env AGENTRUN_TEST_COPY --env SET=value -- env
  [ "$status" -eq 0 ]
  refute grep -q AGENTRUN_TEST_LEAK <<<"$output"
  echo "$output" | grep -qx AGENTRUN_TEST_COPY=copied
  echo "$output" | grep -qx SET=value
  echo "$output" | grep -qx "HOME=$FHOME"
  echo "$output" | grep -qx LANG=C.UTF-8
  local name
  for name in $(echo "$output" | cut -d= -f1); do
    case $name in PATH|HOME|TERM|LANG|USER|SHELL|AGENTRUN_TEST_COPY|SET) ;; *) echo "unexpected $name"; false ;; esac
  done
}

@test "sandbox: none of the caller's fds, nor agentrun's own, reach the init, pid 1 or the command" {
  # more of them than the sandbox's RLIMIT_NOFILE: an init that held them
  # could open nothing once that limit applies
  run bash -c 'exec 7</etc/hostname 8>"$1/x"; for f in $(seq 20 150); do eval "exec $f</dev/null"; done; shift; "$@"' \
    bash "$T" env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox --nofile 64 --workspace "$WS" \
    -- sh -c 'ls /proc/self/fd | tr "\n" " "'
  [ "$status" -eq 0 ]
  # 3: the one ls opens for the listing
  [ "$output" = "0 1 2 3 " ]
  exec 7</etc/hostname 8>"$T/x"
  start_cmd sleep -- sleep 100
  exec 7<&- 8>&-
  local p f
  for p in "$INIT" "$CMD"; do
    for f in $(ls /proc/"$p"/fd); do
      echo "$p: $f $(readlink /proc/"$p"/fd/"$f")"
      case $(readlink /proc/"$p"/fd/"$f") in /etc/hostname | "$T/x" | "$WS"/*) false ;; esac
    done
  done
  [ "$(ls /proc/"$CMD"/fd | sort -n | tr '\n' ' ')" = "0 1 2 " ]
}

@test "sandbox: a start that finds its uid's key quota full (keyrings of runs that just ended) waits for it, then runs" {
  # The init joins a session keyring of its own, counted against the
  # agent uid's key quota (200) until the kernel's collector frees those of
  # runs that ended, later: a burst of starts gets there. The quota of an
  # uid of the test's own is filled here by a process holding keys, which
  # lets them go 0.6 s later: the start waits for that, not fails.
  local uid=4247 held=$BATS_TEST_TMPDIR/held
  chown "$uid:$uid" "$WS"
  python3 - "$uid" "$held" <<'PY' &
import ctypes, os, sys, time
uid, held = int(sys.argv[1]), open(sys.argv[2], "w")
libc = ctypes.CDLL(None, use_errno=True)
os.setgroups([]); os.setresgid(uid, uid, uid); os.setresuid(uid, uid, uid)
libc.syscall(250, 1, None)  # KEYCTL_JOIN_SESSION_KEYRING: an anonymous one
n = 0
while libc.syscall(248, b"user", b"k%d" % n, b"x", 1, -3) >= 0:  # add_key to @s
    n += 1
held.write("%d %d\n" % (n, ctypes.get_errno())); held.close()
time.sleep(0.6)
PY
  track_pid $!
  wait_for test -s "$held"
  read -r n errno <"$held"
  echo "keys held: $n, then errno $errno"
  [ "$errno" -eq 122 ] # EDQUOT: the quota is full
  run sb --user "$uid:$uid" -- true
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "sandbox: a new pid namespace: pid 1 is not the host's init" {
  run sb -- sh -c 'cat /proc/1/cmdline | tr "\0" " "; echo; ls /proc | grep -c "^[0-9]"'
  [ "$status" -eq 0 ]
  host_init=$(tr '\0' ' ' </proc/1/cmdline)
  [ "${lines[0]}" != "$host_init" ]
  [ "${lines[1]}" -lt 10 ]
}

@test "sandbox: no network but the allowed endpoint, through the relay" {
  need_cmd python3
  start_echo
  # a host loopback listener that must stay out of reach
  OTHER_PORT=$(free_port)
  socat TCP-LISTEN:"$OTHER_PORT",bind=127.0.0.1,fork,reuseaddr EXEC:cat &
  track_pid $!
  run sb --allow "echo.test:443=127.0.0.1:$ECHO_PORT" --audit "$T/audit.log" -- python3 -c '
import socket, sys
s = socket.create_connection(("echo.test", 443), timeout=5)
s.sendall(b"ping-through-relay\n")
print("echo:" + s.recv(100).decode().strip())
for host, port in (("127.0.0.1", '"$OTHER_PORT"'), ("10.255.255.1", 80), ("1.1.1.1", 53)):
    try:
        socket.create_connection((host, port), timeout=2)
        print("reached", host)
    except OSError as e:
        print("refused", host, e.strerror)
try:
    socket.getaddrinfo("example.com", 443)
    print("resolved example.com")
except OSError:
    print("unresolved example.com")
'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx "echo:ping-through-relay"
  refute grep -q '^reached' <<<"$output"
  echo "$output" | grep -q '^refused 10.255.255.1 Network is unreachable'
  echo "$output" | grep -qx 'unresolved example.com'
  grep -q '"endpoint":"echo.test:443"' "$T/audit.log"
}

@test "sandbox: without --allow, loopback is not the host's" {
  start_echo
  run sb -- bash -c "exec 3<>/dev/tcp/127.0.0.1/$ECHO_PORT && echo reached"
  [ "$status" -ne 0 ]
  refute grep -q reached <<<"$output"
  # --no-network wins over --allow: no relay, no hook
  run sb --no-network --allow "echo.test:443=127.0.0.1:$ECHO_PORT" -- bash -c 'exec 3<>/dev/tcp/echo.test/443 && echo reached'
  [ "$status" -ne 0 ]
  ! echo "$output" | grep -q reached
}

@test "sandbox: SIGTERM stops the command and removes state, bundle, relay, cgroup" {
  start_echo
  # --memory given (the default limit makes one too, where a cgroup can be made)
  env -u SUDO_UID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" --memory 256m \
    --allow "echo.test:443=127.0.0.1:$ECHO_PORT" -- sleep 1000 &
  SB=$!
  track_pid $SB
  wait_for bash -c "ls '$ROOT' | grep -q '^sandbox-'"
  id=$(ls "$ROOT" | grep '^sandbox-')
  # what it made, looked up before the signal
  wait_for test -s "$ROOT/$id/state.json"
  tmpdir=$(dirname "$(jq -r .bundle "$ROOT/$id/state.json")")
  [ -d "$tmpdir/bundle/rootfs" ]
  case $(basename "$tmpdir") in agentrun-"$id"-*) ;; *) false ;; esac
  relay=
  for p in /proc/[0-9]*; do
    if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -- "--container $id"; then relay=${p#/proc/}; fi
  done
  [ -n "$relay" ]
  [ -n "$(find /sys/fs/cgroup -maxdepth 3 -name "*$id*" 2>/dev/null)" ]
  kill -TERM "$SB"
  # gone or a zombie: it has exited and cleaned up
  wait_for bash -c "[ ! -e /proc/$SB ] || grep -q '^State:.*Z' /proc/$SB/status"
  wait "$SB" || true
  [ -z "$(ls "$ROOT" 2>/dev/null | grep "^$id")" ]
  refute kill -0 "$relay" 2>/dev/null
  refute grep -q "$id" /proc/self/mountinfo
  # the cgroup and the private folder wait for the kernel's teardown of
  # the container's pid 1: the janitor removes them after the return
  wait_for bash -c "[ ! -e '$tmpdir' ] && [ -z \"\$(find /sys/fs/cgroup -maxdepth 3 -name '*$id*')\" ]"
}

# Start `sandbox -- sleep 1000` (or CMD...) as start_cmd does (helpers).
start_sleeper() {
  [ $# -gt 0 ] || set -- sleep 1000
  start_cmd sleep -- "$@"
}

@test "sandbox: a command that ignores SIGTERM is killed after the grace time, and everything is removed" {
  # SIGTERM ignored, also by the sleep it execs
  start_sleeper sh -c 'trap "" TERM INT HUP; exec sleep 1000'
  local t0=$SECONDS st=0
  kill -TERM "$SB"
  wait "$SB" || st=$?
  cat "$T/err"
  [ "$st" -eq 137 ]                       # 128 + SIGKILL, the command's status
  [ $((SECONDS - t0)) -ge 5 ]             # it was given its grace time first
  grep -q "did not stop after a signal" "$T/err"
  [ -z "$(ls "$ROOT" | grep "^$ID")" ]
}

@test "sandbox: the command dies with agentrun, even by SIGKILL" {
  start_sleeper
  track_pid "$INIT"
  track_pid "$CMD"
  tmpdir=$(dirname "$(jq -r .bundle "$ROOT/$ID/state.json")")
  case $(basename "$tmpdir") in agentrun-"$ID"-*) ;; *) false ;; esac
  LEFT_TMPDIR=$tmpdir
  # the default memory limit's cgroup, which the janitor removes too
  [ -n "$(find /sys/fs/cgroup -maxdepth 3 -name "$ID" 2>/dev/null)" ]
  kill -KILL "$SB"
  wait "$SB" || true
  # gone or a zombie (its reaper is the host's init now): it was killed
  wait_for bash -c "[ ! -e /proc/$INIT ] || grep -q '^State:.*Z' /proc/$INIT/status"
  wait_for bash -c "[ ! -e /proc/$CMD ] || grep -q '^State:.*Z' /proc/$CMD/status"
  # a SIGKILL leaves agentrun no chance to clean up: its janitor does
  wait_for bash -c "[ ! -e '$tmpdir' ] && [ ! -e '$ROOT/$ID' ]"
  wait_for bash -c "[ -z \"\$(find /sys/fs/cgroup -maxdepth 3 -name '$ID')\" ]"
}

@test "sandbox: after a SIGKILL, the janitor deletes the container in a --root relative to the working folder" {
  # the janitor works in / (so that nothing of the caller's stays busy):
  # the state root it deletes in must be named from there
  mkdir "$T/cwd"
  (cd "$T/cwd" && exec env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" --root ../state-rel sandbox \
    --workspace "$WS" -- sleep 1000) 2>"$T/err" &
  SB=$!
  track_pid "$SB"
  wait_for bash -c "ls '$T'/state-rel/sandbox-*/state.json"
  local st
  st=$(ls -d "$T"/state-rel/sandbox-*)
  LEFT_TMPDIR=$(dirname "$(jq -r .bundle "$st/state.json")")
  track_pid "$(jq -r .pid "$st/state.json")"
  kill -KILL "$SB"
  wait "$SB" || true
  wait_for bash -c "[ ! -e '$st' ] && [ ! -e '$LEFT_TMPDIR' ]"
}

@test "sandbox: --pids is RLIMIT_NPROC and bites; the one cgroup made is the default memory limit's, none with --memory unlimited" {
  run sb --pids 12 -- sh -c 'grep "^Max processes" /proc/self/limits; i=0
    while [ $i -lt 30 ]; do sleep 5 & i=$((i + 1)); echo "forked $i"; done'
  [ "$status" -ne 0 ]
  echo "$output" | grep -Eq '^Max processes +12 +12 '
  last=$(echo "$output" | grep '^forked' | tail -n 1 | cut -d' ' -f2)
  [ -n "$last" ]
  [ "$last" -lt 12 ]
  # the control: the same loop under the default cap gets all 30
  run sb -- sh -c 'i=0; while [ $i -lt 30 ]; do sleep 0.1 & i=$((i + 1)); done; wait; echo "forked $i"'
  [ "$status" -eq 0 ]
  [ "$output" = "forked 30" ]
  # while one runs, its cgroup is one folder: the memory controller's (v1),
  # or cgroup2's with no pids limit; with --memory unlimited there is none
  local mem=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts) lift found
  for lift in "" "--memory unlimited"; do
    env -u SUDO_UID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" $lift -- "${LOOP[@]}" &
    SB=$!
    track_pid $SB
    wait_for bash -c "ls '$ROOT' | grep -q '^sandbox-'"
    id=$(ls "$ROOT" | grep '^sandbox-')
    wait_for test -s "$ROOT/$id/state.json"
    found=$(find /sys/fs/cgroup -maxdepth 3 -name "*$id*" 2>/dev/null)
    if [ -n "$lift" ]; then
      [ -z "$found" ]
    elif [ -n "$mem" ]; then
      [ "$found" = "$mem/agentrun/$id" ]
    else
      [ "$(echo "$found" | wc -l)" = 1 ]
      [ "$(cat "$found/pids.max" 2>/dev/null || echo max)" = max ]
    fi
    kill -TERM "$SB"
    wait "$SB" || true
    wait_for bash -c "! ls '$ROOT' | grep -q '^sandbox-'"
  done
}

@test "sandbox: runs from a sealed copy of agentrun only when the agent's uid could write the binary" {
  # CVE-2019-5736: a root-owned 0755 binary cannot be opened for writing by
  # the agent's uid, so no copy; one owned by that uid is run from a memfd
  mkdir -p "$T/bin"
  for b in agentrun agentrun-relay agentrun-netproxy; do cp "$AGENTRUN_BUILDDIR/$b" "$T/bin/$b"; done
  chmod 0755 "$T/bin/agentrun"
  for owner in 0 "$AGENT_UID"; do
    chown "$owner" "$T/bin/agentrun"
    env -u SUDO_UID HOME="$FHOME" "$T/bin/agentrun" --root "$ROOT" sandbox --workspace "$WS" -- "${LOOP[@]}" &
    SB=$!
    track_pid $SB
    wait_for bash -c "ls '$ROOT' | grep -q '^sandbox-'"
    id=$(ls "$ROOT" | grep '^sandbox-')
    wait_for test -s "$ROOT/$id/state.json"
    exe=$(readlink "/proc/$SB/exe")
    if [ "$owner" = 0 ]; then [ "$exe" = "$T/bin/agentrun" ]; else case $exe in /memfd:agentrun*) ;; *) false ;; esac; fi
    kill -TERM "$SB"
    wait "$SB" || true
    wait_for bash -c "! ls '$ROOT' | grep -q '^sandbox-'"
  done
  # sealed, it still finds its helpers next to the file it came from
  run env -u SUDO_UID HOME="$FHOME" "$T/bin/agentrun" --root "$ROOT" sandbox --workspace "$WS" \
    --allow "a.test:443=127.0.0.1:9" -- true
  [ "$status" -eq 0 ]
}

@test "sandbox: fails closed on a bind source that does not exist" {
  run sb --ro "$T/does-not-exist" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q "does-not-exist"
  run sb --memory 12q -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q -- "--memory"
  run sb --allow 'bad/name' -- true
  [ "$status" -ne 0 ]
  # a relay that cannot start is a network step that failed, not a run without network
  run sb --allow "a.test:443=127.0.0.1:9" --audit "$T/no-such-dir/audit.log" -- echo ran
  [ "$status" -ne 0 ]
  echo "$output" | grep -q "network step"
  refute grep -qx ran <<<"$output"
  [ -z "$(ls "$ROOT" 2>/dev/null)" ]
}

@test "sandbox --bundle writes the bundle and exits; spec --agent writes the same" {
  run sb --memory 256m --pids 100 --cpus 0.5 --bundle "$T/b1" -- echo hi
  [ "$status" -eq 0 ]
  [ -f "$T/b1/config.json" ]
  [ -d "$T/b1/rootfs" ]
  [ -f "$T/b1/hosts" ]
  [ -z "$(ls "$ROOT" 2>/dev/null)" ]
  c=$T/b1/config.json
  [ "$(jq '.process.user.uid' "$c")" = "$AGENT_UID" ]
  [ "$(jq '.root.readonly' "$c")" = true ]
  [ "$(jq '.process.noNewPrivileges' "$c")" = true ]
  [ "$(jq '[.process.capabilities[] | length] | add' "$c")" = 0 ]
  [ "$(jq -r '[.linux.namespaces[].type] | sort | join(",")' "$c")" = cgroup,ipc,mount,network,pid,user,uts ]
  [ "$(jq '.linux.uidMappings' -c "$c")" = "[{\"containerID\":$AGENT_UID,\"hostID\":$AGENT_UID,\"size\":1}]" ]
  [ "$(jq '.linux.resources.memory.limit' "$c")" = 268435456 ]
  [ "$(jq '.linux.resources.pids.limit' "$c")" = 100 ]
  [ "$(jq '.linux.resources.cpu.quota' "$c")" = 50000 ]
  jq -e --arg h "$FHOME/.ssh" '.linux.maskedPaths | index($h)' "$c"
  jq -e '.linux.seccomp.defaultAction' "$c"
  "$AGENTRUN" validate --bundle "$T/b1"
  (cd "$WS" && env -u SUDO_UID HOME="$FHOME" "$AGENTRUN" spec --agent --memory 256m --pids 100 --cpus 0.5 \
    --bundle "$T/b2" -- echo hi)
  diff <(sed "s#$T/b1#BUNDLE#g" "$T/b1/config.json") <(sed "s#$T/b2#BUNDLE#g" "$T/b2/config.json")
  # and it runs as written
  run "$AGENTRUN" --root "$ROOT" run --bundle "$T/b1" "sb-bundle-$$"
  [ "$status" -eq 0 ]
  [ "$output" = hi ]
}

@test "sandbox: as the unprivileged user agentrun-test" {
  id agentrun-test >/dev/null 2>&1 || skip "user agentrun-test missing (.ci/run creates it)"
  [ "$(cat /proc/sys/user/max_user_namespaces)" != 0 ] || skip "user namespaces disabled"
  chown agentrun-test "$WS"
  # the user's own runtime folder: the state root and the sandbox's private folder go there
  install -d -m 0700 -o agentrun-test -g agentrun-test "$T/xdg"
  chown agentrun-test "$FHOME"
  run runuser -u agentrun-test -- env XDG_RUNTIME_DIR="$T/xdg" HOME="$FHOME" sh -c "cd '$WS' && '$(public_bin)/agentrun' sandbox -- id -u"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "$(id -u agentrun-test)" ]
  # nothing left behind in the user's runtime folder but the (empty) state
  # root; the private folder waits for the kernel's teardown of the
  # container's pid 1: the janitor removes it after the return
  [ -z "$(ls "$T/xdg/agentrun")" ]
  wait_for bash -c "[ \"\$(ls '$T/xdg')\" = agentrun ]"
}
