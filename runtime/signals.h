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
/* Pipes standing in for the caller's terminals when the container has no
 * pty (-1: none): our stdin is copied into `in` (which the wait closes at
 * the end of our stdin), `out` and `err` to our stdout and stderr. */
struct ar_fg_pipes {
  int in, out, err;
};

/* What a caller (sandbox) adds to the wait: one more fd to watch, a look
 * at each signal after it was forwarded, and a deadline. Any may be unset. */
struct ar_fg_ops {
  struct ar_fg_pipes *pipes; /* NULL: none */
  int fd; /* -1: none */
  void (*readable) (void *data); /* fd has input */
  void (*signalled) (void *data, int signo);
  long long (*deadline) (void *data); /* CLOCK_MONOTONIC ms; 0: none */
  void (*expired) (void *data); /* the deadline passed */
  void *data;
  /* Non-NULL: once our pid 1 has told the command's status, every other
   * process of the namespace killed and reaped (pid1.h), *said_end is set
   * and the wait returns at once with the command's status, the init not
   * reaped (it is exiting). */
  bool *said_end;
  /* Non-NULL: set to the init's pidfd before the wait begins (ours: valid
   * until the wait returns). */
  int *init_pidfd;
  /* Non-NULL: set to an O_PATH fd of the container's / as its processes
   * see it (ours, the same way), to look at its mounts while the init
   * lives: once it is gone the namespace is torn down, and the mounts seen
   * from there with it. */
  int *root_fd;
};

/* Wait for pid (our child, pinned by pidfd) to exit, forwarding signals to it
 * and relaying stdio <-> pty master when master >= 0. With init_sock >= 0
 * (the container's pid 1 is ours, pid1.h), a stop of the command stops us
 * too, the terminal given back, and our SIGCONT resumes it. *status: exit
 * code, or 128+N when killed by signal N. ops may be NULL. */
int ar_foreground_wait (pid_t pid, int pidfd, int master, int init_sock, const struct ar_fg_ops *ops, int *status,
                        ar_error **err);

#endif
