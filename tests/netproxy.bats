#!/usr/bin/env bats
# agentrun-netproxy end to end: an upstream on host loopback, the relay in a
# temp dir, a "container" made with `unshare --net sleep` (its pid is the
# container's init), the hook fed a state JSON, clients run inside with nsenter.

load helpers

PYCLIENT='
import socket, sys
kind, where, data = sys.argv[1], sys.argv[2], sys.argv[3].encode()
host, port = where.rsplit(":", 1)
out = b""
try:
    s = socket.create_connection((host, int(port)), timeout=5)
    s.sendall(data); s.shutdown(socket.SHUT_WR)
    while True:
        b = s.recv(65536)
        if not b: break
        out += b
except ConnectionRefusedError:
    out = b"<refused>"
except (ConnectionResetError, BrokenPipeError):
    out += b"<reset>"
except OSError as e:
    out = ("<%s>" % e.strerror).encode()
sys.stdout.write(out.decode(errors="replace"))
'
inside() { nsenter --net=/proc/$CPID/ns/net "$@"; }
tcp() { inside python3 -c "$PYCLIENT" tcp "$@"; }

start_echo() {
  ECHO_PORT=$(free_port)
  socat TCP-LISTEN:"$ECHO_PORT",bind=127.0.0.1,fork,reuseaddr EXEC:cat &
  track_pid $!
  wait_for bash -c "exec 3<>/dev/tcp/127.0.0.1/$ECHO_PORT"
}

start_relay() {
  : >"$T/relay.err"
  "$RELAY" --dir "$T/s" --audit "$T/relay.log" "$@" 2>"$T/relay.err" &
  RELAY_PID=$!
  track_pid $RELAY_PID
  wait_for grep -q listening "$T/relay.err"
}

start_container() {
  unshare --net sleep 1000 &
  CPID=$!
  track_pid $CPID
  wait_for bash -c "[ \"\$(readlink /proc/$CPID/ns/net)\" != \"\$(readlink /proc/self/ns/net)\" ]"
}

state() { echo "{\"ociVersion\":\"1.2.0\",\"id\":\"t1\",\"status\":\"creating\",\"pid\":$CPID,\"bundle\":\"/x\"}"; }

# The hook with the api.test route (and any extra arguments).
hook() {
  state | "$NETPROXY" --audit "$T/np.log" \
    --route "api.test:443=127.77.0.2=$T/s/api.test:443.sock" "$@"
}

# The server left behind holds the netns: find it through that.
server_pids() {
  local ns p
  ns=$(stat -L -c %i /proc/$CPID/ns/net 2>/dev/null || echo "$NETNS_INO")
  for p in /proc/[0-9]*; do
    [ "$(stat -L -c %i "$p/ns/net" 2>/dev/null)" = "$ns" ] && [ "${p#/proc/}" != "$CPID" ] \
      && echo "${p#/proc/}"
  done
  return 0
}

setup() {
  need_cmd socat python3 jq nsenter unshare
  [ -x "$NETPROXY" ] && [ -x "$RELAY" ] || skip "netproxy binaries not built"
  T=$BATS_TEST_TMPDIR
  start_echo
  start_relay --allow "api.test:443=127.0.0.1:$ECHO_PORT"
  start_container
  NETNS_INO=$(stat -L -c %i /proc/$CPID/ns/net)
}

teardown() {
  local p
  cleanup_containers
  for p in $(server_pids); do kill -9 "$p" 2>/dev/null || true; done
  kill_tracked
}

@test "netproxy: the allowed endpoint works from inside, end to end" {
  run hook
  [ "$status" -eq 0 ]
  run tcp 127.77.0.2:443 "hello from inside"
  [ "$output" = "hello from inside" ]
  wait_for grep -q '"outcome":"ok"' "$T/np.log"
  run jq -r 'select(.event=="connection") | "\(.container) \(.endpoint) \(.bytes_up) \(.bytes_down) \(.outcome)"' "$T/np.log"
  [ "$output" = "t1 api.test:443 17 17 ok" ]
  jq -e 'select(.event=="connection") | .time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")' "$T/np.log"
}

