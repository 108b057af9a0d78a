#!/usr/bin/env bats
# contrib/: every snippet parses and says what the runtime needs. The podman
# and containerd snippets are also loaded by the real clients in podman.bats
# and containerd.bats; CRI-O and Kubernetes are not on this machine, so their
# files are checked here for syntax and for agreeing with each other.

load helpers

CONTRIB=$SRCDIR/contrib
# the snippets that name installed programs, made by make from their .in
MADE=$BUILDDIR/contrib

teardown() { kill_tracked; }

# py FILE...: run a python3 check (from stdin) with the files as argv.
py() { python3 - "$@"; }

@test "contrib: containers.conf declares agentrun and keeps podman's defaults" {
  need_cmd python3
  py "$MADE/containers.conf" <<'EOS'
import os, sys, tomllib
doc = tomllib.load(open(sys.argv[1], "rb"))
eng = doc["engine"]
paths = eng["runtimes"]["agentrun"]
assert paths and all(os.path.isabs(p) and p.endswith("/agentrun") for p in paths), paths
# a drop-in's arrays replace podman's: the defaults must still be there
for name in ("agentrun", "crun", "runc"):
    assert name in eng["runtime_supports_json"], name
# podman 4.3 reads "runtime_supports_nocgroup"; its man page says "...nocgroups"
for key in ("runtime_supports_nocgroup", "runtime_supports_nocgroups"):
    for name in ("agentrun", "crun"):
        assert name in eng[key], (key, name)
EOS
}

