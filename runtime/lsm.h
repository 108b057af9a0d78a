/* Linux security module labels (AppArmor, SELinux): agentrun applies none,
 * so a config that asks for one is refused rather than run with less. */
#ifndef AR_LSM_H
#define AR_LSM_H

#include "error.h"
#include "model.h"

/* process.apparmorProfile, process.selinuxLabel, linux.mountLabel: an empty
 * string counts as absent; AppArmor's "unconfined" asks for nothing and is
 * accepted. Anything else fails with "<label>: <json.path>: ...". */
int ar_lsm_check (const struct ar_spec *s, const char *label, ar_error **err);
/* The process part alone; prefix is the JSON path of the process object
 * with a trailing dot ("process." in config.json, "" in process.json). */
int ar_lsm_check_process (const struct ar_process *p, const char *label, const char *prefix, ar_error **err);

#endif
