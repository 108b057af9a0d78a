#!/usr/bin/env bats
# agentrun sandbox as people use it every day: a plain user without a
# runtime folder (su, cron), the caller's PATH, root without sudo, a
# persistent home, agent presets, and `check` taking every sandbox option.
# Everything lives under $BATS_TEST_TMPDIR; the runs as agentrun-test use
# copies of the binaries in a folder every uid can walk to.

load helpers

setup() {
  T=$BATS_TEST_TMPDIR
  [ "$(id -u)" = 0 ] || skip "needs root (it runs the sandbox as root and as $USER_NAME)"
  let_others_walk_to "$T"
  WS=$T/ws FHOME=$T/home
  mkdir -p "$WS" "$FHOME"
}

teardown() {
  kill_tracked
  cleanup_containers
}

# CMD, a shell line, run by agentrun-test through su, as a login without
# pam_systemd has it: no XDG_RUNTIME_DIR, no --root, HOME the test's (after
# as_plain_user, helpers).
as_user() {
  local bin
  bin=$(public_bin)
  env -u XDG_RUNTIME_DIR su "$USER_NAME" -s /bin/sh -c "cd '$WS' && HOME='$FHOME' PATH='$bin:/usr/bin:/bin' $*"
}

# Where root without sudo keeps a preset's state: agentrun's own folder in
# the (fake) home of the invoking user, not the home's ~/.claude itself.
state_of() { echo "$FHOME/.local/share/agentrun/state/$1"; }

# The sandbox as root without sudo runs it (as nobody), with a fake home.
sb() { env -u SUDO_UID -u SUDO_GID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" "$@"; }

@test "no state root: sandbox, check and spec --agent run for a plain user without XDG_RUNTIME_DIR, and leave nothing" {
  as_plain_user
  # the OCI commands keep their rule
  run as_user agentrun list
  [ "$status" -eq 1 ]
  [[ "$output" == *"no state root: XDG_RUNTIME_DIR is not set"* ]]
  run as_user agentrun sandbox --help
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == "usage: agentrun sandbox"* ]]
  # the bundle's hosts file is bound from the private folder: its mount root names it
  run as_user agentrun sandbox -- "sh -c 'id -u; grep \" /etc/hosts \" /proc/self/mountinfo | cut -d\" \" -f4'"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$(id -u "$USER_NAME")" ]
  private=${lines[1]%/bundle/hosts}
  [[ "$private" == */agentrun-sandbox-* ]]
  # removed by the janitor once the container's pid 1 is gone, after the return
  wait_for bash -c "[ ! -e '/dev/shm$private' ] && [ ! -e '/tmp$private' ] && [ ! -e '$private' ]"
  run as_user agentrun check
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"0 crossed"* ]]
  run as_user agentrun spec --agent --bundle "$WS/b" -- true
  [ "$status" -eq 0 ]
  [ -s "$WS/b/config.json" ]
}

@test "PATH: the caller's is kept, less the folders the sandbox does not have" {
  mkdir -p "$T/tools/bin" "$T/unbound/bin"
  printf '#!/bin/sh\necho mytool ran\n' >"$T/tools/bin/mytool"
  chmod 755 "$T/tools/bin/mytool"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS"
  run env PATH="$T/tools/bin:$T/unbound/bin:/nonexistent:/usr/bin:/bin" HOME="$FHOME" \
    "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" --ro "$T/tools" -- sh -c 'echo "$PATH"; mytool'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$T/tools/bin:/usr/bin:/bin" ]
  [ "${lines[1]}" = "mytool ran" ]
  # a folder of the home is there when --home has it
  mkdir -p "$T/h2/.local/bin" "$FHOME/.local/bin"
  chown -R "$AGENT_UID:$AGENT_UID" "$FHOME" "$T/h2"
  run env PATH="$FHOME/.local/bin:/usr/bin:/bin" HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" \
    --home "$T/h2" -- sh -c 'echo "$PATH"'
  [ "$output" = "$FHOME/.local/bin:/usr/bin:/bin" ]
  rmdir "$T/h2/.local/bin"
  run env PATH="$FHOME/.local/bin:/usr/bin:/bin" HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" \
    --home "$T/h2" -- sh -c 'echo "$PATH"'
  [ "$output" = "/usr/bin:/bin" ]
  # nothing of it inside: the default
  run env PATH="$T/unbound/bin" HOME="$FHOME" "$AGENTRUN" --root "$ROOT" sandbox --workspace "$WS" -- /bin/sh -c 'echo "$PATH"'
  [ "$output" = /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin ]
}

