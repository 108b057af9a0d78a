#!/usr/bin/env bats
# agentrun-relay alone: Unix sockets on one side, a TCP upstream started by
# the test on host loopback on the other.

load helpers

# A client that sends its data, half-closes, and prints all it gets back.
PYCLIENT='
import socket, sys
kind, where, data = sys.argv[1], sys.argv[2], sys.argv[3].encode()
if kind == "unix":
    s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(where)
else:
    host, port = where.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=5)
out = b""
try:
    s.sendall(data); s.shutdown(socket.SHUT_WR)
    while True:
        b = s.recv(65536)
        if not b: break
        out += b
except (ConnectionResetError, BrokenPipeError):
    out += b"<reset>"
sys.stdout.write(out.decode(errors="replace"))
'
client() { python3 -c "$PYCLIENT" "$@"; }

start_echo() {
  ECHO_PORT=$(free_port)
  socat TCP-LISTEN:"$ECHO_PORT",bind=127.0.0.1,fork,reuseaddr EXEC:cat &
  track_pid $!
  wait_for bash -c "exec 3<>/dev/tcp/127.0.0.1/$ECHO_PORT"
}

start_relay() {
  "$RELAY" --dir "$T/s" --audit "$T/audit.log" "$@" 2>"$T/relay.err" &
  RELAY_PID=$!
  track_pid $RELAY_PID
  wait_for grep -q listening "$T/relay.err"
}

setup() {
  need_cmd socat python3 jq
  [ -x "$RELAY" ] || skip "agentrun-relay not built"
  T=$BATS_TEST_TMPDIR
  start_echo
}

teardown() { kill_tracked; }

@test "relay: one socket per route, mode 0660, echo through it" {
  start_relay --allow "api.test:443=127.0.0.1:$ECHO_PORT" --allow "b.test:80=127.0.0.1:$ECHO_PORT"
  [ "$(stat -c %a "$T/s/api.test:443.sock")" = 660 ]
  [ -S "$T/s/b.test:80.sock" ]
  run client unix "$T/s/api.test:443.sock" "hello relay"
  [ "$status" -eq 0 ]
  [ "$output" = "hello relay" ]
  wait_for grep -q '"outcome":"ok"' "$T/audit.log"
  run jq -r 'select(.endpoint=="api.test:443") | "\(.bytes_up) \(.bytes_down) \(.outcome)"' "$T/audit.log"
  [ "$output" = "11 11 ok" ]
}

@test "relay: half-close and a large transfer keep every byte" {
  start_relay --allow "api.test:443=127.0.0.1:$ECHO_PORT"
  head -c 20000000 /dev/urandom >"$T/big"
  python3 - "$T/s/api.test:443.sock" "$T/big" <<'PY'
import socket, sys, hashlib, threading
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
data = open(sys.argv[2], "rb").read()
def send():
    s.sendall(data); s.shutdown(socket.SHUT_WR)
t = threading.Thread(target=send); t.start()
h, n = hashlib.sha256(), 0
while True:
    b = s.recv(1 << 20)
    if not b: break
    h.update(b); n += len(b)
t.join()
assert n == len(data), (n, len(data))
assert h.digest() == hashlib.sha256(data).digest()
PY
}

@test "relay: upstream refused is logged and the client sees the end" {
  local dead; dead=$(free_port)
  start_relay --allow "down.test:443=127.0.0.1:$dead"
  run client unix "$T/s/down.test:443.sock" "x"
  [ "$output" = "" ] || [ "$output" = "<reset>" ]
  wait_for grep -q upstream-refused "$T/audit.log"
}

@test "relay: SIGTERM removes the sockets and exits 0" {
  start_relay --allow "api.test:443=127.0.0.1:$ECHO_PORT"
  kill -TERM "$RELAY_PID"
  # wait in this shell: `run` would wait from a subshell, whose answer for
  # a child of ours depends on timing.
  local rc=0; wait "$RELAY_PID" || rc=$?
  [ "$rc" -eq 0 ]
  [ ! -e "$T/s/api.test:443.sock" ]
}

@test "relay: SIGTERM lets an open connection finish within the grace period" {
  start_relay --grace 5 --allow "api.test:443=127.0.0.1:$ECHO_PORT"
  python3 - "$T/s/api.test:443.sock" "$RELAY_PID" <<'PY'
import socket, sys, os, signal, time
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
s.sendall(b"before"); assert s.recv(100) == b"before"
os.kill(int(sys.argv[2]), signal.SIGTERM); time.sleep(0.3)
s.sendall(b"after"); assert s.recv(100) == b"after"
s.close()
PY
  local rc=0; wait "$RELAY_PID" || rc=$?
  [ "$rc" -eq 0 ]
}

