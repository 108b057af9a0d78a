/* agentrun ps [--format table|json] ID: the container's processes. */
#include "config.h"
#include "cmd_common.h"
#include "cgroups.h"
#include "commands.h"
#include "spec.h"
#include "state.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>

static const struct ar_opt ps_opts[] = { { "format", 'f', true, 1 }, { NULL, 0, false, 0 } };

static bool
has (pid_t *v, size_t n, pid_t p)
{
  for (size_t i = 0; i < n; i++)
    if (v[i] == p)
      return true;
  return false;
}

/* No cgroup: the init and its descendants, found through /proc ppids. */
static void
descendants (pid_t init, pid_t **pids, size_t *n)
{
  *pids = xmalloc0 (sizeof **pids);
  (*pids)[0] = init;
  *n = 1;
  for (bool grew = true; grew;)
    {
      grew = false;
      DIR *d = opendir ("/proc");
      struct dirent *de;
      if (!d)
        return;
      while ((de = readdir (d)))
        {
          pid_t p = (pid_t) atoi (de->d_name);
          if (p <= 0 || has (*pids, *n, p) || !has (*pids, *n, ar_proc_ppid (p)))
            continue;
          *pids = xrealloc (*pids, (*n + 1) * sizeof **pids);
          (*pids)[(*n)++] = p;
          grew = true;
        }
      closedir (d);
    }
}

static void
print_table (pid_t *pids, size_t n)
{
  printf ("%-8s %s\n", "PID", "CMD");
  for (size_t i = 0; i < n; i++)
    {
      char path[64], comm[64] = "?";
      snprintf (path, sizeof path, "/proc/%d/comm", (int) pids[i]);
      int fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd >= 0)
        {
          ssize_t r = read (fd, comm, sizeof comm - 1);
          close (fd);
          comm[r > 0 ? r : 0] = '\0';
          comm[strcspn (comm, "\n")] = '\0';
        }
      printf ("%-8d %s\n", (int) pids[i], comm);
    }
}

int
cmd_ps (struct ar_globals *g, int argc, char **argv)
{
  cleanup_error ar_error *err = NULL;
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = ps_opts, .cmd = "ps" };
  cleanup_close int dirfd = -1;
  const char *arg, *id, *format = "table";
  struct ar_cstate st = { 0 };
  pid_t *pids = NULL;
  size_t n = 0;
  int o;

  while ((o = ar_opt_next (&p, &arg, &err)) > 0)
    format = arg;
  if (o < 0 || ar_one_id ("ps", &p, &id, &err) < 0 || ar_validate_id (id, &err) < 0
      || ar_state_open (g->root, id, false, &dirfd, &err) < 0 || ar_cstate_read (dirfd, &st, &err) < 0)
    return ar_cmd_fail (ar_steal_ptr (err));
  if (strcmp (format, "table") && strcmp (format, "json"))
    return ar_cmd_fail ((ar_err (&err, 0, "ps: --format: \"%s\" is not table or json", format), ar_steal_ptr (err)));
  if (!st.id || !ar_cstate_alive (&st))
    ;
  else if (st.cgroup_path)
    {
      if (ar_cgroup_pids (st.cgroup_path, &pids, &n, &err) < 0)
        {
          ar_cstate_clear (&st);
          return ar_cmd_fail (ar_steal_ptr (err));
        }
    }
  else
    descendants (st.pid, &pids, &n);
  if (strcmp (format, "json") == 0)
    {
      printf ("[");
      for (size_t i = 0; i < n; i++)
        printf ("%s%d", i ? "," : "", (int) pids[i]);
      printf ("]\n");
    }
  else
    print_table (pids, n);
  free (pids);
  ar_cstate_clear (&st);
  return 0;
}
