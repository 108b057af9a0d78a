#!/usr/bin/env bats
# Load: containers created, started and deleted in parallel for many cycles,
# with what they could leak counted before and after; and many concurrent
# connections through agentrun-relay. Sizes are env-tunable:
#   AGENTRUN_LOAD_PARALLEL (default 10; the issue's full size is 50)
#   AGENTRUN_LOAD_CYCLES   (default 20; full size 500)
#   AGENTRUN_LOAD_CONNS    (default 1000)

load helpers

setup() {
  P=${AGENTRUN_LOAD_PARALLEL:-10}
  M=${AGENTRUN_LOAD_CYCLES:-20}
  PREFIX=ld$$x
}

teardown() {
  cleanup_containers
  kill_tracked
}

# What a container may leave: fds of this shell, mounts naming our temp dir or
# prefix, cgroups named after the prefix, processes rooted in our bundles or
# naming the prefix, state folders.
snapshot() {
  local p procs=0 r
  for p in /proc/[0-9]*; do
    r=$(readlink "$p/root" 2>/dev/null) || continue
    case "$r" in "$BATS_TEST_TMPDIR"/*) procs=$((procs + 1)); continue ;; esac
    grep -qs -- "$PREFIX" "$p/cgroup" && procs=$((procs + 1))
  done
  echo "fds=$(ls /proc/$$/fd | wc -l)" \
    "mounts=$(grep -c -F -e "$BATS_TEST_TMPDIR" -e "$PREFIX" /proc/self/mountinfo)" \
    "cgroups=$(find /sys/fs/cgroup -maxdepth 6 -type d -name "*$PREFIX*" 2>/dev/null | wc -l)" \
    "procs=$procs" \
    "states=$(ls -A "$ROOT" 2>/dev/null | grep -c -- "$PREFIX")"
}

# One worker: M cycles of create, start, wait for the exit, delete.
worker() {
  local i=$1 c id st n
  for c in $(seq "$M"); do
    id=$PREFIX-$i
    ar create -b "$BATS_TEST_TMPDIR/b$i" "$id" || { echo "worker $i cycle $c: create failed"; return 1; }
    ar start "$id" || { echo "worker $i cycle $c: start failed"; return 1; }
    for n in $(seq 200); do
      st=$(ar state "$id" | jq -r .status) || { echo "worker $i cycle $c: state failed"; return 1; }
      [ "$st" = stopped ] && break
      sleep 0.02
    done
    [ "$st" = stopped ] || { echo "worker $i cycle $c: still $st"; return 1; }
    ar delete "$id" || { echo "worker $i cycle $c: delete failed"; return 1; }
  done
}

@test "load: ${AGENTRUN_LOAD_PARALLEL:-10} containers x ${AGENTRUN_LOAD_CYCLES:-20} cycles in parallel leave no fd, mount, cgroup, process or state behind" {
  local i t0 before after failed=0
  for i in $(seq "$P"); do make_bundle "$BATS_TEST_TMPDIR/b$i" true; done
  mkdir -p "$ROOT"
  before=$(snapshot)
  t0=$(date +%s.%N)
  local pids=()
  for i in $(seq "$P"); do
    worker "$i" >"$BATS_TEST_TMPDIR/w$i.log" 2>&1 &
    pids+=($!)
    track_pid $!
  done
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed=$((failed + 1)); done
  local secs
  secs=$(echo "$(date +%s.%N) - $t0" | bc)
  cat "$BATS_TEST_TMPDIR"/w*.log | head -20
  after=$(snapshot)
  echo "before: $before"
  echo "after:  $after"
  echo "$((P * M)) container lifecycles in ${secs}s ($(echo "scale=1; $P * $M / $secs" | bc)/s), $failed failed workers" >&3
  [ "$failed" -eq 0 ]
  [ "$before" = "$after" ]
}

@test "load: ${AGENTRUN_LOAD_CONNS:-1000} concurrent connections through agentrun-relay all echo, and its fds return" {
  [ -x "$RELAY" ] || skip "agentrun-relay not built"
  need_cmd python3 prlimit
  local T=$BATS_TEST_TMPDIR N=${AGENTRUN_LOAD_CONNS:-1000}
  mkdir -p "$T/s"
  # an echo upstream that holds every connection open at once
  prlimit --nofile=8192:8192 python3 -c '
import asyncio, sys
async def echo(r, w):
    while d := await r.read(65536):
        w.write(d); await w.drain()
    w.close()
async def main():
    s = await asyncio.start_server(echo, "127.0.0.1", 0, backlog=4096)
    print(s.sockets[0].getsockname()[1], flush=True)
    await s.serve_forever()
asyncio.run(main())
' >"$T/port" &
  track_pid $!
  for i in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
  local port
  port=$(cat "$T/port")
  prlimit --nofile=8192:8192 "$RELAY" --dir "$T/s" --allow "up.test:443=127.0.0.1:$port" 2>"$T/relay.err" &
  local rp=$!
  track_pid $rp
  for i in $(seq 50); do grep -q listening "$T/relay.err" && break; sleep 0.1; done
  local fds0
  fds0=$(ls /proc/$rp/fd | wc -l)
  # N clients connect first, then all send, then all read their own echo
  run prlimit --nofile=8192:8192 python3 -c '
import asyncio, sys, time
path, n = sys.argv[1], int(sys.argv[2])
async def one(i, gate):
    r, w = await asyncio.open_unix_connection(path)
    await gate.wait()
    msg = b"conn-%d " % i * 64
    w.write(msg); await w.drain()
    got = await asyncio.wait_for(r.readexactly(len(msg)), 30)
    w.close()
    return got == msg
async def main():
    gate = asyncio.Event()
    t = time.time()
    tasks = [asyncio.create_task(one(i, gate)) for i in range(n)]
    await asyncio.sleep(0.5)
    gate.set()
    res = await asyncio.gather(*tasks, return_exceptions=True)
    ok = sum(1 for x in res if x is True)
    print("ok", ok, "of", n, "in", round(time.time() - t, 2), "s")
    errs = [repr(x) for x in res if x is not True][:5]
    if errs: print("errors", errs)
asyncio.run(main())
' "$T/s/up.test:443.sock" "$N"
  echo "$output"
  echo "relay: $output" >&3
  [[ "$output" == "ok $N of $N "* ]]
  # every connection's fds are released once the clients are gone
  local fds1
  for i in $(seq 50); do
    fds1=$(ls /proc/$rp/fd | wc -l)
    [ "$fds1" -eq "$fds0" ] && break
    sleep 0.1
  done
  echo "relay fds before $fds0, after $fds1"
  [ "$fds1" -eq "$fds0" ]
  kill -0 $rp
}

@test "load: ${AGENTRUN_LOAD_CONNS:-1000} concurrent connections from a netns through agentrun-netproxy and the relay" {
  [ -x "$RELAY" ] && [ -x "$NETPROXY" ] || skip "netproxy binaries not built"
  need_cmd python3 prlimit unshare nsenter jq
  local T=$BATS_TEST_TMPDIR N=${AGENTRUN_LOAD_CONNS:-1000} i
  mkdir -p "$T/s"
  prlimit --nofile=8192:8192 python3 -c '
import asyncio
async def echo(r, w):
    while d := await r.read(65536):
        w.write(d); await w.drain()
    w.close()
async def main():
    s = await asyncio.start_server(echo, "127.0.0.1", 0, backlog=4096)
    print(s.sockets[0].getsockname()[1], flush=True)
    await s.serve_forever()
asyncio.run(main())
' >"$T/port" &
  track_pid $!
  for i in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
  prlimit --nofile=8192:8192 "$RELAY" --dir "$T/s" --allow "up.test:443=127.0.0.1:$(cat "$T/port")" 2>"$T/relay.err" &
  track_pid $!
  for i in $(seq 50); do grep -q listening "$T/relay.err" && break; sleep 0.1; done
  # the "container": a process in its own network namespace; the hook leaves
  # the netproxy server there, which exits with it
  unshare --net sleep 1000 &
  local cpid=$!
  track_pid $cpid
  for i in $(seq 50); do [ "$(readlink /proc/$cpid/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break; sleep 0.1; done
  echo "{\"ociVersion\":\"1.2.0\",\"id\":\"load\",\"status\":\"creating\",\"pid\":$cpid,\"bundle\":\"/\"}" |
    prlimit --nofile=8192:8192 "$NETPROXY" --no-dns --route "up.test:443=127.77.0.2=$T/s/up.test:443.sock"
  run nsenter --net=/proc/$cpid/ns/net prlimit --nofile=8192:8192 python3 -c '
import asyncio, sys, time
n = int(sys.argv[1])
async def one(i, gate):
    r, w = await asyncio.open_connection("127.77.0.2", 443)
    await gate.wait()
    msg = b"conn-%d " % i * 64
    w.write(msg); await w.drain()
    got = await asyncio.wait_for(r.readexactly(len(msg)), 30)
    w.close()
    return got == msg
async def main():
    gate = asyncio.Event()
    t = time.time()
    tasks = [asyncio.create_task(one(i, gate)) for i in range(n)]
    await asyncio.sleep(0.5)
    gate.set()
    res = await asyncio.gather(*tasks, return_exceptions=True)
    print("ok", sum(1 for x in res if x is True), "of", n, "in", round(time.time() - t, 2), "s")
    errs = [repr(x) for x in res if x is not True][:5]
    if errs: print("errors", errs)
asyncio.run(main())
' "$N"
  echo "$output"
  echo "netproxy: $output" >&3
  [[ "$output" == "ok $N of $N "* ]]
  # the server goes with the container's init
  [ -n "$(pgrep -f -- "--route up.test:443=127.77.0.2=$T/s/")" ]
  kill -9 $cpid
  local left
  for i in $(seq 50); do
    left=$(pgrep -f -- "--route up.test:443=127.77.0.2=$T/s/" || true)
    [ -z "$left" ] && break
    sleep 0.1
  done
  [ -z "$left" ]
}