@test "--home DIR: made 0700 when missing, read-write at \$HOME, kept between runs, masks still apply" {
  chown "$AGENT_UID:$AGENT_UID" "$WS"
  run sb --home "$T/keep" -- sh -c 'echo "$HOME"; echo one >"$HOME/notes"; mkdir -p "$HOME/.ssh"; echo k >"$HOME/.ssh/id" 2>&1 || echo ssh-refused'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(stat -c %a:%u "$T/keep")" = "700:$AGENT_UID" ]
  [ "$(cat "$T/keep/notes")" = one ]
  # a second run finds it; a key put there from outside stays hidden
  install -d -o "$AGENT_UID" "$T/keep/.ssh"
  echo secret-key >"$T/keep/.ssh/id_ed25519"
  run sb --home "$T/keep" -- sh -c 'cat "$HOME/notes"; cat "$HOME/.ssh/id_ed25519" 2>&1 || echo hidden'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = one ]
  [[ "$output" != *secret-key* ]]
}

@test "--agent claude: its endpoints, its state bound from agentrun's state folder, its key passed at exec and never written" {
  chown "$AGENT_UID:$AGENT_UID" "$WS" "$FHOME"
  export ANTHROPIC_API_KEY=sk-test-never-in-the-bundle
  sb --agent claude -- sh -c 'cat /etc/hosts; echo "key=$ANTHROPIC_API_KEY"; echo kept >"$HOME/.claude/state";
      echo "{}" >"$HOME/.claude.json"; grep " /etc/hosts " /proc/self/mountinfo | cut -d" " -f4 >"'"$WS"'/where";
      while [ ! -e "'"$WS"'/go" ]; do sleep 0.05; done' >"$T/out" 2>&1 &
  track_pid $!
  wait_for test -s "$WS/where"
  private=$(cat "$WS/where") private=${private%/bundle/hosts}
  conf=/dev/shm$private/bundle/config.json
  [ -e "$conf" ] || conf=/tmp$private/bundle/config.json
  [ -s "$conf" ]
  run grep -c sk-test-never "$conf"
  [ "$output" = 0 ]
  run grep -rqs sk-test-never "$ROOT"
  [ "$status" -eq 1 ]
  touch "$WS/go"
  wait
  cat "$T/out"
  grep -qx $'127.77.0.2\tapi.anthropic.com' "$T/out"
  grep -q platform.claude.com "$T/out"
  grep -qx "key=$ANTHROPIC_API_KEY" "$T/out"
  [ "$(cat "$(state_of claude)/.claude/state")" = kept ]
  [ "$(cat "$(state_of claude)/.claude.json")" = "{}" ]
  [ ! -e "$FHOME/.claude" ]
  [ ! -e "$FHOME/.claude.json" ]
  # a variable the preset does not name stays out
  OPENAI_API_KEY=nope run sb --agent claude -- sh -c 'echo "o=${OPENAI_API_KEY:-unset}"'
  [ "$output" = o=unset ]
  # spec --agent writes names alone nowhere either
  (cd "$WS" && HOME="$FHOME" "$AGENTRUN" spec --agent --agent claude --bundle "$T/b" -- true)
  run grep -c sk-test-never "$T/b/config.json"
  [ "$output" = 0 ]
  jq -e '.hooks.createRuntime[0].args | index("--route")' "$T/b/config.json"
}

