/* Byte helpers (strio.h). */
#include "config.h"
#include "strio.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int
ar_write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t w = write (fd, p, len);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return -1;
      if (w == 0)
        {
          errno = EIO;
          return -1;
        }
      p += w;
      len -= (size_t) w;
    }
  return 0;
}

/* The length of the valid UTF-8 sequence at p (2 to 4), or 0: no overlong
 * forms, no UTF-16 surrogates, nothing past U+10FFFF. */
static size_t
utf8_len (const unsigned char *p)
{
  unsigned char lo = 0x80, hi = 0xbf;
  size_t n;
  if (p[0] >= 0xc2 && p[0] <= 0xdf)
    n = 2;
  else if (p[0] >= 0xe0 && p[0] <= 0xef)
    {
      n = 3;
      lo = p[0] == 0xe0 ? 0xa0 : 0x80;
      hi = p[0] == 0xed ? 0x9f : 0xbf;
    }
  else if (p[0] >= 0xf0 && p[0] <= 0xf4)
    {
      n = 4;
      lo = p[0] == 0xf0 ? 0x90 : 0x80;
      hi = p[0] == 0xf4 ? 0x8f : 0xbf;
    }
  else
    return 0;
  if (p[1] < lo || p[1] > hi)
    return 0;
  for (size_t i = 2; i < n; i++)
    if (p[i] < 0x80 || p[i] > 0xbf)
      return 0;
  return n;
}

void
ar_hex (const void *data, size_t n, char *out)
{
  static const char digits[] = "0123456789abcdef";
  const unsigned char *b = data;
  for (size_t i = 0; i < n; i++)
    {
      out[2 * i] = digits[b[i] >> 4];
      out[2 * i + 1] = digits[b[i] & 0xf];
    }
  out[2 * n] = '\0';
}

size_t
ar_json_escape (char *buf, size_t cap, const char *s)
{
  const unsigned char *p = (const unsigned char *) s;
  size_t n = 0;
  if (cap == 0)
    return 0;
  /* 7: the longest escape (\u00XX) plus the final NUL. */
  while (*p && n + 7 <= cap)
    {
      size_t u = *p >= 0x80 ? utf8_len (p) : 0;
      if (u)
        {
          memcpy (buf + n, p, u);
          n += u;
          p += u;
          continue;
        }
      if (*p == '"' || *p == '\\')
        {
          buf[n++] = '\\';
          buf[n++] = (char) *p;
        }
      else if (*p == '\n')
        {
          buf[n++] = '\\';
          buf[n++] = 'n';
        }
      else if (*p < 0x20 || *p >= 0x7f)
        n += (size_t) snprintf (buf + n, cap - n, "\\u%04x", *p);
      else
        buf[n++] = (char) *p;
      p++;
    }
  buf[n] = '\0';
  return n;
}

int
ar_read_all (int fd, size_t max, char **out, size_t *len)
{
  size_t cap = 4096, n = 0;
  char *buf = xmalloc0 (cap);
  int e = 0;
  for (;;)
    {
      if (n > max)
        {
          e = EFBIG;
          break;
        }
      if (n + 1 == cap)
        buf = xrealloc (buf, cap *= 2);
      ssize_t r = read (fd, buf + n, cap - n - 1);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          e = errno;
          break;
        }
      if (r == 0)
        break;
      n += (size_t) r;
    }
  if (e)
    {
      free (buf);
      errno = e;
      return -1;
    }
  buf[n] = '\0';
  *out = buf;
  if (len)
    *len = n;
  return 0;
}

int
ar_read_regular (int fd, const char *what, size_t max, bool fifo_ok, char **out, size_t *len, ar_error **err)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return ar_err (err, errno, "stat %s", what);
  /* a FIFO (exec -p <(...)) is read to its end, bounded all the same; it
   * was opened O_NONBLOCK so that opening it could not hang */
  if (fifo_ok && S_ISFIFO (st.st_mode) && fcntl (fd, F_SETFL, 0) < 0)
    return ar_err (err, errno, "fcntl %s", what);
  if (!S_ISREG (st.st_mode) && !(fifo_ok && S_ISFIFO (st.st_mode)))
    return ar_err (err, 0, "%s is not a regular file", what);
  if (st.st_size > 0 && (unsigned long long) st.st_size > max)
    return ar_err (err, 0, "%s is %lld bytes, larger than the %zu byte limit", what, (long long) st.st_size, max);
  if (ar_read_all (fd, max, out, len) < 0)
    return errno == EFBIG ? ar_err (err, 0, "%s grew past the %zu byte limit", what, max)
                          : ar_err (err, errno, "read %s", what);
  return 0;
}

/* Close lo..hi: close_range past the preserved fds, one by one among them
 * (only the runtime's own, close-on-exec, go). */
static int
close_span (unsigned int lo, unsigned int hi, unsigned int pend, unsigned int scan_end)
{
  for (; lo <= hi && lo < pend; lo++)
    {
      int flags;
      if (lo >= scan_end)
        {
          lo = pend;
          break;
        }
      if ((flags = fcntl ((int) lo, F_GETFD)) >= 0 && (flags & FD_CLOEXEC) && close ((int) lo) < 0 && errno != EINTR)
        return -1;
    }
  if (lo > hi)
    return 0;
  return (int) syscall (SYS_close_range, lo, hi, 0);
}

static int
int_cmp (const void *a, const void *b)
{
  int x = *(const int *) a, y = *(const int *) b;
  return (x > y) - (x < y);
}

int
ar_close_fds_except (int *keep, size_t n, int preserve)
{
  unsigned int pend = 3 + (unsigned int) (preserve > 0 ? preserve : 0), scan_end = pend;
  struct rlimit rl;
  /* no fd can be made at or past the limit: no need to look there */
  if (pend > 3 && getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < scan_end)
    scan_end = (unsigned int) rl.rlim_cur;
  if (n)
    qsort (keep, n, sizeof *keep, int_cmp);
  unsigned int from = 3;
  for (size_t i = 0; i < n; i++)
    {
      if (keep[i] < 0 || (unsigned int) keep[i] < from)
        continue;
      if ((unsigned int) keep[i] > from && close_span (from, (unsigned int) keep[i] - 1, pend, scan_end) < 0)
        return -1;
      from = (unsigned int) keep[i] + 1;
    }
  return close_span (from, ~0U, pend, scan_end);
}
