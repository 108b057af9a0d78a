/* Generating config.json text: runc's defaults (`agentrun spec`), rootless
 * variant, and the pieces a profile generator (`spec --agent`) can reuse.
 * The builders write "key": value pairs into an already open map. */
#ifndef AR_GENERATE_H
#define AR_GENERATE_H

#include <stdbool.h>
#include <stdint.h>
#include "error.h"
#include "jsongen.h"

struct ar_gen_opts {
  bool rootless; /* user namespace mapping host_uid/gid to 0, no network ns, sysfs bind */
  uint32_t host_uid, host_gid; /* for the rootless mappings (callers pass geteuid/getegid) */
  const char *hostname; /* NULL: "agentrun" */
};

/* The parts of the default config. */
extern const char *const ar_default_masked_paths[];
extern const char *const ar_default_readonly_paths[];

/* The whole default config.json into *out (caller frees). */
int ar_generate_default (const struct ar_gen_opts *o, char **out, ar_error **err);

/* Create <bundle>/config.json holding text; fails (EEXIST) if it exists,
 * never following a symlink there. */
int ar_write_new_config (const char *bundle, const char *text, ar_error **err);

#endif
