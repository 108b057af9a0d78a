/* Small helpers shared by every folder: cleanup attributes and checked
 * allocation. Header-only so netproxy/ can use it without the container library. */
#ifndef AR_UTIL_H
#define AR_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void
ar_freep (void *p)
{
  free (*(void **) p);
}
static inline void
ar_closep (int *fd)
{
  if (*fd >= 0)
    {
      int saved = errno;
      close (*fd);
      errno = saved;
    }
  *fd = -1;
}
static inline void
ar_fclosep (FILE **f)
{
  if (*f)
    fclose (*f);
  *f = NULL;
}

#define cleanup_free __attribute__ ((cleanup (ar_freep)))
#define cleanup_close __attribute__ ((cleanup (ar_closep)))
#define cleanup_fclose __attribute__ ((cleanup (ar_fclosep)))

/* Hand ownership out of a cleanup variable. */
#define ar_steal_ptr(p)                                                                                                \
  ({                                                                                                                   \
    __typeof__ (p) _t = (p);                                                                                           \
    (p) = NULL;                                                                                                        \
    _t;                                                                                                                \
  })
#define ar_steal_fd(fd)                                                                                                \
  ({                                                                                                                   \
    int _t = (fd);                                                                                                     \
    (fd) = -1;                                                                                                         \
    _t;                                                                                                                \
  })

#define ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))

/* Allocation failure is not an error we can report cleanly: abort. */
static inline void *
xmalloc0 (size_t n)
{
  void *p = calloc (1, n ? n : 1);
  if (!p)
    abort ();
  return p;
}
static inline void *
xrealloc (void *p, size_t n)
{
  p = realloc (p, n ? n : 1);
  if (!p)
    abort ();
  return p;
}
static inline char *
xstrdup (const char *s)
{
  if (!s)
    return NULL;
  char *r = strdup (s);
  if (!r)
    abort ();
  return r;
}
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

#endif
