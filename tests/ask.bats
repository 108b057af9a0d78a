#!/usr/bin/env bats
# agentrun-netproxy --ask: the DNS stub holds a lookup of an unknown name,
# asks the asker socket, and on "allow" adds a route at run time (a new
# loopback address, a listener, the answer) without a restart; on "deny" or
# an asker that cannot be reached the name gets NXDOMAIN. The asker here is
# a python script standing in for the sandbox process; the "container" is
# `unshare --net sleep`, as in netproxy.bats.

load helpers

inside() { nsenter --net=/proc/$CPID/ns/net "$@"; }

# query NAME: the rcode and the first A address of the stub's UDP answer.
QUERY='
import socket, struct, sys
name = sys.argv[1]
q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(float(sys.argv[2]) if len(sys.argv) > 2 else 10)
s.sendto(q, ("127.0.0.53", 53))
r = s.recv(512)
rcode, an = r[3] & 15, struct.unpack(">H", r[6:8])[0]
print(rcode, ".".join(map(str, r[-4:])) if an else "-")
'
query() { inside python3 -c "$QUERY" "$@"; }

# query_tcp NAME [TIMEOUT]: the same over DNS-over-TCP (2-byte length prefix).
QUERY_TCP='
import socket, struct, sys
name = sys.argv[1]
q = struct.pack(">HHHHHH", 0x4343, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0" + struct.pack(">HH", 1, 1)
s = socket.create_connection(("127.0.0.53", 53), timeout=float(sys.argv[2]) if len(sys.argv) > 2 else 10)
s.sendall(struct.pack(">H", len(q)) + q)
buf = b""
while len(buf) < 2 or len(buf) < 2 + struct.unpack(">H", buf[:2])[0]:
    chunk = s.recv(1024)
    if not chunk: sys.exit("closed")
    buf += chunk
r = buf[2:]
rcode, an = r[3] & 15, struct.unpack(">H", r[6:8])[0]
print(rcode, ".".join(map(str, r[-4:])) if an else "-")
'
query_tcp() { inside python3 -c "$QUERY_TCP" "$@"; }

ECHO_CLIENT='
import socket, sys
s = socket.create_connection((sys.argv[1], 443), timeout=5)
s.sendall(b"asked-and-relayed\n")
print(s.recv(100).decode().strip())
'

# The asker: allows the names in $T/allow (answering with their relay
# socket), denies the rest, after DELAY seconds; logs each question.
ASKER='
import os, socket, sys, time
path, t, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
srv = socket.socket(socket.AF_UNIX); srv.bind(path); srv.listen(8)
# as the sandbox does: the socket belongs to the ids the netproxy server drops to
if os.geteuid() == 0: os.chown(path, 65534, 65534)
while True:
    c, _ = srv.accept()
    line = c.makefile().readline().strip()
    with open(t + "/asked", "a") as f: f.write(line + "\n")
    _, name, port = line.split()
    time.sleep(delay)
    allowed = open(t + "/allow").read().split()
    c.sendall(("allow %s/s/%s:%s.sock\n" % (t, name, port) if name in allowed else "deny\n").encode())
    c.close()
'

start_asker() {
  python3 -c "$ASKER" "$T/ask.sock" "$T" "${1:-0}" &
  track_pid $!
  wait_for test -S "$T/ask.sock"
}

setup() {
  need_cmd socat python3 jq nsenter unshare
  [ -x "$NETPROXY" ] && [ -x "$RELAY" ] || skip "netproxy binaries not built"
  T=$BATS_TEST_TMPDIR
  ECHO_PORT=$(free_port)
  socat TCP-LISTEN:"$ECHO_PORT",bind=127.0.0.1,fork,reuseaddr EXEC:cat &
  track_pid $!
  wait_for bash -c "exec 3<>/dev/tcp/127.0.0.1/$ECHO_PORT"
  # the route the asker hands out; the sandbox process makes it when asked
  "$RELAY" --dir "$T/s" --allow "new.test:443=127.0.0.1:$ECHO_PORT" 2>"$T/relay.err" &
  track_pid $!
  wait_for grep -q listening "$T/relay.err"
  unshare --net sleep 1000 &
  CPID=$!
  track_pid $CPID
  wait_for bash -c "[ \"\$(readlink /proc/$CPID/ns/net)\" != \"\$(readlink /proc/self/ns/net)\" ]"
  NETNS_INO=$(stat -L -c %i /proc/$CPID/ns/net)
  echo new.test >"$T/allow"
}

teardown() {
  local p ns
  for p in /proc/[0-9]*; do
    ns=$(stat -L -c %i "$p/ns/net" 2>/dev/null) || continue
    [ "$ns" = "$NETNS_INO" ] && [ "${p#/proc/}" != "$CPID" ] && kill -9 "${p#/proc/}" 2>/dev/null
  done
  kill_tracked
  cleanup_containers
}

hook() {
  echo "{\"ociVersion\":\"1.2.0\",\"id\":\"t1\",\"status\":\"creating\",\"pid\":$CPID,\"bundle\":\"/x\"}" \
    | "$NETPROXY" --audit "$T/np.log" "$@"
}

@test "ask: an allowed name gets a new address and a working route, without a restart" {
  start_asker
  hook --ask "$T/ask.sock"
  run query new.test
  [ "$status" -eq 0 ]
  [ "$output" = "0 127.77.1.1" ]
  run inside python3 -c "$ECHO_CLIENT" 127.77.1.1
  [ "$status" -eq 0 ]
  [ "$output" = asked-and-relayed ]
  # asked once: later lookups are answered from what was decided
  run query NEW.test
  [ "$output" = "0 127.77.1.1" ]
  [ "$(grep -c 'ask new.test 443' "$T/asked")" -eq 1 ]
  wait_for grep -q '"event":"ask"' "$T/np.log"
  run jq -r 'select(.event=="ask") | "\(.endpoint) \(.outcome)"' "$T/np.log"
  [ "$output" = "new.test:443 allowed" ]
}

@test "ask: a denied name gets NXDOMAIN, is asked about once, and is audited" {
  start_asker
  hook --ask "$T/ask.sock"
  run query denied.test
  [ "$output" = "3 -" ]
  run query denied.test
  [ "$output" = "3 -" ]
  [ "$(grep -c 'ask denied.test 443' "$T/asked")" -eq 1 ]
  run inside python3 -c "$ECHO_CLIENT" 127.77.1.1
  [ "$status" -ne 0 ]
  wait_for grep -q '"outcome":"denied"' "$T/np.log"
  run jq -r 'select(.event=="ask") | "\(.endpoint) \(.outcome) \(.detail)"' "$T/np.log"
  [ "$output" = "denied.test:443 denied denied by the asker" ]
}

@test "ask: the lookup is held while the asker decides" {
  start_asker 2
  hook --ask "$T/ask.sock"
  local t0=$SECONDS
  run query new.test 8
  [ "$status" -eq 0 ]
  [ "$output" = "0 127.77.1.1" ]
  [ $((SECONDS - t0)) -ge 1 ]
}

@test "ask: a lookup over TCP is held and asked about the same way" {
  start_asker 2
  hook --ask "$T/ask.sock"
  local t0=$SECONDS
  run query_tcp new.test 8
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "0 127.77.1.1" ]
  [ $((SECONDS - t0)) -ge 1 ]
  run query_tcp denied.test 8
  [ "$output" = "3 -" ]
  # asked once each; UDP now gets what TCP's question decided
  [ "$(grep -c 'ask new.test 443' "$T/asked")" -eq 1 ]
  [ "$(grep -c 'ask denied.test 443' "$T/asked")" -eq 1 ]
  run query new.test
  [ "$output" = "0 127.77.1.1" ]
  run inside python3 -c "$ECHO_CLIENT" 127.77.1.1
  [ "$output" = asked-and-relayed ]
}

