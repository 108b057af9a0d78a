#!/usr/bin/env bats
# The container's filesystem: config mounts and their options, in-root
# resolution of destinations, masked and read-only paths, devices, pivot_root
# and --no-pivot, root.readonly, propagation, and no mount left on the host.
# Every check runs inside a busybox container and looks at behaviour.

load helpers

setup() {
  B=$BATS_TEST_TMPDIR/bundle
  ID=mounts-$BATS_TEST_NUMBER
  make_bundle "$B" true
  config_edit "$B" '.root.readonly = false'
  HOSTDIR=$BATS_TEST_TMPDIR/hostdir
  mkdir -p "$HOSTDIR"
  echo host-data >"$HOSTDIR/file"
}

teardown() {
  cleanup_containers
  kill_tracked
}

# in_ctr SCRIPT [run flags...]: run SCRIPT with /bin/sh in the container, foreground.
in_ctr() {
  local script=$1; shift
  config_edit "$B" '.process.args = ["/bin/sh", "-c", $s]' --arg s "$script"
  run ar run "$@" --bundle "$B" "$ID"
}

add_mount() { config_edit "$B" '.mounts += [$m]' --argjson m "$1"; }

@test "a read-only bind refuses writes, a read-write bind writes through to the host" {
  add_mount "{\"destination\":\"/ro\",\"type\":\"bind\",\"source\":\"$HOSTDIR\",\"options\":[\"rbind\",\"ro\"]}"
  add_mount "{\"destination\":\"/rw\",\"type\":\"bind\",\"source\":\"$HOSTDIR\",\"options\":[\"rbind\",\"rw\"]}"
  in_ctr 'cat /ro/file; if touch /ro/new 2>/dev/null; then echo ro-writable; fi; echo written >/rw/new'
  [ "$status" -eq 0 ]
  [[ "$output" == *host-data* ]]
  [[ "$output" != *ro-writable* ]]
  [ "$(cat "$HOSTDIR/new")" = written ]
}

@test "a bind mount of a file creates a file destination; a relative source is taken from the bundle" {
  cp "$HOSTDIR/file" "$B/relfile"
  add_mount '{"destination":"/etc/bound-file","type":"bind","source":"relfile","options":["bind","ro"]}'
  in_ctr '[ -f /etc/bound-file ] && cat /etc/bound-file'
  [ "$status" -eq 0 ]
  [ "$output" = host-data ]
}

@test "rro makes a bind read-only down to its submounts" {
  mkdir -p "$HOSTDIR/sub"
  add_mount "{\"destination\":\"/tree\",\"type\":\"bind\",\"source\":\"$HOSTDIR\",\"options\":[\"rbind\",\"rw\"]}"
  add_mount '{"destination":"/tree/sub","type":"tmpfs","source":"tmpfs","options":["size=1m"]}'
  add_mount "{\"destination\":\"/rtree\",\"type\":\"bind\",\"source\":\"$B/rootfs/tree\",\"options\":[\"rbind\",\"rro\"]}"
  in_ctr 'touch /tree/sub/ok || exit 9; if touch /rtree/sub/no 2>/dev/null; then echo sub-writable; fi; [ -e /rtree/sub/ok ] && echo same'
  [ "$status" -eq 0 ]
  [[ "$output" != *sub-writable* ]]
}

@test "tmpfs takes size, mode, uid and gid" {
  add_mount '{"destination":"/t","type":"tmpfs","source":"tmpfs","options":["size=1m","mode=1750","uid=12","gid=34"]}'
  in_ctr 'stat -c "%a %u %g" /t; dd if=/dev/zero of=/t/big bs=1024 count=2048 2>/dev/null && echo fits; true'
  [ "$status" -eq 0 ]
  [[ "$output" == *"1750 12 34"* ]]
  [[ "$output" != *fits* ]]
}

