/* Clocks and RFC 3339 timestamps: see clock.h. */
#include "config.h"
#include "clock.h"

#include <stdint.h>
#include <stdio.h>

/* Days since 1970-01-01 to a proleptic Gregorian date: eras of 400 years
 * (146097 days), the year starting in March so that the leap day is last. */
static void
civil_from_days (int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned) (z - era * 146097); /* [0, 146096] */
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100); /* [0, 365] */
  unsigned mp = (5 * doy + 2) / 153; /* [0, 11] */
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int64_t) yoe + era * 400 + (*m <= 2);
}

void
ar_rfc3339 (const struct timespec *ts, int digits, char buf[AR_RFC3339_LEN])
{
  int64_t secs = (int64_t) ts->tv_sec;
  int64_t days = (secs >= 0 ? secs : secs - 86399) / 86400;
  int64_t rest = secs - days * 86400, y;
  unsigned m, d;
  civil_from_days (days, &y, &m, &d);
  int n = snprintf (buf, AR_RFC3339_LEN, "%04lld-%02u-%02uT%02u:%02u:%02u", (long long) y, m, d,
                    (unsigned) (rest / 3600), (unsigned) (rest / 60 % 60), (unsigned) (rest % 60));
  if (n < 0 || n >= AR_RFC3339_LEN - 12)
    return;
  if (digits > 9)
    digits = 9;
  if (digits > 0)
    {
      long frac = ts->tv_nsec;
      for (int i = digits; i < 9; i++)
        frac /= 10;
      n += snprintf (buf + n, (size_t) (AR_RFC3339_LEN - n), ".%0*ld", digits, frac);
    }
  snprintf (buf + n, (size_t) (AR_RFC3339_LEN - n), "Z");
}

void
ar_rfc3339_now_buf (int digits, char buf[AR_RFC3339_LEN])
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  ar_rfc3339 (&ts, digits, buf);
}

long long
ar_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
