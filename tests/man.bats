#!/usr/bin/env bats
# The man pages against the option tables the binaries parse with (their
# hidden --list-options): an option the CLI takes and no page defines, or a
# page naming an option the CLI lacks, fails here. Pages are read in their
# one source, man/*.scd; option definitions are the lines starting "*-".

load helpers

MAN=$SRCDIR/man

# "NAME SHORT" per option of a --list-options listing on stdin; help dropped with $1=nohelp.
cli_set() { awk -F'\t' -v nohelp="${1:-}" '!(nohelp && $1 == "help") { print $1, $2 }' | sort -u; }

# "NAME SHORT" per definition line read on stdin (SHORT "-" if none).
defs_set() {
  grep '^\*-' | while IFS= read -r line; do
    long=$(grep -o '\*--[a-z0-9][a-z0-9-]*\*' <<<"$line" | head -n 1 | tr -d '*')
    short=$(grep -o '^\*-[A-Za-z]\*' <<<"$line" | tr -d '*-')
    echo "${long#--} ${short:--}"
  done | sort -u
}

# The lines of section "# TITLE" (up to the next "# ").
section() { awk -v t="# $2" '$0 == t { on = 1; next } /^# / { on = 0 } on' "$1"; }

# The lines of subsection "## CMD ..." of agentrun.1's COMMANDS.
subsection() {
  section "$MAN/agentrun.1.scd" COMMANDS | awk -v c="$1" '
    /^## / { on = 0; n = split(substr($0, 4), w, /[ ,]+/); for (i = 1; i <= n; i++) if (w[i] == c) on = 1; next } on'
}

same_sets() { # LABEL FILE_FROM_CLI FILE_FROM_PAGE
  local missing extra
  missing=$(comm -23 "$2" "$3"); extra=$(comm -13 "$2" "$3")
  [ -z "$missing" ] && [ -z "$extra" ] && return 0
  echo "$1: the CLI takes but the page lacks: ${missing:-none}; the page names but the CLI lacks: ${extra:-none}"
  return 1
}

# Every --word a page mentions anywhere is one of the given binary's options.
names_known() { # PAGE ALLOWED_NAMES_FILE
  local bad
  bad=$(grep -o -- '--[a-z][a-z0-9-]*' "$1" | sed 's/^--//' | sort -u | comm -23 - "$2")
  [ -z "$bad" ] || { echo "$(basename "$1") names options no table has: $bad"; return 1; }
}

@test "man: every option table is listed, and a command without one is an error" {
  run "$AGENTRUN" --list-options sandbox
  [ "$status" -eq 0 ]
  [[ "$output" == *$'workspace\tw\targ'* ]]
  [[ "$output" == *$'no-network\t-\tflag'* ]]
  run "$AGENTRUN" --list-options nosuchcommand
  [ "$status" -eq 1 ]
  [[ "$output" == *'unknown command "nosuchcommand"'* ]]
  # the listing runs nothing: no container state, no output but the table
  run "$AGENTRUN" --list-options create
  [ "$status" -eq 0 ]
  [[ "$output" != *detach* ]]            # run's, not create's
  run "$AGENTRUN" --list-options run
  [[ "$output" == *$'detach\td\tflag'* ]]
  run "$AGENTRUN" --list-commands
  [[ "$output" == *$'sandbox\t'* ]]
  [[ "$output" != *__probe* ]]
}

@test "man: agentrun(1) defines exactly the global options and each command's" {
  local t=$BATS_TEST_TMPDIR
  "$AGENTRUN" --list-options | cli_set >"$t/cli"
  section "$MAN/agentrun.1.scd" "GLOBAL OPTIONS" | defs_set >"$t/page"
  same_sets "global options" "$t/cli" "$t/page"
  local cmd fail=0
  for cmd in $("$AGENTRUN" --list-commands | cut -f1); do
    grep -q "^## .*\b$cmd\b" "$MAN/agentrun.1.scd" || { echo "agentrun.1: no section for command $cmd"; fail=1; continue; }
    case $cmd in sandbox | check) continue ;; esac   # their own pages, below
    "$AGENTRUN" --list-options "$cmd" | cli_set nohelp >"$t/cli"
    {
      subsection "$cmd" | defs_set
      # "Takes the options of *create*": that section's too
      for from in $(subsection "$cmd" | grep -o 'options of \*[a-z]*\*' | tr -d '*' | awk '{ print $3 }'); do
        subsection "$from" | defs_set
      done
    } | sort -u >"$t/page"
    same_sets "agentrun $cmd" "$t/cli" "$t/page" || fail=1
  done
  [ "$fail" -eq 0 ]
}

