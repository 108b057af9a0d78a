#!/bin/bash
# Measure what the compiled-filter cache saves: compiling a profile with
# libseccomp versus loading the same program from <root>/.seccomp-cache.
#
#   tests/bench/seccomp-cache.sh [PROFILE.json] [RUNS]
#
# Builds a small driver against the build tree's libagentrun.a (the same
# ar_seccomp_compile_cached the runtime calls), runs it RUNS times per case in
# fresh processes, and prints the medians in microseconds. Everything lives in
# a temporary folder that is removed on exit.
set -euo pipefail
BUILDDIR=${AGENTRUN_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
SRCDIR=${AGENTRUN_SRCDIR:-$BUILDDIR}
PROFILE=${1:-$SRCDIR/contrib/seccomp/agent.json}
RUNS=${2:-31}
CC=${CC:-cc}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/drv.c" <<'C'
#include "config.h"
#include "seccomp.h"
#include "spec.h"
#include <stdio.h>
#include <time.h>
int main (int argc, char **argv)
{
  ar_error *err = NULL;
  struct ar_spec *spec;
  struct ar_seccomp_prog *prog;
  struct timespec a, b;
  if (argc < 2 || ar_spec_load_file (argv[1], &spec, &err) < 0)
    return fprintf (stderr, "%s\n", err ? err->msg : "usage: drv CONFIG [ROOT]"), 2;
  clock_gettime (CLOCK_MONOTONIC, &a);
  if (ar_seccomp_compile_cached (spec->linux_->seccomp, argc > 2 ? argv[2] : NULL, &prog, &err) < 0)
    return fprintf (stderr, "%s\n", err->msg), 1;
  clock_gettime (CLOCK_MONOTONIC, &b);
  printf ("%ld %zu %s\n", (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000,
          prog->len, prog->from_cache ? "cache" : "compiled");
  return 0;
}
C
# shellcheck disable=SC2046
"$CC" -O2 -I"$BUILDDIR" -iquote "$SRCDIR/spec" -iquote "$SRCDIR/runtime" -o "$tmp/drv" "$tmp/drv.c" \
  "$BUILDDIR/libagentrun.a" "$BUILDDIR/libarspec.a" $(pkg-config --libs libseccomp yajl libcap)

# A minimal config.json around the profile.
jq -n --slurpfile p "$PROFILE" '{ociVersion:"1.2.0", root:{path:"rootfs"},
  process:{args:["true"], cwd:"/", user:{uid:0, gid:0}}, linux:{seccomp:$p[0]}}' >"$tmp/config.json"
mkdir -m 0700 "$tmp/root"

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

for _ in $(seq "$RUNS"); do "$tmp/drv" "$tmp/config.json"; done >"$tmp/nocache"
"$tmp/drv" "$tmp/config.json" "$tmp/root" >/dev/null            # fill the cache
for _ in $(seq "$RUNS"); do "$tmp/drv" "$tmp/config.json" "$tmp/root"; done >"$tmp/cached"

grep -q compiled "$tmp/nocache" && ! grep -q compiled "$tmp/cached" ||
  { echo "unexpected: the cache was not used" >&2; exit 1; }
insns=$(awk 'NR==1 {print $2}' "$tmp/cached")
compile=$(awk '{print $1}' "$tmp/nocache" | median)
cached=$(awk '{print $1}' "$tmp/cached" | median)
printf 'profile: %s (%s BPF instructions), %s runs each\n' "$PROFILE" "$insns" "$RUNS"
printf 'compile (libseccomp):  median %6d us\n' "$compile"
printf 'cached (.seccomp-cache): median %6d us\n' "$cached"
awk -v a="$compile" -v b="$cached" 'BEGIN {printf "saving: %d us per container start (%.0fx)\n", a - b, a / (b ? b : 1)}'
