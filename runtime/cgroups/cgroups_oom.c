/* OOM events for `events`: v1 memory.oom_control registered through
 * cgroup.event_control with an eventfd; v2 memory.events watched with
 * inotify, its oom_kill counter compared with the last one seen. */
#include "config.h"
#include "cgroups.h"
#include "cgroups_internal.h"
#include "util.h"

#include <fcntl.h>
#include <inttypes.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>

static unsigned long long
oom_kills (const char *dir)
{
  cleanup_free char *s = NULL;
  if (ar_cg_read (dir, "memory.events", &s, NULL) < 0)
    return 0;
  char *at = strstr (s, "oom_kill ");
  return at ? strtoull (at + 9, NULL, 10) : 0;
}

int
ar_cgroup_oom_open (const char *record, struct ar_cgroup_oom *w, ar_error **err)
{
  *w = (struct ar_cgroup_oom){ .fd = -1, .ctl_fd = -1 };
  if (!record)
    return ar_err (err, 0, "the container has no cgroup (created with --cgroup-manager disabled)");
  const char *path = NULL;
  const struct ar_cg_layout *l = ar_cg_layout_of (record, &path, err);
  struct ar_cg_target t;
  if (!l || ar_cg_target (l, path, "memory", "memory", false, &t, err) < 0)
    return -1;
  w->dir = t.dir;
  w->v2 = t.v2;
  if (w->v2)
    {
      w->fd = inotify_init1 (IN_CLOEXEC | IN_NONBLOCK);
      if (w->fd < 0)
        return ar_err (err, errno, "inotify_init1");
      cleanup_free char *f = xasprintf ("%s/memory.events", w->dir);
      if (inotify_add_watch (w->fd, f, IN_MODIFY) < 0)
        return ar_err (err, errno, "inotify_add_watch %s", f);
      w->last = oom_kills (w->dir);
      return 0;
    }
  w->fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (w->fd < 0)
    return ar_err (err, errno, "eventfd");
  cleanup_free char *f = xasprintf ("%s/memory.oom_control", w->dir);
  w->ctl_fd = open (f, O_RDONLY | O_CLOEXEC);
  if (w->ctl_fd < 0)
    return ar_err (err, errno, "open %s", f);
  return ar_cg_writef (err, w->dir, "cgroup.event_control", "%d %d", w->fd, w->ctl_fd);
}

int
ar_cgroup_oom_read (struct ar_cgroup_oom *w, unsigned long long *n)
{
  *n = 0;
  if (w->v2)
    {
      char buf[4096];
      while (read (w->fd, buf, sizeof buf) > 0)
        ;
      if (!ar_cg_exists (w->dir, "memory.events"))
        return -1;
      unsigned long long now = oom_kills (w->dir);
      *n = now > w->last ? now - w->last : 0;
      w->last = now;
      return 0;
    }
  uint64_t v;
  if (read (w->fd, &v, sizeof v) != (ssize_t) sizeof v)
    return 0;
  /* v1 also signals the eventfd when the cgroup is removed. */
  if (!ar_cg_exists (w->dir, "memory.oom_control"))
    return -1;
  *n = v;
  return 0;
}

void
ar_cgroup_oom_close (struct ar_cgroup_oom *w)
{
  ar_closep (&w->fd);
  ar_closep (&w->ctl_fd);
  free (w->dir);
  w->dir = NULL;
}
