/* Small byte helpers shared by the runtime and the network proxy: a write
 * loop that survives partial writes and EINTR, JSON string escaping, and
 * bounded whole-file reads. */
#ifndef AR_STRIO_H
#define AR_STRIO_H

#include <stdbool.h>
#include <stddef.h>
#include "error.h"

/* Write all LEN bytes of BUF to FD. 0, or -1 with errno (EIO when the
 * kernel took nothing without saying why). */
int ar_write_all (int fd, const void *buf, size_t len);

/* S as the body of a JSON string (no quotes) into BUF of CAP bytes, always
 * NUL-terminated. Valid UTF-8 is kept as it is; controls, DEL and each byte
 * that is not part of valid UTF-8 become \u00XX, so the text is valid JSON
 * (and valid UTF-8) whatever S holds. Cut short (at a character boundary
 * of the escaped form) when CAP is too small. Returns the length written. CAP = 6 * strlen + 1
 * always fits. */
size_t ar_json_escape (char *buf, size_t cap, const char *s);

/* The N bytes at DATA as 2N lowercase hex digits and a NUL, into OUT (2N+1
 * bytes): ids, tokens and hashes made readable. */
void ar_hex (const void *data, size_t n, char *out);

/* Read FD to its end into a new NUL-terminated buffer (*out; *len, if not
 * NULL, without the NUL). 0, or -1 with errno: EFBIG past MAX bytes (the
 * buffer never grows much beyond MAX, whatever FD is). */
int ar_read_all (int fd, size_t max, char **out, size_t *len);

/* The one bounded reader of a whole file the caller opened (with O_NONBLOCK
 * | O_NOCTTY, so that a FIFO or a device cannot hang the open): FD must be a
 * regular file (or, with FIFO_OK, a FIFO, read to its end) of at most MAX
 * bytes, or grow no larger while read. *out as ar_read_all. WHAT names it in
 * the errors: "WHAT is not a regular file", "WHAT is N bytes, larger than
 * the MAX byte limit", "read WHAT: ...". */
int ar_read_regular (int fd, const char *what, size_t max, bool fifo_ok, char **out, size_t *len, ar_error **err);

/* Close every fd from 3 on but the N in KEEP (any order, -1s ignored;
 * sorted in place) and, among 3 .. 3+PRESERVE-1, those without FD_CLOEXEC:
 * the caller's own, passed on to a container on purpose (whatever the
 * runtime opens is close-on-exec; numbers in that range above the
 * RLIMIT_NOFILE now in force are left alone). 0, or -1 with errno. */
int ar_close_fds_except (int *keep, size_t n, int preserve);

#endif
