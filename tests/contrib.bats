#!/usr/bin/env bats
# contrib/: every snippet parses and says what the runtime needs. The podman
# and containerd snippets are also loaded by the real clients in podman.bats
# and containerd.bats; CRI-O and Kubernetes are not on this machine, so their
# files are checked here for syntax and for agreeing with each other.

load helpers

CONTRIB=$SRCDIR/contrib

# py FILE...: run a python3 check (from stdin) with the files as argv.
py() { python3 - "$@"; }

@test "contrib: containers.conf declares agentrun and keeps podman's defaults" {
  need_cmd python3
  py "$CONTRIB/containers.conf" <<'EOS'
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
  py "$CONTRIB/containerd/config.toml" <<'EOS'
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
imports = ["$CONTRIB/containerd/config.toml"]
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

@test "contrib: CRI-O drop-in defines an oci runtime handler named agentrun" {
  need_cmd python3
  py "$CONTRIB/crio/agentrun.conf" <<'EOS'
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
  py "$CONTRIB/kubernetes/runtimeclass.yaml" "$CONTRIB/containerd/config.toml" "$CONTRIB/crio/agentrun.conf" <<'EOS'
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
  done < <(find "$CONTRIB" "$SRCDIR/hooks/hooks.d" -name '*.json' 2>/dev/null)
  [ "$n" -gt 0 ]
}

@test "contrib: OCI hooks.d files have what podman's hooks loader requires" {
  need_cmd jq
  local f n=0
  for f in "$SRCDIR"/hooks/hooks.d/*.json; do
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
  units=$(find "$CONTRIB" -name '*.service' -o -name '*.socket' 2>/dev/null)
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