@test "ask: an asker that cannot be reached means no" {
  hook --ask "$T/nobody.sock"
  run query new.test
  [ "$output" = "3 -" ]
  wait_for grep -q '"event":"ask"' "$T/np.log"
  run jq -r 'select(.event=="ask") | "\(.outcome) \(.detail)"' "$T/np.log"
  [[ "$output" == "denied the asker cannot be reached"* ]]
}

@test "ask: configured routes are answered without asking" {
  start_asker
  hook --ask "$T/ask.sock" --route "new.test:443=127.77.0.2=$T/s/new.test:443.sock"
  run query new.test
  [ "$output" = "0 127.77.0.2" ]
  [ ! -e "$T/asked" ]
  run hook --ask relative.sock
  [ "$status" -ne 0 ]
  [[ "$output" == *"--ask relative.sock: needs an absolute socket path"* ]]
}

# ---- agentrun sandbox --ask: the person answers on the terminal ----

# Run agentrun under a new pseudo-terminal (its controlling terminal, as a
# person's would be) with stdin from /dev/null and stdout to $OUT (with
# KEEP_TTY, on the terminal too: the command gets a terminal), type
# $ANSWER when the question shows, print what the terminal showed.
PTY_DRIVER='
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    if not os.environ.get("KEEP_TTY"):
        nul = os.open("/dev/null", os.O_RDWR)
        os.dup2(nul, 0)
        out = os.open(os.environ["OUT"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 1)
    os.execvp(sys.argv[1], sys.argv[1:])
buf, answered, st = b"", False, None
deadline = time.time() + 60
while time.time() < deadline and st is None:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            d = os.read(fd, 1024)
        except OSError:
            d = b""
        buf += d
        if not answered and b"for this run?" in buf:
            os.write(fd, os.environ["ANSWER"].encode() + b"\r")
            answered = True
    p, s = os.waitpid(pid, os.WNOHANG)
    if p:
        st = s
if st is None:
    buf += b"\n[pty driver: no exit within 60 s, killed]\n"
    os.kill(pid, 9)
    _, st = os.waitpid(pid, 0)
sys.stdout.write(buf.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(st))
'

# The agent: look the host name up, then talk to it on 443 through the relay.
AGENT_CLIENT='
import socket, sys
name = sys.argv[1]
try:
    addr = socket.getaddrinfo(name, 443, socket.AF_INET)[0][4][0]
except OSError as e:
    print("unresolved", name); sys.exit(0)
s = socket.create_connection((addr, 443), timeout=20)
s.sendall(b"asked-in-sandbox\n")
print("echo:" + s.recv(100).decode().strip())
'

sandbox_setup() {
  [ "$(id -u)" = 0 ] || skip "needs root (the agent runs as nobody)"
  let_others_walk_to "$T"
  WS=$T/ws FHOME=$T/home
  # U: the profiles and the audit log, the invoking user's
  U=$T/u
  mkdir -p "$WS" "$FHOME" "$U"
  chown 65534:65534 "$WS" "$FHOME"
  # the relay connects to NAME:443: the host's own name on loopback stands in
  NAME=$(hostname)
  getent hosts "$NAME" | grep -q '^127\.' || skip "the host name $NAME does not resolve to loopback"
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",443))' 2>/dev/null \
    || skip "127.0.0.1:443 is taken"
  socat TCP-LISTEN:443,bind=127.0.0.1,fork,reuseaddr EXEC:cat &
  track_pid $!
  wait_for bash -c 'exec 3<>/dev/tcp/127.0.0.1/443'
}

# sbx_ask ANSWER ARGS...: agentrun sandbox ARGS as $AS under the pty driver;
# a plain user in the pty's session (runuser), as at a person's terminal.
sbx_ask() {
  local answer=$1 USER_VIA=runuser
  shift
  agentrun_as
  cd "$WS" && ANSWER="$answer" OUT="$T/out" python3 -c "$PTY_DRIVER" "${AR[@]}" sandbox --workspace "$WS" "$@"
}

ask_yes() {
  run sbx_ask y --ask --audit "$U/audit.log" -- python3 -c "$AGENT_CLIENT" "$NAME"
  [ "$status" -eq 0 ]
  [[ "$output" == *"allow $NAME:443 for this run? [y/N]"* ]]
  [ "$(cat "$T/out")" = "echo:asked-in-sandbox" ]
  run jq -r 'select(.event=="ask") | "\(.endpoint) \(.outcome)"' "$U/audit.log"
  [ "$output" = "$NAME:443 allowed" ]
}

@test "sandbox --ask: yes adds the route while the command runs" {
  sandbox_setup
  ask_yes
}

@test "sandbox --ask: yes adds the route, as a plain user without XDG_RUNTIME_DIR" {
  sandbox_setup
  as_plain_user "$U"
  ask_yes
}

@test "sandbox --ask: yes adds the route, through sudo for a plain user" {
  sandbox_setup
  as_sudo_user "$U"
  ask_yes
}

ask_no() {
  run sbx_ask n --ask --audit "$U/audit.log" -- python3 -c "$AGENT_CLIENT" "$NAME"
  [ "$status" -eq 0 ]
  [ "$(cat "$T/out")" = "unresolved $NAME" ]
  run jq -r 'select(.event=="ask") | "\(.endpoint) \(.outcome)"' "$U/audit.log"
  [ "$output" = "$NAME:443 denied" ]
}

@test "sandbox --ask: no (or anything else) answers NXDOMAIN" {
  sandbox_setup
  ask_no
}

@test "sandbox --ask: no answers NXDOMAIN, as a plain user without XDG_RUNTIME_DIR" {
  sandbox_setup
  as_plain_user "$U"
  ask_no
}

@test "sandbox --ask: no answers NXDOMAIN, through sudo for a plain user" {
  sandbox_setup
  as_sudo_user "$U"
  ask_no
}

ask_always() {
  echo '{ "pids": 128 }' >"$U/team.json"
  chown --reference="$U" "$U/team.json"
  run sbx_ask always --ask --save-profile "$U/team.json" -- python3 -c "$AGENT_CLIENT" "$NAME"
  [ "$status" -eq 0 ]
  [[ "$output" == *"[y/N/always]"* ]]
  [ "$(cat "$T/out")" = "echo:asked-in-sandbox" ]
  [ "$(jq -c . "$U/team.json")" = "{\"pids\":128,\"allow\":[\"$NAME:443\"]}" ]
  run sbx_ask n --profile "$U/team.json" -- python3 -c "$AGENT_CLIENT" "$NAME"
  [ "$status" -eq 0 ]
  [[ "$output" != *"for this run?"* ]]
  [ "$(cat "$T/out")" = "echo:asked-in-sandbox" ]
  # a profile saved, new or rewritten, is the invoking user's (root's without sudo)
  run sbx_ask always --ask --save-profile "$U/new.json" -- python3 -c "$AGENT_CLIENT" "$NAME"
  [ "$status" -eq 0 ]
  local me=0
  [ "$AS" = root ] || me=$WHO_UID
  [ "$(stat -c %u "$U/team.json")" = "$me" ]
  [ "$(stat -c %u "$U/new.json")" = "$me" ]
}

@test "sandbox --ask: always saved to a --save-profile in the workspace: the run goes on, the command still cannot write it" {
  sandbox_setup
  # writable by the agent's uid but for the read-only mount the run holds
  # on it; a rename over it (a new file) would take that mount away
  echo '{ "pids": 128 }' >"$WS/team.json"
  chmod 666 "$WS/team.json"
  run sbx_ask always --ask --save-profile "$WS/team.json" -- sh -c \
    'python3 -c "$0" "$1"; echo "{\"allow\":[\"evil.test:443\"]}" >team.json 2>/dev/null && echo wrote; true' \
    "$AGENT_CLIENT" "$NAME"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"[y/N/always]"* ]]
  [ "$(head -1 "$T/out")" = "echo:asked-in-sandbox" ]
  refute grep -q wrote "$T/out"
  [ "$(jq -c . "$WS/team.json")" = "{\"pids\":128,\"allow\":[\"$NAME:443\"]}" ]
}

