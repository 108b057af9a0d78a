#!/usr/bin/env bats
# linux.seccomp: every action, errno values, every operator, architectures,
# unknown names, notify through tests/seccomp-notify-agent, the filter cache
# and the agent profile (contrib/seccomp/agent.json), in busybox containers.

load helpers

AGENT_BIN=$BUILDDIR/tests/seccomp-notify-agent
PROFILE=$SRCDIR/contrib/seccomp/agent.json

setup() {
  B=$BATS_TEST_TMPDIR/bundle
}

teardown() {
  cleanup_containers
  kill_tracked
}

# bundle_with SECCOMP_JSON ARGS...: a busybox bundle running ARGS under the profile.
bundle_with() {
  local sc=$1; shift
  make_bundle "$B" "$@"
  config_edit "$B" '.linux.seccomp = $sc | .root.readonly = false' --argjson sc "$sc"
}

# A profile allowing everything but RULES (a JSON array).
allow_but() {
  jq -cn --argjson r "$1" '{defaultAction: "SCMP_ACT_ALLOW", syscalls: $r}'
}

MKDIR='mkdir /m; echo "rc=$?"; [ -d /m ] && echo made || echo absent'

@test "ERRNO with errnoRet returns that errno; without it, EPERM" {
  bundle_with "$(allow_but '[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO","errnoRet":28}]')" sh -c "$MKDIR"
  run ar run --bundle "$B" sc-errno
  [ "$status" -eq 0 ]
  [[ "$output" == *"No space left on device"* ]]
  [[ "$output" == *"rc=1"* && "$output" == *absent* ]]

  rm -rf "$B"
  bundle_with "$(allow_but '[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO"}]')" sh -c "$MKDIR"
  run ar run --bundle "$B" sc-eperm
  [ "$status" -eq 0 ]
  [[ "$output" == *"Operation not permitted"* && "$output" == *absent* ]]
}

@test "defaultErrnoRet is what a default-deny profile returns" {
  local sc
  sc=$(jq -c '.defaultErrnoRet = 42 | .syscalls[0].names -= ["mkdir","mkdirat"]' "$PROFILE")
  bundle_with "$sc" sh -c "$MKDIR; echo still-running"
  run ar run --bundle "$B" sc-deferrno
  [ "$status" -eq 0 ]
  [[ "$output" == *"No message of desired type"* ]]   # ENOMSG = 42
  [[ "$output" == *absent* && "$output" == *still-running* ]]
}

@test "KILL, KILL_THREAD, KILL_PROCESS and TRAP end the caller with SIGSYS" {
  local act
  for act in SCMP_ACT_KILL SCMP_ACT_KILL_THREAD SCMP_ACT_KILL_PROCESS SCMP_ACT_TRAP; do
    rm -rf "$B"
    bundle_with "$(allow_but "[{\"names\":[\"sync\"],\"action\":\"$act\"}]")" sh -c 'sync; echo "sync=$?"'
    run ar run --bundle "$B" "sc-${act,,}"
    [ "$status" -eq 0 ]
    [[ "$output" == *"sync=159"* ]]   # 128 + SIGSYS
  done
}

@test "TRACE without a tracer fails the call with ENOSYS; LOG and ALLOW let it through" {
  bundle_with "$(allow_but '[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_TRACE"}]')" sh -c "$MKDIR"
  run ar run --bundle "$B" sc-trace
  [ "$status" -eq 0 ]
  [[ "$output" == *"Function not implemented"* && "$output" == *absent* ]]

  local sc
  sc=$(jq -c '.syscalls[0].names += ["mkdir","mkdirat"] | .syscalls += [{names:["sync"],action:"SCMP_ACT_LOG"}]' "$PROFILE")
  rm -rf "$B"
  bundle_with "$sc" sh -c "$MKDIR; sync; echo sync=\$?"
  run ar run --bundle "$B" sc-log
  [ "$status" -eq 0 ]
  [[ "$output" == *made* && "$output" == *"sync=0"* ]]
}

# kill(pid, 0) inside the container: ENOMSG (42) when the rule matches, else
# success for pid 1 or ESRCH for pids that do not exist.
probe_kill() {
  local rule=$1; shift
  local script='for p in '"$*"'; do kill -0 $p 2>/dev/null && echo "$p:ok" || { kill -0 $p 2>&1 | grep -q "desired type" && echo "$p:hit" || echo "$p:miss"; }; done'
  rm -rf "$B"
  bundle_with "$(allow_but "[$rule]")" sh -c "$script"
  run ar run --bundle "$B" "sc-op-$RANDOM"
  [ "$status" -eq 0 ]
  echo "$output" | tr '\n' ' '
}

