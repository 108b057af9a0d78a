#!/usr/bin/env bats
# The real agents inside agentrun sandbox: Claude Code and Codex from the npm
# registry (cached in /var/cache/agentrun-tests/npm-agents between runs),
# talking over TLS to a model API of the tests' own on host loopback
# (tests/clients/fake-model-api.py, a CA made here), reached through the
# relay under the names the agents use. The fake model answers the first
# turn with one shell tool call; what that call could and could not do comes
# back in the agent's final answer. Run as root, the agent runs as nobody.

load helpers

AGENT_UID=65534
NPM_CACHE=${AGENTRUN_NPM_CACHE:-/var/cache/agentrun-tests/npm-agents}
# what the model asks the agent's shell tool to run
TOOL_CMD='echo from-the-agent >written-by-agent; cat ~/.ssh/id_rsa 2>&1 | head -1; getent hosts example.com || echo example-refused'

setup_file() {
  [ "$(id -u)" = 0 ] || skip "needs root (the agent runs as nobody)"
  for c in node npm openssl python3 tmux; do
    command -v "$c" >/dev/null 2>&1 || skip "needs $c (not installed)"
  done
  if [ ! -x "$NPM_CACHE/node_modules/.bin/claude" ] || [ ! -x "$NPM_CACHE/node_modules/.bin/codex" ]; then
    mkdir -p "$NPM_CACHE"
    timeout 300 npm install --prefix "$NPM_CACHE" --no-audit --no-fund --loglevel=error \
      @anthropic-ai/claude-code @openai/codex >"$BATS_FILE_TMPDIR/npm.log" 2>&1 \
      || skip "the npm registry cannot be reached (npm install: $(tail -1 "$BATS_FILE_TMPDIR/npm.log"))"
  fi
  "$NPM_CACHE/node_modules/.bin/claude" --version >/dev/null 2>&1 || skip "claude from npm does not run here"
  "$NPM_CACHE/node_modules/.bin/codex" --version >/dev/null 2>&1 || skip "codex from npm does not run here"
  F=$BATS_FILE_TMPDIR
  let_others_walk_to "$F"
  mkdir -p "$F/ca"
  (
    cd "$F/ca"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=agentrun-test-ca
    openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=fake-model
    printf 'subjectAltName=DNS:api.anthropic.com,DNS:platform.claude.com,DNS:api.openai.test\nbasicConstraints=CA:FALSE\n' >ext
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
  [ -S "$BATS_FILE_TMPDIR/tmux.sock" ] && tmux -S "$BATS_FILE_TMPDIR/tmux.sock" kill-server 2>/dev/null || true
}

setup() {
  T=$BATS_TEST_TMPDIR F=$BATS_FILE_TMPDIR
  let_others_walk_to "$T"
  WS=$T/ws FHOME=$T/home
  mkdir -p "$WS" "$FHOME/.ssh"
  echo AGENTRUN-TEST-PRIVATE-KEY >"$FHOME/.ssh/id_rsa"
  chown -R "$AGENT_UID:$AGENT_UID" "$WS" "$FHOME"
  PORT=$(cat "$F/port")
}

teardown() {
  kill_tracked
  cleanup_containers
}

# The sandbox as a person starts it for an agent: its preset, the npm
# install read-only, the model's names mapped onto the fake API.
agent_sb() {
  (cd "$WS" && env -u SUDO_UID -u SUDO_GID HOME="$FHOME" PATH="$NPM_CACHE/node_modules/.bin:/usr/bin:/bin" \
     "$AGENTRUN" --root "$ROOT" sandbox --ro "$NPM_CACHE" --ro "$F/ca" "$@")
}

# What the tool call could and could not do, read from the agent's answer.
assert_tool_walls() {
  [[ "$output" == *TOOL-RESULT-BEGIN* ]]
  [ "$(cat "$WS/written-by-agent")" = from-the-agent ]
  [ "$(stat -c %u "$WS/written-by-agent")" = "$AGENT_UID" ]
  [[ "$output" != *AGENTRUN-TEST-PRIVATE-KEY* ]]
  [[ "$output" == *"id_rsa: No such file or directory"* ]]
  [[ "$output" == *example-refused* ]]
}

@test "claude -p in the sandbox: its tool call writes the workspace, cannot read ~/.ssh nor reach a host not allowed" {
  run agent_sb --agent claude --allow "api.anthropic.com=127.0.0.1:$PORT" \
    --env NODE_EXTRA_CA_CERTS="$F/ca/ca.pem" --env ANTHROPIC_API_KEY=sk-ant-test -- \
    claude -p --dangerously-skip-permissions "run the command you are given"
  echo "$output"
  [ "$status" -eq 0 ]
  assert_tool_walls
  # the model saw the tool's result, and the key never reached a file of ours
  jq -e -s 'map(select(.tool_result != null and (.tool_result | contains("example-refused")))) | length >= 1' "$F/api.log"
  [[ "$output" == *"agentrun: blocked example.com (not allowed; add --allow example.com)"* ]]
  # what it keeps lasts: ~/.claude and ~/.claude.json are in the real home
  [ -d "$FHOME/.claude" ]
  jq -e . "$FHOME/.claude.json" >/dev/null
}

@test "codex exec in the sandbox: its tool call writes the workspace, cannot read ~/.ssh nor reach a host not allowed" {
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
  jq -e -s 'map(select(.api == "openai" and .tool_result != null)) | length >= 1' "$F/api.log"
  [ -d "$FHOME/.codex" ]
}

# claude's TUI in a tmux session of the test's own: tui_start NAME, screen
# NAME, wait_for_screen NAME REGEX.
tui_start() {
  tmux -S "$F/tmux.sock" new-session -d -s "$1" -x 120 -y 40 "$T/run.sh; echo EXITED=\$?; sleep 60"
}
screen() { tmux -S "$F/tmux.sock" capture-pane -p -t "$1"; }
keys() { tmux -S "$F/tmux.sock" send-keys -t "$@"; }
wait_for_screen() {
  local i
  for i in $(seq 300); do screen "$1" | grep -q "$2" && return 0; sleep 0.1; done
  screen "$1"
  return 1
}

write_tui_script() {
  cat >"$T/run.sh" <<EOF
#!/bin/sh
cd '$WS' && exec env -u SUDO_UID -u SUDO_GID HOME='$FHOME' PATH='$NPM_CACHE/node_modules/.bin:/usr/bin:/bin' \
  TERM=xterm-256color ANTHROPIC_API_KEY=sk-ant-test '$AGENTRUN' --root '$ROOT' sandbox -q --agent claude \
  --ro '$NPM_CACHE' --ro '$F/ca' --allow 'api.anthropic.com=127.0.0.1:$PORT' \
  --allow 'platform.claude.com=127.0.0.1:$PORT' --env NODE_EXTRA_CA_CERTS='$F/ca/ca.pem' -- claude
EOF
  chmod 755 "$T/run.sh"
}

@test "claude's TUI under tmux: it renders in the sandbox's terminal and a key reaches it" {
  write_tui_script
  tui_start tui
  # a fresh home: the first-run theme choice, drawn in the sandbox's pty
  wait_for_screen tui 'Choose the text style'
  wait_for_screen tui '❯ 2\. Dark mode'
  keys tui Down
  wait_for_screen tui '❯ 3\. Light mode'
  tmux -S "$F/tmux.sock" kill-session -t tui
}

@test "claude --agent claude: onboarding once, and the second run goes straight to the prompt" {
  write_tui_script
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
  tmux -S "$F/tmux.sock" kill-session -t first
  # what it learnt is in the real home, bound in by the preset
  jq -e '.hasCompletedOnboarding == true' "$FHOME/.claude.json"
  tui_start second
  wait_for_screen second '? for shortcuts'
  [ "$(screen second | grep -c 'Choose the text style')" = 0 ]
  tmux -S "$F/tmux.sock" kill-session -t second
}