@test "--agent opencode: nested state folders made in a fresh home and kept; a symlink on the way in --home is never followed" {
  chown "$AGENT_UID:$AGENT_UID" "$WS" "$FHOME"
  run sb --agent opencode -- sh -c 'echo kept >"$HOME/.local/share/opencode/data"; echo c >"$HOME/.config/opencode/c"'
  echo "$output"
  [ "$status" -eq 0 ]
  S=$(state_of opencode)
  [ "$(cat "$S/.local/share/opencode/data")" = kept ]
  [ "$(cat "$S/.config/opencode/c")" = c ]
  [ ! -e "$FHOME/.config" ]
  [ ! -e "$FHOME/.local/share/opencode" ]
  # the folders on the way belong to the invoking user (root), the state to the agent
  [ "$(stat -c %a:%u "$FHOME/.local/share/agentrun" "$S" "$S/.local/share" "$S/.local/state/opencode")" = \
    "$(printf '700:%s\n' 0 0 0 "$AGENT_UID")" ]
  # a symlink planted in the state folder is never followed: refused, nothing made where it points
  install -d -o "$AGENT_UID" "$T/elsewhere"
  rm -rf "$S/.config"
  ln -s "$T/elsewhere" "$S/.config"
  run sb --agent opencode -- true
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"agent state: $S/.config: not a folder (a symlink there is never followed)"* ]]
  [ -z "$(ls -A "$T/elsewhere")" ]
  # a --home an earlier run planted a symlink in: refused, nothing made where it points
  install -d -o "$AGENT_UID" "$T/keep"
  ln -s "$T/elsewhere" "$T/keep/.config"
  run sb --agent opencode --home "$T/keep" -- true
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"agent state: $T/keep/.config: not a folder (a symlink there is never followed)"* ]]
  [ -z "$(ls -A "$T/elsewhere")" ]
}

@test "--agent claude, codex: what the agent writes in its state lands in agentrun's state folder, never in the files the person's own agent runs, and lasts" {
  chown "$AGENT_UID:$AGENT_UID" "$WS" "$FHOME"
  mkdir -p "$FHOME/.claude" "$FHOME/.codex"
  echo '{"theme": "dark"}' >"$FHOME/.claude/settings.json"
  echo '{"numStartups": 3}' >"$FHOME/.claude.json"
  echo 'model = "the-persons"' >"$FHOME/.codex/config.toml"
  mine() { (cd "$FHOME" && find .claude .claude.json .codex -printf '%p %s %T@\n' | sort && cat .claude/settings.json .claude.json .codex/config.toml); }
  before=$(mine)
  run sb --agent claude -- sh -c 'set -e
      echo "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"id >/tmp/ran\"}]}]}}" >"$HOME/.claude/settings.json"
      echo "{\"mcpServers\": {\"x\": {\"command\": \"/tmp/x\"}}}" >"$HOME/.claude.json"
      mkdir "$HOME/.claude/commands"; echo "run id" >"$HOME/.claude/commands/x.md"'
  echo "$output"
  [ "$status" -eq 0 ]
  run sb --agent codex -- sh -c 'echo "notify = [\"sh\", \"-c\", \"id\"]" >>"$HOME/.codex/config.toml"'
  echo "$output"
  [ "$status" -eq 0 ]
  # the person's own files: as they were, nothing added
  [ "$(mine)" = "$before" ]
  # the writes are in the state folders, which the next run finds
  grep -q '"Stop"' "$(state_of claude)/.claude/settings.json"
  grep -q mcpServers "$(state_of claude)/.claude.json"
  grep -q notify "$(state_of codex)/.codex/config.toml"
  run sb --agent claude -- sh -c 'cat "$HOME/.claude/settings.json" "$HOME/.claude.json" "$HOME/.claude/commands/x.md"'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *'"Stop"'* && "$output" == *mcpServers* && "$output" == *"run id"* ]]
  [[ "$output" != *'"theme"'* ]]
  run sb --agent codex -- sh -c 'cat "$HOME/.codex/config.toml"'
  [ "$output" = 'notify = ["sh", "-c", "id"]' ]
  # the state folders are 0700, of the invoking user; a preset's own, each
  [ "$(stat -c %a:%u "$(state_of claude)" "$(state_of codex)")" = "$(printf '700:0\n700:0')" ]
  [ "$(ls -A "$(state_of claude)")" = "$(printf '.claude\n.claude.json')" ]
  [ "$(ls -A "$(state_of codex)")" = .codex ]
  # a state file that is another name of one of the host's (a hard link) is not bound
  ln -f "$FHOME/.claude.json" "$(state_of claude)/.claude.json"
  run sb --agent claude -- sh -c 'echo "{}" >"$HOME/.claude.json"'
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"agent state: $(state_of claude)/.claude.json: a file with other names (hard links), not bound"* ]]
  [ "$(mine)" = "$before" ]
}

