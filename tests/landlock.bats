#!/usr/bin/env bats
# Landlock as a second wall (run.agentrun.landlock) and --unix-socket.
# The agent runs as nobody (65534); its folders are made here and given to
# that uid, so that only Landlock, never file permissions, is what refuses.

load helpers

setup() {
  DATA=$BATS_TEST_TMPDIR/data
  sandbox_setup "the unprivileged path has its own tests, run as agentrun-test" "$DATA"
  echo DATA-CONTENT >"$DATA/file"
  chown "$AGENT_UID:$AGENT_UID" "$DATA/file"
}

teardown() { sandbox_teardown; }

have_landlock() {
  python3 -c 'import ctypes,sys; l=ctypes.CDLL(None); sys.exit(0 if l.syscall(444, None, 0, 1) >= 1 else 1)' ||
    skip "the kernel offers no Landlock"
}

landlock_abi() { python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))'; }

# spec --agent as a person would run it, with a fake home.
agent_bundle() {
  local b=$1; shift
  env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" spec --agent --bundle "$b" --workspace "$WS" "$@"
}

@test "landlock: spec --agent asks for it, listing what is bound in" {
  have_landlock
  [ -d /srv ] || skip "no /srv on this machine to bind read-only"
  agent_bundle "$T/b" --ro /srv --ro "$DATA" -- true
  ll=$(jq -r '.annotations["run.agentrun.landlock"]' "$T/b/config.json")
  echo "$ll"
  echo "$ll" | jq -e --arg ws "$WS" '.write | index($ws) != null'
  echo "$ll" | jq -e '(.read | index("/srv") != null) and (.write | index("/srv") == null)'
  echo "$ll" | jq -e '.read | index("/usr") != null'
  # a read-only bind beneath a write rule (DATA is below /tmp) needs no rule
  # of its own: the one above covers it; its mount keeps it read-only
  echo "$ll" | jq -e --arg d "$DATA" '(.read | index($d) == null) and (.write | index($d) == null)'
  jq -e --arg d "$DATA" '[.mounts[] | select(.destination == $d and (.options | index("ro")))] | length == 1' \
    "$T/b/config.json"
  if [ "$(landlock_abi)" -ge 6 ]; then
    echo "$ll" | jq -e '.scope == ["abstract-unix-socket"]'
  fi
}

# The test's folders live under /tmp, and a Landlock rule covers everything
# beneath its folder, mounts included: /tmp being writable, $DATA would be
# too. So the data is bound at /srv/data, outside every write rule, as
# `--ro /srv/data` would bind it.
relocate_data() {
  local b=$1 opts=$2
  config_edit "$b" '.mounts += [{destination: "/srv/data", type: "bind", source: $d, options: $o}]
    | .annotations["run.agentrun.landlock"] |= (fromjson | .read += ["/srv/data"] | tojson)' \
    --arg d "$DATA" --argjson o "$opts"
  mkdir -p "$b/rootfs/srv/data"
  chown -R "$AGENT_UID:$AGENT_UID" "$b/rootfs/srv"
}

@test "landlock: a bind made writable by mistake still refuses writes" {
  have_landlock
  agent_bundle "$T/b" -- sh -c "echo x >/srv/data/new && echo WROTE; echo x >>$WS/ok && echo WS-OK"
  # the mistake: a bind meant read-only mounted read-write
  relocate_data "$T/b" '["rbind", "rw", "nosuid", "nodev"]'
  run ar run -b "$T/b" ll-mistake
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"Permission denied"* ]]
  [[ "$output" != *WROTE* ]]
  [[ "$output" == *WS-OK* ]]
  [ ! -e "$DATA/new" ]
  [ -s "$WS/ok" ]
  # the control: without the annotation the same mistake lets the write land
  config_edit "$T/b" 'del(.annotations["run.agentrun.landlock"])'
  run ar run -b "$T/b" ll-mistake2
  echo "$output"
  [[ "$output" == *WROTE* ]]
  [ -e "$DATA/new" ]
}

