/* Time for the runtime and the network tools: a monotonic clock in
 * milliseconds for deadlines, and UTC timestamps as RFC 3339 text
 * ("2026-12-01T14:45:00.123456789Z") for state.json, log lines and audit
 * records. The latter come from calendar arithmetic alone: gmtime_r would
 * first load /etc/localtime (tzset), an open, a read and a parse on every
 * start, for a zone it does not use. */
#ifndef AR_CLOCK_H
#define AR_CLOCK_H

#include <time.h>

#define AR_RFC3339_LEN 32 /* room for the longest, with its NUL */

/* ts in UTC with `digits` (0 to 9) fractional digits. */
void ar_rfc3339 (const struct timespec *ts, int digits, char buf[AR_RFC3339_LEN]);
/* The same for CLOCK_REALTIME now. */
void ar_rfc3339_now_buf (int digits, char buf[AR_RFC3339_LEN]);
/* CLOCK_MONOTONIC in milliseconds. */
long long ar_now_ms (void);

#endif