rule() {  # rule OP VALUE [VALUETWO] [INDEX]
  jq -cn --arg op "$1" --argjson v "$2" --argjson v2 "${3:-0}" --argjson i "${4:-0}" \
    '{names:["kill"], action:"SCMP_ACT_ERRNO", errnoRet:42, args:[{index:$i, value:$v, valueTwo:$v2, op:$op}]}'
}

@test "each of the seven operators compares as documented" {
  local out
  out=$(probe_kill "$(rule SCMP_CMP_EQ 7)" 7 6 1);           [ "$out" = "7:hit 6:miss 1:ok " ]
  out=$(probe_kill "$(rule SCMP_CMP_NE 1)" 1 9);             [ "$out" = "1:ok 9:hit " ]
  out=$(probe_kill "$(rule SCMP_CMP_LT 5)" 4 5);             [ "$out" = "4:hit 5:miss " ]
  out=$(probe_kill "$(rule SCMP_CMP_LE 5)" 5 6);             [ "$out" = "5:hit 6:miss " ]
  out=$(probe_kill "$(rule SCMP_CMP_GT 5)" 6 5 1);           [ "$out" = "6:hit 5:miss 1:ok " ]
  out=$(probe_kill "$(rule SCMP_CMP_GE 5)" 5 4);             [ "$out" = "5:hit 4:miss " ]
  out=$(probe_kill "$(rule SCMP_CMP_MASKED_EQ 240 16)" 15 16 31 32); [ "$out" = "15:miss 16:hit 31:hit 32:miss " ]
}

@test "args: distinct indexes AND in one rule, a repeated index ORs" {
  local r out
  r='{"names":["kill"],"action":"SCMP_ACT_ERRNO","errnoRet":42,"args":[{"index":0,"value":5,"op":"SCMP_CMP_GE"},{"index":1,"value":0,"op":"SCMP_CMP_EQ"}]}'
  out=$(probe_kill "$r" 6 4);  [ "$out" = "6:hit 4:miss " ]
  r='{"names":["kill"],"action":"SCMP_ACT_ERRNO","errnoRet":42,"args":[{"index":0,"value":3,"op":"SCMP_CMP_EQ"},{"index":0,"value":7,"op":"SCMP_CMP_EQ"}]}'
  out=$(probe_kill "$r" 3 7 5);  [ "$out" = "3:hit 7:hit 5:miss " ]
}

@test "architectures: listed ones compile, unknown to libseccomp is an error with its JSON path" {
  local sc
  sc=$(jq -cn '{defaultAction:"SCMP_ACT_ALLOW", architectures:["SCMP_ARCH_X86_64","SCMP_ARCH_X86","SCMP_ARCH_X32"],
        syscalls:[{names:["mkdir","mkdirat"],action:"SCMP_ACT_ERRNO",errnoRet:28}]}')
  bundle_with "$sc" sh -c "$MKDIR"
  run ar run --bundle "$B" sc-arch
  [ "$status" -eq 0 ]
  [[ "$output" == *"No space left on device"* ]]

  config_edit "$B" '.linux.seccomp.architectures = ["SCMP_ARCH_X86_64", "SCMP_ARCH_NOSUCH"]'
  run ar run --bundle "$B" sc-arch-bad
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux.seccomp.architectures[1]"* ]]
  [ ! -e "$ROOT/sc-arch-bad" ]

  # A name the spec knows but libseccomp 2.5 does not (loongarch64 came in
  # 2.6): refused with its path, never silently dropped.
  case "$(pkg-config --modversion libseccomp 2>/dev/null)" in
    2.5.*)
      config_edit "$B" '.linux.seccomp.architectures = ["SCMP_ARCH_X86_64", "SCMP_ARCH_LOONGARCH64"]'
      run ar run --bundle "$B" sc-arch-loong
      [ "$status" -ne 0 ]
      [[ "$output" == *"linux.seccomp.architectures[1]"* ]]
      [ ! -e "$ROOT/sc-arch-loong" ] ;;
  esac
}

@test "a syscall name unknown to libseccomp is skipped, the rest of the rule applies" {
  bundle_with "$(allow_but '[{"names":["no_such_syscall_at_all","mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO","errnoRet":28}]')" sh -c "$MKDIR"
  run ar --debug run --bundle "$B" sc-unknown
  [ "$status" -eq 0 ]
  [[ "$output" == *"No space left on device"* ]]
  [[ "$output" == *no_such_syscall_at_all* ]]   # the debug line naming what was skipped
}