@test "a profile names a preset and a home; an unknown preset is an error naming it" {
  chown "$AGENT_UID:$AGENT_UID" "$WS"
  echo '{"agent": "codex", "home": "agent-home"}' >"$T/p.json"
  run sb --profile "$T/p.json" -- sh -c 'cat /etc/hosts; echo "$HOME"; ls -d "$HOME/.codex" 2>&1'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *api.openai.com* ]]
  [[ "$output" == *chatgpt.com* ]]
  [ -d "$T/agent-home" ]
  [ -d "$T/agent-home/.codex" ]
  [ ! -e "$(state_of codex)" ]   # with --home the state is in it
  run sb --agent nosuch -- true
  [ "$status" -ne 0 ]
  [[ "$output" == *"--agent nosuch: no such preset"* ]]
  run sb --agent ../etc/passwd -- true
  [ "$status" -ne 0 ]
  [[ "$output" == *"a preset name is"* ]]
}

@test "root without sudo: one line says the command runs as nobody and whether the workspace is writable; --user picks another uid, never 0" {
  need_cmd script
  need_user
  chown "$USER_NAME:" "$FHOME"
  chown root: "$WS" && chmod 755 "$WS"
  run script -qec "env -u SUDO_UID -u SUDO_GID HOME='$FHOME' '$AGENTRUN' --root '$ROOT' sandbox --workspace '$WS' -- id -u" /dev/null
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == "agentrun: running as nobody (uid $AGENT_UID"*"the workspace $WS is not writable for it"* ]]
  [[ "${lines[1]}" == *"$AGENT_UID"* ]]
  chown "$AGENT_UID" "$WS"
  run script -qec "env -u SUDO_UID -u SUDO_GID HOME='$FHOME' '$AGENTRUN' --root '$ROOT' sandbox --workspace '$WS' -- true" /dev/null
  [[ "$output" == *"the workspace $WS is writable for it"* ]]
  # --quiet, and no terminal: nothing said
  run script -qec "env -u SUDO_UID -u SUDO_GID HOME='$FHOME' '$AGENTRUN' --root '$ROOT' sandbox -q --workspace '$WS' -- true" /dev/null
  [[ "$output" != *"agentrun:"* ]]
  run sb -- id -u
  [ "$output" = "$AGENT_UID" ]
  # --user: that uid (and its passwd group), the workspace its own
  chown "$USER_NAME:" "$WS"
  run sb --user "$(id -u "$USER_NAME")" -- sh -c 'id -u; id -g; touch ok'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$(id -u "$USER_NAME")" ]
  [ "${lines[1]}" = "$(id -g "$USER_NAME")" ]
  [ "$(stat -c %u "$WS/ok")" = "$(id -u "$USER_NAME")" ]
  run sb --user 4242:4343 -- sh -c 'id -u; id -g'
  [ "$output" = $'4242\n4343' ]
  run sb --user 0 -- id -u
  [ "$status" -ne 0 ]
  [[ "$output" == *"--user 0: the command never runs as uid or gid 0"* ]]
  run sb --user 1000:0 -- id -u
  [ "$status" -ne 0 ]
  # not root: no other uid to be had
  run as_user agentrun sandbox --user 4242 -- id -u
  [ "$status" -ne 0 ]
  [[ "$output" == *"only root can choose"* ]]
}

@test "check takes every sandbox option: --profile, --settings, --agent, --home" {
  chown "$AGENT_UID:$AGENT_UID" "$WS" "$FHOME"
  echo '{"agent": "claude", "mask": ["/etc/hostname"]}' >"$T/team.json"
  echo '{"sandbox": {"network": {"allowedDomains": ["pypi.org"]}}}' >"$T/settings.json"
  run env -u SUDO_UID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" check --workspace "$WS" --profile "$T/team.json" \
    --settings "$T/settings.json" --home "$T/h" --json
  echo "$output" | jq -c '.probes[] | select(.ok | not)'
  # the profile's mask and the preset's endpoint are probed; on a machine
  # with no way out the allowed endpoint answers nothing, nothing else crosses
  echo "$output" | jq -e '[.probes[].name] | index("read-credential:/etc/hostname")'
  echo "$output" | jq -e '[.probes[].name] | index("control-allowed-endpoint:api.anthropic.com:443")'
  echo "$output" | jq -e '[.probes[] | select(.ok | not) | select(.name | startswith("control-allowed-endpoint:") | not)] == []'
  [ -d "$T/h" ]
  run env -u SUDO_UID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" check --workspace "$WS" --agent nosuch
  [ "$status" -eq 2 ]
  [[ "$output" == *"--agent nosuch: no such preset"* ]]
  run env -u SUDO_UID HOME="$FHOME" "$AGENTRUN" --root "$ROOT" check --help
  [ "$status" -eq 0 ]
  [[ "$output" == *--profile* && "$output" == *--agent* ]]
}

