/* In-root path resolution and creation on top of openat2(2). The kernel does
 * every lookup against the root fd; we only walk component by component so
 * that missing parts can be created, and splice dangling symlinks ourselves
 * (their targets are then looked up inside the root as well). */
#include "config.h"
#include "pathutil.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define AR_MAX_SYMLINKS 40

int
ar_openat2 (int dirfd, const char *path, int flags, mode_t mode, uint64_t resolve)
{
  struct open_how how = {
    .flags = (uint64_t) (flags | O_CLOEXEC),
    .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
    .resolve = resolve,
  };
  return (int) syscall (SYS_openat2, dirfd, path, &how, sizeof how);
}

int
ar_open_in_root (int root_fd, const char *path, int flags, ar_error **err)
{
  int fd = ar_openat2 (root_fd, path, flags, 0, AR_RESOLVE_ROOT_FLAGS);
  if (fd < 0)
    return ar_err (err, errno, "open `%s` inside the rootfs", path);
  return fd;
}

/* Create name in parent as a directory or an empty file; EEXIST is fine. */
static int
create_one (int parent, const char *name, bool dir)
{
  if (dir)
    return (mkdirat (parent, name, 0755) < 0 && errno != EEXIST) ? -1 : 0;
  int fd = openat (parent, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return errno == EEXIST ? 0 : -1;
  close (fd);
  return 0;
}

/* The component at the head of *todo: its name (heap) and whether it is the last. */
static char *
next_component (const char **todo, bool *last)
{
  const char *p = *todo;
  while (*p == '/')
    p++;
  if (*p == '\0')
    return NULL;
  const char *end = strchrnul (p, '/');
  char *name = strndup (p, (size_t) (end - p));
  if (!name)
    abort ();
  *todo = end;
  while (*end == '/')
    end++;
  *last = *end == '\0';
  return name;
}

int
ar_mk_in_root (int root_fd, const char *path, enum ar_mk_kind kind, ar_error **err)
{
  /* most targets exist (the rootfs's own folders, the host's binds): one
   * lookup of the whole path resolves exactly what the walk below would,
   * component by component, when nothing is missing */
  int whole = ar_openat2 (root_fd, path, O_PATH, 0, AR_RESOLVE_ROOT_FLAGS);
  if (whole >= 0)
    return whole;
  cleanup_free char *todo_buf = xstrdup (path);
  cleanup_free char *done = xstrdup ("");
  const char *todo = todo_buf;
  int links = 0;
  bool last = false;

  for (;;)
    {
      cleanup_free char *name = next_component (&todo, &last);
      if (!name)
        break; /* "/" or only "." components: the root itself */
      bool want_dir = !last || kind == AR_MK_DIR;
      cleanup_free char *next = xasprintf ("%s/%s", done, name);
      int fd = ar_openat2 (root_fd, next, O_PATH | (last ? 0 : O_DIRECTORY), 0, AR_RESOLVE_ROOT_FLAGS);
      if (fd < 0 && errno == ENOENT)
        {
          cleanup_close int parent = ar_openat2 (root_fd, *done ? done : "/", O_PATH | O_DIRECTORY, 0,
                                                 AR_RESOLVE_ROOT_FLAGS);
          if (parent < 0)
            return ar_err (err, errno, "open `%s` inside the rootfs", *done ? done : "/");
          if (create_one (parent, name, want_dir) < 0)
            return ar_err (err, errno, "create `%s` inside the rootfs (for `%s`)", next, path);
          fd = ar_openat2 (root_fd, next, O_PATH | (last ? 0 : O_DIRECTORY), 0, AR_RESOLVE_ROOT_FLAGS);
          if (fd < 0 && errno == ENOENT)
            {
              /* A dangling symlink: follow its target inside the root. */
              char target[PATH_MAX];
              ssize_t n = readlinkat (parent, name, target, sizeof target - 1);
              if (n < 0)
                return ar_err (err, errno, "readlink `%s` inside the rootfs", next);
              target[n] = '\0';
              if (++links > AR_MAX_SYMLINKS)
                return ar_err (err, ELOOP, "resolve `%s` inside the rootfs", path);
              char *spliced = xasprintf ("%s%s", target, todo);
              free (todo_buf);
              todo = todo_buf = spliced;
              if (target[0] == '/')
                {
                  free (done);
                  done = xstrdup ("");
                }
              continue;
            }
        }
      if (fd < 0)
        return ar_err (err, errno, "open `%s` inside the rootfs (for `%s`)", next, path);
      if (last)
        return fd;
      close (fd);
      free (done);
      done = ar_steal_ptr (next);
    }
  int fd = ar_openat2 (root_fd, "/", O_PATH | O_DIRECTORY, 0, AR_RESOLVE_ROOT_FLAGS);
  if (fd < 0)
    return ar_err (err, errno, "open the rootfs");
  return fd;
}

int
ar_mk_parent_in_root (int root_fd, const char *path, char **base, ar_error **err)
{
  cleanup_free char *copy = xstrdup (path);
  size_t len = strlen (copy);
  while (len > 1 && copy[len - 1] == '/')
    copy[--len] = '\0';
  char *slash = strrchr (copy, '/');
  const char *name = slash ? slash + 1 : copy;
  if (*name == '\0' || strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    return ar_err (err, EINVAL, "`%s` does not name a file", path);
  *base = xstrdup (name);
  if (slash)
    *slash = '\0';
  int fd = ar_mk_in_root (root_fd, slash ? copy : "/", AR_MK_DIR, err);
  if (fd < 0)
    {
      free (*base);
      *base = NULL;
    }
  return fd;
}

void
ar_mountinfo_unescape (char *s)
{
  char *w = s;
  for (char *r = s; *r; r++)
    if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7')
      {
        *w++ = (char) (((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
        r += 3;
      }
    else
      *w++ = *r;
  *w = '\0';
}
