/* The loopback interface of the calling process's network namespace. */
#ifndef AR_LOOPBACK_H
#define AR_LOOPBACK_H

#include <stdbool.h>
#include "error.h"

/* Bring lo up (a new network namespace starts with it down, so 127.0.0.1
 * is unreachable). *was_down (may be NULL) tells whether this call did it. */
int ar_loopback_up (bool *was_down, ar_error **err);

#endif
