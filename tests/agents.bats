#!/usr/bin/env bats
# The real agents inside agentrun sandbox: Claude Code, Codex, OpenCode and
# Gemini CLI from the npm registry (cached in /var/cache/agentrun-tests/npm-agents
# between runs), talking over TLS to a model API of the tests' own on host
# loopback (tests/clients/fake-model-api.py, a CA made here), reached through
# the relay under the names the agents use. The fake model answers the first
# turn with one shell tool call; what that call could and could not do comes
# back in the agent's final answer. Each agent runs non-interactively as root
# (the agent runs as nobody), as the plain user agentrun-test through su (no
# XDG_RUNTIME_DIR, no --root) and through sudo for agentrun-test; the TUIs of
# Claude Code and Codex run under tmux, with a key, Ctrl-Z and fg, the same
# three ways.

load helpers

NPM_CACHE=${AGENTRUN_NPM_CACHE:-/var/cache/agentrun-tests/npm-agents}
NPM_BIN=$NPM_CACHE/node_modules/.bin
# agentrun_as (helpers): the agents' PATH
AS_PATH=$NPM_BIN:/usr/bin:/bin
# what the model asks the agent's shell tool to run
TOOL_CMD='echo from-the-agent >written-by-agent; cat ~/.ssh/id_rsa 2>&1 | head -1; getent hosts example.com || echo example-refused'

setup_file() {
  [ "$(id -u)" = 0 ] || skip "needs root (the agent runs as nobody)"
  for c in node npm openssl python3 tmux; do
    command -v "$c" >/dev/null 2>&1 || skip "needs $c (not installed)"
  done
  local a missing=
  for a in claude codex opencode gemini; do [ -x "$NPM_BIN/$a" ] || missing=1; done
  if [ -n "$missing" ]; then
    mkdir -p "$NPM_CACHE"
    timeout 600 npm install --prefix "$NPM_CACHE" --no-audit --no-fund --loglevel=error \
      @anthropic-ai/claude-code @openai/codex opencode-ai @google/gemini-cli >"$BATS_FILE_TMPDIR/npm.log" 2>&1 \
      || skip "the npm registry cannot be reached (npm install: $(tail -1 "$BATS_FILE_TMPDIR/npm.log"))"
  fi
  "$NPM_BIN/claude" --version >/dev/null 2>&1 || skip "claude from npm does not run here"
  "$NPM_BIN/codex" --version >/dev/null 2>&1 || skip "codex from npm does not run here"
  F=$BATS_FILE_TMPDIR
  let_others_walk_to "$F"
  mkdir -p "$F/ca"
  (
    cd "$F/ca"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=agentrun-test-ca
    openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=fake-model
    printf 'subjectAltName=DNS:api.anthropic.com,DNS:platform.claude.com,DNS:api.openai.test,DNS:generativelanguage.googleapis.com\nbasicConstraints=CA:FALSE\n' >ext
    openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile ext
  ) >/dev/null 2>&1
  chmod 755 "$F/ca" && chmod 644 "$F/ca/ca.pem"
  python3 "$SRCDIR/tests/clients/fake-model-api.py" --cert "$F/ca/srv.pem" --key "$F/ca/srv.key" \
    --port-file "$F/port" --log "$F/api.log" --command "$TOOL_CMD" 2>"$F/api.err" &
  echo $! >"$F/api.pid"
  for _ in $(seq 100); do [ -s "$F/port" ] && break; sleep 0.1; done
  [ -s "$F/port" ]
}

teardown_file() {
  [ -s "$BATS_FILE_TMPDIR/api.pid" ] && kill "$(cat "$BATS_FILE_TMPDIR/api.pid")" 2>/dev/null || true
}

setup() {
  T=$BATS_TEST_TMPDIR F=$BATS_FILE_TMPDIR
  let_others_walk_to "$T"
  WS=$T/ws FHOME=$T/home
  mkdir -p "$WS" "$FHOME/.ssh"
  echo AGENTRUN-TEST-PRIVATE-KEY >"$FHOME/.ssh/id_rsa"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS" "$FHOME"
  PORT=$(cat "$F/port")
  AS=root WHO_UID=$AGENT_UID
  API_MARK=$(wc -l <"$F/api.log" 2>/dev/null || echo 0)
}