@test "netproxy: other addresses, ports and the host's loopback are not reachable" {
  hook
  run tcp 127.77.0.2:444 x
  [ "$output" = "<refused>" ]
  run tcp 127.77.0.3:443 x
  [ "$output" = "<refused>" ]
  run tcp "127.0.0.1:$ECHO_PORT" x
  [ "$output" = "<refused>" ]
  run tcp 10.1.2.3:443 x
  [[ "$output" == "<Network is unreachable>" ]]
}

@test "netproxy: the DNS stub answers allowed names, refuses the rest, logs refusals" {
  need_cmd busybox
  hook
  run inside busybox nslookup api.test 127.0.0.53
  [[ "$output" == *"Address: 127.77.0.2"* ]]
  run inside busybox nslookup -type=AAAA API.TEST 127.0.0.53
  [[ "$output" != *"NXDOMAIN"* ]]
  [[ "$output" != *"127.77"* ]]
  run inside busybox nslookup evil.test 127.0.0.53
  [[ "$output" == *"NXDOMAIN"* ]]
  wait_for grep -q dns-refused "$T/np.log"
  run jq -r 'select(.outcome=="dns-refused") | .endpoint' "$T/np.log"
  [[ "$output" == *"evil.test"* ]]
  # And over TCP: a 2-byte length prefix, then the same answer.
  run inside python3 -c '
import socket, struct
q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"\x03api\x04test\x00" + struct.pack(">HH", 1, 1)
s = socket.create_connection(("127.0.0.53", 53), timeout=5)
s.sendall(struct.pack(">H", len(q)) + q)
n = struct.unpack(">H", s.recv(2))[0]; r = s.recv(n)
print(r[:2].hex(), r[3] & 15, struct.unpack(">H", r[6:8])[0], ".".join(map(str, r[-4:])))'
  [ "$output" = "1234 0 1 127.77.0.2" ]
}

@test "netproxy: the server exits when the container's init exits" {
  hook
  [ -n "$(server_pids)" ]
  kill -9 "$CPID"
  wait_for test -z "$(server_pids)"
}

@test "netproxy: a dead relay fails fast and logged; a restarted one works again" {
  hook
  kill -TERM "$RELAY_PID"; wait "$RELAY_PID" || true
  local t0=$SECONDS
  run tcp 127.77.0.2:443 x
  [[ "$output" == "<reset>" || "$output" == "" ]]
  [ $((SECONDS - t0)) -le 2 ]
  wait_for grep -q relay-down "$T/np.log"
  start_relay --allow "api.test:443=127.0.0.1:$ECHO_PORT"
  run tcp 127.77.0.2:443 "back again"
  [ "$output" = "back again" ]
}

@test "netproxy: the hook fails with one clear message when a relay is missing" {
  run hook --route "b.test:443=127.77.0.3=$T/s/b.test:443.sock"
  [ "$status" -ne 0 ]
  [[ "$output" == "agentrun-netproxy: relay for b.test:443 at $T/s/b.test:443.sock: No such file or directory" ]]
  [ -z "$(server_pids)" ]
}

@test "netproxy: the hook fails when the address is taken or the pid is gone" {
  hook
  run hook
  [ "$status" -ne 0 ]
  [[ "$output" == *"bind 127.77.0.2:443: Address already in use"* ]]
  run bash -c "echo '{\"ociVersion\":\"1.2.0\",\"id\":\"x\",\"status\":\"creating\",\"pid\":999999999}' | '$NETPROXY' --route 'a.b:1=127.77.0.2=/x'"
  [ "$status" -ne 0 ]
  [[ "$output" == *"pidfd_open 999999999"* ]]
  run bash -c "echo 'not json' | '$NETPROXY' --route 'a.b:1=127.77.0.2=/x'"
  [ "$status" -ne 0 ]
  [[ "$output" == *"invalid JSON"* ]]
}

@test "netproxy: the SNI check refuses another name through the whole chain" {
  need_cmd openssl
  openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=api.test -days 1 \
    -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null
  local p; p=$(free_port)
  openssl s_server -quiet -accept "127.0.0.1:$p" -cert "$T/cert.pem" -key "$T/key.pem" \
    -naccept 100 </dev/null >/dev/null 2>&1 &
  track_pid $!
  wait_for bash -c "exec 3<>/dev/tcp/127.0.0.1/$p"
  kill "$RELAY_PID"; wait "$RELAY_PID" || true
  start_relay --sni-check --allow "api.test:443=127.0.0.1:$p"
  hook
  run bash -c "echo | timeout 10 nsenter --net=/proc/$CPID/ns/net openssl s_client -connect 127.77.0.2:443 -servername api.test 2>&1"
  [[ "$output" == *"Server certificate"* ]]
  run bash -c "echo | timeout 10 nsenter --net=/proc/$CPID/ns/net openssl s_client -connect 127.77.0.2:443 -servername evil.test 2>&1"
  [[ "$output" != *"Server certificate"* ]]
  wait_for grep -q sni-mismatch "$T/relay.log"
}

