#!/usr/bin/env bats
# agentrun sandbox: the host's shared budgets a sandbox cannot exhaust:
# tmpfs memory, TCP buffers of its loopback sockets, the file table, its
# user's inotify instances. Run as root, the agent runs as nobody (65534),
# in a user namespace root made (so root's per-user counts are the ones
# charged). Everything lives under $BATS_TEST_TMPDIR, with a fake home.

load helpers

setup() { sandbox_setup "the agent runs as nobody"; }

teardown() { sandbox_teardown; }

@test "budgets: /tmp and the home are tmpfs of a bounded size, refused beyond it; options and profile keys set it" {
  local ram=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024 )) want
  want=$(( ram / 8 < 1073741824 ? ram / 8 : 1073741824 ))
  run sb -- df -B1 --output=size /tmp "$FHOME"
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -eq 3 ]
  local s
  for s in "${lines[1]}" "${lines[2]}"; do
    s=$(echo $s)
    [ "$s" -le 1073741824 ]
    [ "$s" -ge $(( want - 4096 )) ]
    [ "$s" -le $(( want + 4096 )) ]
  done
  # a write beyond the size fails, and only the size was taken
  run sb --tmp-size 8m --home-size 4m -- sh -c '
    dd if=/dev/zero of=/tmp/fill bs=1M count=16 2>&1 | grep -o "No space left on device" | head -1
    echo "tmp=$(stat -c %s /tmp/fill)"
    dd if=/dev/zero of="$HOME/fill" bs=1M count=16 2>&1 | grep -o "No space left on device" | head -1
    echo "home=$(stat -c %s "$HOME/fill")"'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | grep -c "No space left on device")" -eq 2 ]
  [ "$(echo "$output" | sed -n 's/^tmp=//p')" -le $((8 << 20)) ]
  [ "$(echo "$output" | sed -n 's/^home=//p')" -le $((4 << 20)) ]
  echo '{ "tmp_size": "16m", "home_size": 8388608 }' >"$T/p.json"
  run sb --profile "$T/p.json" -- df -B1 --output=size /tmp "$FHOME"
  [ "$status" -eq 0 ]
  [ "$(echo ${lines[1]})" -eq $((16 << 20)) ]
  [ "$(echo ${lines[2]})" -eq $((8 << 20)) ]
  run sb --tmp-size 0 -- true
  [ "$status" -ne 0 ]
  [[ "$output" == *"--tmp-size 0"* ]]
}

@test "budgets: open files per process: --pids times RLIMIT_NOFILE stays within half of fs.file-max" {
  local fmax=$(cat /proc/sys/fs/file-max) n
  run sb -- sh -c 'ulimit -Sn; ulimit -Hn'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "${lines[1]}" ]
  n=${lines[0]}
  [ "$n" -le 1024 ]
  [ "$n" -ge 64 ]
  [ "$n" -le 64 ] || [ $(( n * 4096 )) -le $(( fmax / 2 )) ]
  run sb --pids 64 -- sh -c 'ulimit -Hn'
  [ "$status" -eq 0 ]
  [ "$output" -eq $(( fmax / 2 / 64 < 1024 ? fmax / 2 / 64 : 1024 )) ]
  run sb --nofile 300 -- sh -c 'ulimit -Hn'
  [ "$output" = 300 ]
  local hard=$(ulimit -Hn)
  if [ "$hard" != unlimited ]; then
    run sb --nofile $(( hard + 1 )) -- true
    [ "$status" -eq 125 ]
    [[ "$output" == *"--nofile $(( hard + 1 )): above this caller's hard limit"* ]]
  fi
}

# inotify instances are charged to the user that made the user namespace:
# root here. Two sandboxes at once take all they can and hold them; root
# must still be able to make some.
@test "budgets: two sandboxes at once cannot take all of their user's inotify instances" {
  local host_max=$(cat /proc/sys/user/max_inotify_instances) want
  want=$(( host_max / 4 < 64 ? host_max / 4 : 64 ))
  cat >"$WS/take.py" <<'EOF'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fds = []
while True:
    fd = libc.inotify_init1(0)
    if fd < 0:
        break
    fds.append(fd)
err = ctypes.get_errno()
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d %s %s\n" % (len(fds), open("/proc/sys/user/max_inotify_instances").read().strip(), os.strerror(err)))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(60)
EOF
  chown "$AGENT_UID" "$WS/take.py"
  sb -- python3 "$WS/take.py" "$WS/took1" &
  track_pid $!
  sb -- python3 "$WS/take.py" "$WS/took2" &
  track_pid $!
  wait_for test -e "$WS/took1"
  wait_for test -e "$WS/took2"
  local i took inside why
  for i in 1 2; do
    read -r took inside why <"$WS/took$i"
    echo "sandbox $i took $took ($why), inside limit $inside, host $host_max"
    [ "$inside" -eq "$want" ]
    [ "$took" -le "$inside" ]
  done
  # while both hold theirs, their user still gets some
  python3 -c 'import ctypes, sys; l = ctypes.CDLL(None); sys.exit(0 if all(l.inotify_init1(0) >= 0 for _ in range(8)) else 1)'
}

