#!/usr/bin/env bats
# agentrun validate: a corpus of valid configs (runc's, crun's and podman's
# generated ones, hand-written ones) says ok; every hostile config fails with
# exit 1 and one line naming the file and the JSON path of the problem.

load helpers

CONFIGS=$SRCDIR/tests/configs

# validate_file FILE: validate FILE alone (copied as config.json, --config).
validate_file() {
  local b=$BATS_TEST_TMPDIR/b
  mkdir -p "$b"
  cp "$1" "$b/config.json"
  run "$AGENTRUN" validate --config "$b/config.json"
}

# spec_bundle DIR: a bundle with agentrun's default config and an empty rootfs.
spec_bundle() {
  mkdir -p "$1/rootfs"
  "$AGENTRUN" spec --bundle "$1"
}

@test "validate: committed valid configs say ok" {
  local f n=0
  for f in "$CONFIGS"/valid/*.json; do
    validate_file "$f"
    [ "$status" -eq 0 ] || { echo "$f: $output"; return 1; }
    [ "$output" = "ok" ]
    n=$((n + 1))
  done
  [ "$n" -ge 2 ]
}

@test "validate: runc spec output (generated now) says ok" {
  need_cmd runc
  mkdir -p "$BATS_TEST_TMPDIR/runc/rootfs"
  (cd "$BATS_TEST_TMPDIR/runc" && runc spec)
  run "$AGENTRUN" validate --bundle "$BATS_TEST_TMPDIR/runc"
  [ "$status" -eq 0 ]
  [ "$output" = "ok" ]
}

@test "validate: runc spec --rootless output (generated now) says ok" {
  need_cmd runc
  mkdir -p "$BATS_TEST_TMPDIR/runc/rootfs"
  (cd "$BATS_TEST_TMPDIR/runc" && runc spec --rootless)
  run "$AGENTRUN" validate --bundle "$BATS_TEST_TMPDIR/runc"
  [ "$status" -eq 0 ]
  [ "$output" = "ok" ]
}

@test "validate: crun spec output (generated now) says ok" {
  need_cmd crun
  mkdir -p "$BATS_TEST_TMPDIR/crun/rootfs"
  (cd "$BATS_TEST_TMPDIR/crun" && crun spec)
  run "$AGENTRUN" validate --bundle "$BATS_TEST_TMPDIR/crun"
  [ "$status" -eq 0 ]
  [ "$output" = "ok" ]
}

@test "validate: every hostile config fails with exit 1 and its JSON path" {
  local f n=0 want
  for f in "$CONFIGS"/hostile/*.json; do
    want=$(head -n1 "${f%.json}.path")
    [ -n "$want" ]
    validate_file "$f"
    if [ "$status" -ne 1 ] || [[ "$output" != *"config.json: "*"$want"* ]]; then
      echo "$(basename "$f"): status $status, wanted \"$want\" in: $output"
      return 1
    fi
    # One line, no "ok".
    [ "$(printf '%s\n' "$output" | wc -l)" -eq 1 ]
    n=$((n + 1))
  done
  [ "$n" -ge 40 ]
}

@test "validate: the message has the documented shape" {
  validate_file "$CONFIGS"/hostile/*-seccomp-bad-action.json
  [ "$status" -eq 1 ]
  [[ "$output" == *'config.json: linux.seccomp.syscalls[2].action: unknown action "SCMP_ACT_FOO"' ]]
}

@test "validate: --config names the file it read" {
  run "$AGENTRUN" validate --config "$CONFIGS/hostile/01-missing-ociversion.json"
  [ "$status" -eq 1 ]
  [[ "$output" == *"01-missing-ociversion.json: ociVersion: missing required field"* ]]
}

@test "validate: a 20 MiB config is refused before parsing" {
  local b=$BATS_TEST_TMPDIR/big
  spec_bundle "$b"
  # A valid document padded with a 20 MiB annotation.
  head -c $((20 * 1024 * 1024)) /dev/zero | tr '\0' a >"$b/pad"
  jq --rawfile p "$b/pad" '.annotations = {"pad": $p}' "$b/config.json" >"$b/c" && mv "$b/c" "$b/config.json"
  [ "$(stat -c %s "$b/config.json")" -gt $((20 * 1024 * 1024)) ]
  run "$AGENTRUN" validate --bundle "$b"
  [ "$status" -eq 1 ]
  [[ "$output" == *"config.json"*"larger than"* ]]
}

@test "validate: a FIFO as config.json is refused, not read" {
  local b=$BATS_TEST_TMPDIR/fifo
  mkdir -p "$b"
  mkfifo "$b/config.json"
  run timeout 10 "$AGENTRUN" validate --bundle "$b"
  [ "$status" -eq 1 ]
  [[ "$output" == *"not a regular file"* ]]
}

@test "validate: missing config.json names the path and errno text" {
  run "$AGENTRUN" validate --bundle "$BATS_TEST_TMPDIR/nowhere"
  [ "$status" -eq 1 ]
  [[ "$output" == *"$BATS_TEST_TMPDIR/nowhere/config.json"*"No such file or directory"* ]]
}

@test "validate: ociVersion 1.0.0 to 1.3.x accepted, others refused" {
  local b=$BATS_TEST_TMPDIR/v v
  spec_bundle "$b"
  for v in 1.0.0 1.0.2-dev 1.1.0 1.2.1 1.3.0 1.3.7 1.3.0+build.1; do
    config_edit "$b" '.ociVersion = $v' --arg v "$v"
    run "$AGENTRUN" validate --bundle "$b"
    [ "$status" -eq 0 ] || { echo "$v: $output"; return 1; }
  done
  for v in 0.9.0 1.4.0 2.0.0 1.0 v1.0.0 "" 1.0.0junk; do
    config_edit "$b" '.ociVersion = $v' --arg v "$v"
    run "$AGENTRUN" validate --bundle "$b"
    [ "$status" -eq 1 ] || { echo "$v accepted"; return 1; }
    [[ "$output" == *"config.json: ociVersion: "* ]]
  done
}

@test "validate: unknown fields are ignored, null counts as absent" {
  local b=$BATS_TEST_TMPDIR/u
  spec_bundle "$b"
  config_edit "$b" '.zzz = {"a": [1]} | .process.newThing = 1 | .linux.future = "x" | .domainname = null'
  run "$AGENTRUN" validate --bundle "$b"
  [ "$status" -eq 0 ]
  [ "$output" = "ok" ]
}

@test "validate: user namespace with mappings is accepted, joined one without" {
  local b=$BATS_TEST_TMPDIR/userns
  spec_bundle "$b"
  config_edit "$b" '.linux.namespaces += [{"type": "user"}] |
    .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] |
    .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
  run "$AGENTRUN" validate --bundle "$b"
  [ "$status" -eq 0 ]
  config_edit "$b" 'del(.linux.uidMappings, .linux.gidMappings) |
    .linux.namespaces[-1].path = "/proc/1/ns/user"'
  run "$AGENTRUN" validate --bundle "$b"
  [ "$status" -eq 0 ]
  # Joining an existing user namespace with maps of our own is refused.
  config_edit "$b" '.linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 1}] |
    .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 1}]'
  run "$AGENTRUN" validate --bundle "$b"
  [ "$status" -eq 1 ]
  [[ "$output" == *"config.json: linux.uidMappings: "* ]]
}

@test "validate: container ids" {
  local b=$BATS_TEST_TMPDIR/id
  spec_bundle "$b"
  for id in a abc-DEF_0.1+2 "$(printf 'x%.0s' $(seq 1024))"; do
    run "$AGENTRUN" validate --bundle "$b" "$id"
    [ "$status" -eq 0 ] || { echo "$id: $output"; return 1; }
  done
  for id in "" .hidden .. ../x a/b "a b" 'a$' "$(printf 'x%.0s' $(seq 1025))"; do
    run "$AGENTRUN" validate --bundle "$b" -- "$id"
    [ "$status" -eq 1 ] || { echo "\"$id\" accepted"; return 1; }
    [[ "$output" == *"container id"* ]]
  done
}

@test "validate: nothing is created" {
  local b=$BATS_TEST_TMPDIR/nc
  mkdir -p "$b"
  cp "$CONFIGS/hostile/01-missing-ociversion.json" "$b/config.json"
  run "$AGENTRUN" --root "$BATS_TEST_TMPDIR/state" validate --bundle "$b"
  [ "$status" -eq 1 ]
  [ ! -e "$BATS_TEST_TMPDIR/state" ]
  [ "$(ls "$b")" = "config.json" ]
}

@test "validate: a bundle is checked as create checks it: rootfs, mount namespace, capabilities" {
  local b=$BATS_TEST_TMPDIR/full
  spec_bundle "$b"
  run "$AGENTRUN" validate --bundle "$b"
  [ "$output" = "ok" ]
  rmdir "$b/rootfs"
  run "$AGENTRUN" validate --bundle "$b"
  [ "$status" -eq 1 ]
  [[ "$output" == *"rootfs $b/rootfs: No such file or directory"* ]]
  # --config alone judges only the file.
  run "$AGENTRUN" validate --config "$b/config.json"
  [ "$output" = "ok" ]
  mkdir "$b/rootfs"
  config_edit "$b" '.linux.namespaces |= map(select(.type != "mount"))'
  run "$AGENTRUN" validate --bundle "$b"
  [ "$status" -eq 1 ]
  [[ "$output" == *"config.json: linux.namespaces: a mount namespace is required"* ]]
}