# The model API's log of this test's requests, as one JSON array.
api_log() { tail -n +"$((API_MARK + 1))" "$F/api.log" | jq -s .; }

teardown() {
  [ -S "$T/tmux.sock" ] && tmux -S "$T/tmux.sock" kill-server 2>/dev/null || true
  kill_tracked
  cleanup_containers
}

need_agent() {
  "$NPM_BIN/$1" --version >/dev/null 2>&1 || skip "$1 from npm does not run here"
}

# Where a preset NAME keeps its state: agentrun's own folder of the invoking
# user (through sudo, the test's XDG_DATA_HOME, not that user's real home).
state_of() {
  if [ "$AS" = sudo ]; then echo "$T/data/agentrun/state/$1"; else echo "$FHOME/.local/share/agentrun/state/$1"; fi
}

# The sandbox as a person starts it for an agent: its preset, the npm
# install read-only, the model's names mapped onto the fake API.
agent_sb() {
  agentrun_as
  (cd "$WS" && "${AR[@]}" sandbox --ro "$NPM_CACHE" --ro "$F/ca" "$@")
}

# What the tool call could and could not do, read from the agent's answer.
assert_tool_walls() {
  [[ "$output" == *TOOL-RESULT-BEGIN* ]]
  [ "$(cat "$WS/written-by-agent")" = from-the-agent ]
  [ "$(stat -c %u "$WS/written-by-agent")" = "$WHO_UID" ]
  [[ "$output" != *AGENTRUN-TEST-PRIVATE-KEY* ]]
  [[ "$output" == *"id_rsa: No such file or directory"* ]]
  [[ "$output" == *example-refused* ]]
}

# claude -p, codex exec, opencode run, gemini -p: each agent's own
# non-interactive prompt, run as $AS.
claude_p() {
  run agent_sb --agent claude --allow "api.anthropic.com=127.0.0.1:$PORT" \
    --env NODE_EXTRA_CA_CERTS="$F/ca/ca.pem" --env ANTHROPIC_API_KEY=sk-ant-test -- \
    claude -p --dangerously-skip-permissions "run the command you are given"
  echo "$output"
  [ "$status" -eq 0 ]
  assert_tool_walls
  # the model saw the tool's result
  api_log | jq -e 'map(select(.api == "anthropic" and (.tool_result // "" | contains("example-refused")))) | length >= 1'
  [[ "$output" == *"agentrun: blocked example.com (not allowed; add --allow example.com)"* ]]
  # what it keeps lasts in agentrun's state folder, never in the real home,
  # whose settings and MCP servers the person's own claude runs on the host
  [ -d "$(state_of claude)/.claude" ]
  jq -e . "$(state_of claude)/.claude.json" >/dev/null
  [ ! -e "$FHOME/.claude" ]
  [ ! -e "$FHOME/.claude.json" ]
}

codex_exec() {
  run agent_sb --agent codex --allow "api.openai.test=127.0.0.1:$PORT" \
    --env SSL_CERT_FILE="$F/ca/ca.pem" --env OPENAI_API_KEY=sk-test -- \
    codex exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox \
      -c model_provider=fake -c model_providers.fake.name=fake \
      -c model_providers.fake.base_url=https://api.openai.test/v1 \
      -c model_providers.fake.env_key=OPENAI_API_KEY -c model_providers.fake.wire_api=responses \
      -m fake-model "run the command you are given"
  echo "$output"
  [ "$status" -eq 0 ]
  assert_tool_walls
  api_log | jq -e 'map(select(.api == "openai" and (.tool_result // "" | contains("example-refused")))) | length >= 1'
  [ -d "$(state_of codex)/.codex/sessions" ]
  [ ! -e "$FHOME/.codex" ]
}

