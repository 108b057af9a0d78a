#!/usr/bin/env bats
# agentrun spec / features / --version: the generated config has runc's
# defaults, runc itself runs it, and it is never written over an existing one.

load helpers

teardown() {
  local id
  for id in "${RUNC_IDS[@]}"; do
    runc --root "$BATS_TEST_TMPDIR/runc-state" delete -f "$id" >/dev/null 2>&1 || true
  done
}

RUNC_IDS=()

@test "spec: writes a config.json that validates, with runc's defaults" {
  local b=$BATS_TEST_TMPDIR/b c
  mkdir -p "$b"
  run "$AGENTRUN" spec --bundle "$b"
  [ "$status" -eq 0 ]
  c=$b/config.json
  run "$AGENTRUN" validate --config "$c"
  [ "$output" = "ok" ]
  [ "$(jq -r .ociVersion "$c")" = "1.3.0" ]
  [ "$(jq -r .hostname "$c")" = "agentrun" ]
  [ "$(jq -c .process.args "$c")" = '["sh"]' ]
  [ "$(jq -r .process.terminal "$c")" = "true" ]
  [ "$(jq -c .root "$c")" = '{"path":"rootfs","readonly":true}' ]
  [ "$(jq -c '[.linux.namespaces[].type] | sort' "$c")" = '["ipc","mount","network","pid","uts"]' ]
  [ "$(jq -c '.process.capabilities.bounding' "$c")" = '["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"]' ]
  [ "$(jq -c '.process.capabilities | keys' "$c")" = '["ambient","bounding","effective","permitted"]' ]
  [ "$(jq -c '.process.rlimits' "$c")" = '[{"type":"RLIMIT_NOFILE","hard":1024,"soft":1024}]' ]
  [ "$(jq -c '[.mounts[].destination]' "$c")" = '["/proc","/dev","/dev/pts","/dev/shm","/dev/mqueue","/sys","/sys/fs/cgroup"]' ]
  [ "$(jq -r '.mounts[] | select(.destination == "/dev") | .type' "$c")" = tmpfs ]
  jq -e '.linux.maskedPaths | index("/proc/kcore") and index("/sys/firmware")' "$c"
  jq -e '.linux.readonlyPaths | index("/proc/sys") and index("/proc/sysrq-trigger")' "$c"
  jq -e '.process.noNewPrivileges == true' "$c"
}

@test "spec: same content as runc spec, but for hostname and ociVersion" {
  need_cmd runc
  mkdir -p "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/r"
  "$AGENTRUN" spec --bundle "$BATS_TEST_TMPDIR/a"
  (cd "$BATS_TEST_TMPDIR/r" && runc spec)
  local f='del(.hostname, .ociVersion)'
  diff <(jq -S "$f" "$BATS_TEST_TMPDIR/a/config.json") <(jq -S "$f" "$BATS_TEST_TMPDIR/r/config.json")
}

@test "spec --rootless: user namespace mapping the caller, no network namespace, sysfs bind" {
  local b=$BATS_TEST_TMPDIR/b c
  mkdir -p "$b"
  "$AGENTRUN" spec --rootless --bundle "$b"
  c=$b/config.json
  run "$AGENTRUN" validate --config "$c"
  [ "$output" = "ok" ]
  [ "$(jq -c '[.linux.namespaces[].type] | sort' "$c")" = '["ipc","mount","pid","user","uts"]' ]
  [ "$(jq -c '.linux.uidMappings' "$c")" = "[{\"containerID\":0,\"hostID\":$(id -u),\"size\":1}]" ]
  [ "$(jq -c '.linux.gidMappings' "$c")" = "[{\"containerID\":0,\"hostID\":$(id -g),\"size\":1}]" ]
  [ "$(jq -c '.mounts[] | select(.destination == "/sys") | [.type, .source, (.options | index("rbind") != null)]' "$c")" = '["none","/sys",true]' ]
  jq -e '.linux.resources == null' "$c"
}

@test "spec: refuses to overwrite an existing config.json" {
  local b=$BATS_TEST_TMPDIR/b
  mkdir -p "$b"
  echo '{"mine": true}' >"$b/config.json"
  run "$AGENTRUN" spec --bundle "$b"
  [ "$status" -eq 1 ]
  [[ "$output" == *"config.json already exists"* ]]
  [ "$(cat "$b/config.json")" = '{"mine": true}' ]
}

@test "spec: refuses a symlink planted at config.json, even a dangling one" {
  local b=$BATS_TEST_TMPDIR/b
  mkdir -p "$b"
  ln -s "$BATS_TEST_TMPDIR/target" "$b/config.json"
  run "$AGENTRUN" spec --bundle "$b"
  [ "$status" -eq 1 ]
  [ ! -e "$BATS_TEST_TMPDIR/target" ]
}

@test "spec: a missing bundle directory is an error naming it" {
  run "$AGENTRUN" spec --bundle "$BATS_TEST_TMPDIR/absent"
  [ "$status" -eq 1 ]
  [[ "$output" == *"$BATS_TEST_TMPDIR/absent"*"No such file or directory"* ]]
}