@test "noexec stops execution and nodev stops device access, while the same mount without them allows both" {
  add_mount '{"destination":"/locked","type":"tmpfs","source":"tmpfs","options":["noexec","nodev","nosuid"]}'
  add_mount '{"destination":"/open","type":"tmpfs","source":"tmpfs","options":["exec","dev"]}'
  add_mount '{"destination":"/locked-zero","type":"bind","source":"/dev/zero","options":["bind","nodev"]}'
  add_mount '{"destination":"/open-zero","type":"bind","source":"/dev/zero","options":["bind","dev"]}'
  in_ctr 'for d in locked open; do cp /bin/busybox /$d/true
            if /$d/true 2>/dev/null; then echo $d-exec; fi
            if head -c 1 /$d-zero >/dev/null 2>&1; then echo $d-dev; fi; done
          grep " /locked " /proc/self/mountinfo'
  [ "$status" -eq 0 ]
  [[ "$output" == *open-exec* ]]
  [[ "$output" == *open-dev* ]]
  [[ "$output" != *locked-exec* ]]
  [[ "$output" != *locked-dev* ]]
  [[ "$output" == *nosuid* ]]
}

@test "atime options reach the mount" {
  add_mount '{"destination":"/na","type":"tmpfs","source":"tmpfs","options":["noatime","nodiratime"]}'
  add_mount '{"destination":"/sa","type":"tmpfs","source":"tmpfs","options":["strictatime"]}'
  in_ctr 'grep " /na " /proc/self/mountinfo; grep " /sa " /proc/self/mountinfo'
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == *noatime* ]]
  [[ "${lines[0]}" == *nodiratime* ]]
  [[ "${lines[1]}" != *relatime* ]]
  [[ "${lines[1]}" != *noatime* ]]
}

@test "masked files read empty and masked directories are empty and read-only" {
  mkdir -p "$B/rootfs/secretdir"
  echo secret >"$B/rootfs/secret.txt"
  echo secret >"$B/rootfs/secretdir/inner"
  config_edit "$B" '.linux.maskedPaths = ["/secret.txt", "/secretdir", "/does/not/exist"]'
  in_ctr 'echo "[$(cat /secret.txt)]"; echo "[$(ls -A /secretdir)]"; if touch /secretdir/x 2>/dev/null; then echo dir-writable; fi'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "[]" ]
  [ "${lines[1]}" = "[]" ]
  [[ "$output" != *dir-writable* ]]
  [ "$(cat "$B/rootfs/secret.txt")" = secret ]
}

@test "masks below a missing folder are skipped together; a neighbour with the same prefix is still masked" {
  # /nothing is missing: what is below it is too (one lookup for all); a
  # missing /secretdi says nothing of /secretdir, nor /secretdir/ of /secret.txt
  echo secret >"$B/rootfs/secret.txt"
  mkdir -p "$B/rootfs/secretdir"
  echo secret >"$B/rootfs/secretdir/inner"
  config_edit "$B" '.linux.maskedPaths = ["/nothing/a", "/nothing/b/c", "/nothing/d", "/secretdi/x", "/secretdir",
    "/secretdir/gone/x", "/secret.txt"]'
  in_ctr 'echo "[$(cat /secret.txt)]"; echo "[$(ls -A /secretdir)]"'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "[]" ]
  [ "${lines[1]}" = "[]" ]
}

@test "the default masks hide /proc and /sys files" {
  in_ctr 'echo "[$(head -c 20 /proc/timer_list)]"; echo "[$(ls -A /sys/firmware)]"'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "[]" ]
  [ "${lines[1]}" = "[]" ]
}

@test "read-only paths refuse writes" {
  mkdir -p "$B/rootfs/rodir"
  config_edit "$B" '.linux.readonlyPaths += ["/rodir"]'
  in_ctr 'if touch /rodir/x 2>/dev/null; then echo rodir-writable; fi
          if echo x >/proc/sys/kernel/domainname 2>/dev/null; then echo procsys-writable; fi; touch /elsewhere && echo ok'
  [ "$status" -eq 0 ]
  [[ "$output" != *writable* ]]
  [[ "$output" == *ok* ]]
}