@test "relay: a live relay's socket is not stolen, a stale one is replaced" {
  start_relay --allow "api.test:443=127.0.0.1:$ECHO_PORT"
  run "$RELAY" --dir "$T/s" --allow "api.test:443=127.0.0.1:$ECHO_PORT"
  [ "$status" -eq 1 ]
  [[ "$output" == *"another relay is listening there"* ]]
  kill -9 "$RELAY_PID"; wait "$RELAY_PID" 2>/dev/null || true
  [ -S "$T/s/api.test:443.sock" ]
  start_relay --allow "api.test:443=127.0.0.1:$ECHO_PORT"
  run client unix "$T/s/api.test:443.sock" "again"
  [ "$output" = "again" ]
}

@test "relay: bad arguments say what is wrong" {
  run "$RELAY" --dir "$T/s"
  [ "$status" -eq 1 ]
  [[ "$output" == *"no route"* ]]
  run "$RELAY" --dir "$T/s" --allow "../../etc:443"
  [ "$status" -eq 1 ]
  [[ "$output" == *"bad host name"* ]]
  run "$RELAY" --dir "$T/s" --allow "*.x.test:443"
  [[ "$output" == *"wildcard needs '=connect'"* ]]
  echo '{"routes":[{"name":"a.test","port":70000}]}' >"$T/bad.json"
  run "$RELAY" --dir "$T/s" --config "$T/bad.json"
  [[ "$output" == *"port out of range"* ]]
}

@test "relay: routes from a JSON config" {
  echo "{\"routes\":[{\"name\":\"api.test\",\"port\":443,\"upstream\":\"127.0.0.1:$ECHO_PORT\"}]}" >"$T/r.json"
  start_relay --config "$T/r.json"
  run client unix "$T/s/api.test:443.sock" "json"
  [ "$output" = "json" ]
}

start_tls() {
  need_cmd openssl
  openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=api.test -days 1 \
    -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null
  TLS_PORT=$(free_port)
  openssl s_server -quiet -accept "127.0.0.1:$TLS_PORT" -cert "$T/cert.pem" -key "$T/key.pem" \
    -naccept 100 </dev/null >/dev/null 2>&1 &
  track_pid $!
  wait_for bash -c "exec 3<>/dev/tcp/127.0.0.1/$TLS_PORT"
}

@test "relay --sni-check: the right SNI passes, another name and plain bytes are refused" {
  start_tls
  start_relay --sni-check --allow "api.test:443=127.0.0.1:$TLS_PORT"
  run bash -c "echo | timeout 10 openssl s_client -unix '$T/s/api.test:443.sock' -servername api.test 2>&1"
  [[ "$output" == *"CONNECTED"* ]]
  [[ "$output" == *"Server certificate"* ]]
  run bash -c "echo | timeout 10 openssl s_client -unix '$T/s/api.test:443.sock' -servername evil.test 2>&1"
  [[ "$output" != *"Server certificate"* ]]
  wait_for grep -q sni-mismatch "$T/audit.log"
  run jq -r 'select(.outcome=="sni-mismatch") | .detail' "$T/audit.log"
  [ "$output" = "server_name evil.test" ]
  run client unix "$T/s/api.test:443.sock" "GET / HTTP/1.0"
  [ "$output" = "" ] || [ "$output" = "<reset>" ]
  wait_for grep -q sni-not-tls "$T/audit.log"
}

# A DNS server for the relay alone: the relay runs in a private mount
# namespace whose /etc/resolv.conf names this stub on a loopback address of
# its own. "slow.test" is answered (127.0.0.1) after SLOW seconds, every
# other name never. Nothing of the host's own resolver is touched.
start_slow_dns() {
  DNS_ADDR=127.53.$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))
  echo "nameserver $DNS_ADDR" >"$T/resolv.conf"
  cat >"$T/dns.py" <<'PY'
import socket, struct, sys, threading
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 53))
open(sys.argv[3], "w").close()       # bound: queries reach us from now on
def answer(q, peer):
    qid, _, qd = struct.unpack(">HHH", q[:6])
    i = 12
    while q[i]: i += 1 + q[i]
    qtype = struct.unpack(">H", q[i + 1:i + 3])[0]
    question = q[12:i + 5]
    an = b"" if qtype != 1 else b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 5, 4) + bytes([127, 0, 0, 1])
    s.sendto(struct.pack(">HHHHHH", qid, 0x8180, 1, 1 if an else 0, 0, 0) + question + an, peer)