@test "unknown action, operator or flag: error naming the JSON path, nothing created" {
  bundle_with "$(allow_but '[{"names":["sync"],"action":"SCMP_ACT_ERRNO"},{"names":["mkdir"],"action":"SCMP_ACT_BOGUS"}]')" true
  run ar run --bundle "$B" sc-badact
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux.seccomp.syscalls[1].action"* ]]
  [ ! -e "$ROOT/sc-badact" ]

  config_edit "$B" '.linux.seccomp.syscalls[1] = {names:["mkdir"], action:"SCMP_ACT_ERRNO", args:[{index:0, value:1, op:"SCMP_CMP_BOGUS"}]}'
  run ar run --bundle "$B" sc-badop
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux.seccomp.syscalls[1].args[0].op"* ]]

  config_edit "$B" '.linux.seccomp.syscalls |= .[0:1] | .linux.seccomp.flags = ["SECCOMP_FILTER_FLAG_BOGUS"]'
  run ar run --bundle "$B" sc-badflag
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux.seccomp.flags[0]"* ]]
}

@test "flags LOG, SPEC_ALLOW, TSYNC are accepted and the filter still applies" {
  local sc
  sc=$(allow_but '[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO","errnoRet":28}]' |
       jq -c '.flags = ["SECCOMP_FILTER_FLAG_LOG","SECCOMP_FILTER_FLAG_SPEC_ALLOW","SECCOMP_FILTER_FLAG_TSYNC"]')
  bundle_with "$sc" sh -c "$MKDIR"
  run ar run --bundle "$B" sc-flags
  [ "$status" -eq 0 ]
  [[ "$output" == *"No space left on device"* ]]
}

@test "a profile that denies execve fails with a clear message" {
  bundle_with "$(allow_but '[{"names":["execve"],"action":"SCMP_ACT_ERRNO"}]')" true
  run ar run --bundle "$B" sc-noexec
  [ "$status" -ne 0 ]
  [[ "$output" == *"seccomp profile denies execve"* ]]
  [ ! -e "$ROOT/sc-noexec" ]
}

@test "SCMP_ACT_NOTIFY: the agent gets the state and the fd, and answers mkdir for the container" {
  [ -x "$AGENT_BIN" ] || skip "tests/seccomp-notify-agent not built"
  local sock=$BATS_TEST_TMPDIR/agent.sock state=$BATS_TEST_TMPDIR/agent-state.json
  "$AGENT_BIN" "$sock" "$state" &
  track_pid $!
  local i; for i in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
  local sc
  sc=$(allow_but '[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_NOTIFY"}]' |
       jq -c --arg p "$sock" '.listenerPath = $p | .listenerMetadata = "agent-meta"')
  bundle_with "$sc" sh -c "$MKDIR"
  run ar run --bundle "$B" sc-notify
  [ "$status" -eq 0 ]
  [[ "$output" == *"rc=0"* && "$output" == *absent* ]]   # success, yet nothing was made
  [ "$(jq -r '.fds[0]' "$state")" = seccompFd ]
  [ "$(jq -r '.metadata' "$state")" = agent-meta ]
  [ "$(jq -r '.state.id' "$state")" = sc-notify ]
  [ "$(jq -r '.pid' "$state")" -gt 0 ]
  [ "$(jq -r '.ociVersion' "$state")" != null ]
}

@test "SCMP_ACT_NOTIFY: the agent's errno reaches the container" {
  [ -x "$AGENT_BIN" ] || skip "tests/seccomp-notify-agent not built"
  local sock=$BATS_TEST_TMPDIR/agent.sock
  "$AGENT_BIN" "$sock" "$BATS_TEST_TMPDIR/st.json" 28 &
  track_pid $!
  local i; for i in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
  bundle_with "$(allow_but '[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_NOTIFY"}]' | jq -c --arg p "$sock" '.listenerPath = $p')" sh -c "$MKDIR"
  run ar run --bundle "$B" sc-notify-errno
  [ "$status" -eq 0 ]
  [[ "$output" == *"No space left on device"* ]]
}

