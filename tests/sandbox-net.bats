#!/usr/bin/env bats
# agentrun sandbox's network as an agent meets it: wildcard allows routed
# when a name below them is looked up, the CONNECT proxy, denies that win
# over every allow, and each refusal told once on agentrun's own stderr.
# The relay resolves the wildcard's names on the host: each test runs in a
# mount namespace of its own where /etc/hosts (a file of the test's) maps
# them to a local echo server. Run as root, the agent runs as nobody; each
# point is checked as well as the plain user agentrun-test without
# XDG_RUNTIME_DIR and through sudo for that user (agentrun_as in helpers).

load helpers

setup() {
  sandbox_setup "a mount namespace of the test's own for /etc/hosts"
  need_cmd socat unshare
  ECHO_PORT=$(free_port)
  socat TCP-LISTEN:"$ECHO_PORT",bind=127.0.0.1,fork,reuseaddr EXEC:cat &
  track_pid $!
  wait_for bash -c "exec 3<>/dev/tcp/127.0.0.1/$ECHO_PORT"
  printf '127.0.0.1 localhost\n127.0.0.1 foo.example.test bar.example.test bad.example.test\n' >"$T/hosts"
  # the audit log's folder, the invoking user's
  mkdir -p "$T/logs"
}

teardown() {
  kill_tracked
  cleanup_containers
}

# in_hosts CMD...: CMD in a mount namespace where the host's /etc/hosts is
# the test's, from the workspace.
in_hosts() {
  unshare -m sh -c 'mount --bind "$1" /etc/hosts && cd "$2" && shift 2 && exec "$@"' sh "$T/hosts" "$WS" "$@"
}

# sbnet OPTIONS -- CMD: the sandbox, as $AS, where the host's /etc/hosts is
# the test's; its stderr in $T/err, the command's output in $output.
sbnet() {
  agentrun_as
  run in_hosts sh -c 'exec "$@" 2>"$0"' "$T/err" "${AR[@]}" sandbox --workspace "$WS" "$@"
  echo "$output"
  cat "$T/err"
}

wildcard_told_once() {
  sbnet --allow "*.example.test:$ECHO_PORT" --audit "$T/logs/audit.jsonl" -- bash -c '
    getent hosts foo.example.test
    exec 3<>/dev/tcp/foo.example.test/'"$ECHO_PORT"'; echo through-the-wildcard >&3; read -r -t 5 l <&3; echo "$l"
    exec 3>&-; sleep 1  # the connection ends now: its audit line is written before the sandbox goes
    getent hosts bar.example.test
    getent hosts pypi.org || echo pypi-refused
    getent hosts pypi.org || echo pypi-refused
    getent hosts example.test || echo apex-refused'
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" =~ ^127\.77\.1\.[0-9]+\ +foo\.example\.test$ ]]
  [ "${lines[1]}" = through-the-wildcard ]
  [[ "${lines[2]}" =~ ^127\.77\.1\.[0-9]+\ +bar\.example\.test$ ]]
  [ "${lines[3]}" = pypi-refused ]
  [ "${lines[5]}" = apex-refused ]
  # told once per name, outside the sandbox, with the fix; a summary at exit
  [ "$(grep -c 'agentrun: blocked pypi.org (not allowed; add --allow pypi.org)' "$T/err")" = 1 ]
  grep -qx 'agentrun: blocked example.test (not allowed; add --allow example.test)' "$T/err"
  grep -q '^agentrun: 2 blocked in this run: pypi.org, example.test' "$T/err"
  # the audit log keeps every event
  jq -e -s --arg ep "foo.example.test:$ECHO_PORT" 'map(select(.event == "ask" and .endpoint == $ep and .outcome == "allowed")) | length == 1' "$T/logs/audit.jsonl"
  jq -e -s --arg ep "foo.example.test:$ECHO_PORT" 'map(select(.endpoint == $ep and .event == "connection" and .outcome == "ok" and .bytes_up > 0)) | length >= 1' "$T/logs/audit.jsonl"
  [ "$(jq -s 'map(select(.endpoint == "pypi.org" and .outcome == "dns-refused")) | length' "$T/logs/audit.jsonl")" -ge 2 ]
  # written as the invoking user (root without sudo is root)
  [ "$AS" = root ] || [ "$(stat -c %u "$T/logs/audit.jsonl")" = "$WHO_UID" ]
  # --quiet: nothing said, the same refusals
  sbnet -q --allow "*.example.test:$ECHO_PORT" -- sh -c 'getent hosts pypi.org || echo refused'
  [ "$output" = refused ]
  [ ! -s "$T/err" ]
}

@test "--allow '*.DOMAIN:PORT': a name below it gets a route when looked up; the bytes reach it; others are refused and told once" {
  wildcard_told_once
}

@test "--allow '*.DOMAIN:PORT', refusals told once, a summary, --quiet, the audit log: as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user "$T/logs"
  wildcard_told_once
}