@test "--ask --save-profile F --profile F: F need not exist yet" {
  chown "$AGENT_UID:$AGENT_UID" "$WS"
  run sb --ask --save-profile "$T/new.json" --profile "$T/new.json" -- echo ran
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = ran ]
  # another missing profile is still an error
  run sb --ask --save-profile "$T/new.json" --profile "$T/other.json" -- echo ran
  [ "$status" -ne 0 ]
  [[ "$output" == *other.json* ]]
}

@test "as a plain user without XDG_RUNTIME_DIR: --agent claude with --home, the key passed, other names refused and told" {
  as_plain_user
  run as_user ANTHROPIC_API_KEY=sk-user agentrun sandbox --agent claude --home "$FHOME/sb" -- \
    "sh -c 'id -u; echo key=\$ANTHROPIC_API_KEY; getent hosts api.anthropic.com; getent hosts pypi.org || echo refused'"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$(id -u "$USER_NAME")" ]
  [ "${lines[1]}" = key=sk-user ]
  [[ "${lines[2]}" == 127.77.0.*api.anthropic.com ]]
  [[ "$output" == *refused* ]]
  [[ "$output" == *"agentrun: blocked pypi.org (not allowed; add --allow pypi.org)"* ]]
  [ "$(stat -c %a:%U "$FHOME/sb")" = "700:$USER_NAME" ]
  [ -d "$FHOME/sb/.claude" ]
  [ "$(cat "$FHOME/sb/.claude.json")" = "{}" ]
}

@test "--net-idle-timeout on the command line reaches the relay (its option id is its own)" {
  chown "$AGENT_UID:$AGENT_UID" "$WS"
  run env -u SUDO_UID HOME="$FHOME" "$AGENTRUN" spec --agent --workspace "$WS" --allow example.org \
    --net-idle-timeout 7 --net-max-conns 9 --bundle "$T/b" -- true
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"--max-conns 9 --idle-timeout 7"* ]]
}

@test "--home is a read-write bind like --rw: not the real home nor a system folder unless asked" {
  chown "$AGENT_UID:$AGENT_UID" "$WS"
  run sb --home /etc -- true
  [ "$status" -ne 0 ]
  [[ "$output" == *"--home /etc: a system folder"* ]]
  run sb --home "$FHOME" -- true
  [ "$status" -ne 0 ]
  [[ "$output" == *"--home $FHOME: holds the home folder"* ]]
}

# ---- through sudo, the paths the person chooses are made as the person ----

# DIR: a folder of root's that agentrun-test may walk into but not write,
# and FHOME/NAME (the person's own symlink) pointing at it.
root_folder_behind() {
  install -d -m 0755 -o root -g root "$T/rootdir"
  ln -s "$T/rootdir" "$FHOME/$1"
  chown -h "$USER_NAME:" "$FHOME/$1"
}

@test "as a plain user and through sudo: a data folder that leads through a symlink into root's folder makes nothing there" {
  as_sudo_user
  root_folder_behind .local
  for AS in user sudo; do
    agentrun_as XDG_DATA_HOME="$FHOME/.local/share"
    run bash -c 'cd "$1" && shift && exec "$@"' - "$WS" "${AR[@]}" sandbox --workspace "$WS" --agent claude -- true
    echo "$AS: $output"
    [ "$status" -ne 0 ]
    [ "${#lines[@]}" -eq 1 ]
    [ "$output" = "agentrun: sandbox: agent state: $FHOME/.local/share: Permission denied" ]
    [ -z "$(ls -A "$T/rootdir")" ]
  done
}

