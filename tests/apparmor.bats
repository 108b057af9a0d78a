#!/usr/bin/env bats
# The AppArmor profile Ubuntu's restriction of unprivileged user namespaces
# needs (contrib/apparmor/agentrun, built for this prefix), and the error
# agentrun sandbox gives where that restriction stops it.

load helpers

PROFILE=$BUILDDIR/contrib/apparmor/agentrun

@test "apparmor: the profile grants userns to the installed binary, unconfined otherwise" {
  [ -s "$PROFILE" ] || { echo "contrib/apparmor/agentrun not built"; return 1; }
  local bindir
  bindir=$(make -s -C "$BUILDDIR" --no-print-directory -f - print-bindir <<<"include Makefile
print-bindir: ; @echo \$(bindir)")
  grep -qx 'abi <abi/4.0>,' "$PROFILE"
  grep -qx "profile agentrun $bindir/agentrun flags=(unconfined) {" "$PROFILE"
  grep -qx '  userns,' "$PROFILE"
  # nothing else is granted or denied: the rules are userns and the local include
  run grep -vE '^\s*(#.*)?$|^abi |^include |^profile |^\s*userns,$|^\s*include if exists <local/agentrun>$|^}$' "$PROFILE"
  [ -z "$output" ]
}

@test "apparmor: apparmor_parser accepts the profile" {
  need_cmd apparmor_parser
  local v t=$BATS_TEST_TMPDIR/agentrun
  v=$(apparmor_parser --version | awk 'NR == 1 { print $NF }')
  if [ "${v%%.*}" -ge 4 ]; then
    cp "$PROFILE" "$t"
  else
    # Debian 12's parser (3.0) predates abi 4.0 and the userns rule:
    # it checks the rest, and that the rule it cannot read is all we dropped.
    sed -e 's|^abi <abi/4.0>,$|abi <abi/3.0>,|' -e '/^  userns,$/d' "$PROFILE" >"$t"
    [ "$(diff "$PROFILE" "$t" | grep -c '^<')" -eq 2 ]
  fi
  # parse only: no kernel load, no cache
  run apparmor_parser --skip-kernel-load --skip-cache --skip-read-cache "$t"
  echo "$output"
  [ "$status" -eq 0 ]
  # and it does reject a broken profile
  sed 's/flags=(unconfined) {/flags=(unconfined) {{/' "$t" >"$t.bad"
  run apparmor_parser --skip-kernel-load --skip-cache --skip-read-cache "$t.bad"
  [ "$status" -ne 0 ]
}

@test "apparmor: where AppArmor refuses the user namespace, sandbox names the profile and the command that loads it" {
  id agentrun-test >/dev/null 2>&1 || skip "user agentrun-test missing (.ci/run creates it)"
  local ws=$BATS_TEST_TMPDIR/ws
  install -d -m 0755 -o agentrun-test "$ws"
  install -d -m 0700 -o agentrun-test "$BATS_TEST_TMPDIR/xdg"
  let_others_walk_to "$ws"
  # the host's refusal, injected (this machine has no AppArmor): the check
  # runs before anything is made, so nothing is left behind
  run runuser -u agentrun-test -- env AGENTRUN_FAULT=sandbox-apparmor-userns \
    XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/xdg" sh -c "cd '$ws' && '$(public_bin)/agentrun' sandbox -- true"
  echo "$output"
  [ "$status" -eq 125 ]
  [[ "$output" == *"kernel.apparmor_restrict_unprivileged_userns = 1"* ]]
  local want
  want=$(sed -n 's/^#define AR_APPARMOR_PROFILE "\(.*\)"$/\1/p' "$BUILDDIR/config.h")
  [ -n "$want" ]
  [[ "$output" == *"apparmor_parser -r $want"* ]]
  [ "$(echo "$output" | wc -l)" -eq 1 ]
}
