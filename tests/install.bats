#!/usr/bin/env bats
# Installing agentrun the way people do: the release tarball (make dist,
# an out-of-tree build, distcheck), the version it carries, and the Debian
# package built from it, installed with apt on this machine, used as a plain
# user and by podman through its installed drop-in, then purged.
#
# The tarball is made once per file from a clone of this checkout (its
# uncommitted changes included), never in the source tree. The slow tests
# (distcheck, the package) run when AGENTRUN_INSTALL_TESTS=1: .ci/run sets it
# for its plain pass. The package test installs a package on the host: that
# is its purpose; it removes it again and leaves the host as it was.

load helpers

# The marker dch writes into a package this file built, so a leftover of an
# interrupted run is told apart from an agentrun package someone installed.
MARK="built by tests/install.bats"

setup_file() {
  [ -e "$SRCDIR/.git" ] || skip "needs a git checkout (this is a tarball build)"
  command -v autoreconf >/dev/null || skip "needs autoreconf (autoconf, automake)"
  export IT=$BATS_FILE_TMPDIR/it
  mkdir -p "$IT"
  # this checkout as it is: a stash commit holds its uncommitted changes
  local rev
  rev=$(git -C "$SRCDIR" stash create 2>/dev/null)
  git clone -q "$SRCDIR" "$IT/src"
  [ -z "$rev" ] || git -C "$IT/src" fetch -q "$SRCDIR" "$rev" && git -C "$IT/src" checkout -q "${rev:-HEAD}"
  (cd "$IT/src" && ./autogen.sh) >"$IT/autogen.log" 2>&1
  mkdir -p "$IT/build"
  # out of tree, with what a build and a test run leave behind in tests/
  (cd "$IT/build" && ../src/configure --quiet && make -s tests/seccomp-notify-agent tests/unixconn-probe \
     && mkdir -p tests/fuzz/run-x && : >tests/crash-1 && make -s dist) >"$IT/dist.log" 2>&1 ||
    { tail -n 30 "$IT/dist.log" >&3; return 1; }
  TARBALL=$(ls "$IT"/build/agentrun-*.tar.gz)
  export TARBALL
}

@test "dist: the tarball holds every tracked file, .ci/deps and its version, no build product" {
  tar -tzf "$TARBALL" | sed 's|^[^/]*/||' | grep -v '/$' | grep . | sort >"$IT/in-tar"
  # tracked files but .gitignore and an empty placeholder file at the top
  git -C "$IT/src" ls-files | grep -vx -e .gitignore -e oom | sort >"$IT/in-git"
  run comm -13 "$IT/in-tar" "$IT/in-git"
  [ -z "$output" ] || { echo "tracked but not in the tarball: $output"; return 1; }
  # beyond them only what autoreconf generates and the version file
  run bash -c "comm -23 '$IT/in-tar' '$IT/in-git' | grep -vx -e configure -e Makefile.in -e aclocal.m4 -e config.h.in \
    -e .tarball-version -e 'build-aux/[a-z-]*'"
  [ -z "$output" ] || { echo "in the tarball but not tracked: $output"; return 1; }
  grep -qx .ci/deps "$IT/in-tar"
  grep -qx tests/seccomp-notify-agent.c "$IT/in-tar"
  ! grep -q -e '\.o$' -e '\.deps/' -e '^tests/seccomp-notify-agent$' -e crash- -e run-x "$IT/in-tar"
}