@test "a destination symlink pointing at the host's /etc lands inside the rootfs" {
  ln -s /etc "$B/rootfs/etclink"
  ln -s ../../../../../../../../tmp "$B/rootfs/uplink"
  ln -s /nowhere/deeper "$B/rootfs/dangling"
  local name=agentrun-escape-$$-$BATS_TEST_NUMBER
  add_mount "{\"destination\":\"/etclink/$name\",\"type\":\"tmpfs\",\"source\":\"tmpfs\"}"
  add_mount "{\"destination\":\"/uplink/$name\",\"type\":\"bind\",\"source\":\"$HOSTDIR/file\",\"options\":[\"bind\"]}"
  add_mount '{"destination":"/dangling","type":"tmpfs","source":"tmpfs"}'
  in_ctr "grep -c -e ' /etc/$name ' -e ' /tmp/$name ' -e ' /nowhere/deeper ' /proc/self/mountinfo"
  [ "$status" -eq 0 ]
  [ "$output" = 3 ]
  [ ! -e "/etc/$name" ]
  [ ! -e "/tmp/$name" ]
  [ ! -e /nowhere ]
  [ -d "$B/rootfs/etc/$name" ]
  [ -f "$B/rootfs/tmp/$name" ]
  [ -d "$B/rootfs/nowhere/deeper" ]
}

@test "root.readonly makes / read-only but leaves tmpfs mounts writable" {
  config_edit "$B" '.root.readonly = true'
  add_mount '{"destination":"/scratch","type":"tmpfs","source":"tmpfs"}'
  in_ctr 'if touch /newfile 2>/dev/null; then echo root-writable; fi; touch /scratch/x && echo scratch-ok'
  [ "$status" -eq 0 ]
  [[ "$output" != *root-writable* ]]
  [[ "$output" == *scratch-ok* ]]
}

@test "--no-pivot runs in the rootfs with MS_MOVE and chroot" {
  touch "$B/rootfs/marker-$BATS_TEST_NUMBER"
  in_ctr "[ -e /marker-$BATS_TEST_NUMBER ] && [ ! -e $BATS_TEST_TMPDIR ] && echo inside" --no-pivot
  [ "$status" -eq 0 ]
  [ "$output" = inside ]
}

@test "pivot_root leaves no trace of the host's root" {
  in_ctr "[ ! -e $BATS_TEST_TMPDIR ] && awk '\$5 == \"/\"' /proc/self/mountinfo | wc -l"
  [ "$status" -eq 0 ]
  [ "$output" = 1 ]
}

@test "propagation options and rootfsPropagation take effect" {
  add_mount '{"destination":"/sh","type":"tmpfs","source":"tmpfs","options":["shared"]}'
  add_mount '{"destination":"/ub","type":"tmpfs","source":"tmpfs","options":["unbindable"]}'
  add_mount '{"destination":"/pv","type":"tmpfs","source":"tmpfs","options":["private"]}'
  config_edit "$B" '.linux.rootfsPropagation = "shared"'
  in_ctr 'for m in /sh /ub /pv /; do awk -v m=$m "\$5 == m" /proc/self/mountinfo | sed "s/ - .*//"; done'
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == *shared:* ]]
  [[ "${lines[1]}" == *unbindable* ]]
  [[ "${lines[2]}" != *shared:* ]]
  [[ "${lines[2]}" != *master:* ]]
  [[ "${lines[3]}" == *shared:* ]]
}