@test "man: agentrun-sandbox(1), agentrun-check(1), relay and netproxy define exactly their options" {
  local t=$BATS_TEST_TMPDIR fail=0
  { "$AGENTRUN" --list-options sandbox; "$AGENTRUN" --list-options spec --agent; } | cli_set >"$t/cli"
  section "$MAN/agentrun-sandbox.1.scd" OPTIONS | defs_set >"$t/page"
  same_sets "agentrun sandbox / spec --agent" "$t/cli" "$t/page" || fail=1
  "$AGENTRUN" --list-options check | cli_set >"$t/cli"
  section "$MAN/agentrun-check.1.scd" OPTIONS | defs_set >"$t/page"
  same_sets "agentrun check" "$t/cli" "$t/page" || fail=1
  "$RELAY" --list-options | cli_set >"$t/cli"
  section "$MAN/agentrun-relay.1.scd" OPTIONS | defs_set >"$t/page"
  same_sets agentrun-relay "$t/cli" "$t/page" || fail=1
  "$NETPROXY" --list-options | cli_set >"$t/cli"
  section "$MAN/agentrun-netproxy.1.scd" OPTIONS | defs_set >"$t/page"
  same_sets agentrun-netproxy "$t/cli" "$t/page" || fail=1
  [ "$fail" -eq 0 ]
}

@test "man: no page names an option its binary lacks" {
  local t=$BATS_TEST_TMPDIR fail=0 c
  { "$AGENTRUN" --list-options; for c in $("$AGENTRUN" --list-commands | cut -f1); do "$AGENTRUN" --list-options "$c"; done
    "$AGENTRUN" --list-options spec --agent; } | cut -f1 | sort -u >"$t/agentrun"
  for p in agentrun.1 agentrun-sandbox.1 agentrun-check.1 agentrun-profile.5; do
    names_known "$MAN/$p.scd" "$t/agentrun" || fail=1
  done
  "$RELAY" --list-options | cut -f1 | sort -u >"$t/relay"
  names_known "$MAN/agentrun-relay.1.scd" "$t/relay" || fail=1
  "$NETPROXY" --list-options | cut -f1 | sort -u >"$t/netproxy"
  names_known "$MAN/agentrun-netproxy.1.scd" "$t/netproxy" || fail=1
  [ "$fail" -eq 0 ]
}

@test "man: the test catches a page that drifts from the CLI" {
  # the checker itself, on a copy of agentrun-check.1 missing --json and naming --bogus
  local t=$BATS_TEST_TMPDIR
  sed -e '/^\*--json\*/d' -e 's/^\*--cpus\* _N_$/*--bogus* _N_/' "$MAN/agentrun-check.1.scd" >"$t/drift.scd"
  "$AGENTRUN" --list-options check | cli_set >"$t/cli"
  section "$t/drift.scd" OPTIONS | defs_set >"$t/page"
  run same_sets "agentrun check" "$t/cli" "$t/page"
  [ "$status" -eq 1 ]
  [[ "$output" == *"the CLI takes but the page lacks: "*"cpus -"*"json -"*"; the page names"* ]]
  [[ "$output" == *"the CLI lacks: bogus -"* ]]
}

@test "man: the built pages render without warnings and carry this build's version" {
  need_cmd groff
  local v p
  v=$("$AGENTRUN" --version | awk 'NR == 1 { print $3 }')
  for p in agentrun.1 agentrun-sandbox.1 agentrun-check.1 agentrun-relay.1 agentrun-netproxy.1 agentrun-profile.5; do
    [ -s "$BUILDDIR/man/$p" ] || { echo "man/$p not built"; return 1; }
    run groff -man -Tutf8 -ww -z "$BUILDDIR/man/$p"
    [ "$status" -eq 0 ] && [ -z "$output" ] || { echo "$p: $output"; return 1; }
    grep -q "^\.TH .*\"agentrun $v\"" "$BUILDDIR/man/$p" || { echo "$p: not version $v"; grep '^\.TH' "$BUILDDIR/man/$p"; return 1; }
  done
}

@test "man: agentrun-profile(5) lists exactly the keys a profile takes" {
  local t=$BATS_TEST_TMPDIR
  # the parser names the keys it knows when it meets one it does not
  echo '{ "no such key": 1 }' >"$t/p.json"
  run "$AGENTRUN" spec --agent --profile "$t/p.json" --bundle "$t/b"
  [ "$status" -ne 0 ]
  [[ "$output" == *"unknown key (known: "* ]]
  sed 's/.*unknown key (known: \([^)]*\)).*/\1/' <<<"$output" | tr ',' '\n' | tr -d ' ' | grep . | sort >"$t/cli"
  [ -s "$t/cli" ]
  # the first cell of each row of the KEYS table, after its header
  section "$MAN/agentrun-profile.5.scd" KEYS | awk '/^\| / { sub(/^\| +/, ""); print }' | tr ',' '\n' | tr -d ' ' |
    grep . | sort >"$t/page"
  same_sets "profile keys" "$t/cli" "$t/page"
}
