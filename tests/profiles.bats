#!/usr/bin/env bats
# agentrun profiles (--profile FILE) and Claude Code / sandbox-runtime
# settings (--settings FILE): options seen from inside the sandbox, strict
# errors with the JSON path, and the lines for what could not be mapped.
# Run as root, the agent runs as nobody (65534). Everything lives under
# $BATS_TEST_TMPDIR.

load helpers

setup() {
  sandbox_setup "the agent runs as nobody"
  mkdir -p "$WS/secret" "$WS/keep" "$T/build/locked"
  echo s3cret >"$WS/secret/key"
  echo original >"$WS/keep/file"
  echo original >"$T/build/locked/file"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS" "$T/build"
}

teardown() { sandbox_teardown; }

# Started from the workspace, as a person would, with a fake home.
sbx() { (cd "$WS" && env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox "$@"); }

# ---- agentrun profiles ----

@test "profile: options apply, relative paths are taken from the profile's folder" {
  mkdir -p "$T/team"
  cat >"$T/team/agent.json" <<EOF
{ "workspace": "../ws", "rw": ["../build"], "mask": ["../ws/secret"],
  "env": ["FROM_PROFILE=yes"], "pids": 64, "no_network": true }
EOF
  # run from elsewhere: the profile means the same from any folder
  run bash -c "cd / && env -u SUDO_UID HOME='$FHOME' '$AGENTRUN' --root '$ROOT' sandbox --profile '$T/team/agent.json' -- \
    sh -c 'pwd; echo env=\$FROM_PROFILE; cat secret/key || echo hidden; echo new >$T/build/made && echo wrote'"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$WS" ]
  echo "$output" | grep -qx 'env=yes'
  echo "$output" | grep -qx 'hidden'
  refute grep -q s3cret <<<"$output"
  echo "$output" | grep -qx 'wrote'
  [ "$(cat "$T/build/made")" = new ]
}

@test "profile: the command line replaces single values and adds to lists" {
  mkdir -p "$T/other"
  chown "$AGENT_UID:$AGENT_UID" "$T/other"
  cat >"$T/p.json" <<EOF
{ "workspace": "$T/other", "mask": ["$WS/secret"], "env": ["A=profile"] }
EOF
  run sbx --profile "$T/p.json" --workspace "$WS" --mask "$WS/keep" --env B=cli -- \
    sh -c 'pwd; echo "A=$A B=$B"; cat secret/key || echo secret-hidden; cat keep/file || echo keep-hidden'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$WS" ]
  echo "$output" | grep -qx 'A=profile B=cli'
  echo "$output" | grep -qx 'secret-hidden'
  echo "$output" | grep -qx 'keep-hidden'
}

@test "profile: unknown keys, wrong types and bad values are errors naming the file and the JSON path" {
  echo '{ "workspace": ".", "mask": ["/etc/x"], "no_netwrok": true }' >"$T/typo.json"
  run sbx --profile "$T/typo.json" -- touch "$WS/ran"
  [ "$status" -ne 0 ]
  echo "$output" | grep -q "profile $T/typo.json: no_netwrok: unknown key"
  [ ! -e "$WS/ran" ]

  echo '{ "ro": ["/usr", 3] }' >"$T/type.json"
  run sbx --profile "$T/type.json" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q "profile $T/type.json: ro\[1\]: needs a string"

  echo '{ "pids": "many" }' >"$T/value.json"
  run sbx --profile "$T/value.json" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q "profile $T/value.json: pids: --pids"

  echo '{ "mask": ["/a"], "mask": ["/b"] }' >"$T/twice.json"
  run sbx --profile "$T/twice.json" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q "twice.json: mask: given twice"

  echo '[1]' >"$T/array.json"
  run sbx --profile "$T/array.json" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q "array.json"

  run sbx --profile "$T/missing.json" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q "missing.json.*No such file"
}

# ---- Claude Code / sandbox-runtime settings ----

