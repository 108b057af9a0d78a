/* Byte helpers (strio.h). */
#include "config.h"
#include "strio.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

size_t
ar_json_escape (char *buf, size_t cap, const char *s)
{
  size_t n = 0;
  if (cap == 0)
    return 0;
  /* 7: the longest escape (\u00XX) plus the final NUL. */
  for (; *s && n + 7 <= cap; s++)
    {
      unsigned char c = (unsigned char) *s;
      if (c == '"' || c == '\\')
        {
          buf[n++] = '\\';
          buf[n++] = (char) c;
        }
      else if (c == '\n')
        {
          buf[n++] = '\\';
          buf[n++] = 'n';
        }
      else if (c < 0x20)
        n += (size_t) snprintf (buf + n, cap - n, "\\u%04x", c);
      else
        buf[n++] = (char) c;
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