@test "budgets: --inotify and the inotify profile key set the sandbox's inotify budget, within its user's" {
  run sb --inotify 3:100 -- cat /proc/sys/user/max_inotify_instances /proc/sys/user/max_inotify_watches
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 3 ]
  [ "${lines[1]}" = 100 ]
  echo '{ "inotify": "5" }' >"$T/p.json"
  run sb --profile "$T/p.json" -- cat /proc/sys/user/max_inotify_instances /proc/sys/user/max_inotify_watches
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 5 ]
  local watches=$(cat /proc/sys/user/max_inotify_watches)
  [ "${lines[1]}" -eq $(( watches / 8 < 8192 ? watches / 8 : 8192 )) ]
  run sb --inotify 0 -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q -- "--inotify 0: needs at least one instance"
  run sb --inotify "$(( $(cat /proc/sys/user/max_inotify_instances) + 1 ))" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q -- "--inotify: .* instances, more than this user has in all"
  run sb --inotify 2:x -- true
  [ "$status" -ne 0 ]
  [ "${#lines[@]}" -eq 1 ]
}

# Loopback sockets of the sandbox's own network namespace still count
# against the host-wide tcp_mem: each is capped by the namespace's
# tcp_rmem/tcp_wmem.
@test "budgets: TCP buffers of full loopback pairs are capped in the sandbox's network namespace" {
  cat >"$WS/fill.py" <<'EOF'
import fcntl, socket, struct, termios, time
print(open("/proc/sys/net/ipv4/tcp_rmem").read().split()[2], open("/proc/sys/net/ipv4/tcp_wmem").read().split()[2])
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(16)
pairs = []
for _ in range(4):
    c = socket.create_connection(ls.getsockname()); s, _ = ls.accept()
    c.setblocking(False); pairs.append((c, s))
chunk = b"x" * 65536
for _ in range(20):            # the receiver's window grows as it fills: push until nothing moves
    moved = 0
    for c, _ in pairs:
        try:
            while True:
                moved += c.send(chunk)
        except BlockingIOError:
            pass
    if not moved:
        break
    time.sleep(0.05)
q = lambda sk, req: struct.unpack("i", fcntl.ioctl(sk.fileno(), req, b"\0" * 4))[0]
print(max(q(c, termios.TIOCOUTQ) + q(s, termios.FIONREAD) for c, s in pairs))
EOF
  chown "$AGENT_UID" "$WS/fill.py"
  # an endpoint, so that the sandbox's loopback is up
  run sb --allow "a.test:443=127.0.0.1:9" -- python3 "$WS/fill.py"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "1048576 1048576" ]
  # queued in one pair: at most about the two 1 MiB caps (32 MiB + 4 MiB by the host's defaults)
  [ "${lines[1]}" -le $(( 3 << 20 )) ]
}

# The host's TCP pool (tcp_mem's third figure) in bytes, a quarter of it.
tcp_quarter() { echo $(( $(awk '{ print $3 }' /proc/sys/net/ipv4/tcp_mem) * $(getconf PAGESIZE) / 4 )); }

@test "budgets: --memory caps TCP buffers too where cgroup v1 counts them apart" {
  run sb --memory 256m --bundle "$T/b" -- true
  [ "$status" -eq 0 ]
  local mnt tcp q=$(tcp_quarter)
  mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
  tcp=$(jq '.linux.resources.memory.kernelTCP' "$T/b/config.json")
  if [ -n "$mnt" ] && [ -e "$mnt/memory.kmem.tcp.limit_in_bytes" ]; then
    # the memory limit, or a quarter of the host's TCP pool if less
    [ "$tcp" = $(( q < 268435456 ? q : 268435456 )) ]
    run sb --memory 64g --bundle "$T/b2" -- true
    [ "$(jq '.linux.resources.memory.kernelTCP' "$T/b2/config.json")" = $(( q < (64 << 30) ? q : 64 << 30 )) ]
  else
    [ "$tcp" = null ]
    skip "no cgroup v1 memory controller with memory.kmem.tcp here"
  fi
  # and the runtime sets it on the sandbox's cgroup
  local nap="30.$RANDOM" child
  sb --memory 64m -- sleep "$nap" &
  track_pid $!
  wait_for pgrep -xf "sleep $nap"
  child=$(pgrep -xf "sleep $nap")
  local cg=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/$child/cgroup)
  [ "$(cat "$mnt$cg/memory.kmem.tcp.limit_in_bytes")" = $((64 << 20)) ]
}

# MEMDIR: the memory cgroup of pid $1 as the host sees it; LIMIT its limit
# file, SWAP its swap one and SWAP_WANT what swap holds at the limit given.
mem_cgroup_of() {
  local mnt
  mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
  if [ -n "$mnt" ]; then
    MEMDIR=$mnt$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' "/proc/$1/cgroup")
    LIMIT=memory.limit_in_bytes SWAP=memory.memsw.limit_in_bytes SWAP_WANT=$2
  else
    mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
    MEMDIR=$mnt$(sed -n 's/^0:://p' "/proc/$1/cgroup")
    LIMIT=memory.max SWAP=memory.swap.max SWAP_WANT=0
  fi
}

