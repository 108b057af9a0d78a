/* cgroupfs file access shared by v1 and v2: reads, writes, mkdir -p with a
 * mark on what we made, and removal that waits for dying tasks. */
#include "config.h"
#include "cgroups_internal.h"
#include "kfile.h"
#include "log.h"
#include "strio.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>

/* Set on every directory this runtime created, so that delete removes the
 * parents it made and never a parent an administrator prepared. */
#define MADE_XATTR "user.agentrun.made"

char *
ar_cg_dir (const char *mnt, const char *path)
{
  while (*path == '/')
    path++;
  return *path ? xasprintf ("%s/%s", mnt, path) : xstrdup (mnt);
}

int
ar_cg_write (const char *dir, const char *file, const char *value, ar_error **err)
{
  if (ar_cg_plan_record (dir, file, value))
    return 0;
  cleanup_free char *p = xasprintf ("%s/%s", dir, file);
  if (ar_kfile_write (p, value, strlen (value), err) < 0)
    return ar_err_prefix (err, "cgroup: setting \"%s\"", value);
  return 0;
}

int
ar_cg_writef (ar_error **err, const char *dir, const char *file, const char *fmt, ...)
{
  va_list ap;
  char *v = NULL;
  va_start (ap, fmt);
  int r = vasprintf (&v, fmt, ap);
  va_end (ap);
  if (r < 0)
    abort ();
  r = ar_cg_write (dir, file, v, err);
  free (v);
  return r;
}

int
ar_cg_read (const char *dir, const char *file, char **out, ar_error **err)
{
  cleanup_free char *p = xasprintf ("%s/%s", dir, file);
  cleanup_close int fd = open (p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return ar_err (err, errno, "cgroup: open %s", p);
  size_t len = 0;
  cleanup_free char *buf = NULL;
  /* The largest cgroup files (memory.stat, cgroup.procs of a big tree) are far below this. */
  if (ar_read_all (fd, 64 << 20, &buf, &len) < 0)
    return ar_err (err, errno, "cgroup: read %s", p);
  while (len > 0 && buf[len - 1] == '\n')
    len--;
  buf[len] = '\0';
  *out = ar_steal_ptr (buf);
  return 0;
}

bool
ar_cg_exists (const char *dir, const char *file)
{
  cleanup_free char *p = xasprintf ("%s/%s", dir, file);
  return access (p, F_OK) == 0;
}

bool
ar_cg_v2_has (const char *dir, const char *ctrl)
{
  cleanup_free char *s = NULL;
  if (ar_cg_read (dir, "cgroup.controllers", &s, NULL) < 0)
    return false;
  size_t n = strlen (ctrl);
  for (char *t = s; (t = strstr (t, ctrl)); t += n)
    if ((t == s || t[-1] == ' ') && (t[n] == '\0' || t[n] == ' ' || t[n] == '\n'))
      return true;
  return false;
}

/* A new v1 cpuset starts with no cpus and no mems, and no task may join it
 * then: copy the parent's values down. */
static int
cpuset_inherit (const char *parent, const char *dir, ar_error **err)
{
  static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
  for (size_t i = 0; i < ARRAY_SIZE (files); i++)
    {
      cleanup_free char *cur = NULL, *up = NULL;
      if (ar_cg_read (dir, files[i], &cur, err) < 0)
        return -1;
      if (*cur)
        continue;
      if (ar_cg_read (parent, files[i], &up, err) < 0 || ar_cg_write (dir, files[i], up, err) < 0)
        return -1;
    }
  return 0;
}

static int
mkdir_once (const char *mnt, const char *path, bool cpuset, ar_error **err)
{
  cleanup_free char *cur = xstrdup (mnt);
  cleanup_free char *copy = xstrdup (path);
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c; c = strtok_r (NULL, "/", &save))
    {
      cleanup_free char *parent = cur;
      cur = xasprintf ("%s/%s", parent, c);
      if (mkdir (cur, 0755) == 0)
        {
          /* Marking is best effort: without it delete keeps the parents. */
          if (setxattr (cur, MADE_XATTR, "1", 1, 0) < 0)
            ar_debug ("cgroup: cannot mark %s as ours: %s", cur, strerror (errno));
        }
      else if (errno != EEXIST)
        return ar_err (err, errno, "cgroup: mkdir %s", cur);
      if (cpuset && cpuset_inherit (parent, cur, err) < 0)
        return -1;
    }
  return 0;
}

/* A parent made by another container can vanish when that container is
 * deleted between our mkdir of it and of its child: start again then. */
int
ar_cg_mkdir_path (const char *mnt, const char *path, bool cpuset, ar_error **err)
{
  for (int i = 0;; i++)
    {
      cleanup_error ar_error *e = NULL;
      if (mkdir_once (mnt, path, cpuset, &e) == 0)
        return 0;
      if (e->errnum != ENOENT || i == 3)
        {
          if (err && !*err)
            *err = ar_steal_ptr (e);
          return -1;
        }
    }
}

static void
sleep_ms (long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

/* Children first (a container may have made its own cgroups), then the
 * directory itself; EBUSY means tasks are still leaving, so retry ~2s. */
static int
rmdir_tree (const char *dir, ar_error **err)
{
  DIR *d = opendir (dir);
  if (!d)
    return errno == ENOENT ? 0 : ar_err (err, errno, "cgroup: open directory %s", dir);
  struct dirent *e;
  int ret = 0;
  while (ret == 0 && (e = readdir (d)))
    if (e->d_type == DT_DIR && strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
      {
        cleanup_free char *sub = xasprintf ("%s/%s", dir, e->d_name);
        ret = rmdir_tree (sub, err);
      }
  closedir (d);
  if (ret < 0)
    return -1;
  for (int i = 0;; i++)
    {
      if (rmdir (dir) == 0 || errno == ENOENT)
        return 0;
      if (errno != EBUSY || i >= 200)
        return ar_err (err, errno, "cgroup: rmdir %s", dir);
      sleep_ms (10);
    }
}

int
ar_cg_rmdir_path (const char *mnt, const char *path, ar_error **err)
{
  cleanup_free char *dir = ar_cg_dir (mnt, path);
  if (rmdir_tree (dir, err) < 0)
    return -1;
  /* Ancestors we made, innermost first, while they are empty. */
  for (char *slash = strrchr (dir, '/'); slash && (size_t) (slash - dir) > strlen (mnt); slash = strrchr (dir, '/'))
    {
      *slash = '\0';
      char v[4];
      if (getxattr (dir, MADE_XATTR, v, sizeof v) < 0)
        break;
      if (rmdir (dir) < 0)
        break; /* busy or not empty: another container still uses it */
    }
  return 0;
}
