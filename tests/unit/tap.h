/* A small TAP producer for the unit tests: each check prints one "ok N" or
 * "not ok N" line, done_testing() prints the plan and gives the exit status.
 * Header-only, so each test program is one file and nothing is installed. */
#ifndef AR_TAP_H
#define AR_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define TAP_UNUSED __attribute__ ((unused))

/* A result whose name holds "# TODO" is a known gap: printed, not failed. */
static TAP_UNUSED bool __attribute__ ((format (printf, 2, 3))) ok (bool cond, const char *fmt, ...)
{
  char name[1024];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (name, sizeof name, fmt, ap);
  va_end (ap);
  printf ("%sok %d - %s\n", cond ? "" : "not ", ++tap_n, name);
  if (!cond && !strstr (name, "# TODO"))
    tap_failed++;
  fflush (stdout);
  return cond;
}

#define is_int(got, want, ...) tap_is_int ((long long) (got), (long long) (want), __VA_ARGS__)
static TAP_UNUSED bool __attribute__ ((format (printf, 3, 4)))
tap_is_int (long long got, long long want, const char *fmt, ...)
{
  char name[512];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (name, sizeof name, fmt, ap);
  va_end (ap);
  if (ok (got == want, "%s", name))
    return true;
  printf ("#   got %lld, want %lld\n", got, want);
  return false;
}

static TAP_UNUSED bool __attribute__ ((format (printf, 3, 4)))
is_str (const char *got, const char *want, const char *fmt, ...)
{
  char name[512];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (name, sizeof name, fmt, ap);
  va_end (ap);
  bool same = got && want ? strcmp (got, want) == 0 : got == want;
  if (ok (same, "%s", name))
    return true;
  printf ("#   got \"%s\", want \"%s\"\n", got ? got : "(null)", want ? want : "(null)");
  return false;
}

static TAP_UNUSED void __attribute__ ((format (printf, 1, 2))) diag (const char *fmt, ...)
{
  va_list ap;
  fputs ("# ", stdout);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
}

static TAP_UNUSED int
done_testing (void)
{
  printf ("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}

#endif
