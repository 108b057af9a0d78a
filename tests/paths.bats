#!/usr/bin/env bats
# Paths the agent can plant: what a sandbox run leaves in a folder it can
# write (a symlink, a renamed folder, a rewritten policy file, a git hook)
# must not change what the next run, or the person's own tools, do.
# Run as root, the agent runs as nobody (65534); everything is under
# $BATS_TEST_TMPDIR.

load helpers

setup() {
  sandbox_setup "the agent runs as nobody"
  mkdir -p "$T/config"
}

teardown() { sandbox_teardown; }

sb() {
  env -u SUDO_UID -u SUDO_GID HOME="$FHOME" XDG_CONFIG_HOME="$T/config" \
    "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" "$@"
}

# a host folder the agent must never reach, with a secret in it
host_secret() {
  mkdir -p "$T/host/dir" "$T/host/build"
  echo s3cret >"$T/host/dir/key"
  chmod 755 "$T/host" "$T/host/dir"; chmod 777 "$T/host/build"
  chmod 644 "$T/host/dir/key"
}

# ---- bind sources ----

@test "paths: a profile's out and ro redirected by symlinks an earlier run planted are refused" {
  host_secret
  mkdir -p "$WS/out/build" "$WS/vendor/data"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  printf '{ "out": "ws/out/build", "ro": ["ws/vendor/data"] }\n' >"$T/prof.json"
  run sb --profile "$T/prof.json" -- true
  [ "$status" -eq 0 ]
  # run 1 renames the parent of out and plants a symlink to a host folder;
  # the folder above a read-only one is pinned
  run sb --profile "$T/prof.json" -- sh -c "mv out out.old && ln -s $T/host out && echo planted
    mv vendor vendor.old 2>/dev/null || echo pinned"
  echo "$output"
  echo "$output" | grep -qx planted
  echo "$output" | grep -qx pinned
  # what a run could do before that (or the person, by mistake)
  mv "$WS/vendor" "$WS/vendor.old"
  mkdir "$WS/vendor"
  ln -s "$T/host/dir" "$WS/vendor/data"
  chown -hR "$AGENT_UID:$AGENT_UID" "$WS/vendor"
  # run 2, the same command line, binds neither host folder
  run sb --profile "$T/prof.json" -- sh -c "cat $WS/vendor/data/key; touch $WS/out/build/pwned; echo ran"
  [ "$status" -ne 0 ]
  refute grep -q s3cret <<<"$output"
  refute grep -qx ran <<<"$output"
  echo "$output" | grep -q "symlink.*inside the writable folder $WS"
  [ ! -e "$T/host/build/pwned" ]
  # the same for --rw, --ro and --unix-socket given on the command line
  ln -s "$T/host/dir" "$WS/cache"
  run sb --rw "$WS/cache" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q -- "--rw $WS/cache: a symlink"
  run sb --ro "$WS/cache/key" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q -- "--ro $WS/cache/key: a symlink"
  python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$T/host/sock"
  ln -s "$T/host" "$WS/sockdir"
  run sb --unix-socket "$WS/sockdir/sock" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q -- "--unix-socket $WS/sockdir/sock: a symlink"
  # a symlink of the host outside every writable folder is still followed
  ln -s "$T/host/dir" "$T/hostlink"
  run sb --ro "$T/hostlink" -- cat "$T/host/dir/key"
  [ "$status" -eq 0 ]
  [ "$output" = s3cret ]
}

# ---- masks ----

@test "paths: the folders above a mask in the workspace are pinned, and a missing mask there fails closed" {
  mkdir -p "$WS/config"
  echo s3cret >"$WS/config/secrets"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run sb --mask "$WS/config/secrets" -- sh -c 'cat config/secrets; mv config config2 || echo rename-refused; ls config2 2>/dev/null; echo done'
  [ "$status" -eq 0 ]
  refute grep -q s3cret <<<"$output"
  echo "$output" | grep -qx rename-refused
  [ -e "$WS/config/secrets" ]
  # renamed behind the sandbox's back (as a run without the pin could): the next run refuses
  mv "$WS/config" "$WS/config2"
  run sb --mask "$WS/config/secrets" -- cat config2/secrets
  [ "$status" -ne 0 ]
  refute grep -q s3cret <<<"$output"
  echo "$output" | grep -q "missing inside the writable folder $WS"
  # the same for a denyRead of Claude Code's settings
  printf '{"sandbox":{"filesystem":{"denyRead":["%s/config/secrets"]}}}\n' "$WS" >"$T/settings.json"
  run sb --settings "$T/settings.json" -- cat config2/secrets
  [ "$status" -ne 0 ]
  refute grep -q s3cret <<<"$output"
  # a mask outside every writable folder that is missing stays moot
  run sb --mask "$T/nothing-here" -- true
  [ "$status" -eq 0 ]
}

@test "paths: a mask whose folder an earlier run replaced by a symlink is refused, never followed" {
  mkdir -p "$WS/config" "$T/decoy"
  echo s3cret >"$WS/config/secrets"
  echo decoy >"$T/decoy/secrets"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  # what a run without the pin could leave: the real folder renamed, a symlink in its place
  mv "$WS/config" "$WS/config2"
  ln -s "$T/decoy" "$WS/config"
  run sb --mask "$WS/config/secrets" -- cat config2/secrets
  echo "$output"
  [ "$status" -ne 0 ]
  refute grep -q s3cret <<<"$output"
  echo "$output" | grep -q "$WS/config"
  [ "$(cat "$T/decoy/secrets")" = decoy ]
}

# ---- the audit log ----

@test "paths: --audit refuses a path in the workspace and never follows a symlink" {
  need_cmd socat
  host_secret
  chmod 700 "$T/host"
  run sb --allow "a.test:443=127.0.0.1:9" --audit "$WS/audit.jsonl" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q -- "--audit $WS/audit.jsonl: inside the writable folder $WS"
  mkdir -p "$T/logs"
  ln -s "$T/host/created" "$T/logs/audit.jsonl"
  run sb --allow "a.test:443=127.0.0.1:9" --audit "$T/logs/audit.jsonl" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q -- "--audit $T/logs/audit.jsonl"
  [ ! -e "$T/host/created" ]
  # a good log gets the relay's and the netproxy's lines through the fd we opened
  PORT=$(free_port)
  socat TCP-LISTEN:"$PORT",bind=127.0.0.1,fork,reuseaddr EXEC:cat &
  track_pid $!
  wait_for bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT"
  run sb --allow "echo.test:443=127.0.0.1:$PORT" --audit "$T/logs/good.jsonl" -- bash -c \
    'getent hosts nope.test; exec 3<>/dev/tcp/echo.test/443 && echo ping >&3 && head -1 <&3'
  [ "$status" -eq 0 ]
  grep -q '"source":"relay".*"endpoint":"echo.test:443"' "$T/logs/good.jsonl"
  grep -q '"source":"netproxy".*"endpoint":"nope.test"' "$T/logs/good.jsonl"
  ! ps -eo args | grep -v grep | grep -q "agentrun-netproxy.*--audit $T/logs"
}

# ---- policy files ----

