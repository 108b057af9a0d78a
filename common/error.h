/* An error object threaded through calls: a function that fails fills *err
 * and returns -1; the caller adds context or reports it. */
#ifndef AR_ERROR_H
#define AR_ERROR_H

#include <stdarg.h>

typedef struct ar_error {
  int errnum; /* errno of the failing call, 0 when not a system error */
  int code; /* which step failed, for a caller that acts on it (the failing layer's values,
                   e.g. process.h's AR_STEP_*); 0 when none was said */
  char *msg; /* one line, including strerror(errnum) when set by ar_err */
} ar_error;

/* Set *err (if err is not NULL and *err is empty) and return -1.
 * With errnum != 0, ": <strerror(errnum)>" is appended. */
int ar_err (ar_error **err, int errnum, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

/* As ar_err, for a message that already says in its own words what errnum
 * means (runc's, which clients match): errnum and code are recorded and
 * nothing is appended. */
int ar_err_coded (ar_error **err, int errnum, int code, const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));

/* Prefix an existing error's message with more context ("create: ..."). */
int ar_err_prefix (ar_error **err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

void ar_error_free (ar_error *e);
void ar_error_freep (ar_error **e);

#define cleanup_error __attribute__ ((cleanup (ar_error_freep)))

#endif
