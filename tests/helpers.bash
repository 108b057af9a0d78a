# Shared by every suite: where the binaries are, a busybox rootfs, bundles,
# and cleanup of what a test started. Everything lives under $BATS_TEST_TMPDIR
# or $BATS_RUN_TMPDIR, never anywhere else on the host.

BUILDDIR=${AGENTRUN_BUILDDIR:-$(cd "$(dirname "$BATS_TEST_FILENAME")/.." && pwd)}
SRCDIR=${AGENTRUN_SRCDIR:-$BUILDDIR}
AGENTRUN=$BUILDDIR/agentrun
RELAY=$BUILDDIR/agentrun-relay
NETPROXY=$BUILDDIR/agentrun-netproxy

# A state root private to the test, so tests never see each other's containers.
ROOT=${BATS_TEST_TMPDIR:-/tmp}/state

ar() { "$AGENTRUN" --root "$ROOT" "$@"; }

# refute CMD...: fails when CMD succeeds. A bare "! CMD" line fails a test
# only when it is the test's last line: errexit ignores a negated command.
# For a pipeline, feed the output in: refute grep -q x <<<"$output".
refute() {
  if "$@"; then
    echo "succeeded, expected to fail: $*" >&2
    return 1
  fi
}

need_cmd() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 || skip "needs $c (not installed)"
  done
}

# One master busybox rootfs per bats run, copied per bundle.
busybox_master() {
  local m=$BATS_RUN_TMPDIR/busybox-rootfs
  if [ ! -x "$m/bin/busybox" ]; then
    local bb
    bb=$(command -v busybox) || return 1
    mkdir -p "$m.tmp"/{bin,sbin,etc,proc,sys,dev,tmp,root,home,var,run,usr/bin,usr/sbin}
    cp "$bb" "$m.tmp/bin/busybox"
    local a
    for a in $("$bb" --list); do
      [ -e "$m.tmp/bin/$a" ] || ln -s busybox "$m.tmp/bin/$a"
    done
    echo 'root:x:0:0:root:/root:/bin/sh' >"$m.tmp/etc/passwd"
    echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>"$m.tmp/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$m.tmp/etc/group"
    chmod 1777 "$m.tmp/tmp"
    mv "$m.tmp" "$m" 2>/dev/null || rm -rf "$m.tmp"
  fi
  echo "$m"
}

make_busybox_rootfs() {
  local dir=$1 m
  m=$(busybox_master) || return 1
  mkdir -p "$dir"
  cp -a "$m/." "$dir/"
}

