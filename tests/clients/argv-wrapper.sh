#!/bin/sh
# argv-wrapper.sh REAL OUT STATEROOT [LOG]: write OUT, an executable that
# runs REAL (with --root=STATEROOT first, unless STATEROOT is ""), and, given
# LOG, first appends its argv (one line, each argument quoted) to LOG, so a
# test can see exactly how podman, conmon or containerd-shim call the runtime.
#
# Why --root: podman 4.3 passes no --root of its own, and its --runtime-flag
# does not reach the "container cleanup" process that conmon starts at exit,
# so without this the runtime would keep state in /run/<runtime> on the host.
set -eu
real=$1 out=$2 root=$3 log=${4:-}
{
  echo '#!/bin/sh'
  if [ -n "$log" ]; then
    echo "{ printf '%s' \"\$(date +%T.%N) [\$PPID]\"; for a in \"\$@\"; do printf \" '%s'\" \"\$a\"; done; echo; } >>'$log'"
  fi
  if [ -n "$root" ]; then
    echo "exec '$real' --root='$root' \"\$@\""
  else
    echo "exec '$real' \"\$@\""
  fi
} >"$out"
chmod 755 "$out"
