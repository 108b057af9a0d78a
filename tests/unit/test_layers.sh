#!/bin/sh
# TAP: tests/unit/layers.sh passes the tree as it is and fails, naming the
# place and the arrow, on copies of it that cross the layers (an include,
# a path include, a header name twice, a netproxy program holding the
# container library, a library calling a higher one). The real tree and
# build are only read.
# usage: test_layers.sh SRCDIR BUILDDIR
set -u
src=${1:?usage: test_layers.sh SRCDIR BUILDDIR}
build=${2:?usage: test_layers.sh SRCDIR BUILDDIR}
check=$src/tests/unit/layers.sh
n=0 failed=0
ok () {
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_layers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# a copy of the layers' sources
copy () {
  rm -rf "$tmp/src"
  for d in common spec hooks runtime runtime/fs runtime/cgroups sandbox cli netproxy; do
    mkdir -p "$tmp/src/$d" && cp "$src/$d"/*.[ch] "$tmp/src/$d/"
  done
}
# $1: expected status, $2: pattern the output must hold, then the arguments
expect () {
  want=$1 pat=$2
  shift 2
  out=$(sh "$check" "$@" 2>&1)
  rc=$?
  [ "$rc" -eq "$want" ] && { [ -z "$pat" ] || printf '%s\n' "$out" | grep -q -- "$pat"; } && return 0
  printf '%s\n' "$out" | sed 's/^/# /'
  return 1
}

expect 0 "" "$src"; ok $? "the tree's includes keep to the layers"
expect 0 "" "$src" "$build"; ok $? "the build's links keep to the layers"

copy
sed -i '1a #include "container.h"' "$tmp/src/spec/json.c"
expect 1 '^spec/json.c:2: #include "container.h" (runtime/container.h): spec -> runtime' "$tmp/src"
ok $? "spec including a runtime header is refused, with its file:line and arrow"

copy
sed -i '1a #include "sandbox.h"' "$tmp/src/runtime/fs/mounts.c"
expect 1 '^runtime/fs/mounts.c:2: .*runtime -> sandbox' "$tmp/src"
ok $? "runtime/fs including a sandbox header is refused"

copy
sed -i '1a #include "exec.h"' "$tmp/src/netproxy/relay.c"
expect 1 '^netproxy/relay.c:2: .*netproxy -> runtime' "$tmp/src"
ok $? "netproxy including the container library's header is refused"

copy
sed -i '1a #include "commands.h"' "$tmp/src/sandbox/check.c"
expect 1 '^sandbox/check.c:2: .*sandbox -> cli' "$tmp/src"
ok $? "the sandbox library including the CLI's header is refused"

copy
sed -i '1a #include "spec/model.h"' "$tmp/src/runtime/caps.c"
expect 1 '^runtime/caps.c:2: #include "spec/model.h": a path' "$tmp/src"
ok $? "an include by path (around the include path) is refused"

copy
cp "$tmp/src/spec/spec_state.h" "$tmp/src/spec/state.h"
expect 1 'header name in two folders: state.h' "$tmp/src"
ok $? "one header name in two folders is refused"

copy
sed -i '1a #include "log.h"' "$tmp/src/spec/json.c"
expect 0 "" "$tmp/src"
ok $? "an include of a lower layer (spec -> common) is fine"

# links: a build folder of links to the real build, one piece replaced
fake_build () {
  rm -rf "$tmp/b" && mkdir "$tmp/b"
  for f in libarcommon.a libarspec.a libarhooks.a libagentrun.a libarsandbox.a agentrun-netproxy agentrun-relay; do
    ln -s "$build/$f" "$tmp/b/$f"
  done
}
fake_build
rm "$tmp/b/agentrun-relay" && ln -s "$build/agentrun" "$tmp/b/agentrun-relay"
expect 1 '^agentrun-relay: holds ar_.*: netproxy -> runtime' "$src" "$tmp/b"
ok $? "a netproxy program holding the container library is refused"

fake_build
printf 'int ar_sandbox_run (void *, void *, int *, void **);\nint up (void) { return ar_sandbox_run (0, 0, 0, 0); }\n' >"$tmp/up.c"
if ${CC:-cc} -c -o "$tmp/up.o" "$tmp/up.c" 2>/dev/null; then
  rm "$tmp/b/libarcommon.a" && cp "$build/libarcommon.a" "$tmp/b/libarcommon.a" && ${AR:-ar} r "$tmp/b/libarcommon.a" "$tmp/up.o" 2>/dev/null
  expect 1 'libarcommon.a:up.o: uses ar_sandbox_run: common -> sandbox' "$src" "$tmp/b"
  ok $? "the common library calling the sandbox library is refused"
else
  n=$((n + 1)); echo "ok $n - # SKIP no C compiler (${CC:-cc}) to make an object that calls up"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