@test "budgets: a memory limit by default (RAM/2, at most 16 GiB) in a cgroup of the memory controller alone, removed after the run" {
  local ram=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024 )) want nap="30.$RANDOM" child id
  want=$(( ram / 2 < (16 << 30) ? ram / 2 : 16 << 30 ))
  want=$(( want / 4096 * 4096 ))   # the kernel keeps whole pages
  # agentrun itself in the background (not the sb function's subshell): the signal is for it
  env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" -- sleep "$nap" &
  SB=$!
  track_pid $SB
  wait_for pgrep -xf "sleep $nap"
  child=$(pgrep -xf "sleep $nap")
  mem_cgroup_of "$child" "$want"
  id=$(basename "$MEMDIR")
  [[ "$id" == sandbox-* ]]
  [ "$(cat "$MEMDIR/$LIMIT")" = "$want" ]
  # no swap beyond it, where swap is accounted
  if [ -e "$MEMDIR/$SWAP" ]; then [ "$(cat "$MEMDIR/$SWAP")" = "$SWAP_WANT" ]; fi
  if [ -e "$MEMDIR/memory.kmem.tcp.limit_in_bytes" ]; then
    local q=$(tcp_quarter)
    [ "$(cat "$MEMDIR/memory.kmem.tcp.limit_in_bytes")" = $(( (q < want ? q : want) / 4096 * 4096 )) ]
  fi
  # the memory hierarchy's folder is its only one: no other controller was joined
  [ "$(find /sys/fs/cgroup -maxdepth 3 -name "$id" | wc -l)" = 1 ]
  # the command's pid 1 is in it too, and the cgroup namespace is rooted there
  grep -q "/$id\$" "/proc/$(awk '/^PPid:/ { print $2 }' "/proc/$child/status")/cgroup"
  run sb -- cat /proc/self/cgroup
  [ "$status" -eq 0 ]
  [ -z "$(echo "$output" | grep -v ':/$')" ]
  kill -TERM "$SB"
  wait "$SB" || true
  # removed by the janitor once the container's pid 1 has left it, after the return
  wait_for bash -c "[ -z \"\$(find /sys/fs/cgroup -maxdepth 3 -name '$id')\" ]"
  # --memory unlimited (or 0) lifts it: no memory limit, no cgroup
  run sb --memory unlimited --bundle "$T/b" -- true
  [ "$status" -eq 0 ]
  [ "$(jq -c '.linux.resources.memory' "$T/b/config.json")" = null ]
  run sb --memory 0 --bundle "$T/b0" -- true
  [ "$status" -eq 0 ]
  [ "$(jq -c '.linux.resources.memory' "$T/b0/config.json")" = null ]
  run sb --memory unlimited -- sh -c 'sed -n "s/^[0-9]*:memory://p; s/^0:://p" /proc/self/cgroup'
  [ "$status" -eq 0 ]
  refute grep -q sandbox- <<<"$output"
  # no cgroup manager: the default goes quietly, --memory asked is refused
  run env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" --cgroup-manager disabled sandbox \
    --workspace "$WS" -- echo ran
  [ "$status" -eq 0 ]
  [ "$output" = ran ]
  run env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" --cgroup-manager disabled sandbox \
    --workspace "$WS" --memory 64m -- echo ran
  [ "$status" -eq 125 ]
  [[ "$output" == *"--memory needs a cgroup"* ]]
}

@test "budgets: the memory limit covers the tmpfs: a /tmp write beyond --memory is stopped there" {
  # the kernel's OOM kill takes the biggest process of the cgroup (tmpfs
  # pages are no one's): with a 40 MiB buffer that is the writer, not pid 1
  # (a few MiB, more in a sanitizer build), so the shell lives to tell the size
  local fill='dd if=/dev/zero of=/tmp/fill bs=40M count=4 2>/dev/null; echo "size=$(stat -c %s /tmp/fill)"'
  run sb --memory 64m --tmp-size 256m -- sh -c "$fill"
  echo "$output"
  [ "$status" -eq 0 ]
  local size=$(echo "$output" | sed -n 's/^size=//p')
  [ -n "$size" ]
  [ "$size" -lt $((64 << 20)) ]
  # the control: without a limit the same write takes all 160 MiB
  run sb --memory unlimited --tmp-size 256m -- sh -c "$fill"
  [ "$status" -eq 0 ]
  [ "$(echo "$output" | sed -n 's/^size=//p')" = $((160 << 20)) ]
}

@test "budgets: the relay holds --net-max-conns connections of the sandbox at once and cuts idle ones" {
  need_cmd socat
  local port=$(free_port)
  socat TCP-LISTEN:"$port",bind=127.0.0.1,fork,reuseaddr EXEC:cat &
  track_pid $!
  wait_for bash -c "exec 3<>/dev/tcp/127.0.0.1/$port"
  cat >"$WS/hold.py" <<'EOF2'
import socket, time
held, refused = [], 0
for i in range(4):
    s = socket.create_connection(("a.test", 443), timeout=5)
    try:
        s.sendall(b"x")
        if s.recv(1) == b"x":
            held.append(s); continue
    except (ConnectionResetError, BrokenPipeError):
        pass
    refused += 1
print("held", len(held), "refused", refused)
time.sleep(2.5)                      # quiet for longer than the idle timeout
cut = 0
for s in held:
    try:
        cut += s.recv(1) == b""
    except (ConnectionResetError, socket.timeout):
        cut += 1
print("cut", cut)
EOF2
  chown "$AGENT_UID" "$WS/hold.py"
  run sb --allow "a.test:443=127.0.0.1:$port" --net-max-conns 2 --net-idle-timeout 1 -- python3 "$WS/hold.py"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "held 2 refused 2" ]
  [ "${lines[1]}" = "cut 2" ]
  run sb --net-max-conns 0 -- true
  [ "$status" -ne 0 ]
}

