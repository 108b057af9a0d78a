/* Signals for foreground run/exec: the runtime blocks what it forwards,
 * then waits for its child while relaying signals (and a pty, if any). */
#ifndef AR_SIGNALS_H
#define AR_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>
#include "error.h"

/* Block every forwardable signal (and SIGCHLD); *old gets the previous mask. */
int ar_signals_block (sigset_t *old, ar_error **err);
/* In a child: back to the default dispositions and an empty mask. */
void ar_signals_reset (void);
/* What a caller (sandbox) adds to the wait: one more fd to watch, a look
 * at each signal after it was forwarded, and a deadline. Any may be unset. */
struct ar_fg_ops {
  int fd;                                        /* -1: none */
  void (*readable) (void *data);                 /* fd has input */
  void (*signalled) (void *data, int signo);
  long long (*deadline) (void *data);            /* CLOCK_MONOTONIC ms; 0: none */
  void (*expired) (void *data);                  /* the deadline passed */
  void *data;
};

/* Wait for pid (our child, pinned by pidfd) to exit, forwarding signals to it
 * and relaying stdio <-> pty master when master >= 0. *status: exit code, or
 * 128+N when killed by signal N. ops may be NULL. */
int ar_foreground_wait (pid_t pid, int pidfd, int master, const struct ar_fg_ops *ops, int *status, ar_error **err);

#endif
