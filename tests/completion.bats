#!/usr/bin/env bats
# bash completion (contrib/completion/agentrun) through bash's own
# completion interface: COMP_WORDS/COMP_CWORD set, the function called,
# COMPREPLY read. Its words come from the binary's option tables.

load helpers

teardown() { cleanup_containers; }

SCRIPT=$SRCDIR/contrib/completion/agentrun

# complete FUNCTION WORD... : the last word is the one being completed; prints COMPREPLY, one a line.
complete_with() {
  local fn=$1; shift
  bash -c 'source "$1" || exit 1; fn=$2; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
           COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; "$fn" 2>/dev/null; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$SCRIPT" "$fn" "$@"
}
comp() { complete_with _agentrun "$AGENTRUN" "$@"; }

@test "completion: commands first, hidden ones left out; global options and their values" {
  run comp ""
  [ "$status" -eq 0 ]
  [[ $'\n'"$output"$'\n' == *$'\nsandbox\n'* && $'\n'"$output"$'\n' == *$'\ncreate\n'* ]]
  [[ "$output" != *__probe* ]]
  run comp sa
  [ "$output" = sandbox ]
  run comp --log-f
  [ "$output" = "--log-format" ]
  # a global option's value is not taken for the command
  run comp --root /tmp/x sand
  [ "$output" = sandbox ]
}

@test "completion: every option of a command's table is offered, and only those" {
  local c want got
  for c in sandbox check run exec update; do
    want=$("$AGENTRUN" --list-options $c | cut -f1 | sed 's/^/--/' | sort)
    got=$(comp $c -- | grep '^--' | sort)
    [ "$want" = "$got" ] || { echo "$c: table: $want / completion: $got"; return 1; }
  done
  run comp sandbox --no-n
  [ "$output" = "--no-network" ]
  run comp sandbox -w
  [ "$output" = "-w" ]
  # create is not run: no --detach
  run comp create --de
  [ -z "$output" ]
  run comp run --de
  [ "$output" = "--detach" ]
}

@test "completion: spec --agent takes the sandbox's options, spec alone does not" {
  run comp spec --agent --work
  [ "$output" = "--workspace" ]
  run comp spec --work
  [ -z "$output" ]
}

@test "completion: an option's value is a file, the command after -- a program" {
  local d=$BATS_TEST_TMPDIR/ws
  mkdir -p "$d/project-one"
  run comp sandbox --workspace "$d/proj"
  [ "$output" = "$d/project-one" ]
  run comp sandbox -w "$d/proj"
  [ "$output" = "$d/project-one" ]
  run comp sandbox --allow x -- bas
  [[ $'\n'"$output"$'\n' == *$'\nbash\n'* ]]
  # after the program: its arguments are files, not our options
  run comp sandbox -- ls "$d/proj"
  [ "$output" = "$d/project-one" ]
  run comp sandbox -- ls --wor
  [ -z "$output" ]
}

@test "completion: container ids for the lifecycle commands, from the state root given" {
  make_bundle "$BATS_TEST_TMPDIR/b" sleep 100
  ar create --bundle "$BATS_TEST_TMPDIR/b" comp-test-1
  run comp --root "$ROOT" kill comp-
  [ "$output" = comp-test-1 ]
  run comp --root "$ROOT" delete ""
  [ "$output" = comp-test-1 ]
}

@test "completion: agentrun-relay and agentrun-netproxy options from their tables" {
  run complete_with _agentrun_helper "$RELAY" --con
  [ "$(sort <<<"$output")" = $'--config\n--connect-timeout\n--container' ]
  run complete_with _agentrun_helper "$NETPROXY" --connect
  [ "$output" = $'--connect-proxy\n--connect-proxy=' ]
  run complete_with _agentrun_helper "$NETPROXY" --config "$SRCDIR/contrib/complet"
  [ "$output" = "$SRCDIR/contrib/completion" ]
}

@test "completion: bash-completion's loader finds it under the installed name" {
  [ -f /usr/share/bash-completion/bash_completion ] || skip "needs bash-completion (not installed)"
  local d=$BATS_TEST_TMPDIR/data/bash-completion/completions
  mkdir -p "$d"
  cp "$SCRIPT" "$d/agentrun"
  ln -s agentrun "$d/agentrun-relay"
  run env XDG_DATA_HOME="$BATS_TEST_TMPDIR/data" bash -c '
    source /usr/share/bash-completion/bash_completion
    __load_completion agentrun && complete -p agentrun
    __load_completion agentrun-relay && complete -p agentrun-relay'
  [ "$status" -eq 0 ]
  [[ "$output" == *"complete -F _agentrun agentrun"* ]]
  [[ "$output" == *"complete -F _agentrun_helper agentrun-relay"* ]]
}