@test "budgets: SysV shared memory in the sandbox's IPC namespace is bounded (--shm-size), segments go with their last user" {
  cat >"$WS/shm.py" <<'EOF2'
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while n < 64:
    if libc.shmget(0, ctypes.c_size_t(16 << 20), 0o1600) < 0:
        break
    n += 1
print(n, errno.errorcode.get(ctypes.get_errno(), "?"))
print(" ".join(open("/proc/sys/kernel/" + k).read().strip() for k in ("shmmax", "shmall", "shm_rmid_forced")))
EOF2
  chown "$AGENT_UID" "$WS/shm.py"
  run sb -- python3 "$WS/shm.py"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "16 ENOSPC" ]
  [ "${lines[1]}" = "268435456 65536 1" ]
  run sb --shm-size 32m -- python3 "$WS/shm.py"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "2 ENOSPC" ]
}

@test "budgets: as the unprivileged user agentrun-test, the sandbox leaves the user inotify instances and has sized tmpfs" {
  id agentrun-test >/dev/null 2>&1 || skip "user agentrun-test missing (.ci/run creates it)"
  [ "$(cat /proc/sys/user/max_user_namespaces)" != 0 ] || skip "user namespaces disabled"
  local host_max=$(cat /proc/sys/user/max_inotify_instances) bin
  bin=$(public_bin)
  chown agentrun-test "$WS" "$FHOME"
  install -d -m 0700 -o agentrun-test -g agentrun-test "$T/xdg"
  cat >"$WS/take.py" <<'EOF2'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while libc.inotify_init1(0) >= 0:
    n += 1
open(sys.argv[1] + ".tmp", "w").write("%d %s\n" % (n, os.popen("df -B1 --output=size /tmp | tail -1").read().strip()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(60)
EOF2
  chmod 644 "$WS/take.py"
  runuser -u agentrun-test -- env XDG_RUNTIME_DIR="$T/xdg" HOME="$FHOME" \
    sh -c "cd '$WS' && exec '$bin/agentrun' sandbox -- python3 take.py '$WS/took'" &
  track_pid $!
  wait_for test -e "$WS/took"
  read -r took tmp <"$WS/took"
  echo "took $took of $host_max, /tmp $tmp bytes"
  [ "$took" -le $(( host_max / 4 )) ]
  [ "$tmp" -le 1073741824 ]
  runuser -u agentrun-test -- python3 -c 'import ctypes, sys; sys.exit(0 if ctypes.CDLL(None).inotify_init1(0) >= 0 else 1)'
}

# The agent's SysV IPC checks: "SIZE-of-16MiB SIZE-of-8MiB msgget semget
# shmctl-on-nothing", each "ok" or the errno's name.
ipc_probe() {
  cat >"$WS/ipc.py" <<'EOF2'
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
def res(r):
    return "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
out = [res(libc.shmget(0, ctypes.c_size_t(16 << 20), 0o1600)), res(libc.shmget(0, ctypes.c_size_t(8 << 20), 0o1600)),
       res(libc.msgget(0, 0o1600)), res(libc.semget(0, 1, 0o1600))]
# a call on an object that does not exist still gets the kernel's answer
out.append(res(libc.shmctl(12345, 0, None)))
print(" ".join(out))
EOF2
  chmod 644 "$WS/ipc.py"
}

# as_test [PREFIX...] -- OPTIONS...: the sandbox as agentrun-test, without
# XDG_RUNTIME_DIR, running python3 ipc.py (or SB_CMD), after PREFIX (run as
# root: it may enter a namespace and take the user's ids itself).
as_test() {
  local pre=()
  while [ "$1" != -- ]; do pre+=("$1"); shift; done
  shift
  "${pre[@]}" runuser -u agentrun-test -- env -u XDG_RUNTIME_DIR HOME="$FHOME" \
    sh -c "cd '$WS' && exec '$BIN/agentrun' sandbox $* -- ${SB_CMD:-python3 ipc.py}"
}

ipc_user_setup() {
  id agentrun-test >/dev/null 2>&1 || skip "user agentrun-test missing (.ci/run creates it)"
  [ "$(cat /proc/sys/user/max_user_namespaces)" != 0 ] || skip "user namespaces disabled"
  BIN=$(public_bin)
  TUID=$(id -u agentrun-test) TGID=$(id -g agentrun-test)
  chown agentrun-test "$WS" "$FHOME"
  ipc_probe
}

@test "budgets: as agentrun-test, SysV IPC is bounded (--shm-size) in a nested user namespace the agent cannot leave" {
  ipc_user_setup
  [ "$(cat /proc/sys/user/max_user_namespaces)" -ge 2 ] || skip "user.max_user_namespaces leaves no room for two"
  run as_test -- --shm-size 8m
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "EINVAL ok ok ok EINVAL" ]
  # the default bound lets a PostgreSQL-sized segment be made
  run as_test --
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "ok ok ok ok EINVAL" ]
  cat >"$WS/escape.sh" <<'EOF2'
id -u; id -g
cat /proc/self/uid_map /proc/self/gid_map /proc/1/uid_map /proc/sys/kernel/shmmax /proc/sys/user/max_user_namespaces
python3 -c '
import errno, os
try:
    open("/proc/sys/kernel/shmmax", "w").write("1")
    print("shmmax written")
except OSError as e:
    print("shmmax", errno.errorcode[e.errno])
for f in ("/proc/1/ns/user", "/proc/1/ns/ipc", "/proc/1/mem"):
    try:
        os.close(os.open(f, os.O_RDONLY))
        print(f, "opened")
    except OSError as e:
        print(f, errno.errorcode[e.errno])
print([l for l in open("/proc/self/status") if l.startswith("CapEff")][0].split()[1])
'
mount -t proc proc /tmp 2>/dev/null && echo "proc mounted"
unshare -U true 2>/dev/null && echo "userns made"
unshare -i true 2>/dev/null && echo "ipcns made"
nsenter -t 1 -U true 2>/dev/null && echo "pid 1's userns entered"
echo end
EOF2
  chmod 644 "$WS/escape.sh"
  SB_CMD="sh escape.sh" run as_test --
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$TUID" ]
  [ "${lines[1]}" = "$TGID" ]
  # the agent's map, and pid 1's: the user's ids over the outer root
  [ "$(echo ${lines[2]})" = "$TUID 0 1" ]
  [ "$(echo ${lines[3]})" = "$TGID 0 1" ]
  [ "$(echo ${lines[4]})" = "$TUID 0 1" ]
  [ "${lines[5]}" = 268435456 ]
  [ "${lines[6]}" = 0 ]
  [ "${lines[7]}" = "shmmax EROFS" ]
  [ "${lines[8]}" = "/proc/1/ns/user EACCES" ]
  [ "${lines[9]}" = "/proc/1/ns/ipc EACCES" ]
  [ "${lines[10]}" = "/proc/1/mem EACCES" ]
  [ "${lines[11]}" = 0000000000000000 ]
  [ "${lines[12]}" = end ]
  # through sudo, root writes the limits and the map stays the user's own
  run env SUDO_UID="$TUID" SUDO_GID="$TGID" \
    HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" --shm-size 8m -- \
    sh -c 'cat /proc/self/uid_map /proc/sys/kernel/shmmax'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(echo ${lines[0]})" = "$TUID $TUID 1" ]
  [ "${lines[1]}" = 8388608 ]
}

