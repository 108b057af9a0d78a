# containerd 1.6 with its CRI plugin, private to one bats file: its own
# root, state, sockets, CNI folder (a loopback-only network, unused: the
# pods have the node's network), the pause image made here (a static
# binary, tests/clients/pause.c) and busybox, both imported with ctr. Its
# runtime handlers are the build's contrib/containerd/config.toml (runc and
# agentrun) with the test's binary and state root. Driven by
# tests/clients/cri-client.js (Node, @grpc/grpc-js and @grpc/proto-loader
# from the npm registry, cached in $CRI_NPM_CACHE between runs). Load after
# ../helpers.

CLIENTS=$SRCDIR/tests/clients
. "$CLIENTS/cgroups.bash"
CRI_NPM_CACHE=${CRI_NPM_CACHE:-/var/cache/agentrun-tests/npm/cri-client}
CRI_PAUSE=localhost/artest-pause:1
CRI_BUSYBOX=localhost/artest-busybox:1

# The npm packages, installed once into the cache; skip when the registry
# cannot be reached.
cri_npm() {
  need_cmd node npm
  if [ ! -d "$CRI_NPM_CACHE/node_modules/@grpc/grpc-js" ] || [ ! -d "$CRI_NPM_CACHE/node_modules/@grpc/proto-loader" ]; then
    mkdir -p "$CRI_NPM_CACHE"
    timeout 300 npm install --prefix "$CRI_NPM_CACHE" --no-audit --no-fund --silent \
      @grpc/grpc-js@1 @grpc/proto-loader@0 >"$BATS_FILE_TMPDIR/npm.log" 2>&1 \
      || skip "npm could not install @grpc/grpc-js and @grpc/proto-loader: $(tail -1 "$BATS_FILE_TMPDIR/npm.log")"
  fi
}

cri_setup_file() {
  need_cmd containerd ctr containerd-shim-runc-v2 runc gcc
  [ -x /usr/lib/cni/loopback ] || skip "needs the CNI loopback plugin (containernetworking-plugins)"
  cri_npm
  export CR=$BATS_FILE_TMPDIR/cri
  mkdir -p "$CR"/{root,state,opt,net.d,logs,runc,img}
  export CR_CGROUP=artest-cri-$$
  cgroup_note_absent "$CR_CGROUP" "$CR/cgroups-made"
  # the runc shim's ttrpc sockets go to /run/containerd/s (a constant)
  [ -e /run/containerd ] || touch "$CR/run-containerd-made"
  cat >"$CR/net.d/10-lo.conflist" <<EOS
{"cniVersion": "0.4.0", "name": "artest-lo", "plugins": [{"type": "loopback"}]}
EOS
  # The snippet's handlers, with the binary under test and a state root of
  # ours; then the CRI settings of this test (an import would replace the
  # whole CRI table, so the two are one file here).
  {
    cat <<EOS
version = 2
root = "$CR/root"
state = "$CR/state"
[grpc]
  address = "$CR/containerd.sock"
[ttrpc]
  address = "$CR/containerd.sock.ttrpc"
[debug]
  address = ""
  level = "info"
[plugins."io.containerd.internal.v1.opt"]
  path = "$CR/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$CRI_PAUSE"
  netns_mounts_under_state_dir = true
  # no lower oom_score_adj than ours (the sandbox asks for -998)
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = "$CR/net.d"
EOS
    sed -e '/^version = /d' -e "s|BinaryName = .*|BinaryName = \"$AGENTRUN\"|" \
      -e "s|Root = .*|Root = \"$CR/agentrun\"|" "$BUILDDIR/contrib/containerd/config.toml"
    # runc's state in our folder too (its default is /run/containerd/runc)
    cat <<EOS
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    Root = "$CR/runc"
EOS
  } >"$CR/config.toml"
  containerd --config "$CR/config.toml" >"$CR/containerd.log" 2>&1 &
  echo $! >"$CR/containerd.pid"
  local i
  for i in $(seq 100); do cri Version '{}' >/dev/null 2>&1 && break; sleep 0.1; done
  cri Version '{}' >/dev/null || { tail -20 "$CR/containerd.log" >&2; return 1; }
  mkdir -p "$CR/img/pause"
  gcc -static -O2 -o "$CR/img/pause/pause" "$CLIENTS/pause.c" || return 1
  "$CLIENTS/oci-image.sh" "$CR/img/pause" "$CRI_PAUSE" "$CR/img/pause.tar" '["/pause"]' || return 1
  make_busybox_rootfs "$CR/img/busybox" || return 1
  "$CLIENTS/oci-image.sh" "$CR/img/busybox" "$CRI_BUSYBOX" "$CR/img/busybox.tar" || return 1
  cctr images import "$CR/img/pause.tar" >/dev/null && cctr images import "$CR/img/busybox.tar" >/dev/null
}

cctr() { ctr --address "$CR/containerd.sock" --namespace k8s.io "$@"; }

# cri METHOD JSON: one CRI call; the response's JSON on stdout.
cri() { NODE_PATH=$CRI_NPM_CACHE/node_modules node "$CLIENTS/cri-client.js" "$CR/containerd.sock" "$@"; }

# Whatever a test left: its containers and pods, stopped and removed.
cri_teardown() {
  [ -n "${CR:-}" ] || return 0
  local id
  for id in $(cctr containers ls -q 2>/dev/null); do
    cctr tasks kill -s KILL "$id" >/dev/null 2>&1 || true
  done
  for id in $(cat "$CR/pods" 2>/dev/null); do
    cri StopPodSandbox "{\"pod_sandbox_id\":\"$id\"}" >/dev/null 2>&1 || true
    cri RemovePodSandbox "{\"pod_sandbox_id\":\"$id\"}" >/dev/null 2>&1 || true
  done
  rm -f "$CR/pods"
}

cri_teardown_file() {
  [ -n "${CR:-}" ] || return 0
  cri_teardown
  local pid _
  pid=$(cat "$CR/containerd.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  # a shim of ours left by a failed test: its container processes, then it
  local p c
  for p in $(grep -lsF -- "$CR/containerd.sock" /proc/[0-9]*/cmdline | cut -d/ -f3); do
    for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do kill -9 "$c" 2>/dev/null || true; done
    kill -9 "$p" 2>/dev/null || true
  done
  local m
  for m in $(awk -v d="$CR/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  cgroup_remove_noted "$CR/cgroups-made"
  if [ -e "$CR/run-containerd-made" ]; then rmdir /run/containerd/s /run/containerd 2>/dev/null || true; fi
}