while True:
    q, peer = s.recvfrom(512)
    if q[12:].startswith(b"\x04slow\x04test\x00"):
        threading.Timer(float(sys.argv[2]), answer, (q, peer)).start()
PY
  python3 "$T/dns.py" "$DNS_ADDR" "$1" "$T/dns.ready" &
  track_pid $!
  wait_for test -e "$T/dns.ready"
}

# start_relay, but resolving through the stub above.
start_relay_slow_dns() {
  RES_OPTIONS="timeout:30 attempts:1" unshare --mount sh -c \
    'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$T/resolv.conf" \
    "$RELAY" --dir "$T/s" --audit "$T/audit.log" "$@" 2>"$T/relay.err" &
  RELAY_PID=$!
  track_pid $RELAY_PID
  wait_for grep -q listening "$T/relay.err"
}

@test "relay: a name that resolves slowly does not hold up other routes" {
  start_slow_dns 4
  start_relay_slow_dns --allow "api.test:443=slow.test:$ECHO_PORT" \
    --allow "fast.test:443=127.0.0.1:$ECHO_PORT"
  # The slow client waits up to 20 s (the client() helper: 5 s).
  python3 -c "$(sed 's/settimeout(5)/settimeout(20)/' <<<"$PYCLIENT")" \
    unix "$T/s/api.test:443.sock" "through a slow name" >"$T/slow.out" &
  local slow=$!
  sleep 0.3
  local t0; t0=$(date +%s%N)
  run client unix "$T/s/fast.test:443.sock" "fast"
  [ "$output" = "fast" ]
  # Served while slow.test was still being resolved (4 s).
  [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 2000 ]
  wait "$slow"
  [ "$(cat "$T/slow.out")" = "through a slow name" ]
}

@test "relay: resolution counts against --connect-timeout" {
  start_slow_dns 3
  start_relay_slow_dns --connect-timeout 1 --allow "dead.test:443=never.test:$ECHO_PORT" \
    --allow "fast.test:443=127.0.0.1:$ECHO_PORT"
  local t0=$SECONDS
  run client unix "$T/s/dead.test:443.sock" "x"
  [ "$output" = "" ] || [ "$output" = "<reset>" ]
  [ $((SECONDS - t0)) -le 3 ]
  wait_for grep -q upstream-timeout "$T/audit.log"
  run jq -r 'select(.endpoint=="dead.test:443") | "\(.outcome): \(.detail)"' "$T/audit.log"
  [ "$output" = "upstream-timeout: name resolution took too long" ]
  run client unix "$T/s/fast.test:443.sock" "still fine"
  [ "$output" = "still fine" ]
}

@test "relay --idle-timeout: a quiet connection is cut and audited, a busy one is not" {
  start_relay --idle-timeout 1 --allow "api.test:443=127.0.0.1:$ECHO_PORT"
  python3 - "$T/s/api.test:443.sock" <<'PY'
import socket, sys, time
busy = socket.socket(socket.AF_UNIX); busy.settimeout(5); busy.connect(sys.argv[1])
quiet = socket.socket(socket.AF_UNIX); quiet.settimeout(5); quiet.connect(sys.argv[1])
quiet.sendall(b"q"); assert quiet.recv(10) == b"q"
t = time.time()
while time.time() - t < 3:          # busy: a byte every 0.3 s, never cut
    busy.sendall(b"b"); assert busy.recv(10) == b"b"; time.sleep(0.3)
try:
    assert quiet.recv(10) == b""     # quiet: cut after about 1 s
except ConnectionResetError:
    pass
busy.sendall(b"still"); assert busy.recv(10) == b"still"
PY
  wait_for grep -q idle-timeout "$T/audit.log"
  run jq -r 'select(.outcome=="idle-timeout") | "\(.bytes_up) \(.bytes_down)"' "$T/audit.log"
  [ "$output" = "1 1" ]
}

# utime + stime of a process, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

@test "relay: out of fds (EMFILE) it does not spin, and serves again once clients leave" {
  # Room for a handful of connections (6 fds each: 2 sockets, 2 pipes).
  (ulimit -n 40; exec "$RELAY" --dir "$T/s" --audit "$T/audit.log" \
    --allow "api.test:443=127.0.0.1:$ECHO_PORT" 2>"$T/relay.err") &
  RELAY_PID=$!
  track_pid $RELAY_PID
  wait_for grep -q listening "$T/relay.err"
  python3 - "$T/s/api.test:443.sock" "$RELAY_PID" "$T/held" <<'PY' &
import os, socket, sys, time
socks = []
for i in range(60):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); socks.append(s)
    try:
        s.sendall(b"x")
    except OSError:
        pass   # out of fds, the relay may drop a connection it cannot serve