@test "sandbox --ask: always is saved to --save-profile, which allows it next time" {
  sandbox_setup
  ask_always
}

@test "sandbox --ask: always is saved to --save-profile, as a plain user without XDG_RUNTIME_DIR" {
  sandbox_setup
  as_plain_user "$U"
  ask_always
}

@test "sandbox --ask: always is saved to --save-profile, through sudo for a plain user" {
  sandbox_setup
  as_sudo_user "$U"
  ask_always
}

# As a plain user through su -c: a session of its own, no terminal.
ask_no_terminal() {
  run bash -c "cd '$WS' && setsid -w $(ar_line --ask) -- python3 -c '$AGENT_CLIENT' '$NAME' </dev/null 2>&1"
  [ "$status" -eq 0 ]
  [[ "$output" == *"unresolved $NAME"* ]]
  [[ "$output" == *"no terminal to ask on"* ]]
}

@test "sandbox --ask: with no terminal the answer is no" {
  sandbox_setup
  ask_no_terminal
}

@test "sandbox --ask: with no terminal the answer is no, as a plain user without XDG_RUNTIME_DIR" {
  sandbox_setup
  as_plain_user
  ask_no_terminal
}

@test "sandbox --ask: with no terminal the answer is no, through sudo for a plain user" {
  sandbox_setup
  as_sudo_user
  ask_no_terminal
}

ask_shared_terminal() {
  KEEP_TTY=1 run sbx_ask y --ask -- python3 -c "import sys; print('tty', sys.stdin.isatty())
$AGENT_CLIENT" "$NAME"
  echo "status=$status"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"tty True"* ]]
  [[ "$output" == *"for this run? [y/N] y"* ]]
  [[ "$output" == *"echo:asked-in-sandbox"* ]]
}

@test "sandbox --ask: the question wins over a command that shares the terminal" {
  sandbox_setup
  ask_shared_terminal
}

@test "sandbox --ask: the question wins over the command's terminal, as a plain user without XDG_RUNTIME_DIR" {
  sandbox_setup
  as_plain_user
  ask_shared_terminal
}

@test "sandbox --ask: the question wins over the command's terminal, through sudo for a plain user" {
  sandbox_setup
  as_sudo_user
  ask_shared_terminal
}