@test "as a plain user and through sudo: --home and --bundle through a symlink into root's folder make nothing there" {
  as_sudo_user
  root_folder_behind link
  for AS in user sudo; do
    run sb_as --home "$FHOME/link/h" -- true
    echo "$AS: $output"
    [ "$status" -ne 0 ]
    [ "$output" = "agentrun: sandbox: --home: create $FHOME/link/h: Permission denied" ]
    run sb_as --bundle "$FHOME/link/b" -- true
    echo "$AS: $output"
    [ "$status" -ne 0 ]
    [[ "$output" == *"agentrun: sandbox: create bundle folder $FHOME/link/b: Permission denied" ]]
    agentrun_as
    run "${AR[@]}" spec --agent --workspace "$WS" --bundle "$FHOME/link/b" -- true
    echo "$AS: $output"
    [ "$status" -ne 0 ]
    [[ "$output" == *"create bundle folder $FHOME/link/b: Permission denied" ]]
    [ -z "$(ls -A "$T/rootdir")" ]
  done
}

@test "through sudo: the state folder, --home and a bundle are made as the user, everything in them theirs" {
  as_sudo_user
  run sb_as --agent opencode -- true
  echo "$output"
  [ "$status" -eq 0 ]
  run sb_as --home "$FHOME/h" --agent opencode -- true
  echo "$output"
  [ "$status" -eq 0 ]
  run sb_as --bundle "$WS/b1" -- true
  echo "$output"
  [ "$status" -eq 0 ]
  agentrun_as
  run "${AR[@]}" spec --agent --workspace "$WS" --bundle "$WS/b2" -- true
  echo "$output"
  [ "$status" -eq 0 ]
  [ -d "$T/data/agentrun/state/opencode/.config/opencode" ]
  [ -d "$FHOME/h/.config/opencode" ]
  [ -s "$WS/b1/config.json" ]
  [ -s "$WS/b2/config.json" ]
  [ -d "$WS/b2/rootfs/proc" ]
  run find "$T/data" "$FHOME" "$WS" ! -user "$USER_NAME"
  echo "$output"
  [ -z "$output" ]
  # --user nobody: what is made for the command is nobody's, the rest the user's, none root's
  run sb_as --user 65534:65534 --agent claude --bundle "$WS/b3" -- true
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(stat -c %u "$T/data/agentrun/state/claude/.claude" "$WS/b3/rootfs" "$WS/b3/rootfs/proc" | sort -u)" = 65534 ]
  [ "$(stat -c %u "$T/data/agentrun/state/claude" "$WS/b3" "$WS/b3/config.json" | sort -u)" = "$(id -u "$USER_NAME")" ]
  run find "$T/data" "$WS" -user root
  [ -z "$output" ]
}

@test "root without sudo: the workspace's placeholders are made as the command's uid, none where it could not write" {
  # a workspace of root's that nobody cannot write: the command cannot make
  # .bashrc there, so no placeholder of root's is needed (nor made)
  chmod 0755 "$WS"
  run sb -- sh -c 'ls -A "$PWD"; echo end'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = end ]
  # one it can write: its placeholders are there, nobody's, read-only
  chown "$AGENT_UID:$AGENT_UID" "$WS"
  run sb -- sh -c 'stat -c "%U %n" .bashrc .vscode; echo x >.bashrc || echo refused'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "nobody .bashrc" ]
  [ "${lines[1]}" = "nobody .vscode" ]
  [[ "$output" == *refused* ]]
  [ -z "$(ls -A "$WS")" ]
}

@test "through sudo: agentrun trust reads the file as the user, and shows no file of root's" {
  as_sudo_user
  install -m 0600 /dev/null "$T/secret"
  echo root-only-words >"$T/secret"
  agentrun_as
  run "${AR[@]}" trust --yes "$T/secret"
  echo "$output"
  [ "$status" -ne 0 ]
  [ "$output" = "agentrun: trust: $T/secret: read: Permission denied" ]
  [ -z "$(ls -A "$T/config")" ]
  # the user's own file: trusted, the store theirs; a change is shown as a diff
  echo '{"allow": ["example.org"]}' >"$WS/p.json"
  chown "$USER_NAME:" "$WS/p.json"
  run "${AR[@]}" trust --yes "$WS/p.json"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "$WS/p.json: trusted" ]
  echo '{"allow": ["example.com"]}' >"$WS/p.json"
  run "${AR[@]}" trust --yes "$WS/p.json"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"+++ $WS/p.json"*'+{"allow": ["example.com"]}'* ]]
  run find "$T/config" ! -user "$USER_NAME"
  [ -z "$output" ]
}

