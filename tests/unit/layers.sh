#!/bin/sh
# The layers' arrows, checked from the code itself (docs/ARCHITECTURE.md):
#   common <- spec <- hooks <- runtime (fs, cgroups) <- sandbox <- cli
#   common <- spec <- netproxy
# usage: layers.sh SRCDIR [BUILDDIR]
# Includes: every #include "x.h" in a layer's folder must name a header of
# its own or a lower layer (header names are flat: each is in one folder).
# Links (with BUILDDIR): no library uses a symbol that only a higher layer
# defines, and the netproxy's programs define none of the container
# library's (libarhooks.a, libagentrun.a, libarsandbox.a) symbols.
# Prints each crossing as FILE:LINE (or the object) and its arrow; exits 1
# when there is one.
set -u
src=${1:?usage: layers.sh SRCDIR [BUILDDIR]}
build=${2:-}
NM=${NM:-nm}

# folder -> layer, and what each layer may use (itself included)
layer_of () {
  case $1 in
    common) echo common ;; spec) echo spec ;; hooks) echo hooks ;;
    runtime|runtime/fs|runtime/cgroups) echo runtime ;;
    sandbox) echo sandbox ;; cli) echo cli ;; netproxy) echo netproxy ;;
  esac
}
allowed () {
  case $1 in
    common) echo "common" ;;
    spec) echo "common spec" ;;
    hooks) echo "common spec hooks" ;;
    runtime) echo "common spec hooks runtime" ;;
    sandbox) echo "common spec hooks runtime sandbox" ;;
    cli) echo "common spec hooks runtime sandbox cli" ;;
    netproxy) echo "common spec netproxy" ;;
  esac
}
FOLDERS="common spec hooks runtime runtime/fs runtime/cgroups sandbox cli netproxy"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/layers.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
bad=0

# header name -> folder; a name in two folders is itself a fault
for d in $FOLDERS; do
  [ -d "$src/$d" ] || { echo "layers: $src/$d: no such folder" >&2; exit 2; }
done
for d in $FOLDERS; do
  for h in "$src/$d"/*.h; do
    [ -e "$h" ] && echo "${h##*/} $d"
  done
done | sort >"$tmp/headers"
dups=$(awk '{ n[$1]++; w[$1] = w[$1] " " $2 } END { for (h in n) if (n[h] > 1) print h ":" w[h] }' "$tmp/headers")
if [ -n "$dups" ]; then
  printf '%s\n' "$dups" | sed 's/^/layers: header name in two folders: /'
  bad=1
fi

# FILE LAYER LINE NAME for each quoted include, joined with the headers
for d in $FOLDERS; do
  me=$(layer_of "$d")
  for f in "$src/$d"/*.c "$src/$d"/*.h; do
    [ -e "$f" ] || continue
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
      sed "s|^\([0-9]*\):[^\"]*\"\([^\"]*\)\".*|${f#"$src"/} $me \1 \2|"
  done
done >"$tmp/incs"
awk -v table="$(for l in common spec hooks runtime sandbox cli netproxy; do printf '%s:%s;' $l "$(allowed $l)"; done)" '
  function layer(d) { return d ~ /^runtime/ ? "runtime" : d }
  BEGIN { n = split(table, t, ";"); for (i = 1; i <= n; i++) if (t[i] != "") { split(t[i], kv, ":"); ok[kv[1]] = " " kv[2] " " } }
  FNR == NR { where[$1] = $2; next }
  $4 ~ /\// { printf "%s:%s: #include \"%s\": a path, not a flat header name\n", $1, $3, $4; bad = 1; next }
  !($4 in where) { next }                      # config.h, or not ours
  { to = layer(where[$4]); if (index(ok[$2], " " to " ") == 0) {
      printf "%s:%s: #include \"%s\" (%s/%s): %s -> %s crosses the layers\n", $1, $3, $4, where[$4], $4, $2, to; bad = 1 } }
  END { exit bad }' "$tmp/headers" "$tmp/incs" || bad=1

if [ -n "$build" ]; then
  # library -> layer, lowest first
  LIBS="libarcommon.a:common libarspec.a:spec libarhooks.a:hooks libagentrun.a:runtime libarsandbox.a:sandbox"
  : >"$tmp/defs"
  for e in $LIBS; do
    lib=${e%%:*}
    [ -f "$build/$lib" ] || { echo "layers: $build/$lib: not built" >&2; exit 2; }
    $NM -g --defined-only "$build/$lib" >"$tmp/nm" || { echo "layers: $NM $build/$lib failed" >&2; exit 2; }
    # a library that seems to define nothing would let every crossing through
    awk -v l="${e#*:}" 'NF == 3 && $2 ~ /[TDBRCVW]/ { print $3, l; n++ } END { exit n == 0 }' "$tmp/nm" >>"$tmp/defs" ||
      { echo "layers: $build/$lib: no symbols read" >&2; exit 2; }
  done
  for e in $LIBS; do
    lib=${e%%:*} me=${e#*:}
    $NM -A -u "$build/$lib" 2>/dev/null | awk -v me="$me" -v ok=" $(allowed "$me") " '
      FNR == NR { def[$1] = $2; next }
      { sym = $NF; obj = $1; sub(/:$/, "", obj) }
      (sym in def) && index(ok, " " def[sym] " ") == 0 { printf "%s: uses %s: %s -> %s crosses the layers\n", obj, sym, me, def[sym] }' \
      "$tmp/defs" -
  done >"$tmp/links"
  for p in agentrun-netproxy agentrun-relay; do
    [ -f "$build/$p" ] || { echo "layers: $build/$p: not built" >&2; exit 2; }
    $NM -g --defined-only "$build/$p" 2>/dev/null | awk -v p="$p" '
      FNR == NR { def[$1] = $2; next }
      NF == 3 && ($3 in def) && def[$3] ~ /^(hooks|runtime|sandbox)$/ {
        printf "%s: holds %s: netproxy -> %s (the container library)\n", p, $3, def[$3] }' "$tmp/defs" -
  done >>"$tmp/links"
  if [ -s "$tmp/links" ]; then
    cat "$tmp/links"
    bad=1
  fi
fi
exit $bad