@test "budgets: as agentrun-test with no room for a nested user namespace, making SysV IPC objects is refused (ENOSPC) unless --allow-sysv-ipc or its profile key" {
  ipc_user_setup
  # userns-max.py N UID GID CMD...: CMD in a user namespace of root's,
  # mapping root and the user, where the user may have N user namespaces
  cat >"$T/userns-max.py" <<'EOF2'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
most, uid, gid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(w)
    if libc.unshare(0x10000000) != 0:
        sys.exit("unshare: %s" % os.strerror(ctypes.get_errno()))
    os.read(r, 1)
    open("/proc/sys/user/max_user_namespaces", "w").write(most)
    os.execvp(sys.argv[4], sys.argv[4:])
os.close(r)
import time
for _ in range(100):
    if os.readlink("/proc/%d/ns/user" % pid) != os.readlink("/proc/self/ns/user"):
        break
    time.sleep(0.01)
for f, i in (("uid_map", uid), ("gid_map", gid)):
    open("/proc/%d/%s" % (pid, f), "w").write("0 0 1\n%d %d 1\n" % (i, i))
os.write(w, b"g")
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
EOF2
  # room for one: the sandbox's own, no nested one
  local one=(python3 "$T/userns-max.py" 1 "$TUID" "$TGID")
  run as_test "${one[@]}" --
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "ENOSPC ENOSPC ENOSPC ENOSPC EINVAL" ]
  run as_test "${one[@]}" -- --allow-sysv-ipc
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "ok ok ok ok EINVAL" ]
  # the profile key, from a file outside anything the sandbox binds
  echo '{"allow_sysv_ipc": true}' >"$T/ipc-on.json"
  echo '{"allow_sysv_ipc": false}' >"$T/ipc-off.json"
  chmod 644 "$T/ipc-on.json" "$T/ipc-off.json"
  run as_test "${one[@]}" -- --profile "$T/ipc-on.json"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "ok ok ok ok EINVAL" ]
  run as_test "${one[@]}" -- --profile "$T/ipc-off.json"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "ENOSPC ENOSPC ENOSPC ENOSPC EINVAL" ]
  # a bound asked for that cannot be had is refused, not dropped
  run as_test "${one[@]}" -- --shm-size 8m
  echo "$output"
  [ "$status" -ne 0 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"--shm-size: "*"max_user_namespaces is 1"* ]]
  # room for two, but one taken when the run makes its nested one: it
  # fails with the reason, it does not run unbounded
  local taken=(python3 "$T/userns-max.py" 2 "$TUID" "$TGID" sh -c \
    'setpriv --reuid "$0" --regid "$1" --clear-groups unshare -U sleep 60 & h=$!
     for _ in $(seq 100); do [ "$(readlink /proc/$h/ns/user)" != "$(readlink /proc/self/ns/user)" ] && break; sleep 0.05; done
     shift; "$@"; r=$?; kill $h; exit $r' "$TUID" "$TGID")
  SB_CMD="echo ran" run as_test "${taken[@]}" -- --shm-size 8m
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"unshare the nested user namespace (the user namespaces of this user on the host"* ]]
  [[ "$output" != *ran* ]]
  # with room for two, the flag changes nothing: the limits hold
  [ "$(cat /proc/sys/user/max_user_namespaces)" -ge 2 ] || return 0
  run as_test -- --allow-sysv-ipc --shm-size 8m
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "EINVAL ok ok ok EINVAL" ]
}