@test "settings: denyRead hidden, allowWrite writable, denyWrite inside it read-only" {
  cat >"$T/settings.json" <<EOF
{ "model": "opus",
  "sandbox": { "enabled": true, "failIfUnavailable": true,
    "filesystem": { "allowWrite": ["//$T/build"], "denyRead": ["./secret"],
                    "denyWrite": ["$T/build/locked", "$WS/keep"] } } }
EOF
  run sbx --settings "$T/settings.json" -- sh -c '
    cat secret/key || echo read-refused
    echo new >'"$T"'/build/fresh && echo build-writable
    echo bad >'"$T"'/build/locked/file || echo locked-refused
    echo bad >keep/file || echo keep-refused
    echo ok >workfile && echo ws-writable'
  [ "$status" -eq 0 ]
  refute grep -q s3cret <<<"$output"
  echo "$output" | grep -qx read-refused
  echo "$output" | grep -qx build-writable
  echo "$output" | grep -qx locked-refused
  echo "$output" | grep -qx keep-refused
  echo "$output" | grep -qx ws-writable
  [ "$(cat "$T/build/fresh")" = new ]
  [ "$(cat "$T/build/locked/file")" = original ]
  [ "$(cat "$WS/keep/file")" = original ]
  # everything here was mapped: no line, and failIfUnavailable is what agentrun does anyway
  ! echo "$output" | grep -q "not mapped"
}

@test "settings: sandbox-runtime's layout maps the same way" {
  cat >"$T/srt.json" <<EOF
{ "filesystem": { "denyRead": ["$WS/secret"], "allowWrite": ["$T/build"], "denyWrite": ["$T/build/locked"] },
  "network": { "allowedDomains": [], "deniedDomains": [] } }
EOF
  run sbx --settings "$T/srt.json" -- sh -c '
    cat secret/key || echo read-refused
    echo bad >'"$T"'/build/locked/file || echo locked-refused
    echo ok >'"$T"'/build/x && echo build-writable'
  [ "$status" -eq 0 ]
  refute grep -q s3cret <<<"$output"
  echo "$output" | grep -qx read-refused
  echo "$output" | grep -qx locked-refused
  echo "$output" | grep -qx build-writable
  [ "$(cat "$T/build/locked/file")" = original ]
}

@test "settings: one line per setting that could not be mapped, and the run goes on stricter" {
  cat >"$T/settings.json" <<EOF
{ "sandbox": { "enabled": true, "autoAllowBashIfSandboxed": true,
    "filesystem": { "allowWrite": ["/tmp/*.log"], "allowRead": ["."] },
    "network": { "allowedDomains": ["*.example.com"], "allowUnixSockets": ["/run/x.sock"],
                 "allowLocalBinding": true, "allowAllUnixSockets": false } } }
EOF
  run sbx --settings "$T/settings.json" -- echo ran
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx ran
  echo "$output" | grep -q 'sandbox.filesystem.allowWrite\[0\] "/tmp/\*.log": not mapped'
  echo "$output" | grep -q 'sandbox.filesystem.allowRead: not mapped'
  # a wildcard domain maps onto a wildcard allow (tests/sandbox-net.bats)
  refute grep -q 'allowedDomains\[0\]' <<<"$output"
  echo "$output" | grep -q 'sandbox.network.allowUnixSockets\[0\] "/run/x.sock": not mapped'
  echo "$output" | grep -q 'sandbox.network.allowLocalBinding: not mapped'
  echo "$output" | grep -q 'sandbox.autoAllowBashIfSandboxed: not mapped'
  # a false switch asks for nothing
  refute grep -q allowAllUnixSockets <<<"$output"
  [ "$(echo "$output" | grep -c 'not mapped')" -eq 5 ]
}

@test "settings: a deny that cannot be enforced is an error, one that is moot is not" {
  echo '{ "sandbox": { "filesystem": { "denyRead": ["~/.ssh/*"] } } }' >"$T/glob.json"
  run sbx --settings "$T/glob.json" -- touch "$WS/ran"
  [ "$status" -ne 0 ]
  echo "$output" | grep -q 'sandbox.filesystem.denyRead\[0\]: "~/.ssh/\*": a pattern'
  [ ! -e "$WS/ran" ]

  # the agent could create it in the workspace: cannot be made read-only
  echo '{ "sandbox": { "filesystem": { "denyWrite": ["./later"] } } }' >"$T/absent.json"
  run sbx --settings "$T/absent.json" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q 'denyWrite\[0\].*does not exist'

  # the workspace is written by design: denying it (or a folder holding it) cannot hold
  echo "{ \"sandbox\": { \"filesystem\": { \"denyWrite\": [\"$T\"] } } }" >"$T/wide.json"
  run sbx --settings "$T/wide.json" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q "the sandbox writes $WS (the workspace)"

  # a writable folder inside a denyWrite would escape it
  echo "{ \"sandbox\": { \"filesystem\": { \"allowWrite\": [\"$T/build/locked\"], \"denyWrite\": [\"$T/build\"] } } }" >"$T/inner.json"
  run sbx --settings "$T/inner.json" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q "the writable $T/build/locked lies inside it"

  # allowed and denied: the deny wins, the folder is bound read-only
  echo "{ \"sandbox\": { \"filesystem\": { \"allowWrite\": [\"$T/build\"], \"denyWrite\": [\"$T/build\"] } } }" >"$T/both.json"
  run sbx --settings "$T/both.json" -- sh -c "echo bad >$T/build/locked/file || echo refused"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx refused
  [ "$(cat "$T/build/locked/file")" = original ]

  echo '{ "sandbox": { "network": { "deniedHosts": ["x"] } } }' >"$T/unknown.json"
  run sbx --settings "$T/unknown.json" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q 'sandbox.network.deniedHosts: unknown deny setting'

  # moot: the sandbox cannot write /usr nor read a missing file anyway
  echo '{ "sandbox": { "filesystem": { "denyWrite": ["/usr"], "denyRead": ["/no/such/file"] } } }' >"$T/moot.json"
  run sbx --settings "$T/moot.json" -- echo ran
  [ "$status" -eq 0 ]
  [ "$output" = ran ]

  echo '{ "theme": "dark" }' >"$T/none.json"
  run sbx --settings "$T/none.json" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q 'none.json.*neither a "sandbox" section'
}