@test "netproxy: the CONNECT proxy allows wildcard routes and answers 403 otherwise" {
  kill "$RELAY_PID"; wait "$RELAY_PID" || true
  # A wildcard that numeric hosts match, so the relay needs no DNS in CI.
  start_relay --allow "api.test:443=127.0.0.1:$ECHO_PORT" --allow "*.0.0.1:$ECHO_PORT=connect"
  hook --connect-proxy --route "*.0.0.1:$ECHO_PORT=connect=$T/s/*.0.0.1:$ECHO_PORT.sock"
  run tcp 127.77.0.1:3128 $'CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n'
  [[ "$output" == "HTTP/1.1 403 Forbidden"* ]]
  [[ "$output" == *"evil.test:443 is not on the allowlist"* ]]
  run tcp 127.77.0.1:3128 "CONNECT 127.0.0.1:$ECHO_PORT HTTP/1.1"$'\r\nHost: x\r\n\r\nping'
  [[ "$output" == "HTTP/1.1 200 Connection established"* ]]
  [[ "$output" == *"ping" ]]
  wait_for grep -q connect-denied "$T/np.log"
  # A client that waits for the 200 is handed to the relay with its target:
  # without the stream socket it still gets through.
  rm "$T/s/*.0.0.1:$ECHO_PORT.sock"
  run inside python3 -c '
import socket, sys
c = socket.create_connection(("127.77.0.1", 3128), timeout=5)
c.sendall(b"CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: x\r\n\r\n" % sys.argv[1].encode())
head = b""
while not head.endswith(b"\r\n\r\n"):
    head += c.recv(1)
c.sendall(b"after the 200"); c.shutdown(socket.SHUT_WR)
print(head.split(b"\r\n")[0].decode(), c.recv(100).decode())' "$ECHO_PORT"
  [ "$output" = "HTTP/1.1 200 Connection established after the 200" ]
  wait_for grep -q '"bytes_up":13' "$T/np.log"
  run jq -r "select(.endpoint==\"127.0.0.1:$ECHO_PORT\" and .bytes_up==13) | \"\(.bytes_down) \(.outcome)\"" "$T/np.log"
  [ "$output" = "13 ok" ]
}

@test "netproxy: a client that never reads does not stall the others" {
  hook
  inside python3 - <<'PY'
import socket, time
# One connection whose reader sleeps while the echo fills every buffer.
stuck = socket.create_connection(("127.77.0.2", 443), timeout=5)
stuck.setblocking(False)
sent = 0
try:
    for _ in range(4000):
        sent += stuck.send(b"x" * 65536)
except BlockingIOError:
    pass
assert sent > 1 << 20, sent
t = time.time()
for i in range(20):
    s = socket.create_connection(("127.77.0.2", 443), timeout=5)
    s.sendall(b"ok%d" % i); s.shutdown(socket.SHUT_WR)
    assert s.recv(100) == b"ok%d" % i
assert time.time() - t < 5
PY
}

# An echo upstream that serves thousands of connections in one process
# (socat forks one process per connection).
start_pyecho() {
  PYECHO_PORT=$(free_port)
  cat >"$T/echo.py" <<'PY'
import resource, selectors, socket, sys
h = resource.getrlimit(resource.RLIMIT_NOFILE)[1]; resource.setrlimit(resource.RLIMIT_NOFILE, (h, h))
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", int(sys.argv[1]))); ls.listen(4096); ls.setblocking(False)
sel = selectors.DefaultSelector(); sel.register(ls, selectors.EVENT_READ)
while True:
    for key, _ in sel.select():
        if key.fileobj is ls:
            try:
                c, _ = ls.accept()
            except BlockingIOError:
                continue
            c.setblocking(False); sel.register(c, selectors.EVENT_READ)
            continue
        try:
            d = key.fileobj.recv(65536)
        except OSError:
            d = b""
        if d:
            key.fileobj.sendall(d)
        else:
            sel.unregister(key.fileobj); key.fileobj.close()
PY
  python3 "$T/echo.py" "$PYECHO_PORT" &
  track_pid $!
  wait_for bash -c "exec 3<>/dev/tcp/127.0.0.1/$PYECHO_PORT"
  kill "$RELAY_PID"; wait "$RELAY_PID" || true
  start_relay --allow "api.test:443=127.0.0.1:$PYECHO_PORT"
}