# OpenCode's own Anthropic provider, at the name the preset allows; --auto
# approves its tool as the other agents' skip-permissions flags do.
opencode_run() {
  need_agent opencode
  run agent_sb --agent opencode -- opencode --version
  [ "$status" -eq 0 ]
  [ "$output" = "$("$NPM_BIN/opencode" --version)" ]
  run agent_sb --agent opencode --allow "api.anthropic.com=127.0.0.1:$PORT" \
    --env NODE_EXTRA_CA_CERTS="$F/ca/ca.pem" --env ANTHROPIC_API_KEY=sk-ant-test -- \
    opencode run --auto -m anthropic/claude-sonnet-4-5 "run the command you are given"
  echo "$output"
  [ "$status" -eq 0 ]
  assert_tool_walls
  api_log | jq -e 'map(select(.api == "anthropic" and (.tools | index("bash"))
                   and (.tool_result // "" | contains("example-refused")))) | length >= 1'
  # its state (a fresh home has no ~/.local/share) lasts: the next run lists the session
  [ -d "$(state_of opencode)/.local/share/opencode" ]
  [ -d "$(state_of opencode)/.config/opencode" ]
  [ ! -e "$FHOME/.local/share/opencode" ]
  [ ! -e "$FHOME/.config" ]
  run agent_sb -q --agent opencode -- opencode session list
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *ses_* ]]
}

# Gemini CLI with an API key, at the name the preset allows; -y approves
# its shell tool, --skip-trust its first-run question about the folder.
gemini_p() {
  need_agent gemini
  run agent_sb --agent gemini -- gemini --version
  [ "$status" -eq 0 ]
  [ "$output" = "$("$NPM_BIN/gemini" --version)" ]
  run agent_sb --agent gemini --allow "generativelanguage.googleapis.com=127.0.0.1:$PORT" \
    --env NODE_EXTRA_CA_CERTS="$F/ca/ca.pem" --env GEMINI_API_KEY=gemini-test -- \
    gemini --skip-trust -y -p "run the command you are given"
  echo "$output"
  [ "$status" -eq 0 ]
  assert_tool_walls
  api_log | jq -e 'map(select(.api == "gemini" and (.tool_result // "" | contains("example-refused")))) | length >= 1'
  [ -d "$(state_of gemini)/.gemini/tmp" ]
  [ ! -e "$FHOME/.gemini" ]
}

@test "claude -p in the sandbox: its tool call writes the workspace, cannot read ~/.ssh nor reach a host not allowed" {
  claude_p
}

@test "claude -p as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  claude_p
}

@test "claude -p through sudo for a plain user" {
  as_sudo_user
  claude_p
}

@test "codex exec in the sandbox: its tool call writes the workspace, cannot read ~/.ssh nor reach a host not allowed" {
  codex_exec
}

@test "codex exec as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  codex_exec
}

@test "codex exec through sudo for a plain user" {
  as_sudo_user
  codex_exec
}

@test "opencode --agent opencode: it starts, its tool call holds to the walls, its state lasts" {
  opencode_run
}

@test "opencode as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  opencode_run
}

@test "opencode through sudo for a plain user" {
  as_sudo_user
  opencode_run
}

@test "gemini --agent gemini: it starts, its tool call holds to the walls, its state lasts" {
  gemini_p
}

@test "gemini as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  gemini_p
}

@test "gemini through sudo for a plain user" {
  as_sudo_user
  gemini_p
}

# The TUIs in a tmux session of the test's own, at an interactive shell (for
# job control), root's or, as a plain user, the one `su agentrun-test` gives
# (su -c would run the command in a session of its own, where no Ctrl-Z
# reaches anything): tui_start NAME, screen NAME, keys NAME KEYS...,
# wait_for_screen NAME REGEX.
tui_start() {
  # user_shell (helpers) keeps no history in root's or the user's home
  tmux -S "$T/tmux.sock" new-session -d -s "$1" -x 120 -y 40 "env PS1='SHELL-PROMPT\$ ' $(user_shell)"
  keys "$1" "$T/run.sh; echo EXITED=\$?" Enter
}
screen() { tmux -S "$T/tmux.sock" capture-pane -p -t "$1"; }
keys() { tmux -S "$T/tmux.sock" send-keys -t "$@"; }
wait_for_screen() {
  local i
  for i in $(seq 300); do screen "$1" | grep -q "$2" && return 0; sleep 0.1; done
  screen "$1"
  return 1
}
# Ctrl-Z gives the shell back with the job stopped (a `clear` typed there
# runs); fg brings the TUI back and it redraws what it showed (REGEX), at
# once or, for a TUI that redraws only what changed, at the next key (KEY).
stop_and_resume() {
  keys "$1" C-z
  wait_for_screen "$1" 'Stopped.*run\.sh'
  keys "$1" clear Enter
  wait_for_screen "$1" '^SHELL-PROMPT\$$'
  keys "$1" fg Enter
  [ -n "${3:-}" ] || { wait_for_screen "$1" "$2"; return; }
  # a key typed before the TUI has its terminal back is the shell's, echoed
  # and then flushed: type it again until the TUI has drawn
  local i j
  for i in $(seq 15); do
    keys "$1" "$3"
    for j in $(seq 20); do screen "$1" | grep -q "$2" && return 0; sleep 0.1; done
  done
  screen "$1"
  job_state "$1"
  return 1
}