@test "--allow '*.DOMAIN:PORT', refusals told once, a summary, --quiet, the audit log: through sudo for a plain user" {
  as_sudo_user "$T/logs"
  wildcard_told_once
}

# As a plain user, in the caller's session (runuser): a person's terminal.
summary_on_pty() {
  need_cmd script
  local cmd="getent hosts pypi.org || echo pypi-refused; echo still-running" USER_VIA=runuser
  run in_hosts script -qec "$(ar_line --allow "*.example.test:$ECHO_PORT") -- sh -c '$cmd'" /dev/null
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *pypi-refused*still-running* ]]
  [[ "$output" != *"agentrun: blocked"* ]]
  # said once the command is done, with what would allow it
  [[ "$output" == *still-running*"agentrun: 1 blocked in this run: pypi.org (add --allow NAME for each one to allow)"* ]]
}

@test "on the command's pty, a refusal waits for the summary at exit: no line is drawn over a TUI's screen" {
  summary_on_pty
}

@test "on the command's pty, a refusal waits for the summary at exit, as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  summary_on_pty
}

@test "on the command's pty, a refusal waits for the summary at exit, through sudo for a plain user" {
  as_sudo_user
  summary_on_pty
}

deny_wins() {
  need_cmd curl
  printf '{"sandbox": {"network": {"allowedDomains": ["*.example.test:%s"], "deniedDomains": ["bad.example.test"]}}}\n' \
    "$ECHO_PORT" >"$T/settings.json"
  sbnet --settings "$T/settings.json" --connect-proxy -- bash -c '
    getent hosts foo.example.test >/dev/null && echo foo-routed
    getent hosts bad.example.test || echo bad-refused
    curl -s -o /dev/null -w "%{http_code}\n" --proxy "$HTTPS_PROXY" -p "http://bad.example.test:'"$ECHO_PORT"'/"
    echo "proxy=$HTTPS_PROXY no=$NO_PROXY"'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = foo-routed ]
  [ "${lines[1]}" = bad-refused ]
  [ "${lines[2]}" = 000 ] || [ "${lines[2]}" = 403 ]
  [ "${lines[3]}" = "proxy=http://127.77.0.1:3128 no=localhost,127.0.0.1,::1" ]
  grep -qx 'agentrun: blocked bad.example.test (denied by "bad.example.test")' "$T/err"
  grep -qx "agentrun: blocked bad.example.test:$ECHO_PORT (denied by \"bad.example.test\")" "$T/err"
}

@test "settings: allowedDomains wildcards map onto it and a denied name below one stays refused, by lookup and by CONNECT" {
  deny_wins
}

@test "settings: a wildcard allowed, a deny below it wins, the proxy variables: as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  deny_wins
}

@test "settings: a wildcard allowed, a deny below it wins, the proxy variables: through sudo for a plain user" {
  as_sudo_user
  deny_wins
}

profile_wildcard() {
  printf '{"allow": ["*.example.test:%s"]}\n' "$ECHO_PORT" >"$T/p.json"
  sbnet --profile "$T/p.json" -- bash -c '
    exec 3<>/dev/tcp/bar.example.test/'"$ECHO_PORT"'; echo from-profile >&3; read -r -t 5 l <&3; echo "$l $(id -u)"'
  [ "$status" -eq 0 ]
  [ "$output" = "from-profile $WHO_UID" ]
}

@test "a profile's allow list takes a wildcard too" {
  profile_wildcard
}

@test "a profile's allow list takes a wildcard, as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  profile_wildcard
}

@test "a profile's allow list takes a wildcard, through sudo for a plain user" {
  as_sudo_user
  profile_wildcard
}

connect_proxy() {
  sbnet --allow "*.example.test:$ECHO_PORT" --connect-proxy -- bash -c '
    exec 3<>/dev/tcp/127.77.0.1/3128
    printf "CONNECT foo.example.test:'"$ECHO_PORT"' HTTP/1.1\r\nHost: foo.example.test\r\n\r\n" >&3
    read -r -t 5 l <&3; echo "${l%$'"'"'\r'"'"'}"; read -r -t 5 l <&3
    echo via-connect >&3; read -r -t 5 l <&3; echo "$l"
    exec 4<>/dev/tcp/127.77.0.1/3128
    printf "CONNECT other.test:443 HTTP/1.1\r\n\r\n" >&4
    read -r -t 5 l <&4; echo "${l%$'"'"'\r'"'"'}"'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "HTTP/1.1 200 Connection established" ]
  [ "${lines[1]}" = via-connect ]
  [ "${lines[2]}" = "HTTP/1.1 403 Forbidden" ]
  grep -qx 'agentrun: blocked other.test:443 (not allowed; add --allow other.test)' "$T/err"
}

@test "--connect-proxy: a client that prefers a proxy reaches a wildcard's name through CONNECT; a name not allowed gets 403 and is told" {
  connect_proxy
}

@test "--connect-proxy: a wildcard's name through CONNECT, 403 and told for others, as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  connect_proxy
}

@test "--connect-proxy: a wildcard's name through CONNECT, 403 and told for others, through sudo for a plain user" {
  as_sudo_user
  connect_proxy
}

