/* A process that outlives us to undo what we made when we die without
 * undoing it ourselves (SIGKILL), or to finish the undoing after we return:
 * `sandbox` removes what a user sees itself, and hands over the container's
 * removal, which waits for its pid 1's exit, or leaves it all to the janitor
 * when it cannot. */
#ifndef AR_JANITOR_H
#define AR_JANITOR_H

#include <sys/types.h>
#include "error.h"

struct ar_janitor {
  int fd; /* our end of its pipe: its EOF without a word is our death */
  pid_t pid;
};

/* A word handed over fits one atomic pipe write (PIPE_BUF is 4096). */
#define AR_JANITOR_WORD_MAX 4000

struct ar_janitor_ops {
  void (*undo) (void *data); /* after our death: everything */
  void (*finish) (void *data, const char *word); /* handed over: what is left once we return */
  void *data;
};

/* Fork it, in a session of its own, holding no file of ours but keep_fd
 * (-1: none), in /; its ops run in it, on its copy of our memory at this
 * call, and name what they remove by absolute paths. keep_fd is closed
 * only when it goes: a last close that is slow (an inotify instance's
 * waits for an RCU grace period, ~10 ms) is then not ours. */
int ar_janitor_start (struct ar_janitor *j, const struct ar_janitor_ops *ops, int keep_fd, ar_error **err);
/* We undid it all ourselves: it goes without doing anything. */
void ar_janitor_dismiss (struct ar_janitor *j);
/* We return before all is undone: it runs ops->finish(data, word) and
 * goes, while we go on (a removal that waits for the kernel need not make
 * us wait); word says what is left, as its copy of our memory may not know
 * it (made after its start). */
void ar_janitor_hand_over (struct ar_janitor *j, const char *word);

#endif
