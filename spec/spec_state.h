/* state.json: the runtime-spec container state, as given to hooks on stdin
 * and printed by `agentrun state`. */
#ifndef AR_STATE_H
#define AR_STATE_H

#include <sys/types.h>
#include <yajl/yajl_tree.h>
#include "error.h"
#include "model.h"

struct ar_state {
  char *oci_version;
  char *id;
  char *status; /* creating | created | running | stopped | paused */
  pid_t pid; /* 0 when none */
  char *bundle;
  struct ar_kv *annotations;
  size_t n_annotations;
};

/* The one reader of a state document, the runtime-spec's (a hook's stdin)
 * and the runtime's own state.json (which holds more keys): bounded as
 * config.json is, the fields above into *out, unknown keys ignored; with
 * tree, the parsed document too, for the caller's own keys (the caller
 * frees it). WHAT names the document in errors. */
int ar_state_parse_tree (const char *buf, size_t len, const char *what, struct ar_state *out, yajl_val *tree,
                         ar_error **err);
/* The same for a hook's state ("state" in errors), without the tree. */
int ar_state_parse (const char *buf, size_t len, struct ar_state *out, ar_error **err);
/* A copy of the string member KEY of ROOT, or NULL. */
char *ar_state_str (yajl_val root, const char *key);
/* Serialise to a NUL-terminated JSON string (caller frees). */
char *ar_state_to_json (const struct ar_state *st);
void ar_state_clear (struct ar_state *st);

#endif
