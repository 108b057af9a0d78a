# containerd 1.6 private to one bats file: its own root, state, sockets and
# config (which imports the build's contrib/containerd/config.toml), started in
# setup_file and stopped by pid in teardown_file. Load after ../helpers.
#
#   TEST_RUNTIME=/usr/sbin/runc bats tests/containerd.bats  # prove the tests on runc
#   TEST_ARGV_LOG=/tmp/argv.log bats tests/containerd.bats  # record runtime calls
#
# One thing is outside the temp dir and cannot be moved: containerd 1.6's
# runc shim puts its ttrpc socket in /run/containerd/s/<hash> (a constant in
# containerd); the shim removes it when the task is deleted.

RUNTIME=${TEST_RUNTIME:-$AGENTRUN}
CIMAGE=docker.io/library/agentrun-busybox:test
CLIENTS=$SRCDIR/tests/clients
. "$CLIENTS/cgroups.bash"

containerd_setup_file() {
  need_cmd containerd ctr containerd-shim-runc-v2 jq busybox
  export CT=$BATS_FILE_TMPDIR/ctd
  mkdir -p "$CT"/{root,state,opt,runc,bin}
  # A containerd namespace of our own: ctr puts each task's cgroup under
  # /<namespace>/<id>, and the runtime's state under $CT/runc/<namespace>.
  export CNS=agentrun-test-$$
  cgroup_note_absent "$CNS" "$CT/cgroups-made"
  cat >"$CT/config.toml" <<EOS
version = 2
root = "$CT/root"
state = "$CT/state"
imports = ["$BUILDDIR/contrib/containerd/config.toml"]
# The CRI plugin would set up CNI and a streaming server on the host; these
# tests drive containerd through ctr, which does not need it.
disabled_plugins = ["io.containerd.grpc.v1.cri"]

[grpc]
  address = "$CT/containerd.sock"
[ttrpc]
  address = "$CT/containerd.sock.ttrpc"
[debug]
  address = ""
  level = "info"
[plugins."io.containerd.internal.v1.opt"]
  path = "$CT/opt"
EOS
  # The runtime the shim runs: a wrapper that logs argv when asked, and
  # otherwise the runtime itself.
  export CRUNTIME=$RUNTIME
  if [ -n "${TEST_ARGV_LOG:-}" ]; then
    CRUNTIME=$CT/bin/$(basename "$RUNTIME")
    "$CLIENTS/argv-wrapper.sh" "$RUNTIME" "$CRUNTIME" "" "$TEST_ARGV_LOG" || return 1
  fi
  containerd --config "$CT/config.toml" >"$CT/containerd.log" 2>&1 &
  echo $! >"$CT/containerd.pid"
  local i
  for i in $(seq 100); do
    [ -S "$CT/containerd.sock" ] && c version >/dev/null 2>&1 && break
    sleep 0.1
  done
  c version >/dev/null || { cat "$CT/containerd.log" >&2; return 1; }
  make_busybox_rootfs "$CT/rootfs" || return 1
  "$CLIENTS/oci-image.sh" "$CT/rootfs" "$CIMAGE" "$CT/image.tar" || return 1
  c images import "$CT/image.tar" >/dev/null
}

c() { ctr --address "$CT/containerd.sock" --namespace "$CNS" "$@"; }

# ctr run with the runtime under test, its state root under $CT.
crun_() { c run --runc-binary "$CRUNTIME" --runc-root "$CT/runc" "$@"; }

# Remove every task and container left (per test).
containerd_teardown() {
  [ -n "${CT:-}" ] || return 0
  local id
  for id in $(c containers ls -q 2>/dev/null); do
    c tasks kill -a -s KILL "$id" >/dev/null 2>&1 || true
    c tasks delete -f "$id" >/dev/null 2>&1 || true
    c containers delete "$id" >/dev/null 2>&1 || true
  done
}

containerd_teardown_file() {
  [ -n "${CT:-}" ] || return 0
  containerd_teardown
  c images rm "$CIMAGE" >/dev/null 2>&1 || true
  c namespaces rm "$CNS" >/dev/null 2>&1 || true
  local pid
  pid=$(cat "$CT/containerd.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || true
  local _
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  local m
  for m in $(awk -v d="$CT/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  cgroup_remove_noted "$CT/cgroups-made"
}

runtime_name() { basename "$RUNTIME"; }
is_runc() { [ "$(runtime_name)" = runc ]; }