@test "the compiled filter is cached under the state root and reused" {
  bundle_with "$(cat "$PROFILE")" true
  run ar --debug run --bundle "$B" sc-cache1
  [ "$status" -eq 0 ]
  [[ "$output" == *"seccomp: compiled a filter"* ]]
  local f
  f=$(ls "$ROOT"/.seccomp-cache/*.bpf)
  [ "$(stat -c %a "$f")" = 600 ]
  # The entry's header (magic 8, count 4, reserved 4, key 32) carries the
  # SHA-256 of the instructions after it: ours agrees with coreutils'.
  [ "$(od -An -tx1 -j48 -N32 "$f" | tr -d ' \n')" = "$(tail -c +81 "$f" | sha256sum | cut -d' ' -f1)" ]
  [ $(( ($(stat -c %s "$f") - 80) / 8 )) -eq "$(od -An -tu4 -j8 -N4 "$f" | tr -d ' ')" ]
  run ar --debug run --bundle "$B" sc-cache2
  [ "$status" -eq 0 ]
  [[ "$output" == *"from the cache"* ]]
  # A damaged entry is ignored and rewritten, never loaded.
  printf 'garbage' >"$f"
  run ar --debug run --bundle "$B" sc-cache3
  [ "$status" -eq 0 ]
  [[ "$output" == *"seccomp: compiled a filter"* ]]
}

# The agent profile, probed from inside with the static syscall prober
# (the script is a file: make_bundle splits arguments on newlines).
@test "agent profile: denies namespaces, mount, keys, io_uring, bpf, TIOCSTI; ordinary commands work" {
  [ -x "$AGENT_BIN" ] || skip "tests/seccomp-notify-agent not built"
  make_bundle "$B" sh /probe.sh
  cat >"$B/rootfs/probe.sh" <<'EOF'
    P=/probe
    echo "keyctl $($P --syscall 250 0 0)"; echo "add_key $($P --syscall 248 0 0 0 0 0)"
    echo "io_uring_setup $($P --syscall 425 1 0)"; echo "bpf $($P --syscall 321 0 0 0)"
    echo "userfaultfd $($P --syscall 323 0)"; echo "perf_event_open $($P --syscall 298 0 0 0 0 0)"
    echo "open_by_handle_at $($P --syscall 304 0 0 0)"; echo "setns $($P --syscall 308 0 0)"
    echo "unshare_user $($P --syscall 272 0x10000000)"; echo "unshare_files $($P --syscall 272 0x400)"
    echo "clone_newuser $($P --syscall 56 0x10000011 0 0 0 0)"; echo "clone3 $($P --syscall 435 0 0)"
    echo "tiocsti $($P --syscall 16 0 0x5412 0)"; echo "tiocsti_high $($P --syscall 16 0 0x100005412 0)"
    echo "tioclinux $($P --syscall 16 0 0x541c 0)"; echo "tcgets $($P --syscall 16 0 0x5401 0)"
    echo "personality_query $($P --syscall 135 0xffffffff)"; echo "personality_norandom $($P --syscall 135 0x40000)"
    echo "init_module $($P --syscall 175 0 0 0)"; echo "pivot_root $($P --syscall 155 0 0)"
    unshare -U true 2>/dev/null; echo "unshare-U rc=$?"
    mount -t tmpfs none /mnt 2>/dev/null; echo "mount rc=$?"
    mkdir /tmp/d && echo hello >/tmp/d/f && cat /tmp/d/f | wc -c && ls /tmp/d
EOF
  # EPERM (1) is also what the kernel says to a process without capabilities:
  # turn the profile's EPERMs into ENOMSG (42) so a denial is seccomp's doing.
  config_edit "$B" '.linux.seccomp = ($p[0] | .defaultErrnoRet = 42 | (.syscalls[] | select(.errnoRet == 1) | .errnoRet) = 42)
                    | .root.readonly = false' --slurpfile p "$PROFILE"
  cp "$AGENT_BIN" "$B/rootfs/probe"
  run ar run --bundle "$B" sc-agent
  echo "$output"
  [ "$status" -eq 0 ]
  local c
  for c in keyctl add_key io_uring_setup bpf userfaultfd perf_event_open open_by_handle_at setns unshare_user \
           clone_newuser tiocsti tiocsti_high tioclinux personality_norandom init_module pivot_root; do
    [[ "$output" == *"$c errno 42"* ]] || { echo "not denied: $c"; false; }
  done
  [[ "$output" == *"clone3 errno 38"* ]]        # ENOSYS, so libc falls back to clone
  [[ "$output" == *"unshare_files ok"* ]]
  [[ "$output" == *"tcgets errno 25"* ]]        # allowed through to the kernel: ENOTTY
  [[ "$output" == *"personality_query ok"* ]]
  [[ "$output" == *"unshare-U rc=1"* ]]
  [[ "$output" != *"mount rc=0"* ]]
  [[ "$output" == *$'6\nf'* ]]                   # ordinary commands work
}

# The agent profile without the calls numbered from clone3 on: one written
# before clone3 existed (names from the kernel headers' numbers).
profile_before_clone3() {
  local h=/usr/include/x86_64-linux-gnu/asm/unistd_64.h
  [ "$(uname -m)" = x86_64 ] && [ -r "$h" ] || skip "needs x86-64 and $h"
  local old
  old=$(awk '$1 == "#define" && $2 ~ /^__NR_/ && $3 < 435 { sub(/^__NR_/, "", $2); print $2 }' "$h" | jq -R . | jq -sc .)
  jq -c --argjson old "$old" '.syscalls |= map(.names |= map(select(. as $n | $old | index($n)))) | .syscalls |= map(select(.names != []))' "$PROFILE"
}

@test "a profile without close_range starts the process, without noNewPrivileges too" {
  local sc nnp
  sc=$(jq -c '.syscalls |= map(.names -= ["close_range"])' "$PROFILE")
  for nnp in false true; do
    rm -rf "$B"
    bundle_with "$sc" sh -c 'echo started'
    config_edit "$B" '.process.noNewPrivileges = $n' --argjson n "$nnp"
    run ar run --bundle "$B" "sc-noclose-$nnp"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = started ]
  done
}

@test "a syscall newer than every one the profile names fails with ENOSYS, an older one with the default errno" {
  [ -x "$AGENT_BIN" ] || skip "tests/seccomp-notify-agent not built"
  bundle_with "$(jq -c '.defaultErrnoRet = 42' "$PROFILE")" sh -c '/probe --syscall 1000; /probe --syscall 153'
  cp "$AGENT_BIN" "$B/rootfs/probe"
  run ar run --bundle "$B" sc-enosys
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = $'errno 38\nerrno 42' ]    # syscall(1000): ENOSYS; vhangup (153, unnamed): the default
}

@test "pthread_create and posix_spawn (clone3 in glibc) work under a profile that predates clone3" {
  [ -x "$AGENT_BIN" ] || skip "tests/seccomp-notify-agent not built"
  local sc
  sc=$(profile_before_clone3)
  [ "$(jq '[.syscalls[].names[] | select(. == "clone3" or . == "close_range")] | length' <<<"$sc")" -eq 0 ]
  bundle_with "$sc" /probe --spawn /bin/true
  cp "$AGENT_BIN" "$B/rootfs/probe"
  run ar run --bundle "$B" sc-clone3
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = ok ]
}

@test "SCMP_ACT_NOTIFY for exec: the listener reaches listenerPath, with and without noNewPrivileges" {
  [ -x "$AGENT_BIN" ] || skip "tests/seccomp-notify-agent not built"
  local sock=$BATS_TEST_TMPDIR/agent.sock state=$BATS_TEST_TMPDIR/agent-state.json nnp
  for nnp in false true; do
    rm -rf "$B" "$sock" "$state"
    "$AGENT_BIN" "$sock" "$state" &
    track_pid $!
    wait_for test -S "$sock"
    bundle_with "$(allow_but '[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_NOTIFY"}]' | jq -c --arg p "$sock" '.listenerPath = $p')" sleep 100
    config_edit "$B" '.process.noNewPrivileges = $n' --argjson n "$nnp"
    # the init's listener goes to the first agent; exec's to a second one
    ar run -d --bundle "$B" "sc-nx-$nnp" </dev/null >/dev/null
    rm -f "$sock" "$state"
    "$AGENT_BIN" "$sock" "$state" &
    track_pid $!
    wait_for test -S "$sock"
    run ar exec "sc-nx-$nnp" sh -c "$MKDIR"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"rc=0"* && "$output" == *absent* ]]
    [ "$(jq -r '.state.id' "$state")" = "sc-nx-$nnp" ]
    [ "$(jq -r '.pid' "$state")" -gt 0 ]
    ar delete -f "sc-nx-$nnp"
  done
}

@test "SCMP_ACT_NOTIFY: write is refused, and a missing agent is named, in runc's words" {
  bundle_with "$(allow_but '[{"names":["write"],"action":"SCMP_ACT_NOTIFY"}]' | jq -c --arg p "$BATS_TEST_TMPDIR/none.sock" '.listenerPath = $p')" true
  run ar run --bundle "$B" sc-nw
  [ "$status" -ne 0 ]
  [[ "$output" == *"SCMP_ACT_NOTIFY cannot be used for the write syscall"* ]]
  [ ! -e "$ROOT/sc-nw" ]
  rm -rf "$B"
  bundle_with "$(allow_but '[{"names":["mkdir"],"action":"SCMP_ACT_NOTIFY"}]' | jq -c --arg p "$BATS_TEST_TMPDIR/none.sock" '.listenerPath = $p')" true
  run ar run --bundle "$B" sc-noagent
  [ "$status" -ne 0 ]
  [[ "$output" == *"failed to connect with seccomp agent"* ]]
  [ ! -e "$ROOT/sc-noagent" ]
}