@test "landlock: a process joining with exec gets the same domain" {
  have_landlock
  agent_bundle "$T/b" -- sleep 30
  relocate_data "$T/b" '["rbind", "rw", "nosuid", "nodev"]'
  ar run -d -b "$T/b" ll-exec </dev/null >/dev/null 2>&1 3>&-
  run ar exec ll-exec sh -c 'echo x >/srv/data/by-exec && echo WROTE'
  echo "$output"
  [[ "$output" == *"Permission denied"* ]]
  [[ "$output" != *WROTE* ]]
  [ ! -e "$DATA/by-exec" ]
  ar delete -f ll-exec
}

@test "landlock: reads outside the read list are refused" {
  have_landlock
  agent_bundle "$T/b" -- cat /srv/data/file
  relocate_data "$T/b" '["rbind", "ro", "nosuid", "nodev"]'
  # bound in behind Landlock's back: the mount is there, the read rule is not
  config_edit "$T/b" '.annotations["run.agentrun.landlock"] |= (fromjson | .read -= ["/srv/data"] | tojson)'
  run ar run -b "$T/b" ll-read
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"Permission denied"* ]]
  [[ "$output" != *DATA-CONTENT* ]]
  config_edit "$T/b" 'del(.annotations["run.agentrun.landlock"])'
  run ar run -b "$T/b" ll-read2
  [ "$status" -eq 0 ]
  [ "$output" = DATA-CONTENT ]
}

@test "landlock: on a plain bundle, the annotation confines writes even to a writable rootfs" {
  have_landlock
  make_bundle "$T/p" sh -c 'echo a >/tmp/a && echo TMP-OK; echo b >/etc/b && echo ETC-WROTE; ls /root >/dev/null && echo ROOT-READ'
  config_edit "$T/p" '.root.readonly = false
    | .annotations["run.agentrun.landlock"] = ({read: ["/bin", "/etc", "/proc"], write: ["/tmp", "/dev"]} | tojson)'
  run ar run -b "$T/p" ll-plain
  echo "$output"
  [[ "$output" == *TMP-OK* ]]
  [[ "$output" != *ETC-WROTE* ]]
  [[ "$output" != *ROOT-READ* ]]
  [ ! -e "$T/p/rootfs/etc/b" ]
}

@test "landlock: the annotation fails closed on a missing path or bad JSON" {
  have_landlock
  make_bundle "$T/p" sh -c 'echo RAN'
  config_edit "$T/p" '.annotations["run.agentrun.landlock"] = ({read: ["/bin", "/no/such/dir"], write: ["/tmp"]} | tojson)'
  run ar run -b "$T/p" ll-missing
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" != *RAN* ]]
  [[ "$output" == *'$.read[1]'*"/no/such/dir"*"No such file or directory"* ]]
  config_edit "$T/p" '.annotations["run.agentrun.landlock"] = "{\"read\": [\"/bin\"], \"write\": ["'
  run ar run -b "$T/p" ll-badjson
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" != *RAN* ]]
  [[ "$output" == *"run.agentrun.landlock"*"not a JSON object"* ]]
  config_edit "$T/p" '.annotations["run.agentrun.landlock"] = ({read: ["/bin"], scope: ["everything"]} | tojson)'
  run ar run -b "$T/p" ll-badscope
  [ "$status" -ne 0 ]
  [[ "$output" == *'$.scope[0]'* ]]
  # a misspelt key would drop a list without a word: refused
  config_edit "$T/p" '.annotations["run.agentrun.landlock"] = ({read: ["/bin"], wirte: ["/tmp"]} | tojson)'
  run ar run -b "$T/p" ll-badkey
  [ "$status" -ne 0 ]
  [[ "$output" != *RAN* ]]
  [[ "$output" == *'$.wirte: unknown key'* ]]
}