open(sys.argv[3], "w").write("%d\n" % len(socks))
t = time.time()            # hold them until the test has measured
while time.time() - t < 20 and not os.path.exists(sys.argv[3] + ".done"):
    time.sleep(0.1)
PY
  local holder=$!
  wait_for test -s "$T/held"
  # It did run out (accepting and connecting upstream takes a while under ASan).
  wait_for bash -c "[ \$(ls /proc/$RELAY_PID/fd | wc -l) -ge 36 ]" \
    || { ls -l /proc/$RELAY_PID/fd; cat "$T/relay.err"; false; }
  sleep 0.3
  local c0; c0=$(cpu_ticks "$RELAY_PID")
  sleep 2
  local c1; c1=$(cpu_ticks "$RELAY_PID")
  echo "relay cpu over 2 s at EMFILE: $((c1 - c0)) ticks"
  [ $((c1 - c0)) -lt 20 ]                        # a spinning loop burns ~200
  touch "$T/held.done"
  wait "$holder"
  run client unix "$T/s/api.test:443.sock" "served again"
  [ "$output" = "served again" ]
}

@test "relay handoff: a passed TCP socket is spliced upstream and reported; anything else is refused and logged" {
  start_relay --allow "api.test:443=127.0.0.1:$ECHO_PORT" --allow "*.0.0.1:$ECHO_PORT=connect"
  [ "$(stat -c %a "$T/s/api.test:443.sock.fd")" = 660 ]
  [ -S "$T/s/*.0.0.1:$ECHO_PORT.sock.fd" ]
  local fds0; fds0=$(ls /proc/$RELAY_PID/fd | wc -l)
  run python3 - "$T/s/api.test:443.sock.fd" "$T/s/*.0.0.1:$ECHO_PORT.sock.fd" "$ECHO_PORT" <<'PY'
import os, socket, sys
path = sys.argv[1]
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(8)
def pair():
    c = socket.create_connection(ls.getsockname(), timeout=5)
    a, _ = ls.accept()
    return c, a
def handoff(msg, fds, where=path):
    ctl = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); ctl.settimeout(5); ctl.connect(where)
    socket.send_fds(ctl, [msg], fds)
    return ctl
# A TCP socket: the relay splices it to the upstream, then reports.
c, a = pair()
ctl = handoff(b"ARFD1 0", [a.fileno()]); a.close()
c.sendall(b"through the handoff"); c.shutdown(socket.SHUT_WR)
got = b""
while True:
    b = c.recv(100)
    if not b: break
    got += b
print(got.decode())
print(ctl.recv(400).decode())
# A CONNECT route: the target comes with the socket and must match the wildcard.
c, a = pair()
ctl = handoff(b"ARFD1 0 127.0.0.1:" + sys.argv[3].encode(), [a.fileno()], sys.argv[2]); a.close()
c.sendall(b"connect"); c.shutdown(socket.SHUT_WR)
assert c.recv(100) == b"connect"
print(ctl.recv(400).decode())
# Refused: no fd, two fds, a pipe, a UDP socket, a bad header, a listener,
# a target where there is no wildcard, none where there is, one outside it.
def refused(msg, fds, close=(), where=path):
    ctl = handoff(msg, fds, where)
    for f in close: os.close(f) if isinstance(f, int) else f.close()
    print(ctl.recv(400).decode())
c1, a1 = pair(); c2, a2 = pair()
refused(b"ARFD1 0", [])
refused(b"ARFD1 0", [a1.fileno(), a2.fileno()], [a1, a2])
r, w = os.pipe(); refused(b"ARFD1 0", [r], [r])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); refused(b"ARFD1 0", [u.fileno()], [u])
c3, a3 = pair(); refused(b"HELLO", [a3.fileno()], [a3])
refused(b"ARFD1 0", [ls.fileno()])
c4, a4 = pair(); refused(b"ARFD1 0 api.test:443", [a4.fileno()], [a4])
c5, a5 = pair(); refused(b"ARFD1 0", [a5.fileno()], [a5], sys.argv[2])
c6, a6 = pair(); refused(b"ARFD1 0 evil.test:" + sys.argv[3].encode(), [a6.fileno()], [a6], sys.argv[2])
# The relay closed every fd it refused: the clients see the end.
for c in (c1, c2, c3, c4, c5, c6):
    c.settimeout(5); assert c.recv(10) == b"", c