@test "--allow: a wildcard takes no upstream, and a bad one names itself" {
  run env HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" --allow '*.example.test=1.2.3.4:443' -- true
  [ "$status" -ne 0 ]
  [[ "$output" == *"a wildcard goes to the name looked up"* ]]
  run env HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" --allow '*.*.test' -- true
  [ "$status" -ne 0 ]
  [[ "$output" == *"is not a host name"* ]]
}

# least_privilege: while a sandbox with an --allow route, a wildcard and
# --connect-proxy runs, its netproxy server (in the container's netns) and
# its relay (agentrun's child) hold no capability, not even in the bounding
# set, with no_new_privs, a seccomp filter and the invoking user's uid
# (nobody's for root without sudo); the route, the DNS stub, a wildcard's
# route made at lookup time (the netproxy's --ask socket) and CONNECT work.
helper_confined() {
  local f=/proc/$1/status
  grep -E '^(Uid|Gid|Groups|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' "$f"
  for c in CapPrm CapEff CapBnd CapAmb; do grep -qx "$c:"$'\t'0000000000000000 "$f"; done
  grep -qx $'NoNewPrivs:\t1' "$f"
  grep -qx $'Seccomp:\t2' "$f"
  grep -qx "Uid:"$'\t'"$WHO_UID"$'\t'"$WHO_UID"$'\t'"$WHO_UID"$'\t'"$WHO_UID" "$f"
  [ "$AS" = user ] || grep -Eqx 'Groups:\s*' "$f"
}

least_privilege() {
  printf '127.0.0.1 echo.test\n' >>"$T/hosts"
  agentrun_as
  NAME=sleep
  # as in_hosts, with agentrun at the end of the exec chain (so SB is it or su)
  (exec unshare -m sh -c 'mount --bind "$1" /etc/hosts && cd "$2" && o=$3 && shift 3 && exec "$@" >"$o"' sh \
    "$T/hosts" "$WS" "$T/out" "${AR[@]}" sandbox --workspace "$WS" \
    --allow "echo.test:$ECHO_PORT" --allow "*.example.test:$ECHO_PORT" --connect-proxy -- bash -c '
    getent hosts echo.test
    exec 3<>/dev/tcp/echo.test/'"$ECHO_PORT"'; echo via-route >&3; read -r -t 5 l <&3; echo "$l"; exec 3>&-
    getent hosts foo.example.test
    exec 3<>/dev/tcp/foo.example.test/'"$ECHO_PORT"'; echo via-wildcard >&3; read -r -t 5 l <&3; echo "$l"; exec 3>&-
    exec 4<>/dev/tcp/127.77.0.1/3128
    printf "CONNECT bar.example.test:'"$ECHO_PORT"' HTTP/1.1\r\n\r\n" >&4
    read -r -t 5 l <&4; echo "${l%$'"'"'\r'"'"'}"; read -r -t 5 l <&4
    echo via-connect >&4; read -r -t 5 l <&4; echo "$l"; exec 4>&-
    echo checked
    exec sleep 60') 2>"$T/err" &
  SB=$!
  track_pid $SB
  wait_for agentrun_started
  track_pid "$AR_PID"
  wait_for grep -qx checked "$T/out"
  wait_for cmd_running
  cat "$T/out" "$T/err"
  mapfile -t lines <"$T/out"
  [[ "${lines[0]}" =~ ^127\.77\.0\.[0-9]+\ +echo\.test$ ]]
  [ "${lines[1]}" = via-route ]
  [[ "${lines[2]}" =~ ^127\.77\.1\.[0-9]+\ +foo\.example\.test$ ]]
  [ "${lines[3]}" = via-wildcard ]
  [ "${lines[4]}" = "HTTP/1.1 200 Connection established" ]
  [ "${lines[5]}" = via-connect ]
  # the helpers, found by where they are: the server in the container's
  # network namespace, the relay among agentrun's children
  local ns p np= relay=
  ns=$(stat -L -c %i "/proc/$INIT/ns/net")
  for p in /proc/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = agentrun-netpx ] && [ "$(stat -L -c %i "$p/ns/net" 2>/dev/null)" = "$ns" ] \
      && np=${p#/proc/}
  done
  for p in $(cat /proc/"$AR_PID"/task/*/children); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = agentrun-relay ] && relay=$p
  done
  [ -n "$np" ] && [ -n "$relay" ]
  echo "netproxy server $np:"
  helper_confined "$np"
  echo "relay $relay:"
  helper_confined "$relay"
  kill -TERM "$AR_PID"
  wait "$SB" || true
}

@test "least privilege: the netproxy server and the relay run with no capability, no_new_privs, seccomp, as nobody; the network works" {
  least_privilege
}

@test "least privilege: the netproxy server and the relay confined, the network working, as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  least_privilege
}

@test "least privilege: the netproxy server and the relay confined, as the sudo caller, the network working, through sudo for a plain user" {
  as_sudo_user
  least_privilege
}