@test "through sudo: a --profile or --settings file root alone may read is refused, none of it quoted" {
  as_sudo_user
  install -m 0600 /dev/null "$T/secret.json"
  echo '{"root-only-key": "root-only-value"}' >"$T/secret.json"
  for opt in --profile --settings; do
    run sb_as "$opt" "$T/secret.json" -- true
    echo "$output"
    [ "$status" -ne 0 ]
    [[ "$output" == *"${opt#--} $T/secret.json: open $T/secret.json: Permission denied" ]]
    [[ "$output" != *root-only* ]]
  done
  # the user's own: read as before
  echo '{"allow": ["example.org"]}' >"$WS/p.json"
  chown "$USER_NAME:" "$WS/p.json"
  run sb_as --profile "$WS/p.json" -- true
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "through sudo: --user names the sudo caller or nobody, never another user" {
  as_sudo_user
  local uid gid
  uid=$(id -u "$USER_NAME") gid=$(id -g "$USER_NAME")
  chmod 777 "$WS"
  for u in 4242 "$uid:4242" 4242:"$gid"; do
    run sb_as --user "$u" -- id -u
    echo "$output"
    [ "$status" -ne 0 ]
    [[ "$output" == *"through sudo the command runs as the sudo caller ($uid:$gid) or as nobody"* ]]
  done
  run sb_as --user "$uid" -- id -u
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = "$uid" ]
  run sb_as --user 65534 -- id -u
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = 65534 ]
}

@test "a plain user's git rewriting .git/config during the run stops it before the command can write the new one" {
  as_plain_user
  as_user git init -q
  # the command writes a second after the person's `git config`: by then
  # agentrun, which cannot look at its own pid 1 through /proc as this user
  # (it looks from the container's / that pid 1 sent it), has found the
  # mount gone there and stopped it
  as_user agentrun sandbox -- "sh -c 'touch started; while [ ! -e go ]; do sleep 0.1; done; sleep 1
    printf \"[core]\\n\\tfsmonitor = touch /tmp/pwned\\n\" >>.git/config && echo wrote'" >"$T/out" 2>&1 &
  local pid=$! status=0
  track_pid "$pid"
  wait_for test -e "$WS/started"
  as_user git config user.name person
  as_user touch go
  wait "$pid" || status=$?
  cat "$T/out"
  [ "$status" -eq 125 ]
  grep -q "$WS/.git/config was replaced or removed on the host" "$T/out"
  refute grep -q wrote "$T/out"
  refute grep -q fsmonitor "$WS/.git/config"
  [ "$(as_user git config user.name)" = person ]
}

# the plain user's agentrun stopped at a fault point (its pid in $T/arpid)
user_agentrun_stopped() {
  local p
  for p in $(pgrep -u "$USER_NAME" -x agentrun); do
    [ "$(cut -d' ' -f3 "/proc/$p/stat")" = T ] && echo "$p" >"$T/arpid" && return 0
  done
  return 1
}

@test "a plain user's editor saving .envrc by a rename while the container is made: the command reads it, cannot write it, and the run goes on" {
  as_plain_user
  # stopped right after the init's clone, before the mounts: the check
  # after the event looks inside the container, which holds the new file
  as_user AGENTRUN_FAULT=create-after-clone:stop agentrun sandbox -- \
    "sh -c 'cat .envrc; echo export EVIL=1 >>.envrc && echo wrote; exit 0'" >"$T/out" 2>&1 &
  local pid=$! status=0
  track_pid "$pid"
  wait_for user_agentrun_stopped
  as_user "echo 'export A=1' >.envrc.tmp && mv .envrc.tmp .envrc"
  kill -CONT "$(cat "$T/arpid")"
  wait "$pid" || status=$?
  cat "$T/out"
  [ "$status" -eq 0 ]
  grep -qx 'export A=1' "$T/out"
  refute grep -qx wrote "$T/out"
  [ "$(cat "$WS/.envrc")" = 'export A=1' ]
}