fd_count() { ls "/proc/$1/fd" | wc -l; }

@test "netproxy: server and relay fds return to their baseline after 20000 connections" {
  start_pyecho
  hook
  local s; s=$(server_pids | head -1)
  local sb rb; sb=$(fd_count "$s"); rb=$(fd_count "$RELAY_PID")
  inside python3 -c '
import socket
for i in range(20000):
    s = socket.create_connection(("127.77.0.2", 443), timeout=5)
    s.sendall(b"x"); s.shutdown(socket.SHUT_WR); assert s.recv(10) == b"x", i; s.close()'
  wait_for bash -c "[ \$(ls /proc/$s/fd | wc -l) -eq $sb ] && [ \$(ls /proc/$RELAY_PID/fd | wc -l) -eq $rb ]"
  [ "$(jq -c 'select(.outcome=="ok")' "$T/np.log" | wc -l)" -eq 20000 ]
}

@test "netproxy: 1000 concurrent connections through netproxy and relay" {
  ulimit -n "$(ulimit -Hn)"
  [ "$(ulimit -n)" -ge 4000 ] || skip "nofile hard limit $(ulimit -Hn) is too low for 1000 connections"
  start_pyecho
  hook
  inside python3 - <<'PY'
import resource, selectors, socket
h = resource.getrlimit(resource.RLIMIT_NOFILE)[1]; resource.setrlimit(resource.RLIMIT_NOFILE, (h, h))
socks = [socket.create_connection(("127.77.0.2", 443), timeout=10) for _ in range(1000)]
for i, s in enumerate(socks):
    s.sendall(b"conn-%04d" % i)
for i, s in enumerate(socks):     # all 1000 are open at once here
    want, got = b"conn-%04d" % i, b""
    while len(got) < len(want):
        b = s.recv(64)
        assert b, (i, got)
        got += b
    assert got == want, (i, got)
for s in socks:
    s.close()
PY
  local s; s=$(server_pids | head -1)
  wait_for bash -c "[ \$(ls /proc/$s/fd | wc -l) -lt 20 ]"
  wait_for bash -c "[ \$(jq -c 'select(.outcome==\"ok\")' '$T/np.log' | wc -l) -eq 1000 ]"
}

@test "netproxy --idle-timeout: the server cuts a quiet connection and audits it" {
  hook --idle-timeout 1
  inside python3 - <<'PY'
import socket, time
s = socket.create_connection(("127.77.0.2", 443), timeout=5)
s.sendall(b"hi"); assert s.recv(10) == b"hi"
t = time.time()
try:
    assert s.recv(10) == b""
except ConnectionResetError:
    pass
assert 0.5 < time.time() - t < 4, time.time() - t
PY
  wait_for grep -q idle-timeout "$T/np.log"
  run jq -r 'select(.outcome=="idle-timeout") | "\(.endpoint) \(.bytes_up) \(.bytes_down)"' "$T/np.log"
  [ "$output" = "api.test:443 2 2" ]
}

# The state podman hands the hook from hooks.d/agentrun-netproxy.json.
state_ann() {
  jq -cn --argjson pid "$CPID" --arg v "$1" \
    '{ociVersion: "1.2.0", id: "t1", status: "creating", pid: $pid, bundle: "/x",
      annotations: {"run.agentrun.netproxy": $v, "other": "x"}}'
}
hook_ann() { state_ann "$1" | "$NETPROXY" --audit "$T/np.log" --config-from-annotation run.agentrun.netproxy; }

