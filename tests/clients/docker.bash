# dockerd (Debian's docker.io) private to one bats file: its own containerd,
# data root, exec root, pid file, key file and socket, all in the file's temp
# folder, started in setup_file and stopped by pid in teardown_file. It runs
# in a network namespace of its own with --iptables=false --ip-forward=false
# --ip-masq=false, so the host's firewall, forwarding and interfaces stay as
# they were, and puts its containers' cgroups under a parent of its own. One thing it makes
# outside: /run/docker/plugins (a constant), removed when it was not there.
# Load after ../helpers.
#
# /usr/bin/docker is docker.io's client (an unrelated newer client may come
# first in PATH); dockerd knows agentrun by --add-runtime.

DOCKER=/usr/bin/docker
DIMAGE=artest-busybox:latest
CLIENTS=$SRCDIR/tests/clients
. "$CLIENTS/cgroups.bash"

docker_setup_file() {
  [ -x "$DOCKER" ] || skip "needs docker.io's client at $DOCKER"
  need_cmd dockerd containerd containerd-shim-runc-v2 runc unshare nsenter ip
  export DK=$BATS_FILE_TMPDIR/dk
  mkdir -p "$DK"/{ctd,data,exec,cfg}
  export DK_CGROUP=artest-docker-$$
  cgroup_note_absent "$DK_CGROUP" "$DK/cgroups-made"
  # dockerd makes /run/docker/plugins whatever its exec root (a constant)
  [ -e /run/docker ] || touch "$DK/run-docker-made"
  # and the runc shim's ttrpc sockets go to /run/containerd/s
  [ -e /run/containerd ] || touch "$DK/run-containerd-made"
  cat >"$DK/containerd.toml" <<EOS
version = 2
root = "$DK/ctd/root"
state = "$DK/ctd/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$DK/containerd.sock"
[ttrpc]
  address = "$DK/containerd.sock.ttrpc"
[debug]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$DK/ctd/opt"
EOS
  containerd --config "$DK/containerd.toml" >"$DK/containerd.log" 2>&1 &
  echo $! >"$DK/containerd.pid"
  local i
  for i in $(seq 100); do [ -S "$DK/containerd.sock" ] && break; sleep 0.1; done
  # the trust key would go to /etc/docker/key.json otherwise
  echo "{\"deprecated-key-path\": \"$DK/key.json\"}" >"$DK/daemon.json"
  # In a network namespace of its own (unshare -n, lo up): its default
  # bridge docker0 and anything it sets lives and dies there, and that
  # namespace plays the host for the bridge test.
  unshare --net sh -c 'ip link set lo up && exec "$@"' sh \
    dockerd --config-file "$DK/daemon.json" --data-root "$DK/data" --exec-root "$DK/exec" \
    --pidfile "$DK/dockerd.pid" -H "unix://$DK/docker.sock" --containerd "$DK/containerd.sock" \
    --iptables=false --ip-forward=false --ip-masq=false --storage-driver vfs \
    --cgroup-parent "/$DK_CGROUP" --add-runtime "agentrun=$AGENTRUN" >"$DK/dockerd.log" 2>&1 &
  echo $! >"$DK/dockerd.pid.ours"
  for i in $(seq 150); do dk version >/dev/null 2>&1 && break; sleep 0.1; done
  dk version >/dev/null || { tail -20 "$DK/dockerd.log" >&2; return 1; }
  make_busybox_rootfs "$DK/rootfs" || return 1
  tar -C "$DK/rootfs" -c . | dk import - "$DIMAGE" >/dev/null
}

dk() { DOCKER_CONFIG=$DK/cfg "$DOCKER" -H "unix://$DK/docker.sock" "$@"; }

docker_teardown() {
  [ -n "${DK:-}" ] || return 0
  local ids
  ids=$(dk ps -aq 2>/dev/null) || return 0
  [ -z "$ids" ] || dk rm -f $ids >/dev/null 2>&1 || true
}

# stop_pid FILE: stop the process whose pid FILE holds, KILL after 5 s.
stop_pid() {
  local pid _
  pid=$(cat "$1" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

docker_teardown_file() {
  [ -n "${DK:-}" ] || return 0
  docker_teardown
  stop_pid "$DK/dockerd.pid.ours"
  stop_pid "$DK/containerd.pid"
  local m
  for m in $(awk -v d="$DK/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  cgroup_remove_noted "$DK/cgroups-made"
  if [ -e "$DK/run-docker-made" ]; then rmdir /run/docker/plugins /run/docker 2>/dev/null || true; fi
  if [ -e "$DK/run-containerd-made" ]; then rmdir /run/containerd/s /run/containerd 2>/dev/null || true; fi
}

# The v1 (or v2) cgroup file of a running container: dk_cgfile ID CTRL FILE.
dk_cgfile() {
  local full
  full=$(dk inspect -f '{{.Id}}' "$1") || return 1
  if [ -d "/sys/fs/cgroup/$2" ]; then
    cat "/sys/fs/cgroup/$2/$DK_CGROUP/$full/$3"
  else
    cat "/sys/fs/cgroup/$DK_CGROUP/$full/$3"
  fi
}