@test "the default devices, symlinks, /dev/pts and /dev/shm are there" {
  in_ctr 'for d in null zero full random urandom tty; do stat -c "%n %F %t:%T %a" /dev/$d; done
          for l in ptmx fd stdin stdout stderr; do readlink /dev/$l; done
          grep -c -e " /dev/pts " -e " /dev/shm " /proc/self/mountinfo; head -c 4 /dev/zero | od -An -tx1'
  [ "$status" -eq 0 ]
  [[ "$output" == *"/dev/null character special file 1:3 666"* ]]
  [[ "$output" == *"/dev/urandom character special file 1:9 666"* ]]
  [[ "$output" == *"/dev/tty character special file 5:0 666"* ]]
  [[ "$output" == *pts/ptmx*/proc/self/fd*/proc/self/fd/0*/proc/self/fd/1*/proc/self/fd/2* ]]
  [[ "$output" == *"00 00 00 00"* ]]
  [ "${lines[11]}" = 2 ]
}

@test "/dev/pts and /dev/shm are mounted even when the config does not" {
  config_edit "$B" '.mounts |= map(select(.destination != "/dev/pts" and .destination != "/dev/shm"))'
  in_ctr 'grep -e " /dev/pts " -e " /dev/shm " /proc/self/mountinfo | sed "s/.* - //" | cut -d" " -f1 | sort'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = devpts ]
  [ "${lines[1]}" = tmpfs ]
}

@test "linux.devices are made with their type, numbers, mode and owner" {
  config_edit "$B" '.linux.devices = [{"path":"/dev/myzero","type":"c","major":1,"minor":5,"fileMode":384},
                                       {"path":"/dev/owned","type":"c","major":1,"minor":3,"fileMode":416,"uid":7,"gid":8},
                                       {"path":"/dev/sub/fifo","type":"p","fileMode":420}]'
  in_ctr 'stat -c "%F %t:%T %a %u %g" /dev/myzero /dev/owned; stat -c "%F %a" /dev/sub/fifo; head -c 2 /dev/myzero | od -An -tx1'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "character special file 1:5 600 0 0" ]
  [ "${lines[1]}" = "character special file 1:3 640 7 8" ]
  [ "${lines[2]}" = "fifo 644" ]
  [[ "${lines[3]}" == *"00 00"* ]]
}

@test "a file bound over /dev/null in the config stops the container" {
  add_mount "{\"destination\":\"/dev/null\",\"type\":\"bind\",\"source\":\"$HOSTDIR/file\",\"options\":[\"bind\"]}"
  in_ctr 'echo ran'
  [ "$status" -ne 0 ]
  [[ "$output" != *ran* ]]
  [[ "$output" == */dev/null* ]]
}

@test "cgroup mounts show the container's own cgroup, read-only" {
  [ -d /sys/fs/cgroup/memory ] || skip "no cgroup v1 memory hierarchy on this host"
  in_ctr 'ls /sys/fs/cgroup/memory/memory.limit_in_bytes >/dev/null && echo seen
          if mkdir /sys/fs/cgroup/memory/x 2>/dev/null; then echo cg-writable; fi'
  [ "$status" -eq 0 ]
  [[ "$output" == *seen* ]]
  [[ "$output" != *cg-writable* ]]
}

@test "idmap shows the source's files with mapped owners" {
  add_mount "{\"destination\":\"/idm\",\"type\":\"bind\",\"source\":\"$HOSTDIR\",\"options\":[\"bind\",\"idmap\"],
    \"uidMappings\":[{\"containerID\":0,\"hostID\":1234,\"size\":1}],\"gidMappings\":[{\"containerID\":0,\"hostID\":4321,\"size\":1}]}"
  in_ctr 'stat -c "%u %g" /idm/file'
  [ "$status" -eq 0 ]
  [ "$output" = "1234 4321" ]
  [ "$(stat -c '%u %g' "$HOSTDIR/file")" = "0 0" ]
}

@test "a missing bind source is one line naming the mount, and nothing is left behind" {
  add_mount "{\"destination\":\"/x\",\"type\":\"bind\",\"source\":\"$HOSTDIR/missing\",\"options\":[\"bind\"]}"
  in_ctr 'echo ran'
  [ "$status" -ne 0 ]
  [[ "$output" == *mounts\[*\]* ]]
  [[ "$output" == *"$HOSTDIR/missing"* ]]
  [[ "$output" != *ran* ]]
  ar delete -f "$ID" >/dev/null 2>&1 || true
  refute grep -q "$BATS_TEST_TMPDIR" /proc/self/mountinfo
  [ ! -e "$ROOT/$ID" ]
}

