/* Single-write helpers for procfs and cgroupfs control files (kfile.h). */
#include "config.h"
#include "kfile.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
ar_kfile_write (const char *path, const char *data, size_t len, ar_error **err)
{
  cleanup_close int fd = open (path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return ar_err (err, errno, "open %s", path);
  ssize_t n = write (fd, data, len);
  if (n < 0)
    return ar_err (err, errno, "write %s", path);
  if ((size_t) n != len)
    return ar_err (err, EIO, "write %s: short write (%zd of %zu bytes)", path, n, len);
  return 0;
}

int
ar_kfile_write_proc (pid_t pid, const char *name, const char *data, ar_error **err)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, name);
  return ar_kfile_write (path, data, strlen (data), err);
}

int
ar_kfile_write_idmap (pid_t pid, const char *name, const struct ar_idmap *m, size_t n, ar_error **err)
{
  /* A line is at most 3 * 10 digits, 2 spaces and a newline. */
  size_t cap = n * 40 + 1, len = 0;
  cleanup_free char *buf = xmalloc0 (cap);
  for (size_t i = 0; i < n; i++)
    len += (size_t) snprintf (buf + len, cap - len, "%u %u %u\n", m[i].container_id, m[i].host_id, m[i].size);
  return ar_kfile_write_proc (pid, name, buf, err);
}
