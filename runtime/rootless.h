/* Rootless: running agentrun as an ordinary user. Deciding whether we are
 * rootless, where the state goes, writing a new user namespace's id maps
 * (directly for the user's own single id, through newuidmap/newgidmap for
 * subordinate ranges from /etc/subuid and /etc/subgid), and explaining why
 * a user namespace could not be made. */
#ifndef AR_ROOTLESS_H
#define AR_ROOTLESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "error.h"
#include "model.h"

/* mode is --rootless: "true", "false" or "auto". auto: rootless when the
 * effective uid is not 0, or when it is 0 only inside a user namespace
 * that does not map it to the initial namespace's root (e.g. podman's). */
bool ar_rootless_detect (const char *mode);

/* The default state root: /run/agentrun when not rootless, else
 * $XDG_RUNTIME_DIR/agentrun. NULL when rootless and XDG_RUNTIME_DIR is unset
 * or not a writable folder, with *why saying which (never /run). */
const char *ar_rootless_default_root (bool rootless, char *buf, size_t n, char *why, size_t why_n);

/* Before any process exists: can the maps of a new user namespace be
 * written by us? Single-id maps of our own uid/gid need nothing; anything
 * else needs CAP_SETUID/CAP_SETGID (root in our namespace) or newuidmap/
 * newgidmap on PATH and ranges that /etc/subuid and /etc/subgid grant. */
int ar_rootless_check_idmaps (const struct ar_linux *lnx, ar_error **err);

/* Write pid's uid_map, setgroups and gid_map as the rootless user. */
int ar_rootless_write_idmaps (pid_t pid, const struct ar_linux *lnx, ar_error **err);

/* Why creating a user namespace failed with errnum (from clone/unshare), as
 * a phrase naming the likely cause: the sysctls, AppArmor, nesting. "" when
 * there is nothing to add. Static storage. */
const char *ar_rootless_userns_hint (int errnum);

/* The first absolute PATH entry (a default PATH when unset) holding an
 * executable NAME, malloc'd, or NULL; never a relative entry, which would
 * run whatever the current folder holds. */
char *ar_find_in_path (const char *name);

#endif
