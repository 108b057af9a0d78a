/* tmpcopyup (see copyup.h). The source is image content, so it is untrusted:
 * every lookup is relative to a directory fd with O_NOFOLLOW, each file is
 * checked after open to be the one stat saw, and nothing blocks on a fifo. */
#include "config.h"
#include "copyup.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct copyup {
  const char *what;
  ar_error **err;
};

static int copy_dir (struct copyup *c, int src, int dst, const char *rel, int depth);

/* Owner, then mode (chown clears setuid/setgid), then times, of name in dst. */
static int
set_meta (struct copyup *c, int dst, const char *name, const struct stat *st, const char *rel)
{
  const struct timespec ts[2] = { st->st_atim, st->st_mtim };
  if (fchownat (dst, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: chown %s to %u:%u", c->what, rel, st->st_uid, st->st_gid);
  if (!S_ISLNK (st->st_mode) && fchmodat (dst, name, st->st_mode & 07777, 0) < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: chmod %s", c->what, rel);
  if (utimensat (dst, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: set the times of %s", c->what, rel);
  return 0;
}

/* Bytes from in to out: copy_file_range, or read/write where the kernel
 * cannot (a source on another filesystem type than tmpfs). */
static int
copy_bytes (int in, int out)
{
  for (;;)
    {
      ssize_t n = copy_file_range (in, NULL, out, NULL, 1 << 30, 0);
      if (n == 0)
        return 0;
      if (n > 0)
        continue;
      if (errno == EINTR)
        continue;
      if (errno != EXDEV && errno != EINVAL && errno != EOPNOTSUPP && errno != ENOSYS)
        return -1;
      break;
    }
  char buf[65536];
  for (;;)
    {
      ssize_t n = read (in, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return (int) n;
      for (ssize_t off = 0; off < n;)
        {
          ssize_t w = write (out, buf + off, (size_t) (n - off));
          if (w < 0 && errno == EINTR)
            continue;
          if (w < 0)
            return -1;
          off += w;
        }
    }
}

static int
copy_file (struct copyup *c, int src, int dst, const char *name, const struct stat *st, const char *rel)
{
  cleanup_close int in = openat (src, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (in < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: open %s", c->what, rel);
  struct stat now;
  if (fstat (in, &now) < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: stat %s", c->what, rel);
  if (!S_ISREG (now.st_mode) || now.st_ino != st->st_ino || now.st_dev != st->st_dev)
    return ar_err (c->err, EAGAIN, "%s: tmpcopyup: %s changed while it was copied", c->what, rel);
  cleanup_close int out = openat (dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: create %s", c->what, rel);
  if (copy_bytes (in, out) < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: copy %s", c->what, rel);
  return set_meta (c, dst, name, st, rel);
}

static int
copy_symlink (struct copyup *c, int src, int dst, const char *name, const struct stat *st, const char *rel)
{
  char target[PATH_MAX];
  ssize_t n = readlinkat (src, name, target, sizeof target);
  if (n < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: readlink %s", c->what, rel);
  if ((size_t) n >= sizeof target)
    return ar_err (c->err, ENAMETOOLONG, "%s: tmpcopyup: readlink %s", c->what, rel);
  target[n] = '\0';
  if (symlinkat (target, dst, name) < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: symlink %s", c->what, rel);
  return set_meta (c, dst, name, st, rel);
}

static int
copy_special (struct copyup *c, int dst, const char *name, const struct stat *st, const char *rel)
{
  if (mknodat (dst, name, (st->st_mode & S_IFMT) | 0600, st->st_rdev) < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: mknod %s", c->what, rel);
  return set_meta (c, dst, name, st, rel);
}

static int
copy_subdir (struct copyup *c, int src, int dst, const char *name, const struct stat *st, const char *rel, int depth)
{
  if (depth >= AR_COPYUP_MAX_DEPTH)
    return ar_err (c->err, ELOOP, "%s: tmpcopyup: %s is nested deeper than %d directories", c->what, rel,
                   AR_COPYUP_MAX_DEPTH);
  if (mkdirat (dst, name, 0700) < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: mkdir %s", c->what, rel);
  cleanup_close int s = openat (src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (s < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: open %s", c->what, rel);
  struct stat now;
  if (fstat (s, &now) < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: stat %s", c->what, rel);
  if (now.st_ino != st->st_ino || now.st_dev != st->st_dev)
    return ar_err (c->err, EAGAIN, "%s: tmpcopyup: %s changed while it was copied", c->what, rel);
  cleanup_close int d = openat (dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (d < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: open the copy of %s", c->what, rel);
  if (copy_dir (c, s, d, rel, depth + 1) < 0)
    return -1;
  /* Last, so a read-only source directory could still be filled. */
  return set_meta (c, dst, name, st, rel);
}

static int
copy_entry (struct copyup *c, int src, int dst, const char *name, const char *parent, int depth)
{
  cleanup_free char *rel = xasprintf ("%s/%s", parent, name);
  struct stat st;
  if (fstatat (src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: stat %s", c->what, rel);
  switch (st.st_mode & S_IFMT)
    {
    case S_IFDIR: return copy_subdir (c, src, dst, name, &st, rel, depth);
    case S_IFREG: return copy_file (c, src, dst, name, &st, rel);
    case S_IFLNK: return copy_symlink (c, src, dst, name, &st, rel);
    case S_IFCHR:
    case S_IFBLK:
    case S_IFIFO:
    case S_IFSOCK: return copy_special (c, dst, name, &st, rel);
    default: return ar_err (c->err, EINVAL, "%s: tmpcopyup: %s has an unknown file type", c->what, rel);
    }
}

static int
copy_dir (struct copyup *c, int src, int dst, const char *rel, int depth)
{
  /* fdopendir takes the fd; give it its own, readable one. */
  int fd = openat (src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return ar_err (c->err, errno, "%s: tmpcopyup: open %s", c->what, *rel ? rel : "/");
  DIR *dir = fdopendir (fd);
  if (!dir)
    {
      int e = errno;
      close (fd);
      return ar_err (c->err, e, "%s: tmpcopyup: read %s", c->what, *rel ? rel : "/");
    }
  int ret = 0;
  struct dirent *de;
  errno = 0;
  while (ret == 0 && (de = readdir (dir)))
    {
      if (strcmp (de->d_name, ".") && strcmp (de->d_name, ".."))
        ret = copy_entry (c, src, dst, de->d_name, rel, depth);
      errno = 0;
    }
  if (ret == 0 && errno)
    ret = ar_err (c->err, errno, "%s: tmpcopyup: read %s", c->what, *rel ? rel : "/");
  closedir (dir);
  return ret;
}

int
ar_copyup (int src_fd, int dst_fd, const char *what, ar_error **err)
{
  struct copyup c = { what, err };
  return copy_dir (&c, src_fd, dst_fd, "", 0);
}