@test "version: git describe in a checkout, .tarball-version in a tarball, one version everywhere" {
  local gen=$SRCDIR/build-aux/git-version-gen g=$BATS_TEST_TMPDIR/g
  # a tag, then commits after it
  git init -q "$g" && git -C "$g" -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
  git -C "$g" tag v2.3.4
  [ "$("$gen" "$g")" = 2.3.4 ]
  git -C "$g" -c user.name=t -c user.email=t@t commit -q --allow-empty -m two
  [ "$("$gen" "$g")" = "2.3.4+1.g$(git -C "$g" rev-parse --short HEAD)" ]
  echo x >"$g/f" && git -C "$g" add f
  [[ "$("$gen" "$g")" == 2.3.4+1.g*.dirty ]]
  # a tarball's file wins over everything
  echo 9.8.7 >"$g/.tarball-version"
  [ "$("$gen" "$g")" = 9.8.7 ]
  # the tarball's name, its .tarball-version, and configure's version agree
  local v
  v=$(tar -xzOf "$TARBALL" --wildcards '*/.tarball-version')
  [ "$(basename "$TARBALL")" = "agentrun-$v.tar.gz" ]
  grep -q "^PACKAGE_VERSION='$v'" "$IT/src/configure"
  # the README's set-up in the unpacked tarball: autogen.sh keeps the tarball's version
  mkdir -p "$BATS_TEST_TMPDIR/u" && tar -xzf "$TARBALL" -C "$BATS_TEST_TMPDIR/u"
  (cd "$BATS_TEST_TMPDIR"/u/agentrun-*/ && ./autogen.sh) >/dev/null 2>&1
  grep -q "^PACKAGE_VERSION='$v'" "$BATS_TEST_TMPDIR"/u/agentrun-*/configure
  # --version, features and the man pages of one build say the same
  local av
  av=$("$AGENTRUN" --version | awk 'NR == 1 { print $3 }')
  [ "$("$AGENTRUN" features | jq -r '.annotations["org.agentrun.version"]')" = "$av" ]
  grep -q "^\.TH \"agentrun\" \"1\" \"[0-9-]*\" \"agentrun $av\"" "$BUILDDIR/man/agentrun.1"
  # debian/changelog's last release is the release part of the version
  need_cmd dpkg-parsechangelog
  [ "$(dpkg-parsechangelog -l "$SRCDIR/debian/changelog" -S Version)" = "${av%%+*}" ]
}

@test "dist: distcheck: the tarball builds out of tree, read-only, checks, installs and uninstalls" {
  [ "${AGENTRUN_INSTALL_TESTS:-}" = 1 ] || skip "slow (~1.5 min): set AGENTRUN_INSTALL_TESTS=1 (.ci/run does)"
  run make -C "$IT/build" -s distcheck
  [ "$status" -eq 0 ] || { echo "$output" | tail -n 40; return 1; }
  [[ "$output" == *"archives ready for distribution"* ]]
  [[ "$output" == *"bats: "*" passed, 0 failed"* ]]
}

# ---- the Debian package ----

pkg_installed() { dpkg-query -W -f='${Status}' agentrun 2>/dev/null | grep -q '^install ok installed'; }
pkg_ours() { zcat /usr/share/doc/agentrun/changelog.gz 2>/dev/null | head -n 5 | grep -qF "$MARK"; }
apt_q() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 -y -qq "$@"; }

# podman with a private store, locks, events and state, reading the
# installed drop-in (as the base of the one file CONTAINERS_CONF names).
podman_from_dropin() {
  local pt=$BATS_TEST_TMPDIR/podman
  mkdir -p "$pt"/{tmp,imgtmp,net,hooks.d,rstate}
  printf '[storage]\ndriver = "overlay"\ngraphroot = "%s/storage"\nrunroot = "%s/run"\n' "$pt" "$pt" >"$pt/storage.conf"
  : >"$pt/registries.conf"
  python3 "$SRCDIR/tests/clients/mkconf.py" /etc/containers/containers.conf.d/agentrun.conf "$pt/containers.conf" \
    'containers.netns="none"' 'containers.log_driver="k8s-file"' \
    'containers.default_ulimits=["nofile=1024:1024", "nproc=4096:4096"]' \
    'engine.cgroup_manager="cgroupfs"' 'engine.events_logger="file"' \
    "engine.events_logfile_path=\"$pt/events.log\"" "engine.tmp_dir=\"$pt/tmp\"" \
    "engine.static_dir=\"$pt/storage/libpod\"" "engine.volume_path=\"$pt/storage/volumes\"" \
    "engine.image_copy_tmp_dir=\"$pt/imgtmp\"" "engine.hooks_dir=[\"$pt/hooks.d\"]" 'engine.lock_type="file"' \
    'network.network_backend="cni"' "network.network_config_dir=\"$pt/net\"" || return 1
  echo "$pt"
}