@test "budgets: the sandbox's user namespace may make no namespace of its own, and a few mount namespaces for the runtime" {
  run sb -- sh -c 'cd /proc/sys/user && for k in user pid net ipc uts cgroup time mnt; do printf "%s=%s " $k $(cat max_${k}_namespaces); done'
  [ "$status" -eq 0 ]
  [ "$output" = "user=0 pid=0 net=0 ipc=0 uts=0 cgroup=0 time=0 mnt=64 " ]
}

# The socket cap (--max-sockets): TCP and UDP sockets of the sandbox alive
# at once. open_sockets.py N [6]: N stream sockets, then after closing five,
# up to ten datagram ones; the errno of the first refusal each time.
write_open_sockets() {
  cat >"$WS/open_sockets.py" <<'EOF2'
import errno, socket, sys
n = int(sys.argv[1])
fam = socket.AF_INET6 if sys.argv[2:] == ["6"] else socket.AF_INET
def name(e): return errno.errorcode.get(e.errno, str(e.errno))
socks, first = [], "none"
try:
    while len(socks) < n:
        socks.append(socket.socket(fam, socket.SOCK_STREAM))
except OSError as e:
    first = name(e)
print("stream", len(socks), first)
for s in socks[:5]:
    s.close()
more, then = 0, "none"
try:
    while more < 10:
        socks.append(socket.socket(fam, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK))
        more += 1
except OSError as e:
    then = name(e)
print("dgram", more, then, "cloexec", not socks[-1].get_inheritable(), "nonblock", not socks[-1].getblocking())
EOF2
  chmod 644 "$WS/open_sockets.py"
}

# pairs.py: a loopback listener, then pairs (a client made, connected,
# accepted, sent data it never reads) until refused; the clients close (a
# reset each: the accepted ends stay, made without socket(2), out of the
# kernel's table), pairs again until refused; all closed at last. Prints
# the refused step and the sockets held then.
write_pairs() {
  cat >"$WS/pairs.py" <<'EOF2'
import errno, socket, time
def name(e): return errno.errorcode.get(e.errno, str(e.errno))
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(4096)
held, clients = [srv], []
def pairs():
    step = "socket"
    try:
        while len(held) < 100000:
            step = "socket"
            c = socket.socket()
            held.append(c)
            clients.append(c)
            step = "connect"
            c.connect(srv.getsockname())
            a, _ = srv.accept()
            held.append(a)
            a.sendall(b"x" * 4096)
        return "never refused"
    except OSError as e:
        return "refused %s %s held %d" % (step, name(e), len(held))
print(pairs())
for c in clients:
    c.close()
    held.remove(c)
clients = []
print("after resets:", pairs())
for s in held:
    s.close()
for _ in range(100):
    try:
        socket.socket().close()
        r = "made"
        break
    except OSError as e:
        r = name(e)
        time.sleep(0.05)
print("all closed", r)
EOF2
  chmod 644 "$WS/pairs.py"
  # queue.py: clients that connect, send and close, never accepted: what
  # stays is kernel-held (the connection in the listener's queue, the
  # client's closed end), counted all the same
  cat >"$WS/queue.py" <<'EOF2'
import errno, socket, struct, sys
v6 = "6" in sys.argv[1:]
rst = "rst" in sys.argv[1:]
fam = socket.AF_INET6 if v6 else socket.AF_INET
srv = socket.socket(fam)
srv.bind(("::1" if v6 else "127.0.0.1", 0))
srv.listen(4096)
n = 0
try:
    while n < 100000:
        c = socket.socket(fam)
        if rst:  # close with a reset: the queued connection leaves the table, keeps its data
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.connect(srv.getsockname()[:2])
        c.sendall(b"x" * 4096)
        c.close()
        n += 1
    print("never refused", n)
except OSError as e:
    print("queued", n, errno.errorcode.get(e.errno, str(e.errno)))
EOF2
  chmod 644 "$WS/queue.py"
}

# as_agentrun_test ARGS...: `agentrun sandbox ARGS` as agentrun-test, with
# no XDG_RUNTIME_DIR (no systemd session, no writable cgroup), in $WS.
as_agentrun_test() {
  local bin
  bin=$(public_bin)
  runuser -u agentrun-test -- env -u XDG_RUNTIME_DIR HOME="$FHOME" \
    sh -c "cd '$WS' && exec '$bin/agentrun' sandbox $*"
}

