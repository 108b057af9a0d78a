/* state.json: the runtime-spec container state, as given to hooks on stdin
 * and printed by `agentrun state`. */
#ifndef AR_STATE_H
#define AR_STATE_H

#include <sys/types.h>
#include "error.h"
#include "model.h"

struct ar_state {
  char *oci_version;
  char *id;
  char *status;              /* creating | created | running | stopped | paused */
  pid_t pid;                 /* 0 when none */
  char *bundle;
  struct ar_kv *annotations; size_t n_annotations;
};

/* Parse a state JSON document (e.g. a hook's stdin). Unknown keys are ignored. */
int ar_state_parse (const char *buf, size_t len, struct ar_state *out, ar_error **err);
/* Serialise to a NUL-terminated JSON string (caller frees). */
char *ar_state_to_json (const struct ar_state *st);
void ar_state_clear (struct ar_state *st);

#endif