@test "landlock: ABI 6 scope keeps abstract sockets made outside out of reach" {
  have_landlock
  [ "$(landlock_abi)" -ge 6 ] || skip "Landlock ABI $(landlock_abi) has no scopes (needs 6)"
  need_cmd socat
  # host network namespace on purpose: the abstract socket is visible, only
  # the scope can refuse it
  local name=agentrun-ll-$$-$RANDOM
  socat ABSTRACT-LISTEN:"$name",fork EXEC:'echo HOST-ANSWER' &
  track_pid $!
  for i in $(seq 50); do grep -q "@$name" /proc/net/unix && break; sleep 0.1; done
  make_bundle "$T/p" sh -c "socat -u ABSTRACT-CONNECT:$name - ; echo rc=\$?"
  config_edit "$T/p" '
      .linux.namespaces |= map(select(.type != "network"))
    | .mounts += [{destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro"]},
                  {destination: "/lib", type: "bind", source: "/lib", options: ["rbind", "ro"]},
                  {destination: "/lib64", type: "bind", source: "/lib64", options: ["rbind", "ro"]}]
    | .process.env += ["PATH=/usr/bin:/bin"]'
  mkdir -p "$T/p/rootfs/lib" "$T/p/rootfs/lib64"
  run ar run -b "$T/p" ll-abs-open
  echo "$output"
  [[ "$output" == *HOST-ANSWER* ]]
  config_edit "$T/p" '.annotations["run.agentrun.landlock"] =
    ({read: ["/bin", "/usr", "/lib", "/lib64", "/etc", "/proc"], write: ["/tmp", "/dev"],
      scope: ["abstract-unix-socket"]} | tojson)'
  run ar run -b "$T/p" ll-abs-scoped
  echo "$output"
  [[ "$output" != *HOST-ANSWER* ]]
  [[ "$output" == *"rc=1"* ]]
}

@test "landlock: the check probe sees the domain, and the writable-by-mistake bind refused" {
  have_landlock
  agent_bundle "$T/b" -- /run/agentrun/agentrun __probe --token "tok$$" --landlock-write /srv/data
  relocate_data "$T/b" '["rbind", "rw", "nosuid", "nodev"]'
  # the probe binary, bound in as `agentrun check` binds it
  config_edit "$T/b" '.mounts += [{destination: "/run/agentrun/agentrun", type: "bind", source: $a,
      options: ["rbind", "ro", "nosuid", "nodev"]}]
    | .annotations["run.agentrun.landlock"] |= (fromjson | .read += ["/run/agentrun/agentrun"] | tojson)' \
    --arg a "$(public_bin)/agentrun"
  mkdir -p "$T/b/rootfs/run/agentrun"
  : >"$T/b/rootfs/run/agentrun/agentrun"
  chown -R "$AGENT_UID:$AGENT_UID" "$T/b/rootfs/run"
  run ar run -b "$T/b" ll-probe
  echo "$output"
  echo "$output" | grep -P '^landlock\t.*\tok$'
  echo "$output" | grep -P '^landlock-write:/srv/data\trefused by Landlock\tPermission denied\tok$'
  [ -z "$(ls -A "$DATA" | grep -v '^file$')" ]
  # without the annotation the same probe reports the crossing
  config_edit "$T/b" 'del(.annotations["run.agentrun.landlock"])'
  run ar run -b "$T/b" ll-probe2
  echo "$output"
  echo "$output" | grep -P '^landlock\t.*\tcrossed$'
  echo "$output" | grep -P '^landlock-write:/srv/data\t.*created a file\tcrossed$'
}

@test "landlock: agentrun check reports the landlock probe" {
  have_landlock
  run env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" check --workspace "$WS"
  echo "$output"
  echo "$output" | grep -E '^ok +landlock +expected: a Landlock domain +got: ABI [0-9]+; listing /: Permission denied'
}

# A host socket server answering one line to each connection.
start_unix_server() {
  local path=$1 answer=$2
  socat UNIX-LISTEN:"$path",fork,mode=0777 SYSTEM:"echo $answer" &
  track_pid $!
  for i in $(seq 50); do [ -S "$path" ] && return 0; sleep 0.1; done
  return 1
}