need_agentrun_test() {
  id agentrun-test >/dev/null 2>&1 || skip "user agentrun-test missing (.ci/run creates it)"
  [ "$(cat /proc/sys/user/max_user_namespaces)" != 0 ] || skip "user namespaces disabled"
  chown agentrun-test "$WS" "$FHOME"
}

@test "budgets: --max-sockets caps the sandbox's sockets alive at once (ENOBUFS), and a closed one frees its place" {
  write_open_sockets
  run sb --max-sockets 32 -- python3 open_sockets.py 40
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "stream 32 ENOBUFS" ]
  [ "${lines[1]}" = "dgram 5 ENOBUFS cloexec True nonblock True" ]
  # the same as a plain user with no cgroup at all, over IPv6
  need_agentrun_test
  run as_agentrun_test --max-sockets 32 -- python3 open_sockets.py 40 6
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[-2]}" = "stream 32 ENOBUFS" ]
  [ "${lines[-1]}" = "dgram 5 ENOBUFS cloexec True nonblock True" ]
}

@test "budgets: with --max-sockets, a loopback server and its clients stay within the cap, accepted and queued ones counted" {
  write_pairs
  local who
  for who in root agentrun-test; do
    if [ $who = root ]; then
      run sb --max-sockets 32 -- python3 pairs.py
    else
      need_agentrun_test
      run as_agentrun_test --max-sockets 32 -- python3 pairs.py
    fi
    echo "$who: $output"
    [ "$status" -eq 0 ]
    # the listener and 15 pairs; a 16th client is made, its connection
    # (one socket more) is not
    [ "${lines[-3]}" = "refused connect ENOBUFS held 32" ]
    # the accepted ends outlive their clients, and still count
    [ "${lines[-2]}" = "after resets: refused socket ENOBUFS held 32" ]
    [ "${lines[-1]}" = "all closed made" ]
  done
  # the listener, and per round a client's closed end and its connection
  # in the queue: 15 rounds fit, the 16th client's connection does not
  local v
  for v in 4 6; do
    run sb --max-sockets 32 -- python3 queue.py $v
    echo "IPv$v: $output"
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = "queued 15 ENOBUFS" ]
  done
  # reset at once, a client leaves no closed end: 30 rounds, then the
  # 31st client's connection would be the 32nd socket with the listener
  run sb --max-sockets 32 -- python3 queue.py 4 rst
  echo "reset: $output"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "queued 30 ENOBUFS" ]
}

@test "budgets: the socket cap by default keeps its sockets at full buffers within a quarter of tcp_mem, at least 128" {
  local want
  want=$(( $(tcp_quarter) / (2 << 20) ))
  want=$(( want < 128 ? 128 : want > 65536 ? 65536 : want ))
  run sb --bundle "$T/b" -- true
  [ "$status" -eq 0 ]
  [ "$(jq -r '.annotations["run.agentrun.max-sockets"]' "$T/b/config.json")" = "$want" ]
  # and it is what a run gets
  write_open_sockets
  [ "$want" -le 900 ] || skip "default cap $want is above the sandbox's open-file limit"
  run sb --nofile 1024 -- python3 open_sockets.py 100000
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "stream $want ENOBUFS" ]
  # unlimited: no cap at all; the profile key sets it
  run sb --max-sockets unlimited --bundle "$T/u" -- true
  [ "$status" -eq 0 ]
  [ "$(jq -r '.annotations["run.agentrun.max-sockets"]' "$T/u/config.json")" = null ]
  echo '{ "max_sockets": 48 }' >"$T/p.json"
  run sb --profile "$T/p.json" --bundle "$T/p" -- true
  [ "$status" -eq 0 ]
  [ "$(jq -r '.annotations["run.agentrun.max-sockets"]' "$T/p/config.json")" = 48 ]
}

@test "budgets: a bad --max-sockets or max_sockets is refused with one line" {
  run sb --max-sockets 65536 -- true
  [ "$status" -eq 0 ]
  local v
  for v in 0 -1 abc 65537 '' 1.5; do
    run sb --max-sockets "$v" -- true
    echo "$v: $output"
    [ "$status" -ne 0 ]
    [ "${#lines[@]}" -eq 1 ]
    [[ "$output" == *"--max-sockets"*"$v"* && "$output" != *unknown* ]]
  done
  echo '{ "max_sockets": "many" }' >"$T/p.json"
  run sb --profile "$T/p.json" -- true
  echo "$output"
  [ "$status" -ne 0 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"max_sockets: --max-sockets"*many* ]]
}

# fill_pairs.py N (in the workspace): N loopback TCP pairs (sockets the
# unixconn supervisor makes and accepts, under the socket cap), each filled
# with unread data until nothing more moves; prints the bytes queued in
# all, makes ./filled and holds them until ./done appears.
write_fill_pairs() {
  cat >"$WS/fill_pairs.py" <<'EOF'
import fcntl, os, socket, struct, sys, termios, time
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(64)
pairs = []
for _ in range(int(sys.argv[1])):
    c = socket.create_connection(ls.getsockname()); s, _ = ls.accept()
    c.setblocking(False); pairs.append((c, s))
chunk = b"x" * 65536
for _ in range(40):            # the receivers' windows grow as they fill: push until nothing moves
    moved = 0
    for c, _ in pairs:
        try:
            while True:
                moved += c.send(chunk)
        except OSError:
            pass
    if not moved:
        break
    time.sleep(0.05)
q = lambda sk, req: struct.unpack("i", fcntl.ioctl(sk.fileno(), req, b"\0" * 4))[0]
print(sum(q(c, termios.TIOCOUTQ) + q(s, termios.FIONREAD) for c, s in pairs), flush=True)
open("filled", "w").close()
for _ in range(600):
    if os.path.exists("done"):
        break
    time.sleep(0.1)
EOF
  chown "$AGENT_UID" "$WS/fill_pairs.py"
}