@test "spec: writes into the current directory by default; unknown options refused" {
  mkdir -p "$BATS_TEST_TMPDIR/cwd"
  cd "$BATS_TEST_TMPDIR/cwd"
  run "$AGENTRUN" spec --bogus
  [ "$status" -eq 1 ]
  [ ! -e config.json ]
  run "$AGENTRUN" spec
  [ "$status" -eq 0 ]
  [ -f config.json ]
}

# runc_run BUNDLE: run the bundle with runc, print its output.
runc_run() {
  local id=agentrun-spec-$$-$BATS_TEST_NUMBER
  RUNC_IDS+=("$id")
  timeout 60 runc --root "$BATS_TEST_TMPDIR/runc-state" run --bundle "$1" "$id"
}

@test "spec: runc runs what agentrun spec wrote" {
  need_cmd runc busybox
  local b=$BATS_TEST_TMPDIR/bundle
  make_bundle "$b" sh -c 'hostname; cat /proc/self/status | grep ^CapBnd; echo done'
  run runc_run "$b"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "agentrun" ]
  # AUDIT_WRITE (29), KILL (5), NET_BIND_SERVICE (10)
  [[ "${lines[1]}" == *"0000000020000420"* ]]
  [ "${lines[2]}" = "done" ]
}

@test "spec --rootless: runc runs it" {
  need_cmd runc busybox
  local b=$BATS_TEST_TMPDIR/bundle
  mkdir -p "$b"
  make_busybox_rootfs "$b/rootfs"
  "$AGENTRUN" spec --rootless --bundle "$b"
  config_edit "$b" '.process.terminal = false | .process.args = ["sh", "-c", "cat /proc/self/uid_map"]'
  run runc_run "$b"
  [ "$status" -eq 0 ]
  [ "$(echo ${lines[0]})" = "0 $(id -u) 1" ]
}

@test "features: runtime-spec features JSON computed from the tables" {
  need_cmd jq
  run "$AGENTRUN" features
  [ "$status" -eq 0 ]
  local f=$output
  jq -e '.ociVersionMin == "1.0.0" and .ociVersionMax == "1.3.0"' <<<"$f"
  [ "$(jq -c .hooks <<<"$f")" = '["prestart","createRuntime","createContainer","startContainer","poststart","poststop"]' ]
  jq -e '.mountOptions | index("rbind") and index("idmap") and index("nosymfollow")' <<<"$f"
  [ "$(jq -c '.linux.namespaces | sort' <<<"$f")" = '["cgroup","ipc","mount","network","pid","time","user","uts"]' ]
  jq -e '.linux.capabilities | index("CAP_SYS_ADMIN") and index("CAP_CHECKPOINT_RESTORE") and length >= 41' <<<"$f"
  jq -e '.linux.seccomp.enabled and (.linux.seccomp.actions | index("SCMP_ACT_NOTIFY"))' <<<"$f"
  jq -e '.linux.seccomp.operators | length == 7' <<<"$f"
  jq -e '.linux.seccomp.archs | index("SCMP_ARCH_X86_64") and index("SCMP_ARCH_AARCH64")' <<<"$f"
  jq -e '(.linux.seccomp.supportedFlags - .linux.seccomp.knownFlags) == []' <<<"$f"
  jq -e '.linux.apparmor.enabled and .linux.selinux.enabled' <<<"$f"
  jq -e '.linux.cgroup | has("v1") and has("v2") and has("systemd")' <<<"$f"
  jq -e '.annotations["io.github.seccomp.libseccomp.version"] | test("^[0-9]+\\.[0-9]+\\.[0-9]+$")' <<<"$f"
}

@test "features: every capability it lists is accepted by validate, an unlisted one is not" {
  local b=$BATS_TEST_TMPDIR/b
  mkdir -p "$b"
  "$AGENTRUN" spec --bundle "$b"
  config_edit "$b" '.process.capabilities.bounding = $caps' --argjson caps "$("$AGENTRUN" features | jq -c .linux.capabilities)"
  run "$AGENTRUN" validate --config "$b/config.json"
  [ "$output" = "ok" ]
  config_edit "$b" '.process.capabilities.bounding += ["CAP_NOT_A_CAP"]'
  run "$AGENTRUN" validate --config "$b/config.json"
  [ "$status" -eq 1 ]
}

@test "--version: version, commit, spec and libseccomp lines" {
  run "$AGENTRUN" --version
  [ "$status" -eq 0 ]
  # a release, or after it +COMMITS.gHASH (.dirty): build-aux/git-version-gen
  [[ "${lines[0]}" =~ ^agentrun\ version\ [0-9]+\.[0-9]+\.[0-9]+(\+[0-9]+\.g[0-9a-f]+(\.dirty)?)?$ ]]
  [[ "${lines[1]}" =~ ^commit:\ [0-9a-f]{40}$|^commit:\ unknown$ ]]
  [ "${lines[2]}" = "spec: 1.3.0" ]
  [[ "${lines[3]}" =~ ^libseccomp:\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}