pm_private() {
  CONTAINERS_CONF=$PT/containers.conf CONTAINERS_STORAGE_CONF=$PT/storage.conf \
    CONTAINERS_REGISTRIES_CONF=$PT/registries.conf TMPDIR=$PT/imgtmp podman "$@"
}

teardown() {
  if [ -n "${PT:-}" ]; then
    pm_private rm -a -f -t 0 >/dev/null 2>&1 || true
    pm_private rmi -a -f >/dev/null 2>&1 || true
    local m
    for m in $(awk -v d="$PT/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
      umount -l "$m" 2>/dev/null || true
    done
  fi
  # never leave our package behind, whatever failed
  if pkg_installed && pkg_ours; then apt_q purge agentrun >/dev/null 2>&1 || true; fi
}

@test "debian: dpkg-buildpackage, lintian, apt install; sandbox as a user, podman through the drop-in, man, completion; purge" {
  [ "${AGENTRUN_INSTALL_TESTS:-}" = 1 ] || skip "slow (~2 min), installs a package: set AGENTRUN_INSTALL_TESTS=1 (.ci/run does)"
  need_cmd dpkg-buildpackage dch lintian apt-get podman conmon python3 busybox
  id agentrun-test >/dev/null 2>&1 || skip "user agentrun-test missing (.ci/run creates it)"
  if pkg_installed; then
    pkg_ours || skip "an agentrun package not built by this test is installed: not ours to replace"
    apt_q purge agentrun >/dev/null
  fi
  local deb=$BATS_TEST_TMPDIR/deb v
  mkdir -p "$deb" && tar -xzf "$TARBALL" -C "$deb"
  cd "$deb"/agentrun-*/
  v=$(cat .tarball-version)
  # the package's version is the tarball's (native package: no revision)
  DEBEMAIL=agentrun@example.org DEBFULLNAME="agentrun developers" \
    dch -b --newversion "$v" --distribution UNRELEASED "Snapshot $v, $MARK." 2>/dev/null
  run dpkg-buildpackage -us -uc -b -j"$(nproc)"
  [ "$status" -eq 0 ] || { echo "$output" | tail -n 40; return 1; }
  cd "$deb"
  local pkg=$deb/agentrun_${v}_$(dpkg --print-architecture).deb
  [ -f "$pkg" ]
  [ "$(dpkg-deb -f "$pkg" Version)" = "$v" ]
  run lintian --no-tag-display-limit "$pkg"
  echo "$output"
  refute grep -q '^E:' <<<"$output"
  # what goes where its readers look
  dpkg-deb -c "$pkg" | awk '{ print $6 }' | sed 's|^\./|/|' >"$deb/files"
  local f
  for f in /usr/bin/agentrun /usr/bin/agentrun-relay /usr/bin/agentrun-netproxy /usr/share/man/man1/agentrun.1.gz \
    /usr/share/man/man1/agentrun-sandbox.1.gz /usr/share/man/man5/agentrun-profile.5.gz \
    /usr/share/bash-completion/completions/agentrun /etc/containers/containers.conf.d/agentrun.conf \
    /etc/crio/crio.conf.d/10-agentrun.conf /lib/systemd/system/agentrun-relay.service \
    /usr/share/agentrun/containerd/config.toml /usr/share/containers/oci/hooks.d/agentrun-netproxy.json \
    /etc/apparmor.d/agentrun /usr/share/agentrun/seccomp/agent.json; do
    grep -qx "$f" "$deb/files" || { echo "not in the package: $f"; return 1; }
  done
  if [ -d "$SRCDIR/contrib/presets" ]; then grep -q '^/usr/share/agentrun/presets/' "$deb/files"; fi

  # the host before, to compare after the purge: every path the package and
  # its scripts could leave (not the whole tree: others may use apt meanwhile)
  { cat "$deb/files"; echo /etc/apparmor.d/disable/agentrun; echo /var/lib/dpkg/info/agentrun.list; } |
    sed 's|/$||' | grep . | sort -u >"$deb/paths"
  host_state() { local p; while read -r p; do [ -e "$p" ] || [ -L "$p" ] && echo "$p"; done <"$deb/paths"; ls /var/lib/dpkg/info | grep '^agentrun\.' || true; }
  host_state >"$deb/before"
  apt_q install "$pkg" >/dev/null
  pkg_installed
  host_state >"$deb/during"
  grep -qx /usr/bin/agentrun "$deb/during"
  grep -q '^agentrun\.postinst$' "$deb/during"
  [ "$(/usr/bin/agentrun --version | awk 'NR == 1 { print $3 }')" = "$v" ]
  grep -q '^BinaryName = "/usr/bin/agentrun"' <(sed 's/^ *//' /usr/share/agentrun/containerd/config.toml)
  grep -q '^runtime_path = "/usr/bin/agentrun"' /etc/crio/crio.conf.d/10-agentrun.conf
  grep -q '^profile agentrun /usr/bin/agentrun ' /etc/apparmor.d/agentrun
  # the man page, as a user reads it
  run env MANWIDTH=80 man agentrun-sandbox
  [ "$status" -eq 0 ]
  [[ "$output" == *"agentrun-sandbox - run a command confined"* && "$output" == *"agentrun $v"* ]]
  # completion through bash-completion's loader, from the installed files
  run bash -c 'source /usr/share/bash-completion/bash_completion; __load_completion agentrun || exit 1
    COMP_WORDS=(agentrun sandbox --no-n); COMP_CWORD=2; _agentrun; printf "%s\n" "${COMPREPLY[@]}"'
  [ "$output" = "--no-network" ]

  # the sandbox, as a plain user, from the installed binary
  local ws=$BATS_TEST_TMPDIR/ws
  install -d -m 0755 -o agentrun-test "$ws" && install -d -m 0700 -o agentrun-test "$BATS_TEST_TMPDIR/xdg"
  let_others_walk_to "$ws"
  run runuser -u agentrun-test -- env XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/xdg" sh -c "cd '$ws' && agentrun sandbox -- true"
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  run runuser -u agentrun-test -- env XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/xdg" sh -c "cd '$ws' && agentrun sandbox -- sh -c 'touch /usr/x'"
  [ "$status" -ne 0 ]

  # podman: `--runtime agentrun` resolved by the installed drop-in
  PT=$(podman_from_dropin)
  local r=$PT/rootfs
  make_busybox_rootfs "$r" && tar -C "$r" -cf "$PT/rootfs.tar" .
  pm_private import -q "$PT/rootfs.tar" localhost/agentrun-busybox:install >/dev/null
  run pm_private info --runtime agentrun --format '{{.Host.OCIRuntime.Path}}'
  [ "$output" = /usr/bin/agentrun ]
  run pm_private --runtime agentrun --runtime-flag root="$PT/rstate" run --rm localhost/agentrun-busybox:install \
    sh -c 'echo hello from $(cat /proc/1/comm)'
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  [ "$output" = "hello from sh" ]
  pm_private rmi -a -f >/dev/null

  # purge: the host as it was
  apt_q purge agentrun >/dev/null
  refute pkg_installed
  host_state >"$deb/after"
  run diff "$deb/before" "$deb/after"
  [ "$status" -eq 0 ] || { echo "left behind or removed: $output"; return 1; }
}
