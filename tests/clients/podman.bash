# podman with a store, config, locks, events and networks private to one bats
# file, driving the runtime under test. Load after ../helpers.
#
#   TEST_RUNTIME=/usr/sbin/runc bats tests/podman.bats   # prove the tests on runc
#   TEST_ARGV_LOG=/tmp/argv.log bats tests/podman.bats   # record every runtime call
#
# Nothing on the host is written but each container's cgroups (removed with
# it; libpod_parent at the end if this file made it): CONTAINERS_CONF makes
# podman read only our containers.conf (built from contrib/containers.conf),
# locks are files instead of the host's /dev/shm/libpod_lock, the runtime's
# state root is under $PT, and the default network is "none" because a CNI
# bridge would add an interface and iptables rules to the host's network
# namespace (tests that need a network namespace make their own).

RUNTIME=${TEST_RUNTIME:-$AGENTRUN}
IMAGE=localhost/agentrun-busybox:test
CLIENTS=$SRCDIR/tests/clients
. "$CLIENTS/cgroups.bash"

# The runtime podman is given: a wrapper of the same name as the runtime
# (podman looks the name up in runtime_supports_json) that adds --root under
# $PT, and logs argv when TEST_ARGV_LOG is set.
podman_runtime_path() {
  local w
  w=$PT/bin/$(basename "$RUNTIME")
  mkdir -p "$PT/bin" "$PT/rstate"
  "$CLIENTS/argv-wrapper.sh" "$RUNTIME" "$w" "$PT/rstate" "${TEST_ARGV_LOG:-}" || return 1
  echo "$w"
}

podman_setup_file() {
  need_cmd podman conmon python3 busybox
  export PT=$BATS_FILE_TMPDIR/podman
  mkdir -p "$PT"/{tmp,imgtmp,net,hooks.d}
  cgroup_note_absent libpod_parent "$PT/cgroups-made"
  cat >"$PT/storage.conf" <<EOS
[storage]
driver = "overlay"
graphroot = "$PT/storage"
runroot = "$PT/run"
EOS
  : >"$PT/registries.conf"
  # `podman --runtime agentrun` resolves the name through contrib's
  # [engine.runtimes]; the built binary comes first there, wrapped for --root.
  mkdir -p "$PT/byname" "$PT/rstate"
  "$CLIENTS/argv-wrapper.sh" "$AGENTRUN" "$PT/byname/agentrun" "$PT/rstate" "${TEST_ARGV_LOG:-}" || return 1
  python3 "$CLIENTS/mkconf.py" "$BUILDDIR/contrib/containers.conf" "$PT/containers.conf" \
    'containers.default_ulimits=["nofile=1024:1024", "nproc=4096:4096"]' \
    'containers.netns="none"' \
    'containers.log_driver="k8s-file"' \
    "engine.cgroup_manager=\"cgroupfs\"" \
    "engine.events_logger=\"file\"" \
    "engine.events_logfile_path=\"$PT/events.log\"" \
    "engine.tmp_dir=\"$PT/tmp\"" \
    "engine.static_dir=\"$PT/storage/libpod\"" \
    "engine.volume_path=\"$PT/storage/volumes\"" \
    "engine.image_copy_tmp_dir=\"$PT/imgtmp\"" \
    "engine.hooks_dir=[\"$PT/hooks.d\"]" \
    'engine.lock_type="file"' \
    "engine.runtimes.agentrun^=\"$PT/byname/agentrun\"" \
    'network.network_backend="cni"' \
    "network.network_config_dir=\"$PT/net\"" ||
    return 1
  export CONTAINERS_CONF=$PT/containers.conf
  export CONTAINERS_STORAGE_CONF=$PT/storage.conf
  export CONTAINERS_REGISTRIES_CONF=$PT/registries.conf
  export TMPDIR=$PT/imgtmp
  export PODMAN_RUNTIME
  PODMAN_RUNTIME=$(podman_runtime_path) || return 1
  podman_import_busybox
}

# The image: a busybox rootfs tar, imported.
podman_import_busybox() {
  local r=$PT/rootfs
  make_busybox_rootfs "$r" || return 1
  # content under a path tests mount a tmpfs on (tmpcopyup copies it up)
  mkdir -p "$r/srv/seed/sub" && echo seeded >"$r/srv/seed/sub/hello" || return 1
  tar -C "$r" -cf "$PT/rootfs.tar" . || return 1
  pm import -q "$PT/rootfs.tar" "$IMAGE" >/dev/null
}

pm() { podman --runtime "$PODMAN_RUNTIME" "$@"; }

# Per test: remove every container this file's store still has.
podman_teardown() {
  [ -n "${PT:-}" ] || return 0
  pm rm -a -f -t 0 >/dev/null 2>&1 || true
}

podman_teardown_file() {
  [ -n "${PT:-}" ] || return 0
  pm rm -a -f -t 0 >/dev/null 2>&1 || true
  pm rmi -a -f >/dev/null 2>&1 || true
  unmount_under "$PT"
  cgroup_remove_noted "$PT/cgroups-made"
}

# Lazily unmount whatever is still mounted under DIR (the overlay store),
# deepest first, so bats can remove its temp dir. Only paths under DIR.
unmount_under() {
  local dir=$1 m
  for m in $(awk -v d="$dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
}

# The name the runtime under test is known by (runc, agentrun, ...).
runtime_name() { basename "$RUNTIME"; }
is_runc() { [ "$(runtime_name)" = runc ]; }
