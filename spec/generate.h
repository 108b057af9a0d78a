/* Generating config.json text: runc's defaults (`agentrun spec`), rootless
 * variant, and the pieces a profile generator (`spec --agent`) can reuse.
 * The builders write "key": value pairs into an already open yajl map. */
#ifndef AR_GENERATE_H
#define AR_GENERATE_H

#include <stdbool.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>

#include "error.h"

struct ar_gen_opts {
  bool rootless;               /* user namespace mapping host_uid/gid to 0, no network ns, sysfs bind */
  uint32_t host_uid, host_gid; /* for the rootless mappings (callers pass geteuid/getegid) */
  const char *hostname;        /* NULL: "agentrun" */
};

/* A pretty (tab-indented) generator; aborts on allocation failure. */
yajl_gen ar_gen_new (void);
/* The text generated so far as a NUL-terminated string (caller frees); frees g. */
char *ar_gen_finish (yajl_gen g);

void ar_gen_str (yajl_gen g, const char *s);
void ar_gen_key_str (yajl_gen g, const char *key, const char *value);
void ar_gen_key_int (yajl_gen g, const char *key, long long value);
void ar_gen_key_bool (yajl_gen g, const char *key, bool value);
/* "key": [ v[0], ... ] for a NULL-terminated v. */
void ar_gen_key_strv (yajl_gen g, const char *key, const char *const *v);

/* The parts of the default config. */
void ar_gen_default_process (yajl_gen g, const struct ar_gen_opts *o);   /* "process": {...} */
void ar_gen_default_mounts (yajl_gen g, const struct ar_gen_opts *o);    /* "mounts": [...] */
void ar_gen_default_linux (yajl_gen g, const struct ar_gen_opts *o);     /* "linux": {...} */
extern const char *const ar_default_masked_paths[];
extern const char *const ar_default_readonly_paths[];
extern const char *const ar_default_caps[];

/* The whole default config.json (caller frees). */
char *ar_generate_default (const struct ar_gen_opts *o);

/* Create <bundle>/config.json holding text; fails (EEXIST) if it exists,
 * never following a symlink there. */
int ar_write_new_config (const char *bundle, const char *text, ar_error **err);

#endif
