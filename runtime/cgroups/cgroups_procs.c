/* The processes of a container's cgroup: listing them (ps), signalling all
 * of them (kill --all, delete --force), and freezing (pause/resume). */
#include "config.h"
#include "cgroups.h"
#include "cgroups_internal.h"
#include "util.h"

#include <signal.h>
#include <time.h>

char *
ar_cg_procs_dir (const struct ar_cg_layout *l, const char *path)
{
  const char *m = l->unified;
  if (!m)
    m = ar_cg_v1_mount (l, "freezer");
  if (!m)
    m = ar_cg_v1_mount (l, "pids");
  if (!m)
    m = l->v1[0].mnt;
  return ar_cg_dir (m, path);
}

int
ar_cgroup_pids (const char *record, pid_t **pids, size_t *n, ar_error **err)
{
  *pids = NULL;
  *n = 0;
  if (!record)
    return 0;
  const char *path = NULL;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, err);
  if (!l)
    return -1;
  cleanup_free char *dir = ar_cg_procs_dir (l, path);
  cleanup_free char *s = NULL;
  if (ar_cg_read (dir, "cgroup.procs", &s, err) < 0)
    return -1;
  size_t cap = 0;
  for (char *t = s, *end; *t; t = end)
    {
      long v = strtol (t, &end, 10);
      if (end == t)
        break;
      if (*n == cap)
        *pids = xrealloc (*pids, (cap = cap ? cap * 2 : 16) * sizeof **pids);
      (*pids)[(*n)++] = (pid_t) v;
      while (*end == '\n')
        end++;
    }
  return 0;
}

static void
sleep_ms (long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

/* The freezer in use: v1's when mounted (hybrid included), else cgroup2's. */
static char *
freezer_dir (const struct ar_cg_layout *l, const char *path, bool *v1)
{
  const char *m = l->mode != AR_CG_V2 ? ar_cg_v1_mount (l, "freezer") : NULL;
  *v1 = m != NULL;
  if (!m)
    m = l->unified;
  return m ? ar_cg_dir (m, path) : NULL;
}

static bool
frozen_now (const char *dir, bool v1)
{
  cleanup_free char *s = NULL;
  if (ar_cg_read (dir, v1 ? "freezer.state" : "cgroup.events", &s, NULL) < 0)
    return false;
  return v1 ? strcmp (s, "FROZEN") == 0 : strstr (s, "frozen 1") != NULL;
}

bool
ar_cgroup_is_frozen (const char *record)
{
  bool v1;
  const char *path = NULL;
  const struct ar_cg_layout *l = record ? ar_cg_layout_of (record, &path, NULL) : NULL;
  cleanup_free char *dir = l ? freezer_dir (l, path, &v1) : NULL;
  return dir && frozen_now (dir, v1);
}

/* Writing the request is not the end: tasks freeze one by one, and a v1
 * freezer can stay FREEZING while a task is in an uninterruptible wait. */
int
ar_cgroup_freeze (const char *record, bool frozen, ar_error **err)
{
  if (!record)
    return ar_err (err, 0, "the container has no cgroup (created with --cgroup-manager disabled)");
  const char *path = NULL;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, err);
  if (!l)
    return -1;
  bool v1;
  cleanup_free char *dir = freezer_dir (l, path, &v1);
  if (!dir)
    return ar_err (err, 0, "cgroup: no freezer: the v1 freezer hierarchy is not mounted and there is no cgroup2");
  const char *file = v1 ? "freezer.state" : "cgroup.freeze";
  const char *val = v1 ? (frozen ? "FROZEN" : "THAWED") : (frozen ? "1" : "0");
  for (int i = 0; i < 1000; i++)
    {
      if (i % 50 == 0 && ar_cg_write (dir, file, val, err) < 0)
        return -1;
      if (frozen_now (dir, v1) == frozen)
        return 0;
      sleep_ms (5);
    }
  if (frozen)
    ar_cg_write (dir, file, v1 ? "THAWED" : "0", NULL);
  return ar_err (err, ETIMEDOUT, "cgroup: %s/%s did not reach %s", dir, file, val);
}

int
ar_cgroup_kill_all (const char *record, int sig, ar_error **err)
{
  if (!record)
    return 0;
  const char *path = NULL;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, err);
  if (!l)
    return -1;
  /* cgroup.kill (5.14) kills the whole tree at once, no pid races. On a
   * hybrid host the unified half holds every process too. */
  if (sig == SIGKILL && l->unified)
    {
      cleanup_free char *dir = ar_cg_dir (l->unified, path);
      if (ar_cg_exists (dir, "cgroup.kill"))
        return ar_cg_write (dir, "cgroup.kill", "1", err);
    }
  /* Otherwise freeze so nothing forks between reading and signalling. */
  bool was_frozen = ar_cgroup_is_frozen (record);
  bool froze = !was_frozen && ar_cgroup_freeze (record, true, NULL) == 0;
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  int ret = ar_cgroup_pids (record, &pids, &n, err);
  for (size_t i = 0; ret == 0 && i < n; i++)
    if (kill (pids[i], sig) < 0 && errno != ESRCH)
      ret = ar_err (err, errno, "kill pid %d of cgroup %s with signal %d", (int) pids[i], path, sig);
  /* A v1-frozen task cannot act on SIGKILL until thawed. */
  if (froze || (was_frozen && sig == SIGKILL))
    ar_cgroup_freeze (record, false, NULL);
  return ret;
}