@test "contrib: containerd config.toml is a version 2 runc-shim handler named agentrun" {
  need_cmd python3
  py "$MADE/containerd/config.toml" <<'EOS'
import os, sys, tomllib
doc = tomllib.load(open(sys.argv[1], "rb"))
assert doc["version"] == 2
rt = doc["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["agentrun"]
assert rt["runtime_type"] == "io.containerd.runc.v2", rt
assert os.path.isabs(rt["options"]["BinaryName"]) and rt["options"]["BinaryName"].endswith("/agentrun")
assert os.path.isabs(rt["options"]["Root"])
EOS
}

@test "contrib: containerd itself accepts the snippet as an import" {
  need_cmd containerd python3
  cat >"$BATS_TEST_TMPDIR/config.toml" <<EOS
version = 2
root = "$BATS_TEST_TMPDIR/root"
state = "$BATS_TEST_TMPDIR/state"
imports = ["$MADE/containerd/config.toml"]
EOS
  run containerd --config "$BATS_TEST_TMPDIR/config.toml" config dump
  [ "$status" -eq 0 ]
  [[ "$output" == *'runtimes.agentrun.options]'* ]]
  # a typo'd import would be dropped silently; a bad key is not a parse error,
  # so check the values came through
  py "$output" <<'EOS'
import sys, tomllib
doc = tomllib.loads(sys.argv[1])
opts = doc["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["agentrun"]["options"]
assert opts["BinaryName"].endswith("/agentrun"), opts
EOS
}

# An import replaces the main file's whole CRI table: the snippet must keep
# the CRI plugin loading with runc as the default handler and containerd's
# other defaults (sandbox image, CNI paths) in place.
@test "contrib: the containerd import keeps the CRI plugin, runc and containerd's CRI defaults" {
  need_cmd containerd python3
  cat >"$BATS_TEST_TMPDIR/plain.toml" <<EOS
version = 2
root = "$BATS_TEST_TMPDIR/root"
state = "$BATS_TEST_TMPDIR/state"
EOS
  { cat "$BATS_TEST_TMPDIR/plain.toml"; echo "imports = [\"$MADE/containerd/config.toml\"]"; } >"$BATS_TEST_TMPDIR/with.toml"
  containerd --config "$BATS_TEST_TMPDIR/plain.toml" config dump >"$BATS_TEST_TMPDIR/plain.dump"
  containerd --config "$BATS_TEST_TMPDIR/with.toml" config dump >"$BATS_TEST_TMPDIR/with.dump"
  py "$BATS_TEST_TMPDIR/plain.dump" "$BATS_TEST_TMPDIR/with.dump" <<'EOS'
import sys, tomllib
plain, withd = (tomllib.load(open(f, "rb"))["plugins"]["io.containerd.grpc.v1.cri"] for f in sys.argv[1:3])
rts = withd["containerd"]["runtimes"]
assert withd["containerd"]["default_runtime_name"] == "runc"
# the same runc handler (its options only spelled out, all zero: the shim's defaults)
prunc = plain["containerd"]["runtimes"]["runc"]
assert {k: v for k, v in rts["runc"].items() if k != "options"} == {k: v for k, v in prunc.items() if k != "options"}
assert not any(rts["runc"].get("options", {}).values()) and not any(prunc.get("options", {}).values())
assert rts["agentrun"]["options"]["BinaryName"].endswith("/agentrun")
# everything but the runtimes table is containerd's default
for k in plain:
    if k != "containerd":
        assert withd[k] == plain[k], k
for k in plain["containerd"]:
    if k != "runtimes":
        assert withd["containerd"][k] == plain["containerd"][k], k
EOS
}

# The same import in a real containerd with its CRI plugin on: the plugin
# loads ("no corresponding runtime configured ... runc" when the snippet
# drops the default handler) and knows both handlers.
@test "contrib: containerd with the import loads its CRI plugin" {
  need_cmd containerd ctr
  local d=$BATS_TEST_TMPDIR/ctd
  mkdir -p "$d"
  cat >"$d/config.toml" <<EOS
version = 2
root = "$d/root"
state = "$d/state"
imports = ["$MADE/containerd/config.toml"]
[grpc]
  address = "$d/containerd.sock"
[ttrpc]
  address = "$d/containerd.sock.ttrpc"
[debug]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/opt"
EOS
  containerd --config "$d/config.toml" >"$d/log" 2>&1 &
  local pid=$! _
  track_pid "$pid"
  for _ in $(seq 100); do ctr --address "$d/containerd.sock" version >/dev/null 2>&1 && break; sleep 0.1; done
  run ctr --address "$d/containerd.sock" plugins ls
  kill "$pid"
  wait "$pid" || true
  echo "$output" | grep -E 'io\.containerd\.grpc\.v1 +cri .* ok *$'
  refute grep -q "failed to load plugin io.containerd.grpc.v1.cri" "$d/log"
  grep -q "Runtimes:map\[agentrun:" "$d/log"
}

# Installed snippets name the programs where this build puts them.
@test "contrib: installed snippets name the binaries under the install prefix" {
  need_cmd make
  local d=$BATS_TEST_TMPDIR/dest p=/opt/artest-$$
  make -s -C "$BUILDDIR" install-data DESTDIR="$d" prefix="$p" >"$BATS_TEST_TMPDIR/make.log" 2>&1 \
    || { cat "$BATS_TEST_TMPDIR/make.log"; false; }
  local s=$d$p/share
  grep -q "BinaryName = \"$p/bin/agentrun\"" "$s/agentrun/containerd/config.toml"
  grep -q "imports = \[\"$p/share/agentrun/containerd/config.toml\"\]" "$s/agentrun/containerd/config.toml"
  grep -q "\"$p/bin/agentrun\"" "$s/agentrun/containers.conf"
  grep -q "runtime_path = \"$p/bin/agentrun\"" "$s/agentrun/crio/agentrun.conf"
  grep -q "ExecStart=$p/bin/agentrun-relay" "$s/agentrun/systemd/agentrun-relay.service"
  jq -e --arg p "$p/bin/agentrun-netproxy" '.hook.path == $p' "$s/containers/oci/hooks.d/agentrun-netproxy.json"
  refute grep -rq "/usr/local" "$d"   # AppArmor profile and man pages too
  refute grep -rq "@bindir@\|@datadir@" "$s"
  # and the build tree's own copies (snippets, AppArmor profile, man pages)
  # are back to this build's paths
  make -s -C "$BUILDDIR" all >/dev/null
  ! grep -rq "$p" "$MADE/containerd/config.toml" "$BUILDDIR/contrib/apparmor/agentrun" "$BUILDDIR/man"
}

@test "contrib: CRI-O drop-in defines an oci runtime handler named agentrun" {
  need_cmd python3
  py "$MADE/crio/agentrun.conf" <<'EOS'
import os, sys, tomllib
doc = tomllib.load(open(sys.argv[1], "rb"))
rt = doc["crio"]["runtime"]["runtimes"]["agentrun"]
assert rt["runtime_type"] == "oci", rt
assert os.path.isabs(rt["runtime_path"]) and rt["runtime_path"].endswith("/agentrun")
assert os.path.isabs(rt["runtime_root"])
known = {"runtime_path", "runtime_type", "runtime_root", "runtime_config_path", "monitor_path",
         "monitor_cgroup", "monitor_env", "monitor_exec_cgroup", "privileged_without_host_devices",
         "allowed_annotations", "platform_runtime_paths"}
assert set(rt) <= known, set(rt) - known
EOS
}

@test "contrib: the RuntimeClass names the handler that containerd and CRI-O define" {
  need_cmd python3
  python3 -c 'import yaml' 2>/dev/null || skip "needs python3-yaml"
  py "$CONTRIB/kubernetes/runtimeclass.yaml" "$MADE/containerd/config.toml" "$MADE/crio/agentrun.conf" <<'EOS'
import re, sys, tomllib, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
assert len(docs) == 1, docs
rc = docs[0]
assert rc["apiVersion"] == "node.k8s.io/v1" and rc["kind"] == "RuntimeClass", rc
assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", rc["metadata"]["name"])
handler = rc["handler"]
assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", handler), handler
ctd = tomllib.load(open(sys.argv[2], "rb"))
assert handler in ctd["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]
crio = tomllib.load(open(sys.argv[3], "rb"))
assert handler in crio["crio"]["runtime"]["runtimes"]
sched = rc.get("scheduling", {})
assert all(isinstance(v, str) for v in sched.get("nodeSelector", {}).values())
EOS
}

@test "contrib: every JSON file (seccomp profiles, OCI hooks.d) parses" {
  need_cmd jq
  local f n=0
  while IFS= read -r f; do
    jq empty "$f" || { echo "bad JSON: $f" >&2; return 1; }
    n=$((n + 1))
  done < <(find "$CONTRIB" "$BUILDDIR/hooks/hooks.d" -name '*.json' 2>/dev/null)
  [ "$n" -gt 0 ]
}

@test "contrib: OCI hooks.d files have what podman's hooks loader requires" {
  need_cmd jq
  local f n=0
  for f in "$BUILDDIR"/hooks/hooks.d/*.json; do
    [ -e "$f" ] || continue
    jq -e '.version == "1.0.0" and (.hook.path | startswith("/")) and (.stages | length > 0)
           and (.when | length > 0)' "$f" >/dev/null || { echo "incomplete hook: $f" >&2; return 1; }
    n=$((n + 1))
  done
  [ "$n" -gt 0 ] || skip "no hooks.d files yet"
}

@test "contrib: systemd units pass systemd-analyze verify" {
  need_cmd systemd-analyze
  local units
  units=$(find "$MADE" -name '*.service' -o -name '*.socket' 2>/dev/null)
  [ -n "$units" ] || skip "no systemd units in contrib/ yet"
  local u bad
  for u in $units; do
    # the unit's binaries are not installed on the test machine; anything
    # else systemd-analyze says (syntax, unknown keys, bad values) fails
    run systemd-analyze verify "$u"
    bad=$(echo "$output" | grep -v -e 'is not executable: No such file or directory' || true)
    if [ -n "$bad" ]; then
      echo "$u: $bad" >&2
      return 1
    fi
  done
}
