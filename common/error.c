#include "config.h"
#include "error.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
xasprintf (const char *fmt, ...)
{
  va_list ap;
  char *s;
  va_start (ap, fmt);
  if (vasprintf (&s, fmt, ap) < 0)
    abort ();
  va_end (ap);
  return s;
}

/* The one place an error object is made: msg is handed over. */
static int
set_error (ar_error **err, int errnum, int code, char *msg)
{
  *err = xmalloc0 (sizeof **err);
  (*err)->errnum = errnum;
  (*err)->code = code;
  (*err)->msg = msg;
  return -1;
}

int
ar_err (ar_error **err, int errnum, const char *fmt, ...)
{
  va_list ap;
  char *msg;

  if (!err || *err)
    return -1;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    abort ();
  va_end (ap);
  if (errnum)
    {
      char *full = xasprintf ("%s: %s", msg, strerror (errnum));
      free (msg);
      msg = full;
    }
  return set_error (err, errnum, 0, msg);
}

int
ar_err_coded (ar_error **err, int errnum, int code, const char *fmt, ...)
{
  va_list ap;
  char *msg;

  if (!err || *err)
    return -1;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    abort ();
  va_end (ap);
  return set_error (err, errnum, code, msg);
}

int
ar_err_prefix (ar_error **err, const char *fmt, ...)
{
  va_list ap;
  char *prefix;

  if (!err || !*err)
    return -1;
  va_start (ap, fmt);
  if (vasprintf (&prefix, fmt, ap) < 0)
    abort ();
  va_end (ap);
  char *full = xasprintf ("%s: %s", prefix, (*err)->msg);
  free (prefix);
  free ((*err)->msg);
  (*err)->msg = full;
  return -1;
}

void
ar_error_free (ar_error *e)
{
  if (!e)
    return;
  free (e->msg);
  free (e);
}

void
ar_error_freep (ar_error **e)
{
  ar_error_free (*e);
  *e = NULL;
}