# make_bundle DIR [ARGS...]: a bundle with a busybox rootfs and agentrun's
# default config, running ARGS (default: true) without a terminal.
make_bundle() {
  local dir=$1; shift
  [ $# -gt 0 ] || set -- true
  mkdir -p "$dir"
  make_busybox_rootfs "$dir/rootfs"
  "$AGENTRUN" spec --bundle "$dir" >/dev/null
  local args
  args=$(printf '%s\n' "$@" | jq -R . | jq -s .)
  jq --argjson a "$args" '.process.args = $a | .process.terminal = false' \
    "$dir/config.json" >"$dir/config.json.new" && mv "$dir/config.json.new" "$dir/config.json"
}

# Edit a bundle's config.json with a jq filter.
config_edit() {
  local dir=$1 filter=$2; shift 2
  jq "$@" "$filter" "$dir/config.json" >"$dir/config.json.new" && mv "$dir/config.json.new" "$dir/config.json"
}

# Pids started by a test, killed (by pid, never by name) in teardown.
TEST_PIDS=()
track_pid() { TEST_PIDS+=("$1"); }
kill_tracked() {
  local p
  for p in "${TEST_PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  TEST_PIDS=()
}

# Delete every container left in this test's state root.
cleanup_containers() {
  [ -d "$ROOT" ] || return 0
  local id
  for id in $(ls "$ROOT" 2>/dev/null); do
    ar delete -f "$id" >/dev/null 2>&1 || true
  done
}

# bats makes its temp folders 0700; a runtime that reaches bind sources as
# another uid (the agent's, or an unprivileged user's) must be able to walk,
# not list, the chain of folders down to DIR.
let_others_walk_to() {
  local d=$1
  while [ "$d" != / ] && [ "$d" != /tmp ]; do chmod go+x "$d"; d=$(dirname "$d"); done
}

# The binaries copied to a folder every uid can walk to, for tests that run
# them as an unprivileged user: the build may sit under a 0700 folder (root's
# home, mktemp -d), with the agent presets beside them as in the build tree.
# Prints the folder.
public_bin() {
  local d=$BATS_RUN_TMPDIR/public-bin
  if [ ! -x "$d/agentrun" ]; then
    install -d -m 0755 "$d" "$d/contrib/presets" && install -m 0644 "$SRCDIR"/contrib/presets/*.json "$d/contrib/presets/" \
      && install -m 0755 "$AGENTRUN" "$RELAY" "$NETPROXY" "$d/" || return 1
  fi
  let_others_walk_to "$d"
  echo "$d"
}

# Counters for leak checks.
count_mounts() { wc -l </proc/self/mountinfo; }

# A TCP port free on host loopback right now.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_for CMD...: until CMD succeeds, up to 10 s (a loaded CI machine under
# ASan is slow to start servers).
wait_for() {
  local i
  for i in $(seq 100); do "$@" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

# ---- as whom agentrun runs: root, a plain user, root through sudo ----
# AS=root: root without sudo (the agent runs as nobody), with a state root of
# the test's. AS=user: the plain user agentrun-test as a login without
# pam_systemd leaves it (no XDG_RUNTIME_DIR, no --root; HOME and PATH set
# after su, which resets them), by USER_VIA: su (`su USER -c`, a session of
# its own, as cron or a script has it; the default), runuser (in the
# caller's session, at its terminal, as a person's login shell has it) or
# shell (the command typed at the interactive shell `su USER` gives, see
# user_shell). AS=sudo: root as sudo leaves it for agentrun-test (SUDO_UID,
# SUDO_GID, SUDO_USER; no XDG_RUNTIME_DIR, no --root); the sandbox runs as
# that user. WHO_UID: the uid the command runs as. AS_PATH: the PATH given.
USER_NAME=agentrun-test
AS=root WHO_UID=65534

need_user() {
  id "$USER_NAME" >/dev/null 2>&1 || skip "user $USER_NAME missing (.ci/run creates it)"
  [ "$(cat /proc/sys/user/max_user_namespaces)" != 0 ] || skip "user namespaces disabled"
}

# as_plain_user [DIR...]: the rest of the test runs agentrun as agentrun-test;
# WS, FHOME and each DIR become that user's.
as_plain_user() {
  need_user
  chown -R "$USER_NAME:" "$WS" "$FHOME" "$@"
  AS=user WHO_UID=$(id -u "$USER_NAME")
}

# as_sudo_user [DIR...]: the same through sudo for agentrun-test, whose
# XDG_CONFIG_HOME and XDG_DATA_HOME (agentrun_as) are its own folders, as a
# person's are: through sudo agentrun makes nothing there as root.
as_sudo_user() {
  as_plain_user "$@"
  install -d -m 0700 -o "$USER_NAME" -g "$(id -g "$USER_NAME")" "$T/config" "$T/data"
  AS=sudo
}

# agentrun_as [VAR=VALUE...]: AR, the command that starts agentrun as $AS,
# with HOME the test's and the VARs in its environment.
agentrun_as() {
  local envs=(HOME="$FHOME" PATH="${AS_PATH:-/usr/bin:/bin}" "$@") uid
  case $AS:${USER_VIA:-su} in
    user:shell) AR=(env -u XDG_RUNTIME_DIR "${envs[@]}" "$(public_bin)/agentrun") ;;
    user:runuser)
      AR=(env -u XDG_RUNTIME_DIR runuser -u "$USER_NAME" -- env "${envs[@]}" "$(public_bin)/agentrun") ;;
    user:*)
      AR=(env -u XDG_RUNTIME_DIR su -s /bin/sh -c 'exec "$@"' -- "$USER_NAME" sh env "${envs[@]}" "$(public_bin)/agentrun") ;;
    sudo:*)
      uid=$(id -u "$USER_NAME")
      AR=(env -u XDG_RUNTIME_DIR SUDO_UID="$uid" SUDO_GID="$(id -g "$USER_NAME")" SUDO_USER="$USER_NAME"
          XDG_CONFIG_HOME="$T/config" XDG_DATA_HOME="$T/data" "${envs[@]}" "$AGENTRUN") ;;
    *) AR=(env -u SUDO_UID -u SUDO_GID -u SUDO_USER "${envs[@]}" "$AGENTRUN" --root "$ROOT") ;;
  esac
}

# sb_as OPTIONS -- CMD...: `sandbox OPTIONS -- CMD...` as $AS, from the
# workspace.
sb_as() {
  agentrun_as
  (cd "$WS" && exec "${AR[@]}" sandbox --workspace "$WS" "$@")
}

# ar_line [OPTIONS]: agentrun_as's command and `sandbox --workspace WS
# OPTIONS`, quoted for a shell to read (script -c, a line typed in tmux).
ar_line() {
  agentrun_as
  local q
  printf -v q '%q ' "${AR[@]}" sandbox --workspace "$WS" "$@"
  echo "${q% }"
}

# user_shell: the interactive shell a person at a terminal has as $AS (for
# job control: su -c would run the command in a session of its own, where no
# Ctrl-Z reaches anything), with a prompt of PS1 and no history file.
user_shell() {
  local sh="bash --norc --noprofile -i"
  [ "$AS" != user ] || sh="env -u XDG_RUNTIME_DIR su -s /bin/bash -- $USER_NAME --norc --noprofile -i"
  echo "env HISTFILE= $sh"
}

# ---- the sandbox suites (sandbox*.bats, check, landlock, profiles, unixconn) ----
# Run as root, the agent runs as nobody; its folders are made here and given
# to that uid, under $BATS_TEST_TMPDIR, with a fake home.
AGENT_UID=65534

# sandbox_setup WHY [DIR...]: skips (saying WHY root is needed) unless root;
# T, and WS and FHOME (and each DIR) made and owned by the agent.
sandbox_setup() {
  T=$BATS_TEST_TMPDIR
  [ "$(id -u)" = 0 ] || skip "needs root ($1)"
  shift
  let_others_walk_to "$T"
  WS=$T/ws FHOME=$T/home
  mkdir -p "$WS" "$FHOME" "$@"
  chown "$AGENT_UID:$AGENT_UID" "$WS" "$FHOME" "$@"
}

# What each sandbox test leaves: its processes, containers, and a sandbox
# folder its agentrun had no chance to remove (SIGKILL).
sandbox_teardown() {
  kill_tracked
  cleanup_containers
  [ -z "${LEFT_TMPDIR:-}" ] || rm -rf "$LEFT_TMPDIR"
}

# The sandbox as a person would start it, with the fake home so that
# nothing of the real one is involved.
sb() { env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" "$@"; }

# start_cmd NAME [OPTIONS] -- CMD...: `sandbox OPTIONS -- CMD...` started as
# $AS (agentrun_as) in the background (stderr in $T/err), waiting until CMD
# runs. SB: the pid started (through su, su's); AR_PID: agentrun's own;
# INIT: its pid 1 and CMD the command, as the host sees them; ID: the
# container and STATE its state folder (wherever $AS keeps it).
# NAME: CMD's process name.
start_cmd() {
  NAME=$1; shift
  agentrun_as
  (cd "$WS" && exec "${AR[@]}" sandbox --workspace "$WS" "$@") 2>"$T/err" &
  SB=$!
  track_pid $SB
  wait_for agentrun_started
  track_pid "$AR_PID"
  wait_for cmd_running
  wait_for state_found
}
# AR_PID: $SB when it is agentrun, else its child that is (su forks).
agentrun_started() {
  local p
  for p in $SB $(cat "/proc/$SB/task/$SB/children" 2>/dev/null); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = agentrun ] && AR_PID=$p && return 0
  done
  return 1
}
# INIT: agentrun's descendant named agentrun-init; CMD: its child named $NAME.
cmd_running() {
  local c todo=$AR_PID
  INIT=
  while [ -n "$todo" ] && [ -z "$INIT" ]; do
    set -- $todo
    todo=
    for c in "$@"; do
      if [ "$(cat "/proc/$c/comm" 2>/dev/null)" = agentrun-init ]; then INIT=$c; break; fi
      todo="$todo $(cat /proc/"$c"/task/*/children 2>/dev/null)"
    done
  done
  [ -n "$INIT" ] || return 1
  for c in $(cat "/proc/$INIT/task/$INIT/children"); do
    grep -q "^Name:.*$NAME" "/proc/$c/status" && CMD=$c && return 0
  done
  return 1
}
# STATE and ID: the state folder whose pid is INIT, in the test's state root
# (root), root's default one (sudo) or the run's private folder (a plain
# user without a runtime folder).
state_found() {
  local f
  for f in "$ROOT"/sandbox-*/state.json /run/agentrun/sandbox-*/state.json \
    /dev/shm/agentrun-sandbox-*/state/sandbox-*/state.json /tmp/agentrun-sandbox-*/state/sandbox-*/state.json; do
    [ "$(jq -r .pid "$f" 2>/dev/null)" = "$INIT" ] || continue
    STATE=${f%/state.json} ID=${STATE##*/}
    return 0
  done
  return 1
}