os.close(w)
PY
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "through the handoff" ]
  [ "${lines[1]}" = "19 19 ok" ]
  [ "${lines[2]}" = "7 7 ok" ]
  [ "${lines[3]}" = "0 0 handoff-refused no fd" ]
  [ "${lines[4]}" = "0 0 handoff-refused more than one fd" ]
  [ "${lines[5]}" = "0 0 handoff-refused the fd is not a socket" ]
  [ "${lines[6]}" = "0 0 handoff-refused the socket is not SOCK_STREAM" ]
  [ "${lines[7]}" = "0 0 handoff-refused not a handoff header" ]
  [ "${lines[8]}" = "0 0 handoff-refused the socket is a listener" ]
  [ "${lines[9]}" = "0 0 handoff-refused a target on a route that is not CONNECT" ]
  [ "${lines[10]}" = "0 0 handoff-refused no target on a CONNECT route" ]
  [ "${lines[11]}" = "0 0 connect-denied target evil.test:$ECHO_PORT" ]
  [ "$(jq -c "select(.endpoint==\"127.0.0.1:$ECHO_PORT\" and .outcome==\"ok\")" "$T/audit.log" | wc -l)" -eq 1 ]
  [ "$(jq -c 'select(.outcome=="handoff-refused")' "$T/audit.log" | wc -l)" -eq 8 ]
  [ "$(grep -c 'handoff on api.test:443 refused' "$T/relay.err")" -eq 6 ]
  wait_for bash -c "[ \$(ls /proc/$RELAY_PID/fd | wc -l) -eq $fds0 ]"
}

# Connections held open, each sent a byte and echoed; prints how many were
# served, how many the relay ended at once; holds them until DONE exists.
HOLDER='
import os, socket, sys, time
path, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
served = refused = 0
socks = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(path)
    try:
        s.sendall(b"x")
        if s.recv(1) == b"x":
            served += 1; socks.append(s); continue
    except (ConnectionResetError, BrokenPipeError):
        pass
    refused += 1; s.close()
open(out + ".tmp", "w").write("%d %d\n" % (served, refused)); os.rename(out + ".tmp", out)
t = time.time()
while time.time() - t < 30 and not os.path.exists(out + ".done"):
    time.sleep(0.1)
'

@test "relay --max-conns: connections past the cap are refused at once and audited; a freed slot serves again" {
  start_relay --max-conns 3 --allow "api.test:443=127.0.0.1:$ECHO_PORT"
  grep -q "at most 3 connections" "$T/relay.err"
  python3 -c "$HOLDER" "$T/s/api.test:443.sock" 5 "$T/held" &
  local holder=$!
  track_pid $holder
  wait_for test -s "$T/held"
  [ "$(cat "$T/held")" = "3 2" ]
  wait_for grep -q conn-limit "$T/audit.log"
  run jq -r 'select(.outcome=="conn-limit") | .detail' "$T/audit.log"
  [ "${lines[0]}" = "more than 3 connections open" ]
  [ "${#lines[@]}" -eq 2 ]
  touch "$T/held.done"
  wait "$holder"
  run client unix "$T/s/api.test:443.sock" "served again"
  [ "$output" = "served again" ]
  run "$RELAY" --dir "$T/s2" --allow a.test:443 --max-conns -1
  [ "$status" -ne 0 ]
  [[ "$output" == *"--max-conns"* ]]
}

@test "relay: by default the cap is what its fd limit holds: held connections never run it out of fds" {
  # (256 - 64) / 7 = 27 connections
  (ulimit -n 256; exec "$RELAY" --dir "$T/s" --audit "$T/audit.log" \
    --allow "api.test:443=127.0.0.1:$ECHO_PORT" 2>"$T/relay.err") &
  RELAY_PID=$!
  track_pid $RELAY_PID
  wait_for grep -q listening "$T/relay.err"
  grep -q "at most 27 connections" "$T/relay.err"
  python3 -c "$HOLDER" "$T/s/api.test:443.sock" 60 "$T/held" &
  local holder=$!
  track_pid $holder
  wait_for test -s "$T/held"
  [ "$(cat "$T/held")" = "27 33" ]
  [ "$(ls /proc/$RELAY_PID/fd | wc -l)" -lt 256 ]
  refute grep -q "Too many open files" "$T/relay.err"
  touch "$T/held.done"
  wait "$holder"
  run client unix "$T/s/api.test:443.sock" "served again"
  [ "$output" = "served again" ]
}
