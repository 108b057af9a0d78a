/* CVE-2019-5736: a container process that can open /proc/<runtime pid>/exe
 * for writing could overwrite the host's agentrun binary. The container
 * library's create, run and exec first re-execute the process from a sealed
 * memfd copy (container.c, exec.c), so /proc/self/exe is an unwritable
 * anonymous file. */
#ifndef AR_SELFEXE_H
#define AR_SELFEXE_H

#include <stdbool.h>
#include <sys/types.h>
#include "error.h"

/* Returns 0 when already running sealed; otherwise re-executes (and only
 * returns -1 on failure). */
int ar_selfexe_ensure_sealed (ar_error **err);

/* `sandbox` and `check`: as ar_selfexe_ensure_sealed, unless a process
 * running as uid cannot open this binary for writing at all. That
 * holds for what they run: one uid and gid in a user namespace that
 * maps only those, no capabilities, no_new_privs; so only the binary's
 * owner and mode bits (and an ACL) decide, and a root-owned 0755 binary
 * needs no copy. Anything else (owned by the agent's uid, group- or
 * other-writable, an ACL) is run from the sealed copy. Bundles given to
 * create/run/exec can ask for any uid and capability: they always seal. */
int ar_selfexe_seal_unless_unwritable (uid_t uid, ar_error **err);

/* What ar_selfexe_seal_unless_unwritable would leave as it is: true when
 * running sealed, or when uid could not open the binary for writing. */
bool ar_selfexe_safe_for (uid_t uid);

/* The path of this program's file (caller frees; NULL with errno): the one
 * re-executed from when running from the sealed copy, whose own
 * /proc/self/exe names no file (helpers next to it are found from here). */
char *ar_selfexe_path (void);

#endif