# The host's own name resolves to loopback here; the relay connects to
# NAME:443, so a listener on 127.0.0.1:443 stands in for the remote host.
@test "settings: allowedDomains are reached through the relay, deniedDomains win over --allow" {
  need_cmd socat
  need_cmd python3
  local name
  name=$(hostname)
  getent hosts "$name" | grep -q '^127\.' || skip "the host name $name does not resolve to loopback"
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",443))' 2>/dev/null \
    || skip "127.0.0.1:443 is taken"
  socat TCP-LISTEN:443,bind=127.0.0.1,fork,reuseaddr EXEC:cat &
  track_pid $!
  local i
  for i in $(seq 50); do bash -c 'exec 3<>/dev/tcp/127.0.0.1/443' 2>/dev/null && break; sleep 0.1; done
  cat >"$T/net.json" <<EOF
{ "sandbox": { "network": { "allowedDomains": ["$name"], "deniedDomains": ["*.denied.test"] } } }
EOF
  run sbx --settings "$T/net.json" --allow "api.denied.test:443=127.0.0.1:443" -- python3 -c '
import socket
s = socket.create_connection(("'"$name"'", 443), timeout=5)
s.sendall(b"via-relay\n")
print("echo:" + s.recv(100).decode().strip())
try:
    socket.getaddrinfo("api.denied.test", 443)
    print("resolved denied")
except OSError:
    print("unresolved denied")
'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx 'echo:via-relay'
  echo "$output" | grep -qx 'unresolved denied'
  echo "$output" | grep -q 'deniedDomains\[0\] "\*.denied.test": api.denied.test removed'
}

@test "settings and profiles: chosen Unix sockets are bound in" {
  need_cmd socat
  need_cmd python3
  local sock=$T/agent.sock
  socat UNIX-LISTEN:"$sock",fork,mode=777 EXEC:cat &
  track_pid $!
  local i
  for i in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
  local probe='
import socket
s = socket.socket(socket.AF_UNIX)
s.connect("'"$sock"'")
s.sendall(b"via-socket\n")
print("echo:" + s.recv(100).decode().strip())'
  echo "{ \"sandbox\": { \"network\": { \"allowUnixSockets\": [\"$sock\"] } } }" >"$T/sock.json"
  run sbx --settings "$T/sock.json" -- python3 -c "$probe"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx 'echo:via-socket'
  refute grep -q 'not mapped' <<<"$output"

  echo '{ "unix_sockets": ["agent.sock"] }' >"$T/sock-profile.json"
  run sbx --profile "$T/sock-profile.json" -- python3 -c "$probe"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx 'echo:via-socket'
}

@test "settings: spec --agent writes the same confinement, moot denies are said at --debug" {
  cat >"$T/settings.json" <<EOF
{ "sandbox": { "filesystem": { "denyRead": ["$WS/secret"], "denyWrite": ["$WS/keep", "/usr"] } } }
EOF
  run bash -c "cd '$WS' && env -u SUDO_UID HOME='$FHOME' '$AGENTRUN' --debug --root '$ROOT' spec --agent \
    --settings '$T/settings.json' --bundle '$T/bundle' 2>&1"
  [ "$status" -eq 0 ]
  echo "$output" | grep -q 'denyWrite\[1\] "/usr": moot'
  jq -e --arg p "$WS/secret" '.linux.maskedPaths | index($p)' "$T/bundle/config.json"
  jq -e --arg p "$WS/keep" '.mounts[] | select(.destination == $p) | .options | index("ro")' "$T/bundle/config.json"
}
