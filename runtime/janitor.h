/* A process that outlives us to undo what we made when we die without
 * undoing it ourselves (SIGKILL): `sandbox` removes its container state and
 * private folder itself, and the janitor only when it cannot. */
#ifndef AR_JANITOR_H
#define AR_JANITOR_H

#include <sys/types.h>
#include "error.h"

struct ar_janitor {
  int fd; /* our end of its pipe: its EOF without a word is our death */
  pid_t pid;
};

/* Fork it, in a session of its own, holding no file of ours; undo(data)
 * runs in it (on its copy of our memory) if we die first. */
int ar_janitor_start (struct ar_janitor *j, void (*undo) (void *), void *data, ar_error **err);
/* We undid it all ourselves: it goes without doing anything. */
void ar_janitor_dismiss (struct ar_janitor *j);

#endif
