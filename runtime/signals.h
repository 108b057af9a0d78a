/* Signals for foreground run/exec: the runtime blocks what it forwards,
 * then waits for its child while relaying signals (and a pty, if any). */
#ifndef AR_SIGNALS_H
#define AR_SIGNALS_H

#include <signal.h>
#include <sys/types.h>
#include "error.h"

/* Block every forwardable signal (and SIGCHLD); *old gets the previous mask. */
int ar_signals_block (sigset_t *old, ar_error **err);
/* In a child: back to the default dispositions and an empty mask. */
void ar_signals_reset (void);
/* Wait for pid (our child, pinned by pidfd) to exit, forwarding signals to it
 * and relaying stdio <-> pty master when master >= 0. *status: exit code, or
 * 128+N when killed by signal N. */
int ar_foreground_wait (pid_t pid, int pidfd, int master, int *status, ar_error **err);

#endif
