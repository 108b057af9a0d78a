/* --systemd-cgroup: the cgroup is a transient scope that systemd creates
 * (StartTransientUnit over D-Bus), named by "slice:prefix:name". This build
 * speaks no D-Bus (no libsystemd or libdbus by design), so it checks what
 * it can — the path's form and whether systemd runs at all — and then fails
 * with a message saying so, rather than quietly creating cgroups behind
 * systemd's back. */
#include "config.h"
#include "cgroups_internal.h"
#include "util.h"

#include <sys/stat.h>

/* slice must end in ".slice" (or be empty: system.slice by default);
 * prefix and name must be non-empty and contain no '/'. */
static int
check_form (const char *p, ar_error **err)
{
  const char *c1 = strchr (p, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
  if (!c1 || !c2 || strchr (c2 + 1, ':') || strchr (p, '/'))
    return ar_err (err, 0, "systemd cgroup manager: linux.cgroupsPath \"%s\" is not \"slice:prefix:name\"", p);
  size_t sl = c1 - p;
  if (sl && (sl < 6 || strncmp (c1 - 6, ".slice", 6) != 0))
    return ar_err (err, 0, "systemd cgroup manager: linux.cgroupsPath \"%s\": the slice must end in \".slice\"", p);
  if (c2 == c1 + 1 || !c2[1])
    return ar_err (err, 0, "systemd cgroup manager: linux.cgroupsPath \"%s\": prefix and name must not be empty", p);
  return 0;
}

int
ar_cg_systemd_create (const char *id, const struct ar_linux *lnx, pid_t pid, char **path_out, ar_error **err)
{
  (void) id;
  (void) pid;
  *path_out = NULL;
  const char *p = lnx ? lnx->cgroups_path : NULL;
  if (p && *p && check_form (p, err) < 0)
    return -1;
  struct stat st;
  /* sd_booted()'s test: systemd creates this directory when it is PID 1. */
  if (lstat ("/run/systemd/system", &st) < 0 || !S_ISDIR (st.st_mode))
    return ar_err (err, 0, "systemd cgroup manager: systemd is not running as PID 1 (/run/systemd/system missing); "
                   "use --cgroup-manager cgroupfs");
  return ar_err (err, 0, "systemd cgroup manager: creating a transient scope needs systemd's D-Bus API, which this "
                 "agentrun build does not speak; use --cgroup-manager cgroupfs");
}