@test "netproxy --config-from-annotation: routes from the file the annotation names" {
  jq -n --arg s "$T/s/api.test:443.sock" \
    '{routes: [{name: "api.test", port: 443, address: "127.77.0.2", socket: $s}]}' >"$T/routes.json"
  run hook_ann "$T/routes.json"
  [ "$status" -eq 0 ]
  run tcp 127.77.0.2:443 "from the annotation"
  [ "$output" = "from the annotation" ]
}

@test "netproxy --config-from-annotation: refuses relative, missing, non-regular and absent" {
  jq -n --arg s "$T/s/api.test:443.sock" \
    '{routes: [{name: "api.test", port: 443, address: "127.77.0.2", socket: $s}]}' >"$T/routes.json"
  run hook_ann "routes.json"
  [ "$status" -ne 0 ]
  [ "$output" = "agentrun-netproxy: annotation run.agentrun.netproxy: 'routes.json' is not an absolute path" ]
  run hook_ann "$T/nope.json"
  [ "$status" -ne 0 ]
  [ "$output" = "agentrun-netproxy: annotation run.agentrun.netproxy: open $T/nope.json: No such file or directory" ]
  run hook_ann "$T"
  [ "$status" -ne 0 ]
  [ "$output" = "agentrun-netproxy: annotation run.agentrun.netproxy: $T is not a regular file" ]
  mkfifo "$T/fifo"
  run timeout 5 bash -c "$(declare -f state_ann hook_ann); CPID=$CPID NETPROXY='$NETPROXY' T='$T' hook_ann '$T/fifo'"
  [ "$status" -eq 1 ]
  [ "$output" = "agentrun-netproxy: annotation run.agentrun.netproxy: $T/fifo is not a regular file" ]
  echo '{"routes": [{"name": "api.test", "port": 443}]}' >"$T/bad.json"
  run hook_ann "$T/bad.json"
  [ "$status" -ne 0 ]
  [[ "$output" == *"$T/bad.json"*"routes[0]"* ]]
  run bash -c "echo '{\"ociVersion\":\"1.2.0\",\"id\":\"x\",\"status\":\"creating\",\"pid\":$CPID}' | '$NETPROXY' --config-from-annotation run.agentrun.netproxy"
  [ "$status" -ne 0 ]
  [ "$output" = "agentrun-netproxy: annotation run.agentrun.netproxy: not set in the container state" ]
  [ -z "$(server_pids)" ]
}

@test "netproxy: as a createRuntime hook of a real agentrun container" {
  need_cmd busybox
  [ -x "$AGENTRUN" ] || skip "agentrun not built"
  make_bundle "$T/b" sh -c 'echo through-the-hook | nc 127.77.0.2 443'
  local hooks
  hooks=$(jq -n --arg p "$NETPROXY" --arg s "$T/s/api.test:443.sock" --arg a "$T/np.log" \
    '{createRuntime: [{path: $p, args: ["agentrun-netproxy", "--audit", $a,
      "--route", ("api.test:443=127.77.0.2=" + $s)]}]}')
  config_edit "$T/b" '.hooks = $h | .linux.namespaces |= (map(select(.type != "network")) + [{type: "network"}])' \
    --argjson h "$hooks"
  run timeout 30 "$AGENTRUN" --root "$ROOT" run --bundle "$T/b" np1
  echo "$output"
  [ "$status" -eq 0 ] || skip "agentrun run does not work here yet: $output"
  [[ "$output" == *"through-the-hook"* ]]
  jq -e 'select(.container=="np1" and .outcome=="ok")' "$T/np.log"
}

@test "netproxy: out of fds (EMFILE) the server does not spin, and serves again" {
  # The server inherits the hook's limit: room for a handful of connections.
  (ulimit -n 40; hook)
  local s; s=$(server_pids | head -1)
  inside python3 - "$T/held" <<'PY' &
import socket, sys, time
socks, refused = [], 0
for i in range(60):
    try:   # past its fds the server may reset a client at once: fail fast
        s = socket.create_connection(("127.77.0.2", 443), timeout=5); s.sendall(b"x"); socks.append(s)
    except OSError:
        refused += 1
open(sys.argv[1], "w").write("%d %d\n" % (len(socks), refused))
time.sleep(4)
PY
  local holder=$!
  wait_for test -s "$T/held"
  sleep 0.5
  [ "$(ls /proc/$s/fd | wc -l)" -ge 36 ]        # it did run out
  local c0; c0=$(awk '{print $14 + $15}' /proc/$s/stat)
  sleep 2
  local c1; c1=$(awk '{print $14 + $15}' /proc/$s/stat)
  echo "server cpu over 2 s at EMFILE: $((c1 - c0)) ticks"
  [ $((c1 - c0)) -lt 20 ]
  wait "$holder"
  run tcp 127.77.0.2:443 "served again"
  [ "$output" = "served again" ]
}