# The host's TCP memory in use, in bytes (all network namespaces).
host_tcp_mem() { echo $(( $(awk '$1 == "TCP:" { print $NF }' /proc/net/sockstat) * $(getconf PAGESIZE) )); }

@test "budgets: the sockets the unixconn supervisor makes and accepts are charged to the sandbox's memory cgroup, which stops them filling" {
  local mnt
  mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
  [ -n "$mnt" ] && [ -e "$mnt/memory.kmem.tcp.limit_in_bytes" ] || skip "no cgroup v1 memory controller with memory.kmem.tcp here"
  write_fill_pairs
  local before child out
  before=$(host_tcp_mem)
  # 80 pairs filled would hold some 90 MiB (48 held 55 MiB before the
  # supervisor joined the cgroup); the cgroup's TCP limit is the memory
  # limit, 32 MiB
  sb --memory 32m --max-sockets 256 -- python3 fill_pairs.py 80 >"$T/out" 2>&1 &
  local pid=$!
  track_pid $pid
  wait_for test -e "$WS/filled" || { cat "$T/out"; false; }
  child=$(pgrep -xf "python3 fill_pairs.py 80")
  mem_cgroup_of "$child"
  local limit=$(cat "$MEMDIR/memory.kmem.tcp.limit_in_bytes") used=$(cat "$MEMDIR/memory.kmem.tcp.max_usage_in_bytes")
  local host=$(( $(host_tcp_mem) - before ))
  touch "$WS/done"
  wait "$pid"
  out=$(cat "$T/out")
  echo "queued $out, the cgroup's TCP at most $used of $limit, the host's TCP +$host"
  # the buffers were the sandbox's, up to its limit (the kernel forces a
  # few charges past it), where they stopped
  [ "$limit" = $((32 << 20)) ]
  [ "$used" -ge $((16 << 20)) ]
  [ "$out" -le $((44 << 20)) ]
  # and the host's pool took no more than that (and what else ran meanwhile)
  [ "$host" -le $((48 << 20)) ]
}

@test "budgets: the unixconn supervisor is in the sandbox's memory cgroup, outside its pid namespace, and the cgroup goes after a SIGKILL of agentrun" {
  local nap="30.$RANDOM" child id sup
  env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" --memory 64m -- sleep "$nap" &
  SB=$!
  track_pid $SB
  wait_for pgrep -xf "sleep $nap"
  child=$(pgrep -xf "sleep $nap")
  mem_cgroup_of "$child"
  id=$(basename "$MEMDIR")
  [[ "$id" == sandbox-* ]]
  sup=$(pgrep -xf "ar-unixconn $id")
  [ -n "$sup" ]
  grep -qx "$sup" "$MEMDIR/cgroup.procs"
  # the host's pid alone: no pid namespace of the sandbox's holds it
  [ "$(awk '/^NSpid:/ { print NF }' "/proc/$sup/status")" = 2 ]
  # agentrun killed: its janitor removes the cgroup, the supervisor in it
  # or not (the default limit's test sees a run that ends by itself)
  kill -KILL "$SB"
  wait "$SB" || true
  wait_for test ! -e "$MEMDIR"
  ! kill -0 "$sup" 2>/dev/null || [ "$(awk '/^State:/ { print $2 }' "/proc/$sup/status")" = Z ]
  # a supervisor that cannot join the cgroup asked for does not serve: the run fails, saying why
  AGENTRUN_FAULT=unixconn-supervisor-cgroup run sb --memory 64m -- true
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"unixconn supervisor: join the container's cgroup (write 0 to "*"/tasks)"* ]]
  # with no cgroup, nothing to join: the run is as before
  AGENTRUN_FAULT=unixconn-supervisor-cgroup run sb --memory unlimited -- echo ran
  [ "$status" -eq 0 ]
  [ "$output" = ran ]
}

@test "budgets: where the memory cgroup counts TCP buffers, the default socket cap does not follow --memory" {
  local mnt want=$(tcp_quarter)
  mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
  # v1 without memory.kmem.tcp: the cgroup does not see them, the cap stays within the limit too
  if [ -n "$mnt" ] && [ ! -e "$mnt/memory.kmem.tcp.limit_in_bytes" ] && [ "$want" -gt $((256 << 20)) ]; then
    want=$((256 << 20))
  fi
  want=$(( want / (2 << 20) ))
  want=$(( want < 128 ? 128 : want > 65536 ? 65536 : want ))
  run sb --memory 256m --bundle "$T/b" -- true
  [ "$status" -eq 0 ]
  echo "cap $(jq -r '.annotations["run.agentrun.max-sockets"]' "$T/b/config.json"), want $want"
  [ "$(jq -r '.annotations["run.agentrun.max-sockets"]' "$T/b/config.json")" = "$want" ]
}
