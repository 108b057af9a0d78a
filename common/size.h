/* Byte counts as people and runc write them: digits, then an optional binary
 * multiple (k, m, g or t, any case; an "i" and a "b" may follow: 512m, 1GiB,
 * 4096b). One grammar for every size option; what a caller allows beyond it
 * (zero, -1 for "none", a minimum) is the caller's rule. */
#ifndef AGENTRUN_SIZE_H
#define AGENTRUN_SIZE_H

#include <stdint.h>

enum ar_size_status {
  AR_SIZE_OK,
  AR_SIZE_BAD, /* no digits first, trailing bytes, or more than int64 holds */
  AR_SIZE_SUFFIX, /* digits, then a letter that is no multiple */
};

enum ar_size_status ar_parse_size (const char *s, int64_t *out);

#endif
