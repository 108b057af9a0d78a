/* The trust store: policy files (--profile, --settings) that lie in a
 * folder a sandbox can write are pinned to the content the person last
 * approved, so that a run cannot rewrite the policy of the next one.
 * One entry per file, named by the SHA-256 of its resolved path, in
 * $XDG_CONFIG_HOME/agentrun/trust/ (else ~/.config/agentrun/trust/) of the
 * invoking user, written as that user, 0600: HEX holds the trusted bytes
 * (so that a change can be shown as a diff), HEX.path the file's path.
 * The sandbox also keeps there, under the key "git folders below ROOT",
 * the git folders it protected below each writable folder ROOT. */
#ifndef AR_TRUST_H
#define AR_TRUST_H

#include <stddef.h>
#include <sys/types.h>
#include "error.h"

/* The store folder for a user whose home is home (caller frees; NULL when
 * neither XDG_CONFIG_HOME nor a home is known). */
char *ar_trust_store_dir (const char *home);

/* The first use of path records text; a later use must find the same
 * bytes, else an error saying how to approve them. */
int ar_trust_check (const char *store, const char *path, const char *text, size_t len, uid_t uid, gid_t gid,
                    ar_error **err);

/* The trusted bytes of path: 0, or -1 with errno (ENOENT: none yet). */
int ar_trust_read (const char *store, const char *path, char **text, size_t *len);
/* Record text as the trusted content of path, as uid/gid. */
int ar_trust_approve (const char *store, const char *path, const char *text, size_t len, uid_t uid, gid_t gid,
                      ar_error **err);

#endif