# Who is where at the pane's terminal, and its modes: what a failed resume
# leaves to look at (raw or not, which group has the terminal, who is
# stopped).
job_state() {
  local tty init cmd
  tty=$(tmux -S "$T/tmux.sock" display -p -t "$1" '#{pane_tty}')
  echo "pane terminal $tty: $(stty -F "$tty" 2>&1 | tr '\n' ' ')"
  ps -t "${tty#/dev/}" -o pid,ppid,pgid,tpgid,stat,wchan:24,args 2>&1 | cut -c1-200
  # the sandbox's own terminal, as the command has it (its stdin): raw or
  # cooked, echo or not, and where each of the command's processes is
  for init in $(pgrep -x agentrun-init); do
    for cmd in $(pgrep -P "$init"); do
      echo "sandbox terminal of $cmd: $(stty -F "/proc/$cmd/fd/0" 2>&1 | tr '\n' ' ')"
      ps --ppid "$cmd" -p "$cmd" -o pid,ppid,pgid,tpgid,stat,wchan:24,args 2>&1 | cut -c1-200
    done
  done
}

# run.sh AGENT OPTION... -- CMD...: `agentrun sandbox OPTION... -- CMD...`
# as the README gives it, as $AS, plus the test's plumbing before the `--`
# (the npm install and the CA bound in, the model's names on the fake API,
# the key).
write_tui_script() {
  local agent=$1 ar opts=() plumbing USER_VIA=shell
  shift
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  case $agent in
    claude) agentrun_as TERM=xterm-256color ANTHROPIC_API_KEY=sk-ant-test
            plumbing=(--allow "api.anthropic.com=127.0.0.1:$PORT" --allow "platform.claude.com=127.0.0.1:$PORT"
                      --env NODE_EXTRA_CA_CERTS="$F/ca/ca.pem") ;;
    codex) agentrun_as TERM=xterm-256color OPENAI_API_KEY=sk-test
           plumbing=(--allow "api.openai.test=127.0.0.1:$PORT" --env SSL_CERT_FILE="$F/ca/ca.pem") ;;
  esac
  printf -v ar '%q ' "${AR[@]}"
  {
    echo '#!/bin/sh'
    printf 'cd %q && exec %ssandbox' "$WS" "$ar"
    printf ' %q' "${opts[@]}" --ro "$NPM_CACHE" --ro "$F/ca" "${plumbing[@]}" "$@"
    echo
  } >"$T/run.sh"
  chmod 755 "$T/run.sh"
  cat "$T/run.sh"
}

claude_tui() {
  write_tui_script claude --agent claude -- claude
  tui_start tui
  # a fresh home: the first-run theme choice, drawn in the sandbox's pty
  wait_for_screen tui 'Choose the text style'
  wait_for_screen tui '❯ 2\. Dark mode'
  keys tui Down
  wait_for_screen tui '❯ 3\. Light mode'
  # Claude Code (Ink) draws only what changed: the next key redraws it all,
  # the choice moved on by it
  stop_and_resume tui 'Choose the text style' Down
  wait_for_screen tui '❯ [4-7]\. '
  tmux -S "$T/tmux.sock" kill-session -t tui
}

@test "claude's TUI under tmux: it renders in the sandbox's terminal, a key reaches it, Ctrl-Z then fg" {
  claude_tui
}

@test "claude's TUI as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  claude_tui
}

@test "claude's TUI through sudo for a plain user" {
  as_sudo_user
  claude_tui
}

