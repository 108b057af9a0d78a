/* Loading config.json and process.json into the model, with validation.
 * Every error is one line: "<file>: <json.path>: <what is wrong>". */
#ifndef AR_SPEC_H
#define AR_SPEC_H

#include "error.h"
#include "model.h"

#define AR_SPEC_MAX_FILE_SIZE (16 * 1024 * 1024)
#define AR_SPEC_MAX_DEPTH 64

/* Parse and validate a whole config.json held in memory. `label` names the
 * file in messages (e.g. "config.json"). */
int ar_spec_parse (const char *buf, size_t len, const char *label, struct ar_spec **out, ar_error **err);
/* Read, parse and validate a file (bounded size, no FIFOs or devices). */
int ar_spec_load_file (const char *path, struct ar_spec **out, ar_error **err);
void ar_spec_free (struct ar_spec *spec);

/* process.json (for exec): the "process" object of config.json on its own. */
int ar_process_parse (const char *buf, size_t len, const char *label, struct ar_process **out, ar_error **err);
int ar_process_load_file (const char *path, struct ar_process **out, ar_error **err);
void ar_process_free (struct ar_process *p);

/* linux.resources on its own (for `update --resources FILE`): parse `buf`
 * into *out (zeroed by the caller), types and ranges checked as in
 * config.json; errors name `label` and the JSON path. Free with
 * ar_resources_free, also after a failure (out may be partly filled). */
int ar_resources_parse (const char *buf, size_t len, const char *label, struct ar_resources *out, ar_error **err);
void ar_resources_free (struct ar_resources *r);

/* Container ids: non-empty, no '/', no leading '.', at most 1024 bytes, only [A-Za-z0-9_+.-]. */
int ar_validate_id (const char *id, ar_error **err);

/* Names known to the model (for validation and `agentrun features`). */
int ar_capability_from_name (const char *name); /* -1 if unknown */
const char *ar_capability_name (int cap); /* NULL if unknown */
int ar_rlimit_from_name (const char *name); /* "RLIMIT_NOFILE" -> RLIMIT_NOFILE, -1 if unknown */
int ar_signal_from_name (const char *name); /* "KILL", "SIGKILL" or "9"; -1 if unknown */
const char *ar_ns_type_name (enum ar_ns_type t); /* "pid", "network", ... */

#endif