@test "unix-socket: the chosen socket answers inside, a host socket not bound in is not there" {
  need_cmd socat
  mkdir -p "$T/s1" "$T/s2"
  chmod 755 "$T/s1" "$T/s2"
  start_unix_server "$T/s1/agent.sock" CHOSEN-SOCKET
  start_unix_server "$T/s2/other.sock" OTHER-SOCKET
  run sb --unix-socket "$T/s1/agent.sock" -- sh -c \
    "socat -u UNIX-CONNECT:$T/s1/agent.sock - ; socat -u UNIX-CONNECT:$T/s2/other.sock - ; echo rc=\$?"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *CHOSEN-SOCKET* ]]
  [[ "$output" != *OTHER-SOCKET* ]]
  [[ "$output" == *"No such file or directory"* ]]
  [[ "$output" == *rc=1* ]]
}

@test "unix-socket: refuses a path that is not a socket" {
  run sb --unix-socket "$DATA/file" -- true
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"--unix-socket $DATA/file: not a Unix socket"* ]]
  run sb --unix-socket "$T/missing.sock" -- true
  [ "$status" -ne 0 ]
  [[ "$output" == *"$T/missing.sock"*"No such file or directory"* ]]
}

@test "unix-socket: a socket bound in by mistake is visible but cannot be connected" {
  need_cmd socat
  # Neither a read-only mount nor Landlock (ABI 7 here at most) governs
  # connect(2) on a pathname socket: run.agentrun.unixconn does. Bound
  # at /srv/s, read-only, outside every Landlock rule:
  mkdir -p "$T/s2"
  chmod 755 "$T/s2"
  start_unix_server "$T/s2/other.sock" OTHER-SOCKET
  agent_bundle "$T/b" -- sh -c 'cat /srv/s/other.sock; echo read-rc=$?; socat -u UNIX-CONNECT:/srv/s/other.sock -'
  config_edit "$T/b" '.mounts += [{destination: "/srv/s", type: "bind", source: $d, options: ["rbind", "ro"]}]' \
    --arg d "$T/s2"
  mkdir -p "$T/b/rootfs/srv/s"
  chown -R "$AGENT_UID:$AGENT_UID" "$T/b/rootfs/srv"
  jq -e '.annotations["run.agentrun.unixconn"] == "[]"' "$T/b/config.json"
  run ar run -b "$T/b" ll-sock
  echo "$output"
  if [ "$(landlock_abi)" -ge 1 ]; then
    [[ "$output" == *"Permission denied"* ]]
  fi
  [[ "$output" != *OTHER-SOCKET* ]]
  # the control: without the annotation (and the socket cap its supervisor
  # keeps) the same mistake hands the socket over
  config_edit "$T/b" 'del(.annotations["run.agentrun.unixconn"], .annotations["run.agentrun.max-sockets"])'
  run ar run -b "$T/b" ll-sock2
  echo "$output"
  [[ "$output" == *OTHER-SOCKET* ]]
}

@test "unix-socket: an ssh-agent forwarded with --unix-socket signs inside, its key file stays outside" {
  need_cmd ssh-agent ssh-add ssh-keygen setpriv
  mkdir -p "$T/agent"
  chown "$AGENT_UID:$AGENT_UID" "$T/agent"
  chmod 700 "$T/agent"
  ssh-keygen -q -t ed25519 -N '' -C agentrun-test-key -f "$T/agent/id"
  chown "$AGENT_UID:$AGENT_UID" "$T/agent/id" "$T/agent/id.pub"
  # ssh-agent serves only its own uid: run it as the agent's
  local sock=$T/agent/agent.sock
  setpriv --reuid "$AGENT_UID" --regid "$AGENT_UID" --clear-groups ssh-agent -D -a "$sock" >/dev/null &
  track_pid $!
  for i in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
  SSH_AUTH_SOCK=$sock setpriv --reuid "$AGENT_UID" --regid "$AGENT_UID" --clear-groups ssh-add "$T/agent/id" 2>/dev/null
  run sb --unix-socket "$sock" -e SSH_AUTH_SOCK="$sock" -- sh -c "ssh-add -l; cat $T/agent/id || echo NO-KEY-FILE"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *agentrun-test-key* ]]
  [[ "$output" == *NO-KEY-FILE* ]]
  [[ "$output" != *"PRIVATE KEY"* ]]
}