@test "an option the filesystem refuses is reported with the kernel's reason" {
  add_mount '{"destination":"/bad","type":"tmpfs","source":"tmpfs","options":["size=lots"]}'
  in_ctr 'echo ran'
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *size=lots* ]]
}

@test "no mount is left in the host's mountinfo after run and delete" {
  add_mount "{\"destination\":\"/ro\",\"type\":\"bind\",\"source\":\"$HOSTDIR\",\"options\":[\"rbind\",\"ro\"]}"
  in_ctr 'true'
  [ "$status" -eq 0 ]
  ar delete -f "$ID" >/dev/null 2>&1 || true
  # A global mount count would see other suites' containers: look for ours.
  ! grep -q "$BATS_TEST_TMPDIR" /proc/self/mountinfo
}

@test "in a user namespace devices are bind-mounted and sysfs falls back to the host's, read-only" {
  config_edit "$B" '.linux.namespaces = [{"type":"pid"},{"type":"ipc"},{"type":"uts"},{"type":"mount"},{"type":"user"}]
    | .linux.uidMappings = [{"containerID":0,"hostID":0,"size":1}]
    | .linux.gidMappings = [{"containerID":0,"hostID":0,"size":1}]
    | (.mounts[] | select(.destination == "/dev/pts") | .options) |= map(select(. != "gid=5"))'
  in_ctr 'grep -c " /dev/null " /proc/self/mountinfo; stat -c "%t:%T" /dev/null; grep " /sys " /proc/self/mountinfo | sed "s/ - .*//"
          if mkdir /sys/fs/cgroup/x 2>/dev/null; then echo sys-writable; fi'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1 ]
  [ "${lines[1]}" = 1:3 ]
  [[ "${lines[2]}" == *ro,* ]]
  [[ "$output" != *sys-writable* ]]
}

@test "--no-pivot: the host's mounts are detached, so a nested user namespace cannot mount a fresh /proc" {
  config_edit "$B" '.process.args = ["unshare", "-mrpf", "sh", "-c", "mount -t proc none /proc && echo mounted-proc"]
                    | .process.capabilities.bounding += ["CAP_SETFCAP"] | .process.capabilities.permitted += ["CAP_SETFCAP"]'
  run ar run --no-pivot -b "$B" np1
  echo "$output"
  [[ "$output" != *mounted-proc* ]]
  [[ "$output" == *"ermission denied"* ]]
  # the same command runs with pivot_root, which leaves no host mount behind either
  run ar run -b "$B" np2
  [[ "$output" != *mounted-proc* ]]
}

@test "a read-only /dev tmpfs starts, with its nodes and mounts, and stays read-only" {
  config_edit "$B" '.mounts |= map((select(.destination == "/dev") | .options += ["ro"]) // .)
                    | .process.args = ["sh", "-c", "grep \"^tmpfs /dev \" /proc/mounts; ls /dev/null /dev/pts/ptmx >/dev/null && echo nodes; touch /dev/x 2>&1; true"]'
  run ar run -b "$B" devro
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == *" ro,"* ]]
  [ "${lines[1]}" = nodes ]
  [[ "${lines[2]}" == *"Read-only file system"* ]]
}

@test "proc and sysfs are never mounted through a symlink of the image" {
  local d
  for d in proc sys; do
    rm -rf "$B/rootfs/$d"
    ln -s /elsewhere "$B/rootfs/$d"
    run ar run -b "$B" "sym-$d"
    [ "$status" -ne 0 ]
    [[ "$output" == *"/$d must be mounted on ordinary directory"* ]]
    [ ! -e "$B/rootfs/elsewhere" ]
    [ ! -e "$ROOT/sym-$d" ]
    rm "$B/rootfs/$d"
    mkdir "$B/rootfs/$d"
  done
}
