/* See places.h. A bind of /proc shows the host's processes and their
 * command lines, /sys and /dev its devices; a read-write /etc or /usr is
 * the host; a read-write home lets the agent plant shell startup files that
 * the person's next shell runs, and reach what no mask names. */
#include "config.h"
#include "places.h"
#include "pathname.h"
#include "util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Never bound in, nor anything below them: the sandbox has its own. */
static const char *const kernel_fs[] = { "/proc", "/sys", "/dev", NULL };

/* Not read-write without --allow-system-path (these folders themselves). */
static const char *const system_dirs[] = {
  "/",     "/bin", "/boot", "/etc", "/home", "/lib", "/lib32",     "/lib64", "/libx32",  "/media",   "/mnt", "/opt",
  "/root", "/run", "/sbin", "/srv", "/tmp",  "/usr", "/usr/local", "/var",   "/var/lib", "/var/tmp", NULL,
};

static const char *
opt_name (const struct ar_agent_bind *b)
{
  return b->socket ? "--unix-socket" : b->src ? "agent state" : b->writable ? "--rw" : "--ro";
}

/* path lies in a hidden folder of home (home/.config, home/.cache/pip):
 * the person's own tools' configuration, caches and programs, which they
 * run on the host (a global git config, a shell's, a pip cache's wheels,
 * ~/.local/bin). */
static bool
in_hidden_of (const char *home, const char *path)
{
  size_t n = strlen (home);
  return n > 1 && strncmp (home, path, n) == 0 && path[n] == '/' && path[n + 1] == '.';
}

/* own: the agent's own home (--home) or a preset's state, which only the
 * sandbox reads: a hidden folder of the home is fine for those */
static int
check_one (const struct ar_agent_opts *o, const char *opt, const char *path, bool writable, bool own, bool allow_home,
           bool allow_system, ar_error **err)
{
  for (size_t i = 0; kernel_fs[i]; i++)
    if (ar_path_under (path, kernel_fs[i]))
      return ar_err (err, 0, "%s %s: %s is the host kernel's view (processes, devices): never bound into the sandbox",
                     opt, path, kernel_fs[i]);
  if (!writable)
    return 0;
  for (size_t i = 0; system_dirs[i] && !allow_system; i++)
    if (strcmp (system_dirs[i], path) == 0)
      return ar_err (err, 0,
                     "%s %s: a system folder of the host, writable by the agent; give --allow-system-path "
                     "to bind it read-write anyway",
                     opt, path);
  for (size_t h = 0; h < o->n_cred_homes && !allow_home; h++)
    {
      char real[PATH_MAX];
      const char *home = realpath (o->cred_homes[h], real) ? real : o->cred_homes[h];
      if (ar_path_under (home, path))
        return ar_err (err, 0,
                       "%s %s: holds the home folder %s, whose shell startup files and credentials the "
                       "agent could change or read; give --allow-home to bind it read-write anyway",
                       opt, path, home);
      if (!own && in_hidden_of (home, path))
        return ar_err (err, 0,
                       "%s %s: in a hidden folder of the home %s, where your own tools keep what they run "
                       "on the host (configs, caches, programs); give --allow-home to bind it read-write anyway",
                       opt, path, home);
    }
  return 0;
}

int
ar_places_check (const struct ar_agent_opts *o, bool allow_home, bool allow_system, ar_error **err)
{
  if (check_one (o, "--workspace", o->workspace, true, false, allow_home, allow_system, err) < 0
      || (o->out && check_one (o, "--out", o->out, true, false, allow_home, allow_system, err) < 0)
      || (o->home_src && check_one (o, "--home", o->home_src, true, true, allow_home, allow_system, err) < 0))
    return -1;
  for (size_t i = 0; i < o->n_binds; i++)
    if (check_one (o, opt_name (&o->binds[i]), o->binds[i].src ? o->binds[i].src : o->binds[i].path,
                   o->binds[i].writable, o->binds[i].src != NULL, allow_home, allow_system, err)
        < 0)
      return -1;
  return 0;
}

/* The state root holds what every later run trusts: the compiled seccomp
 * filters (the agent profile's and the connect filter's), the containers'
 * state. Written by the agent, the next run would load the filter it
 * planted: no writable bind may hold it or lie in it, whatever the flags. */
static int
check_root (const char *opt, const char *path, const char *root, ar_error **err)
{
  if (ar_path_under (root, path) || ar_path_under (path, root))
    return ar_err (err, 0,
                   "%s %s: %s is agentrun's state folder (the compiled filters and the containers' state every "
                   "later run trusts): never bound read-write",
                   opt, path, root);
  return 0;
}

int
ar_places_check_state_root (const struct ar_agent_opts *o, const char *root, ar_error **err)
{
  char real[PATH_MAX];
  if (!root)
    return 0;
  if (realpath (root, real))
    root = real;
  if (check_root ("--workspace", o->workspace, root, err) < 0 || (o->out && check_root ("--out", o->out, root, err) < 0)
      || (o->home_src && check_root ("--home", o->home_src, root, err) < 0))
    return -1;
  for (size_t i = 0; i < o->n_binds; i++)
    if (o->binds[i].writable
        && check_root (opt_name (&o->binds[i]), o->binds[i].src ? o->binds[i].src : o->binds[i].path, root, err) < 0)
      return -1;
  return 0;
}