# The inode of each socket fd of a process.
sock_inodes() { find "/proc/$1/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null | tr -dc '0-9\n'; }

@test "netproxy handoff: the relay holds the container's socket, the server only a report channel" {
  hook
  local s; s=$(server_pids | head -1)
  inside python3 - "$T/ready" "$T/go" <<'PY' &
import os, socket, sys, time
c = socket.create_connection(("127.77.0.2", 443), timeout=5)
c.sendall(b"ping"); assert c.recv(10) == b"ping"
open(sys.argv[1], "w").write("%d\n" % c.getsockname()[1])
while not os.path.exists(sys.argv[2]): time.sleep(0.05)
c.close()
PY
  local holder=$!
  wait_for test -s "$T/ready"
  # the accepted end: local 127.77.0.2:443 (02004D7F:01BB in /proc/net/tcp), peer port the client's
  local port ino; port=$(printf '%04X' "$(cat "$T/ready")")
  ino=$(inside awk -v p=":$port" '$2 == "02004D7F:01BB" && $3 ~ p"$" {print $10}' /proc/net/tcp)
  [ -n "$ino" ]
  sock_inodes "$RELAY_PID" | grep -qx "$ino"
  refute grep -qx "$ino" <<<"$(sock_inodes "$s")"
  touch "$T/go"; wait "$holder"
  wait_for grep -q '"outcome":"ok"' "$T/np.log"
  run jq -r 'select(.event=="connection") | "\(.bytes_up) \(.bytes_down) \(.outcome)"' "$T/np.log"
  [ "$output" = "4 4 ok" ]
}

@test "netproxy handoff: a relay without the handoff socket is spliced through the stream socket" {
  hook
  rm "$T/s/api.test:443.sock.fd"
  run tcp 127.77.0.2:443 "the old way"
  [ "$output" = "the old way" ]
  wait_for grep -q '"outcome":"ok"' "$T/np.log"
  run jq -r 'select(.event=="connection") | "\(.bytes_up) \(.bytes_down) \(.outcome)"' "$T/np.log"
  [ "$output" = "11 11 ok" ]
}

@test "netproxy handoff: a relay killed mid-stream ends the client's connection, logged relay-down" {
  start_pyecho
  hook
  inside python3 - "$T/streaming" <<'PY' &
import socket, sys
c = socket.create_connection(("127.77.0.2", 443), timeout=10)
n = 0
try:
    while True:
        c.sendall(b"x" * 65536)
        n += len(c.recv(1 << 20))
        if n > (1 << 20):
            open(sys.argv[1], "a").write("streaming\n")
except OSError as e:
    print("ended:", e)
PY
  local cp=$!
  wait_for test -s "$T/streaming"
  kill -9 "$RELAY_PID"
  wait "$cp"
  wait_for grep -q relay-down "$T/np.log"
  run jq -r 'select(.outcome=="relay-down") | .detail' "$T/np.log"
  [[ "$output" == *"without a report"* ]]
}

@test "netproxy: a lo the hook brings up takes 256 KiB packets; one already up is left alone" {
  need_cmd ip
  hook
  run inside ip -d link show lo
  [[ "$output" == *"gso_max_size 262144"* ]]
  unshare --net sh -c 'ip link set lo up && exec sleep 1000' &
  CPID=$!
  track_pid $CPID
  wait_for bash -c "[ \"\$(readlink /proc/$CPID/ns/net)\" != \"\$(readlink /proc/self/ns/net)\" ] \
    && nsenter --net=/proc/$CPID/ns/net ip link show lo | grep -q ',UP'"
  state | "$NETPROXY" --no-dns --route "api.test:443=127.77.0.2=$T/s/api.test:443.sock"
  run inside ip -d link show lo
  [[ "$output" == *"gso_max_size 65536"* ]]
  run tcp 127.77.0.2:443 "small packets"
  [ "$output" = "small packets" ]
}

@test "netproxy: the SNI check refuses two server_name extensions and a list of two names" {
  need_cmd python3
  kill "$RELAY_PID"; wait "$RELAY_PID" || true
  start_relay --sni-check --allow "api.test:443=127.0.0.1:$ECHO_PORT"
  hook
  run inside python3 -c '
import socket, struct
def sni(*names):
    lst = b"".join(b"\0" + struct.pack(">H", len(n)) + n for n in names)
    d = struct.pack(">H", len(lst)) + lst
    return struct.pack(">HH", 0, len(d)) + d
def hello(*exts):
    e = b"".join(exts)
    body = b"\3\3" + b"\0" * 32 + b"\0" + b"\0\2\x13\1" + b"\1\0" + struct.pack(">H", len(e)) + e
    hs = b"\1" + struct.pack(">I", len(body))[1:] + body
    return b"\x16\3\1" + struct.pack(">H", len(hs)) + hs
for label, msg in (("one", hello(sni(b"api.test"))),
                   ("two-extensions", hello(sni(b"api.test"), sni(b"evil.test"))),
                   ("two-names", hello(sni(b"api.test", b"evil.test")))):
    c = socket.create_connection(("127.77.0.2", 443), timeout=5)
    c.sendall(msg)
    try:
        got = c.recv(len(msg))
    except OSError:
        got = b""
    print(label, "passed" if got else "refused")
'
  [ "$status" -eq 0 ]
  [[ "$output" == *"one passed"* ]]
  [[ "$output" == *"two-extensions refused"* ]]
  [[ "$output" == *"two-names refused"* ]]
}

# The fields of /proc/PID/status that say how confined PID is.
confinement() {
  grep -E '^(Uid|Groups|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' "/proc/$1/status" | tr -s '\t ' ' ' | sed 's/ $//'
}

@test "netproxy: in a plain bundle run by root, the server and the relay drop to nobody, no capability, no_new_privs, seccomp" {
  run hook
  [ "$status" -eq 0 ]
  local s; s=$(server_pids)
  [ -n "$s" ]
  local want="Uid: 65534 65534 65534 65534
Groups:
CapPrm: 0000000000000000
CapEff: 0000000000000000
CapBnd: 0000000000000000
CapAmb: 0000000000000000
NoNewPrivs: 1
Seccomp: 2"
  run confinement "$s"
  echo "$output"
  [ "$output" = "$want" ]
  run confinement "$RELAY_PID"
  echo "$output"
  [ "$output" = "$want" ]
  # and it works: the relay's sockets under this test's 0700 folder are
  # reached through the folder the hook held open before the drop
  run tcp 127.77.0.2:443 "confined"
  [ "$output" = confined ]
}

@test "netproxy: --user takes UID:GID, neither 0, and only from root" {
  run hook --user 0:0
  [ "$status" -ne 0 ]
  [[ "$output" == "agentrun-netproxy: --user: expected UID:GID, neither 0, got '0:0'" ]]
  chmod 0755 "$T"
  # the binary from a folder nobody may walk to (the build tree may not be)
  local np
  np=$(public_bin)/agentrun-netproxy
  run setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all sh -c "$(declare -f state hook); T=$T CPID=$CPID NETPROXY=$np hook --user 65534:65534"
  [ "$status" -ne 0 ]
  [[ "$output" == *"--user: only root changes its ids"* ]]
}

@test "netproxy: a drop that cannot be made fails the hook and the relay, with the step named (fail closed)" {
  need_cmd setpriv
  # root without CAP_SETUID cannot become nobody: neither may go on as root
  run setpriv --bounding-set -setuid --inh-caps=-setuid sh -c "$(declare -f state hook); T=$T CPID=$CPID NETPROXY=$NETPROXY hook"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == "agentrun-netproxy: the server could not drop its privileges: setresuid 65534: Operation not permitted" ]]
  [ -z "$(server_pids)" ]
  run setpriv --bounding-set -setuid --inh-caps=-setuid "$RELAY" --dir "$T/s2" --allow "b.test:443=127.0.0.1:$ECHO_PORT"
  echo "$output"
  [ "$status" -eq 1 ]
  [[ "$output" == "agentrun-relay: setresuid 65534: Operation not permitted" ]]
}