# agentrun sandbox --agent claude -- claude, twice: onboarding once, then
# straight to the prompt, where a prompt runs the tool (asked, allowed).
claude_twice() {
  write_tui_script claude --agent claude -- claude
  tui_start first
  wait_for_screen first 'Choose the text style'
  keys first Enter
  wait_for_screen first 'Do you want to use this API key'
  keys first Up
  keys first Enter
  wait_for_screen first 'Press Enter to continue'
  keys first Enter
  wait_for_screen first 'Yes, I trust this folder'
  keys first Enter
  wait_for_screen first '? for shortcuts'
  keys first /exit
  sleep 0.3
  keys first Enter
  wait_for_screen first 'EXITED=0'
  tmux -S "$T/tmux.sock" kill-session -t first
  # what it learnt is in the preset's state folder, bound in at ~/.claude.json
  jq -e '.hasCompletedOnboarding == true' "$(state_of claude)/.claude.json"
  [ ! -e "$FHOME/.claude.json" ]
  tui_start second
  wait_for_screen second '? for shortcuts'
  [ "$(screen second | grep -c 'Choose the text style')" = 0 ]
  keys second "run the command you are given"
  sleep 0.3
  keys second Enter
  wait_for_screen second 'Do you want to proceed'
  keys second Enter
  wait_for_screen second 'TOOL-RESULT-BEGIN'
  [ "$(cat "$WS/written-by-agent")" = from-the-agent ]
  [ "$(stat -c %u "$WS/written-by-agent")" = "$WHO_UID" ]
  tmux -S "$T/tmux.sock" kill-session -t second
}

@test "claude --agent claude: onboarding once, and the second run goes straight to the prompt" {
  claude_twice
}

@test "claude --agent claude as a plain user without XDG_RUNTIME_DIR: onboarding once, then straight to the prompt" {
  as_plain_user
  claude_twice
}

@test "claude --agent claude through sudo for a plain user: onboarding once, then straight to the prompt" {
  as_sudo_user
  claude_twice
}

# Codex's TUI talks to an app server it starts itself, over a Unix socket it
# binds inside the sandbox (a provider set with -c flags would make it run
# embedded, without the socket: the fake provider is in its config file).
codex_tui() {
  local keep=$FHOME/.sandbox-home
  install -d -m 0700 -o "$WHO_UID" -g "$WHO_UID" "$keep" "$keep/.codex"
  printf '%s\n' 'model = "fake-model"' 'model_provider = "fake"' '[model_providers.fake]' 'name = "fake"' \
    'base_url = "https://api.openai.test/v1"' 'env_key = "OPENAI_API_KEY"' 'wire_api = "responses"' \
    >"$keep/.codex/config.toml"
  chown "$WHO_UID:$WHO_UID" "$keep/.codex/config.toml"
  write_tui_script codex -q --agent codex --home "$keep" -- codex --dangerously-bypass-approvals-and-sandbox
  tui_start cx
  wait_for_screen cx 'Ask Codex to do anything'
  wait_for_screen cx 'fake-model'
  keys cx "run the command you are given"
  wait_for_screen cx '› run the command you are given'
  stop_and_resume cx '› run the command you are given'
  keys cx Enter
  wait_for_screen cx 'TOOL-RESULT-END'
  [ "$(cat "$WS/written-by-agent")" = from-the-agent ]
  [ "$(stat -c %u "$WS/written-by-agent")" = "$WHO_UID" ]
  screen cx | grep -q 'example-refused'
  refute grep -q 'AGENTRUN-TEST-PRIVATE-KEY' <<<"$(screen cx)"
  api_log | jq -e 'map(select(.api == "openai" and (.tool_result // "" | contains("example-refused")))) | length >= 1'
  # it ran with its app server, not embedded
  [ -d "$keep/.codex/app-server-daemon" ]
  # Ctrl-C ends it (the sandbox with it); resumed by fg, its status is fg's
  keys cx C-c
  wait_for_screen cx 'codex resume'
  wait_for_screen cx '^SHELL-PROMPT\$$'
  keys cx 'echo EXITED=$?' Enter
  wait_for_screen cx 'EXITED=0'
  tmux -S "$T/tmux.sock" kill-session -t cx
}

@test "codex's TUI under tmux: its app server's socket connects, a key and a prompt reach it, Ctrl-Z then fg" {
  codex_tui
}

@test "codex's TUI as a plain user without XDG_RUNTIME_DIR" {
  as_plain_user
  codex_tui
}

@test "codex's TUI through sudo for a plain user" {
  as_sudo_user
  codex_tui
}