@test "paths: a profile in the workspace is read-only inside, pinned, and a change needs agentrun trust" {
  printf '{ "env": ["A=1"] }\n' >"$WS/.agentrun.json"
  chown "$AGENT_UID:$AGENT_UID" "$WS/.agentrun.json"
  run sb --profile "$WS/.agentrun.json" -- sh -c 'echo "{\"rw\":[\"/\"]}" >.agentrun.json || echo rewrite-refused; echo $A'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx rewrite-refused
  echo "$output" | grep -qx 1
  [ -n "$(ls "$T/config/agentrun/trust")" ]
  [ "$(stat -c %a "$(ls -d "$T"/config/agentrun/trust/* | head -1)")" = 600 ]
  # changed on the host (as a run without the read-only bind could have): refused until approved
  mkdir -p "$T/other"
  printf '{ "env": ["A=2"], "rw": ["%s/other"] }\n' "$T" >"$WS/.agentrun.json"
  run sb --profile "$WS/.agentrun.json" -- sh -c 'echo $A'
  [ "$status" -ne 0 ]
  echo "$output" | grep -q "changed since it was trusted.*agentrun trust $WS/.agentrun.json"
  refute grep -qx 2 <<<"$output"
  # no terminal, no --yes: not approved
  run env XDG_CONFIG_HOME="$T/config" setsid "$AGENTRUN" trust "$WS/.agentrun.json" </dev/null
  [ "$status" -ne 0 ]
  run env XDG_CONFIG_HOME="$T/config" "$AGENTRUN" trust --yes "$WS/.agentrun.json"
  [ "$status" -eq 0 ]
  echo "$output" | grep -q '^-{ "env": \["A=1"\] }'
  echo "$output" | grep -q '^+{ "env": \["A=2"\]'
  run sb --profile "$WS/.agentrun.json" -- sh -c 'echo $A'
  [ "$status" -eq 0 ]
  [ "$output" = 2 ]
  # a trust store the sandbox could write is refused
  run env -u SUDO_UID HOME="$FHOME" XDG_CONFIG_HOME="$WS/cfg" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" \
    --profile "$WS/.agentrun.json" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q "trust store $WS/cfg/agentrun/trust lies in the writable folder"
}

@test "paths: Claude Code settings in the workspace are pinned too" {
  mkdir -p "$WS/.claude" "$T/w1"
  printf '{"sandbox":{"filesystem":{"allowWrite":["%s/w1"]}}}\n' "$T" >"$WS/.claude/settings.json"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run sb --settings "$WS/.claude/settings.json" -- true
  [ "$status" -eq 0 ]
  mkdir -p "$T/other"
  printf '{"sandbox":{"filesystem":{"allowWrite":["%s/other"]}}}\n' "$T" >"$WS/.claude/settings.json"
  run sb --settings "$WS/.claude/settings.json" -- touch "$T/other/pwned"
  echo "$output"
  [ "$status" -ne 0 ]
  [ ! -e "$T/other/pwned" ]
  echo "$output" | grep -q "agentrun trust"
}

# ---- files the host runs ----

@test "paths: git config and hooks, shell and editor files in the workspace are read-only; git still works" {
  need_cmd git
  git -C "$WS" init -q
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run sb -- sh -c '
    git config user.email a@b.test && echo config-writable
    echo "[core] fsmonitor = touch /tmp/x" >>.git/config || echo config-refused
    echo evil >.git/hooks/post-checkout || echo hook-refused
    echo evil >.bashrc || echo bashrc-refused
    echo evil >.envrc || echo envrc-refused
    mkdir -p .vscode/x || echo vscode-refused
    echo "{}" >.claude/settings.local.json || echo claude-refused
    echo "{}" >.mcp.json || echo mcp-refused
    mv .git .git2 || echo git-pinned
    echo hi >f && git -c user.email=a@b.test -c user.name=a add f && git -c user.email=a@b.test -c user.name=a commit -qm one && git branch b2 && git checkout -q b2 && git checkout -q -b b3 && echo git-works
    git status --porcelain | grep -v "^?? f$" || echo status-clean'
  [ "$status" -eq 0 ]
  refute grep -qx config-writable <<<"$output"
  for w in config hook bashrc envrc vscode claude mcp; do echo "$output" | grep -qx "$w-refused"; done
  echo "$output" | grep -qx git-pinned
  echo "$output" | grep -qx git-works
  echo "$output" | grep -qx status-clean
  refute grep -q fsmonitor "$WS/.git/config"
  [ ! -e "$WS/.git/hooks/post-checkout" ]
  # nothing of the placeholders is left on the host
  [ "$(ls -A "$WS" | sort | tr '\n' ' ')" = ".git f " ]
  [ "$(git -c safe.directory='*' -C "$WS" branch --show-current)" = b3 ]
  # --allow-write lifts one on purpose
  run sb --allow-write "$WS/.envrc" -- sh -c 'echo "export A=1" >.envrc && echo envrc-written'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx envrc-written
  grep -qx "export A=1" "$WS/.envrc"
  # so does a profile's allow_write, relative to the profile's folder
  printf '{ "allow_write": ["ws/.bashrc"] }\n' >"$T/aw.json"
  run sb --profile "$T/aw.json" -- sh -c 'echo "alias a=b" >.bashrc && echo bashrc-written; echo x >.profile || echo profile-refused'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx bashrc-written
  echo "$output" | grep -qx profile-refused
  grep -qx "alias a=b" "$WS/.bashrc"
  rm "$WS/.bashrc"
  # a symlink at a protected name cannot be held read-only: refused
  ln -s /etc/passwd "$WS/.bashrc"
  run sb -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q "$WS/.bashrc: a symlink"
}

@test "paths: two runs on one workspace: the end of the first leaves the second's protected names held" {
  sb -- sh -c 'touch a-started; while [ ! -e b-started ]; do sleep 0.1; done' &
  local a=$!
  track_pid $a
  wait_for test -e "$WS/a-started"
  sb -- sh -c 'touch b-started; while [ ! -e a-done ]; do sleep 0.1; done
    echo evil >.bashrc || echo bashrc-refused; mkdir .vscode/x || echo vscode-refused
    echo "{}" >.claude/settings.json || echo claude-refused' >"$T/b.out" 2>&1 &
  local b=$!
  track_pid $b
  wait "$a"
  touch "$WS/a-done"
  wait "$b"
  cat "$T/b.out"
  for w in bashrc vscode claude; do grep -qx "$w-refused" "$T/b.out"; done
  [ ! -s "$WS/.bashrc" ]
  # the last one out removed what the first made
  [ "$(ls -A "$WS" | sort | tr '\n' ' ')" = "a-done a-started b-started " ]
  # a file of the person's that looks like none is never taken for one;
  # one left by a run killed before its janitor existed (marked by its
  # time, empty) is removed by the next
  touch "$WS/.envrc" && mkdir "$WS/.idea"
  touch -d @0.424242424 "$WS/.zshrc"
  run sb -- true
  [ "$status" -eq 0 ]
  [ -f "$WS/.envrc" ]
  [ -d "$WS/.idea" ]
  [ ! -e "$WS/.zshrc" ]
}

@test "paths: runs started together on one workspace, again and again: each holds every protected name, none is left after" {
  # Starts and ends of other runs overlap each one's making and holding of
  # placeholders: a fresh one must never look like the person's (unmarked,
  # so unheld, and removed under a run that bound it), nor one's folder
  # change its mark while another run starts.
  burst() {
    local i
    for i in $(seq 40); do
      sb -- sh -c 'for f in .envrc .bashrc .claude/settings.json .vscode/x .idea/x; do
          (: >"$f") 2>/dev/null && echo "WROTE $f"; done; exit 0' >>"$T/burst.$1" 2>&1 ||
        echo "FAILED $?" >>"$T/burst.$1"
    done
  }
  burst a & local a=$!
  burst b & local b=$!
  burst c & local c=$!
  track_pid $a; track_pid $b; track_pid $c
  wait $a $b $c
  cat "$T"/burst.*
  ! grep -q . "$T"/burst.*
  [ -z "$(ls -A "$WS")" ]
}

@test "paths: a missing protected folder is an empty file, .claude a read-only empty folder for Claude Code, removed after; an existing .claude stays writable" {
  run sb -- sh -c '
    touch .claude/notes 2>&1 | grep -q "Not a directory" && echo claude-file
    (echo x >.envrc) 2>&1 | grep -q "Read-only file system" && echo envrc-read-only
    for f in .claude .vscode .idea .gemini .opencode .codex; do [ -f $f ] && [ ! -s $f ] || echo "not a file: $f"; done
    echo done'
  echo "$output"
  [ "$status" -eq 0 ]
  for w in claude-file envrc-read-only; do echo "$output" | grep -qx "$w"; done
  ! echo "$output" | grep "not a file"
  [ -z "$(ls -A "$WS")" ]
  # where the run's agent reads below it: a folder, named by the profile or
  # by the preset named as the command (claude: its own project folder)
  echo '{"folders": [".claude", ".vscode"]}' >"$T/folders.json"
  mkdir "$T/bin"
  ln -s /bin/sh "$T/bin/claude"
  chmod -R a+rX "$T/folders.json" "$T/bin"
  for how in "--profile $T/folders.json -- sh" "--ro $T/bin -- $T/bin/claude"; do
    run sb $how -c '
      touch .claude/notes 2>&1 | grep -q "Read-only file system" && echo claude-read-only
      [ -d .claude ] && [ -z "$(ls -A .claude)" ] && echo claude-empty
      [ -f .gemini ] && echo gemini-file'
    echo "$output"
    [ "$status" -eq 0 ]
    for w in claude-read-only claude-empty gemini-file; do echo "$output" | grep -qx "$w"; done
    [ -z "$(ls -A "$WS")" ]
  done
  run sb --profile "$T/folders.json" -- sh -c '[ -d .vscode ] && echo vscode-folder'
  echo "$output" | grep -qx vscode-folder
  # a name no protected folder has is refused, with where it was read
  echo '{"folders": [".bashrc"]}' >"$T/bad.json"
  run sb --profile "$T/bad.json" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q 'folders .bashrc: not a protected folder'
  echo "$output" | grep -q "$T/bad.json"
  # an existing .claude stays writable, its protected names are held
  mkdir "$WS/.claude"
  chown "$AGENT_UID:$AGENT_UID" "$WS/.claude"
  run sb -- sh -c 'touch .claude/notes && echo notes-written; echo x >.claude/settings.json || echo settings-held
    [ -d .claude/commands ] && echo commands-there'
  [ "$status" -eq 0 ]
  for w in notes-written settings-held commands-there; do echo "$output" | grep -qx "$w"; done
  [ "$(ls -A "$WS/.claude")" = notes ]
}

@test "paths: git init inside a workspace without a repository works, and is reported" {
  need_cmd git
  run sb -- sh -c 'git init -q && git -c user.email=a@b.test -c user.name=a commit -q --allow-empty -m one && echo ok'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx ok
  echo "$output" | grep -q "the run created $WS/.git"
}

# ---- smaller ----

@test "paths: --ro of the workspace and settings with allowWrite: [] leave the workspace read-only" {
  run sb --ro "$WS" -- sh -c 'touch f && echo ws-writable; echo done'
  [ "$status" -eq 0 ]
  refute grep -qx ws-writable <<<"$output"
  echo '{"sandbox":{"filesystem":{"allowWrite":[]}}}' >"$T/settings.json"
  run sb --settings "$T/settings.json" -- sh -c 'touch f && echo ws-writable; echo done'
  [ "$status" -eq 0 ]
  refute grep -qx ws-writable <<<"$output"
  [ ! -e "$WS/f" ]
  # nothing protected, nothing placed in a workspace that is not written
  [ -z "$(ls -A "$WS")" ]
}

@test "paths: /etc/machine-id is a new random one on every run" {
  [ -f /etc/machine-id ] || skip "no /etc/machine-id on this host"
  run sb -- cat /etc/machine-id
  [ "$status" -eq 0 ]
  first=$output
  [[ "$first" =~ ^[0-9a-f]{32}$ ]]
  [ "$first" != "$(cat /etc/machine-id)" ]
  run sb -- cat /etc/machine-id
  [ "$status" -eq 0 ]
  [ "$output" != "$first" ]
}

@test "paths: no set-uid or set-gid bit can be set in a bind (it would outlive the sandbox)" {
  need_cmd python3
  run sb -- python3 -c '
import os, stat
open("f", "w").close()
os.chmod("f", 0o755); print("plain", oct(os.stat("f").st_mode & 0o7777))
def t(label, fn):
    try:
        fn(); print(label, "allowed")
    except OSError as e:
        print(label, "refused", e.errno)
t("chmod-suid", lambda: os.chmod("f", 0o4755))
t("chmod-sgid", lambda: os.chmod("f", 0o2755))
fd = os.open("f", os.O_RDONLY)
t("fchmod-suid", lambda: os.fchmod(fd, 0o4755))
t("fchmodat-suid", lambda: os.chmod("f", 0o4755, dir_fd=os.open(".", os.O_RDONLY)))
t("open-creat-suid", lambda: os.close(os.open("g", os.O_CREAT | os.O_WRONLY, 0o4755)))
t("mknod-suid", lambda: os.mknod("h", stat.S_IFREG | 0o6755))
'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx "plain 0o755"
  for c in chmod-suid chmod-sgid fchmod-suid fchmodat-suid open-creat-suid mknod-suid; do
    echo "$output" | grep -qx "$c refused 1"
  done
  [ -z "$(find "$WS" -perm /6000)" ]
}

@test "paths: a bind source swapped for a symlink after the check fails the mount, never binds the target" {
  host_secret
  mkdir -p "$T/data/sub"
  chmod 755 "$T/data" "$T/data/sub"
  run sb --rw "$T/data/sub" --bundle "$T/b" -- cat "$T/data/sub/key"
  [ "$status" -eq 0 ]
  grep -q '"run.agentrun.bind-nofollow": "true"' "$T/b/config.json"
  mv "$T/data/sub" "$T/data/sub.old"
  ln -s "$T/host/dir" "$T/data/sub"
  run "$AGENTRUN" --root "$ROOT" run --bundle "$T/b" swapped
  [ "$status" -ne 0 ]
  refute grep -q s3cret <<<"$output"
  echo "$output" | grep -q "mount source \`$T/data/sub\`: Too many levels of symbolic links"
}

@test "paths: through sudo the audit log is opened as the invoking user, as a plain user through the fd too" {
  id agentrun-test >/dev/null 2>&1 || skip "user agentrun-test missing (.ci/run creates it)"
  need_cmd socat
  local u; u=$(id -u agentrun-test)
  chown -R agentrun-test: "$WS" "$FHOME"
  install -d -m 0700 "$T/rootonly"
  install -d -m 0755 -o agentrun-test "$T/userlogs"
  PORT=$(free_port)
  socat TCP-LISTEN:"$PORT",bind=127.0.0.1,fork,reuseaddr EXEC:cat &
  track_pid $!
  wait_for bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT"
  sudo_sb() { env SUDO_UID="$u" SUDO_GID="$u" HOME="$FHOME" XDG_CONFIG_HOME="$T/config" \
    "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" --allow "echo.test:443=127.0.0.1:$PORT" "$@"; }
  # root's 0700 folder is not the invoking user's to write
  run sudo_sb --audit "$T/rootonly/audit.jsonl" -- true
  [ "$status" -ne 0 ]
  echo "$output" | grep -q "open as uid $u.*Permission denied"
  [ -z "$(ls -A "$T/rootonly")" ]
  run sudo_sb --audit "$T/userlogs/audit.jsonl" -- bash -c 'exec 3<>/dev/tcp/echo.test/443 && echo ping >&3 && head -1 <&3'
  [ "$status" -eq 0 ]
  [ "$(stat -c %u "$T/userlogs/audit.jsonl")" = "$u" ]
  grep -q '"source":"relay".*"endpoint":"echo.test:443"' "$T/userlogs/audit.jsonl"
  # the trust store is the invoking user's too
  install -d -m 0700 -o agentrun-test "$T/ucfg"
  echo '{}' >"$WS/.agentrun.json"
  chown agentrun-test "$WS/.agentrun.json"
  run env SUDO_UID="$u" SUDO_GID="$u" HOME="$FHOME" XDG_CONFIG_HOME="$T/ucfg" \
    "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" --profile "$WS/.agentrun.json" -- true
  [ "$status" -eq 0 ]
  [ "$(find "$T/ucfg/agentrun/trust" -type f -user "$u" -perm 600 | wc -l)" = 2 ]
  [ -z "$(find "$T/ucfg" ! -user "$u")" ]
  rm "$WS/.agentrun.json"
  # rootless: the netproxy reaches the log through agentrun's fd as well
  [ "$(cat /proc/sys/user/max_user_namespaces)" != 0 ] || skip "user namespaces disabled"
  install -d -m 0700 -o agentrun-test -g agentrun-test "$T/xdg"
  run runuser -u agentrun-test -- env -i PATH=/usr/local/bin:/usr/bin:/bin XDG_RUNTIME_DIR="$T/xdg" HOME="$FHOME" \
    XDG_CONFIG_HOME="$FHOME/.config" "$(public_bin)/agentrun" sandbox --workspace "$WS" \
    --allow "echo.test:443=127.0.0.1:$PORT" --audit "$T/userlogs/plain.jsonl" -- \
    bash -c 'getent hosts nope.test; exec 3<>/dev/tcp/echo.test/443 && echo ping >&3 && head -1 <&3'
  echo "$output"
  [ "$status" -eq 0 ]
  grep -q '"source":"relay".*"endpoint":"echo.test:443"' "$T/userlogs/plain.jsonl"
  grep -q '"source":"netproxy".*"endpoint":"nope.test"' "$T/userlogs/plain.jsonl"
  [ -z "$(ls -A "$WS")" ]
}

@test "paths: submodules' git folders and nested repositories are protected too (config, hooks, pinned)" {
  need_cmd git
  git -C "$WS" init -q
  # a submodule's git folder, one with a slash in its name, and its gitfile
  mkdir -p "$WS/.git/modules/lib" "$WS/.git/modules/a/b" "$WS/lib"
  for m in lib a/b; do
    echo "ref: refs/heads/main" >"$WS/.git/modules/$m/HEAD"
    printf '[core]\n\tbare = false\n' >"$WS/.git/modules/$m/config"
  done
  echo "gitdir: ../.git/modules/lib" >"$WS/lib/.git"
  # a linked worktree's entry; a repository two folders down that reads config.worktree
  mkdir -p "$WS/.git/worktrees/w1"
  echo "../.." >"$WS/.git/worktrees/w1/commondir"
  git init -q "$WS/sub/inner"
  git -C "$WS/sub/inner" config extensions.worktreeConfig true
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run sb -- sh -c '
    (cd sub/inner && echo hi >f && git -c user.email=a@b.test -c user.name=a add f &&
      git -c user.email=a@b.test -c user.name=a commit -qm one && echo inner-git-works)
    echo "[core] fsmonitor = touch /tmp/x" >>.git/modules/lib/config || echo modconfig-refused
    echo evil >.git/modules/lib/hooks/post-checkout || echo modhook-refused
    echo evil >>.git/modules/a/b/config || echo slashconfig-refused
    mv .git/modules/lib .git/modules/lib2 || echo module-pinned
    echo "gitdir: /tmp/evil" >lib/.git || echo gitfile-refused
    echo evil >>sub/inner/.git/config || echo innerconfig-refused
    echo evil >sub/inner/.git/hooks/post-checkout || echo innerhook-refused
    mv sub/inner sub/inner2 || echo inner-pinned
    mv sub sub2 || echo sub-pinned
    echo /tmp/evil >.git/worktrees/w1/commondir || echo commondir-refused
    mkdir .git/worktrees/w2 || echo worktrees-refused
    printf "[core]\n\tfsmonitor = touch /tmp/x\n" >sub/inner/.git/config.worktree || echo wtconfig-refused'
  echo "$output"
  [ "$status" -eq 0 ]
  for w in modconfig modhook slashconfig gitfile innerconfig innerhook commondir worktrees wtconfig; do
    echo "$output" | grep -qx "$w-refused"
  done
  for w in module inner sub; do echo "$output" | grep -qx "$w-pinned"; done
  echo "$output" | grep -qx inner-git-works
  refute grep -q fsmonitor "$WS/.git/modules/lib/config"
  refute grep -q evil "$WS/.git/modules/a/b/config" "$WS/sub/inner/.git/config"
  [ ! -e "$WS/.git/modules/lib/hooks/post-checkout" ]
  [ ! -e "$WS/sub/inner/.git/hooks/post-checkout" ]
  # the hooks folder made for the submodule was a placeholder: gone again
  [ ! -e "$WS/.git/modules/lib/hooks" ]
  [ ! -e "$WS/sub/inner/.git/config.worktree" ]
  grep -qx "../.." "$WS/.git/worktrees/w1/commondir"
}

@test "paths: a .git file (worktree, submodule) is read-only; a --rw file gets no protected names" {
  echo "gitdir: $T/elsewhere" >"$WS/.git"
  echo data >"$T/rwfile"
  chown "$AGENT_UID" "$T/rwfile"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run sb --rw "$T/rwfile" -- sh -c 'echo "gitdir: /tmp/evil" >.git || echo gitfile-refused; echo more >>'"$T/rwfile"' && echo rwfile-written'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx gitfile-refused
  echo "$output" | grep -qx rwfile-written
  [ "$(cat "$WS/.git")" = "gitdir: $T/elsewhere" ]
}

@test "paths: agentrun trust asks on the terminal: y approves, anything else does not" {
  need_cmd script
  printf '{ "env": ["A=1"] }\n' >"$WS/.agentrun.json"
  run sb --profile "$WS/.agentrun.json" -- true
  [ "$status" -eq 0 ]
  printf '{ "env": ["A=3"] }\n' >"$WS/.agentrun.json"
  run env XDG_CONFIG_HOME="$T/config" script -qec "$AGENTRUN trust $WS/.agentrun.json" /dev/null <<<"n"
  echo "$output" | grep -q "trust $WS/.agentrun.json as it is now? \[y/N\]"
  echo "$output" | grep -q "not trusted"
  run sb --profile "$WS/.agentrun.json" -- true
  [ "$status" -ne 0 ]
  run env XDG_CONFIG_HOME="$T/config" script -qec "$AGENTRUN trust $WS/.agentrun.json" /dev/null <<<"y"
  echo "$output" | grep -q '^+{ "env": \["A=3"\] }'
  echo "$output" | grep -q "$WS/.agentrun.json: trusted"
  run sb --profile "$WS/.agentrun.json" -- sh -c 'echo $A'
  [ "$status" -eq 0 ]
  [ "$output" = 3 ]
}

@test "paths: spec --agent and sandbox --bundle leave no placeholder behind, and say what they cannot hold" {
  run env -u SUDO_UID HOME="$FHOME" XDG_CONFIG_HOME="$T/config" "$AGENTRUN" spec --agent --workspace "$WS" --bundle "$T/b1"
  [ "$status" -eq 0 ]
  echo "$output" | grep -q "protected names .* cannot hold them read-only"
  run sb --bundle "$T/b2" -- true
  [ "$status" -eq 0 ]
  [ -z "$(ls -A "$WS")" ]
  # names that exist are held all the same
  touch "$WS/.envrc"
  run sb --bundle "$T/b3" -- true
  [ "$status" -eq 0 ]
  jq -e --arg p "$WS/.envrc" '.mounts[] | select(.destination == $p) | .options | index("ro")' "$T/b3/config.json"
}

@test "paths: .git/commondir, which moves where git reads config and hooks, cannot be written in any repository" {
  need_cmd git
  git -C "$WS" init -q
  git init -q "$WS/sub"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  # what the agent would point git at: a config running a command of its own
  run sb -- sh -c '
    mkdir -p evil/objects evil/refs/heads && echo "ref: refs/heads/main" >evil/HEAD
    printf "[core]\n\tfsmonitor = \"touch pwned; false\"\n" >evil/config
    [ "$(cat .git/commondir)" = . ] && echo placeholder-names-itself
    echo ../evil >.git/commondir || echo commondir-refused
    echo ../../evil >sub/.git/commondir || echo sub-commondir-refused
    git -c user.email=a@b.test -c user.name=a commit -q --allow-empty -m one && echo git-works'
  echo "$output"
  [ "$status" -eq 0 ]
  for w in placeholder-names-itself commondir-refused sub-commondir-refused git-works; do
    echo "$output" | grep -qx "$w"
  done
  [ ! -e "$WS/.git/commondir" ]
  [ ! -e "$WS/sub/.git/commondir" ]
  # the person's own git in that folder reads the repository's own config
  (cd "$WS" && git -c safe.directory='*' status >/dev/null 2>&1 || true)
  [ ! -e "$WS/pwned" ]
}

@test "paths: a protected file with a second name (a hard link an earlier run made) is refused, never written through it" {
  need_cmd git
  # run 1 makes the repository, so nothing of it is protected yet, and links its config and a hook
  run sb -- sh -c 'git init -q && ln .git/config cfg && printf "#!/bin/sh\n" >.git/hooks/pre-commit &&
    ln .git/hooks/pre-commit hook && echo linked'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx linked
  # run 2 would write the config and the hook the host's git runs through them
  run sb -- sh -c 'printf "[core]\n\tfsmonitor = touch pwned\n" >>cfg; echo "touch pwned" >>hook; echo ran'
  [ "$status" -eq 125 ]
  refute grep -qx ran <<<"$output"
  echo "$output" | grep -q "$WS/.git/config: a file the host runs or reads with 2 names (hard links)"
  refute grep -q fsmonitor "$WS/.git/config"
  rm "$WS/cfg"
  run sb -- sh -c 'echo "touch pwned" >>hook; echo ran'
  [ "$status" -eq 125 ]
  echo "$output" | grep -q "$WS/.git/hooks/pre-commit: a file the host runs or reads with 2 names (hard links)"
  refute grep -q pwned "$WS/.git/hooks/pre-commit"
  rm "$WS/hook"
  run sb -- true
  [ "$status" -eq 0 ]
}

@test "paths: the command cannot swap .git/info for a folder of its own, where its own excludes would outlive the run" {
  need_cmd git
  git -C "$WS" init -q
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run sb -- sh -c 'mv .git/info .git/info.old 2>/dev/null || echo refused
    mkdir -p .git/info && echo "*.evil" >.git/info/exclude && echo planted; exit 0'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx refused
  refute grep -qx planted <<<"$output"
  [ -d "$WS/.git/info" ] && [ ! -e "$WS/.git/info.old" ]
  refute grep -q evil "$WS/.git/info/exclude"
}

@test "paths: a FIFO left at .git/info/exclude (by an older run) does not hold the next start" {
  need_cmd git
  git -C "$WS" init -q
  # what a run could do before info/ was pinned
  mv "$WS/.git/info" "$WS/.git/info.old"
  mkdir "$WS/.git/info"
  mkfifo "$WS/.git/info/exclude"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run timeout -s KILL 20 env -u SUDO_UID -u SUDO_GID HOME="$FHOME" XDG_CONFIG_HOME="$T/config" \
    "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" -- echo ran
  [ "$status" -eq 125 ]
  echo "$output" | grep -q "$WS/.git/info/exclude: not a regular file"
  rm "$WS/.git/info/exclude"
  run sb -- echo ran
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx ran
}

@test "paths: a nested repository whose .git is a symlink (git follows it) is refused, not left writable" {
  need_cmd git
  mkdir -p "$WS/sub" "$WS/g"
  git init -q --bare "$WS/g/repo"
  ln -s ../g/repo "$WS/sub/.git"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run sb -- sh -c 'printf "[core]\n\tfsmonitor = touch pwned\n" >>sub/.git/config; echo ran'
  [ "$status" -eq 125 ]
  refute grep -qx ran <<<"$output"
  echo "$output" | grep -q "$WS/sub/.git: a symlink in a writable folder"
  ! grep -q fsmonitor "$WS/g/repo/config"
}

@test "paths: the hooks folder and the included files a git config names in the workspace are read-only too" {
  need_cmd git
  git -C "$WS" init -q
  git config -f "$WS/.git/config" core.hooksPath .githooks
  git config -f "$WS/.git/config" include.path ../conf/extra.inc
  mkdir "$WS/.githooks"
  printf '#!/bin/sh\nexit 0\n' >"$WS/.githooks/pre-commit"
  git init -q "$WS/sub"
  git config -f "$WS/sub/.git/config" core.hooksPath "hooks dir"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run sb -- sh -c '
    echo "touch pwned" >>.githooks/pre-commit || echo hooks-refused
    echo x >.githooks/post-checkout || echo newhook-refused
    printf "[core]\n\tfsmonitor = touch pwned\n" >conf/extra.inc || echo include-refused
    mv conf conf2 || echo conf-pinned
    mv .githooks h2 || echo hooks-pinned
    mkdir -p "sub/hooks dir/x" || echo subhooks-refused
    git -c user.email=a@b.test -c user.name=a commit -q --allow-empty -m one && echo git-works'
  echo "$output"
  [ "$status" -eq 0 ]
  for w in hooks-refused newhook-refused include-refused conf-pinned hooks-pinned subhooks-refused git-works; do
    echo "$output" | grep -qx "$w"
  done
  refute grep -q pwned "$WS/.githooks/pre-commit"
  [ ! -e "$WS/.githooks/post-checkout" ]
  # what was missing was a placeholder: gone again
  [ ! -e "$WS/conf" ]
  [ ! -e "$WS/sub/hooks dir" ]
  # a name that leaves the workspace through "..": not the sandbox's to hold
  git config -f "$WS/.git/config" core.hooksPath ../outside-hooks
  run sb -- true
  [ "$status" -eq 0 ]
}

@test "paths: the other agents' project settings, Claude Code skills and an existing mise.toml are read-only; none is left behind" {
  touch "$WS/mise.toml"
  echo '{ "folders": [{ "path": "." }] }' >"$WS/proj.code-workspace"
  chown "$AGENT_UID:$AGENT_UID" "$WS/mise.toml" "$WS/proj.code-workspace"
  run sb -- sh -c '
    echo "{\"mcp\":{\"x\":{\"type\":\"local\",\"command\":[\"touch\",\"pwned\"]}}}" >opencode.json || echo opencode-refused
    echo "{}" >opencode.jsonc || echo opencodec-refused
    mkdir -p .gemini/commands || echo gemini-refused
    mkdir -p .codex/x || echo codex-refused
    mkdir -p .claude/skills/x || echo skills-refused
    mkdir -p .helix/x || echo helix-refused
    mkdir -p .zed/x || echo zed-refused
    mkdir -p .cursor/x || echo cursor-refused
    echo "[hooks]" >>mise.toml || echo mise-refused
    echo "{}" >proj.code-workspace || echo workspace-file-refused
    [ ! -e .mise.toml ] && echo absent-mise-not-made'
  echo "$output"
  [ "$status" -eq 0 ]
  for w in opencode opencodec gemini codex skills helix zed cursor mise workspace-file; do
    echo "$output" | grep -qx "$w-refused"
  done
  echo "$output" | grep -qx absent-mise-not-made
  [ ! -s "$WS/mise.toml" ]
  grep -q folders "$WS/proj.code-workspace"
  [ "$(ls -A "$WS" | tr '\n' ' ')" = "mise.toml proj.code-workspace " ]
}

@test "paths: OpenCode's .opencode/ is the run's own copy and a missing .codex a file: nothing written there reaches the host" {
  # a missing .opencode: a file, but for OpenCode (the preset's "folders")
  run sb -- sh -c 'mkdir -p .opencode/plugin || echo opencode-refused'
  echo "$output" | grep -qx opencode-refused
  echo '{"folders": [".opencode"]}' >"$T/folders.json"
  chmod 644 "$T/folders.json"
  run sb --profile "$T/folders.json" -- sh -c '
    mkdir -p .opencode/plugin && echo "export default 1" >.opencode/plugin/x.js && echo opencode-written
    echo "{}" >opencode.json || echo opencode-json-refused
    mkdir -p .codex || echo codex-refused
    echo "notify = [\"touch\", \"pwned\"]" >.codex/config.toml || echo codex-config-refused
    mv .opencode .oc || echo opencode-move-refused'
  echo "$output"
  [ "$status" -eq 0 ]
  for w in opencode-written opencode-json-refused codex-refused codex-config-refused opencode-move-refused; do
    echo "$output" | grep -qx "$w"
  done
  # the placeholders gone, nothing of the run's writes left
  [ -z "$(ls -A "$WS")" ]
  # existing ones: the host's content is seen inside, changed there only
  mkdir -p "$WS/.opencode/command" "$WS/.codex"
  echo host-command >"$WS/.opencode/command/a.md"
  echo 'model = "host"' >"$WS/.codex/config.toml"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run sb -- sh -c '
    cat .opencode/command/a.md
    echo agent >.opencode/command/a.md && rm -rf .opencode/command && echo opencode-changed
    mkdir -p .opencode/plugin && echo "export default 1" >.opencode/plugin/x.js && echo plugin-written
    echo "notify = [\"touch\", \"pwned\"]" >>.codex/config.toml || echo codex-config-refused
    mkdir .codex/x || echo codex-dir-refused'
  echo "$output"
  [ "$status" -eq 0 ]
  for w in host-command opencode-changed plugin-written codex-config-refused codex-dir-refused; do
    echo "$output" | grep -qx "$w"
  done
  [ "$(cat "$WS/.opencode/command/a.md")" = host-command ]
  [ "$(ls -A "$WS/.opencode")" = command ]
  [ "$(cat "$WS/.codex/config.toml")" = 'model = "host"' ]
  [ "$(ls -A "$WS/.codex")" = config.toml ]
  # the next run sees the host's folder again, not the last run's copy
  run sb -- sh -c 'cat .opencode/command/a.md; [ ! -e .opencode/plugin ] && echo no-plugin'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx host-command
  echo "$output" | grep -qx no-plugin
}

@test "paths: folders or fake submodules a run makes to use up the walk's budgets leave the repositories it found protected" {
  need_cmd git
  git -C "$WS" init -q
  mkdir -p "$WS/.git/modules/lib" "$WS/zzz"
  echo "ref: refs/heads/main" >"$WS/.git/modules/lib/HEAD"
  printf '[core]\n\tbare = false\n' >"$WS/.git/modules/lib/config"
  git init -q "$WS/zzz/repo"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  # run 1 finds both, and makes 600 folders and 80 submodules' git folders
  run sb -- sh -c 'echo x >>zzz/repo/.git/config || echo nested-refused
    i=0; while [ $i -lt 600 ]; do mkdir d$i; i=$((i+1)); done
    i=0; while [ $i -lt 80 ]; do mkdir .git/modules/f$i && echo "ref: refs/heads/main" >.git/modules/f$i/HEAD; i=$((i+1)); done
    echo made'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx nested-refused
  echo "$output" | grep -qx made
  # run 2 still holds what run 1 found
  run sb -- sh -c 'printf "[core]\n\tfsmonitor = touch pwned\n" >>zzz/repo/.git/config || echo nested-refused
    printf "[core]\n\tfsmonitor = touch pwned\n" >>.git/modules/lib/config || echo module-refused'
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx nested-refused
  echo "$output" | grep -qx module-refused
  refute grep -q fsmonitor "$WS/zzz/repo/.git/config" "$WS/.git/modules/lib/config"
  # what it remembers is in the trust store, out of the sandbox's reach
  grep -rqx "zzz/repo/.git" "$T/config/agentrun/trust"
}

@test "paths: a hooks folder set in the person's own git config (a symlink of a dotfile manager, through an include) is held in every repository" {
  need_cmd git
  git -C "$WS" init -q
  mkdir -p "$T/dotfiles"
  printf '[include]\n\tpath = %s/dotfiles/hooks.inc\n' "$T" >"$T/dotfiles/gitconfig"
  printf '[core]\n\thooksPath = .hk\n' >"$T/dotfiles/hooks.inc"
  ln -s "$T/dotfiles/gitconfig" "$FHOME/.gitconfig"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run sb -- sh -c 'mkdir -p .hk/x || echo hooks-refused; touch .hk/pre-commit || echo hook-refused'
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx hooks-refused
  echo "$output" | grep -qx hook-refused
  [ ! -e "$WS/.hk" ]
}

@test "paths: a workspace inside a repository gets no .git of its own, which would take the repository's place there" {
  need_cmd git
  git init -q "$T"
  run sb -- sh -c 'git init -q 2>/dev/null || echo init-refused
    mkdir -p .git/hooks || echo git-refused
    printf "[core]\n\tfsmonitor = touch pwned\n" >.git/config || echo config-refused'
  echo "$output"
  [ "$status" -eq 0 ]
  for w in init git config; do echo "$output" | grep -qx "$w-refused"; done
  [ ! -e "$WS/.git" ]
  refute grep -q "the run created" <<<"$output"
  # the person's git there is the repository's above
  [ "$(git -c safe.directory='*' -C "$WS" rev-parse --show-toplevel)" = "$(cd "$T" && pwd -P)" ]
}

@test "paths: a repository the run makes below the workspace is told after the run, one that was there is not" {
  need_cmd git
  git init -q "$WS/old"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run sb -- sh -c 'git init -q src/lib && echo made'
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx made
  echo "$output" | grep -q "the run created $WS/src/lib/.git"
  refute grep -q "the run created $WS/old" <<<"$output"
  # the next run found it there: nothing to tell
  run sb -- true
  [ "$status" -eq 0 ]
  ! echo "$output" | grep -q "the run created"
}

@test "paths: agentrun trust shows a carriage return or a bidi control the agent hid a change behind, never sends it to the terminal" {
  printf '{\n  "env": ["A=1"]\n}\n' >"$WS/.agentrun.json"
  run sb --profile "$WS/.agentrun.json" -- true
  [ "$status" -eq 0 ]
  # on a terminal the new line reads as the old one: the allow is drawn over
  printf '{\n  "allow": ["evil.example"],\r  "env": ["A=1"]                              \n}\n' >"$WS/.agentrun.json"
  run env XDG_CONFIG_HOME="$T/config" "$AGENTRUN" trust --yes "$WS/.agentrun.json"
  [ "$status" -eq 0 ]
  [[ "$output" != *$'\r'* ]]
  echo "$output" | grep -qF '+  "allow": ["evil.example"],<U+000D>  "env": ["A=1"]'
  # the same for a file with no trusted copy yet, and a right-to-left override
  printf '{ "env": ["B=\xe2\x80\xae1"] }\n' >"$T/new.json"
  run env XDG_CONFIG_HOME="$T/config" "$AGENTRUN" trust --yes "$T/new.json"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qF '{ "env": ["B=<U+202E>1"] }'
}

@test "paths: a name the command chose reaches agentrun's messages without its control characters (no escape sequence for the terminal)" {
  need_cmd git
  run sb -- sh -c 'git init -q "$(printf "x\033]52;c;Y3VybCBldmlsfHNo\007\r")/r" && echo made'
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx made
  [[ "$output" != *$'\033'* ]]
  [[ "$output" != *$'\r'* ]]
  [[ "$output" != *$'\a'* ]]
  echo "$output" | grep -qF "the run created $WS/x?]52;c;Y3VybCBldmlsfHNo??/r/.git"
}

@test "paths: 64 nested repositories: the names held do not use up the open files of the container's init" {
  need_cmd git
  local i
  for i in $(seq 64); do
    mkdir -p "$WS/r$i/.git/hooks"
    echo "ref: refs/heads/main" >"$WS/r$i/.git/HEAD"
    printf '[core]\n\tbare = false\n' >"$WS/r$i/.git/config"
  done
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run sb -- sh -c 'echo x >>r64/.git/config || echo refused; echo ran'
  echo "$output"
  [ "$status" -eq 0 ]
  echo "$output" | grep -qx ran
  echo "$output" | grep -qx refused
}

@test "paths: the git folder a .git file names inside the workspace (--separate-git-dir) is protected like any other" {
  need_cmd git
  git init -q --separate-git-dir="$WS/.realgit" "$WS"
  mkdir -p "$WS/gitdirs" "$WS/proj"
  git init -q --separate-git-dir="$WS/gitdirs/proj" "$WS/proj"
  # a relative one, as git writes for a submodule
  mkdir -p "$WS/lib" "$WS/store"
  git init -q --bare "$WS/store/lib.git"
  echo "gitdir: ../store/lib.git" >"$WS/lib/.git"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run sb -- sh -c '
    printf "[core]\n\tfsmonitor = touch pwned\n" >>.realgit/config || echo top-refused
    touch .realgit/hooks/post-checkout || echo top-hooks-refused
    printf "[core]\n\tfsmonitor = touch pwned\n" >>gitdirs/proj/config || echo nested-refused
    printf "[core]\n\tfsmonitor = touch pwned\n" >>store/lib.git/config || echo relative-refused
    mv gitdirs gitdirs2 || echo pinned'
  echo "$output"
  [ "$status" -eq 0 ]
  for w in top-refused top-hooks-refused nested-refused relative-refused pinned; do echo "$output" | grep -qx "$w"; done
  refute grep -q fsmonitor "$WS/.realgit/config"
  refute grep -q fsmonitor "$WS/gitdirs/proj/config"
  ! grep -q fsmonitor "$WS/store/lib.git/config"
}

@test "paths: a --mask or --ro file in the workspace with a second name (a hard link an earlier run made) is refused" {
  echo TOKEN=1 >"$WS/secret.env"
  echo '{}' >"$WS/conf.json"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  # run 1, before either was held: a second name for each
  run sb -- sh -c 'ln secret.env .s && ln conf.json .c && echo linked'
  echo "$output" | grep -qx linked
  # the person writes a new secret in place; run 2 would read it, or write the config, through them
  echo TOKEN=2 >"$WS/secret.env"
  run sb --mask "$WS/secret.env" -- cat .s
  [ "$status" -eq 125 ]
  refute grep -q TOKEN <<<"$output"
  echo "$output" | grep -q -- "--mask $WS/secret.env: a file with 2 names (hard links)"
  run sb --ro "$WS/conf.json" -- sh -c 'echo "{\"x\":1}" >.c; echo ran'
  [ "$status" -eq 125 ]
  refute grep -qx ran <<<"$output"
  echo "$output" | grep -q -- "--ro $WS/conf.json: a file with 2 names (hard links)"
  [ "$(cat "$WS/conf.json")" = '{}' ]
  # without the second names both hold
  rm "$WS/.s" "$WS/.c"
  run sb --mask "$WS/secret.env" --ro "$WS/conf.json" -- sh -c 'cat secret.env; echo x >conf.json || echo ro'
  [ "$status" -eq 0 ]
  refute grep -q TOKEN <<<"$output"
  echo "$output" | grep -qx ro
}

@test "paths: a masked folder in the workspace holding a file with a second name elsewhere is refused" {
  mkdir "$WS/secrets"
  echo TOKEN=1 >"$WS/secrets/token"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run sb -- sh -c 'ln secrets/token .t && echo linked'
  echo "$output" | grep -qx linked
  echo TOKEN=2 >"$WS/secrets/token"
  run sb --mask "$WS/secrets" -- cat .t
  [ "$status" -eq 125 ]
  refute grep -q TOKEN <<<"$output"
  echo "$output" | grep -q -- "--mask $WS/secrets: .*$WS/secrets/token: .* 2 names (hard links)"
}

# stopped PID: PID is stopped (state T).
stopped() { [ "$(cut -d' ' -f3 /proc/"$1"/stat)" = T ]; }

@test "paths: a folder swapped for a symlink while placeholders are made: none lands where it points" {
  mkdir -p "$T/outside"
  chown "$AGENT_UID:$AGENT_UID" "$T/outside"
  # stopped as it is about to make the first placeholder: then another
  # run's agent swaps the workspace for a symlink to a folder it chose
  (export AGENTRUN_FAULT=sandbox-before-place:stop; exec env -u SUDO_UID -u SUDO_GID HOME="$FHOME" \
    XDG_CONFIG_HOME="$T/config" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" -- true) 2>"$T/err" &
  local pid=$! i status
  track_pid "$pid"
  wait_for stopped "$pid"
  mv "$WS" "$T/ws.real"
  ln -s "$T/outside" "$WS"
  # what it makes outside is seen at its next stop (a cleanup removes it after)
  local seen=
  for i in $(seq 400); do
    kill -0 "$pid" 2>/dev/null || break
    if stopped "$pid"; then
      seen+=$(ls -A "$T/outside")
      kill -CONT "$pid"
    fi
    sleep 0.05
  done
  echo "made outside: $seen"
  [ -z "$seen" ]
  status=0
  wait "$pid" || status=$?
  cat "$T/err"
  ls -A "$T/outside"
  [ -z "$(ls -A "$T/outside")" ]
  [ -z "$(ls -A "$T/ws.real")" ]
  [ "$status" -ne 0 ]
  grep -q "a symlink on the way" "$T/err"
}

@test "paths: a protected name the person saves by a rename while the container is made is held, in the person's version" {
  # stopped right after the init's clone: the bind sources are open, nothing
  # is mounted yet; the person's editor then saves .envrc over the placeholder
  (export AGENTRUN_FAULT=create-after-clone:stop; exec env -u SUDO_UID -u SUDO_GID HOME="$FHOME" \
    XDG_CONFIG_HOME="$T/config" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" -- \
    sh -c 'cat .envrc; echo "export EVIL=1" >>.envrc && echo wrote; exit 0') >"$T/out" 2>"$T/err" &
  local pid=$! status=0
  track_pid "$pid"
  wait_for stopped "$pid"
  [ -e "$WS/.envrc" ]
  echo 'export A=1' >"$WS/.envrc.tmp"
  mv "$WS/.envrc.tmp" "$WS/.envrc"
  kill -CONT "$pid"
  wait "$pid" || status=$?
  cat "$T/out" "$T/err"
  [ "$status" -eq 0 ]
  # the command read the person's file, could not write it
  grep -qx 'export A=1' "$T/out"
  refute grep -qx wrote "$T/out"
  [ "$(cat "$WS/.envrc")" = 'export A=1' ]
}

@test "paths: a protected name the person writes in place during the run outlives the run's cleanup" {
  sb -- sh -c 'touch started; while [ ! -e go ]; do sleep 0.1; done' 2>"$T/err" &
  local pid=$! status=0
  track_pid "$pid"
  wait_for test -e "$WS/started"
  echo 'alias x=y' >>"$WS/.bashrc"
  touch "$WS/go"
  wait "$pid" || status=$?
  cat "$T/err"
  [ "$status" -eq 0 ]
  [ "$(cat "$WS/.bashrc")" = 'alias x=y' ]
  # the placeholders nobody touched are gone
  [ ! -e "$WS/.zshrc" ]
}

# The command's attempt comes a second after the person's save: the run
# must be stopped by then (what it could do at once is said in the error).
@test "paths: a protected name the person saves by a rename during the run stops the run; the save outlives the cleanup" {
  sb -- sh -c 'touch started; while [ ! -e go ]; do sleep 0.1; done; sleep 1
    echo "export EVIL=1" >>.envrc && echo wrote' >"$T/out" 2>"$T/err" &
  local pid=$! status=0
  track_pid "$pid"
  wait_for test -e "$WS/started"
  # an editor's save: a new file (one the agent's uid could write) renamed
  # over the placeholder; the kernel takes the read-only mount on the old
  # file away, in every namespace
  echo 'export A=1' >"$WS/.envrc.tmp"
  chmod 666 "$WS/.envrc.tmp"
  mv "$WS/.envrc.tmp" "$WS/.envrc"
  touch "$WS/go"
  wait "$pid" || status=$?
  cat "$T/out" "$T/err"
  [ "$status" -eq 125 ]
  grep -q "$WS/.envrc was replaced or removed on the host while the command ran" "$T/err"
  refute grep -q wrote "$T/out"
  [ "$(cat "$WS/.envrc")" = 'export A=1' ]
  [ ! -e "$WS/.zshrc" ]
}

# The person's commands as the agent's uid: what they write then is a file
# the command could write, were it not held.
as_agent() { setpriv --reuid="$AGENT_UID" --regid="$AGENT_UID" --clear-groups env HOME=/nonexistent "$@"; }
g() { as_agent git -C "$WS" "$@"; }

# In the background ($pid), a command that appends core.fsmonitor to
# .git/config a second after $WS/go appears; back once it has started.
config_writer() {
  sb -- sh -c 'touch started; while [ ! -e go ]; do sleep 0.1; done; sleep 1
    printf "[core]\n\tfsmonitor = touch /tmp/pwned\n" >>.git/config && echo wrote' >"$T/out" 2>"$T/err" &
  pid=$!
  track_pid "$pid"
  wait_for test -e "$WS/started"
}

@test "paths: git writing .git/config on the host during the run (a rename of config.lock) stops the run before the command can write it" {
  local pid status=0
  g init -q
  config_writer
  g config user.name person
  [ "$(stat -c %u "$WS/.git/config")" = "$AGENT_UID" ]
  touch "$WS/go"
  wait "$pid" || status=$?
  cat "$T/out" "$T/err"
  [ "$status" -eq 125 ]
  grep -q "$WS/.git/config was replaced or removed on the host" "$T/err"
  refute grep -q wrote "$T/out"
  refute grep -q fsmonitor "$WS/.git/config"
  [ "$(g config user.name)" = person ]
}

@test "paths: the person moving .git away on the host (and making a new one) stops the run before the command can write the new config" {
  local pid status=0
  g init -q
  config_writer
  # the held mounts move with the old folder; the new one, the agent's
  # uid's, holds nothing
  as_agent mv "$WS/.git" "$WS/.git.old"
  g init -q
  touch "$WS/go"
  wait "$pid" || status=$?
  cat "$T/out" "$T/err"
  [ "$status" -eq 125 ]
  grep -q "$WS/.git/[a-z]* was replaced or removed on the host" "$T/err"
  refute grep -q wrote "$T/out"
  refute grep -q fsmonitor "$WS/.git/config"
}
