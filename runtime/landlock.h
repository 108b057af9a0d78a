/* Landlock: a second wall behind the mount layout. Turned on per bundle by
 * the annotation AR_LANDLOCK_ANNOTATION, whose value is a JSON object of
 * paths inside the container:
 *   {"read":  ["/usr", "/etc", "/proc"],      read files and folders, execute
 *    "write": ["/work", "/tmp", "/dev"],      everything the kernel can govern
 *    "scope": ["abstract-unix-socket", "signal"]}   optional, Landlock ABI 6
 * Everything not beneath a listed path can be neither read nor written
 * (path walking itself is not governed). The init applies it after
 * pivot_root and before seccomp; any failure (no Landlock, a path missing,
 * a scope the kernel lacks) stops the container. */
#ifndef AR_LANDLOCK_H
#define AR_LANDLOCK_H

#include "model.h"
#include "error.h"

#include <stdbool.h>
#include <stddef.h>

#define AR_LANDLOCK_ANNOTATION "run.agentrun.landlock"

/* The kernel's Landlock ABI version, or -1 with *err filled. */
int ar_landlock_abi (ar_error **err);

/* Apply the annotation's ruleset to the calling thread (no-op without the
 * annotation). Needs no_new_privs or CAP_SYS_ADMIN in the user namespace;
 * sets no_new_privs first when the process asks for it anyway (for `exec`,
 * which joins a running container and must enter the same wall). */
int ar_landlock_apply_kv (const struct ar_kv *annotations, size_t n, bool no_new_privs, ar_error **err);
/* The same in two steps: the ruleset built (the paths resolved as the
 * caller sees them now) into *fd, -1 without the annotation; then applied,
 * fd taken either way. The init builds it while it waits for `start`. */
int ar_landlock_prepare (const struct ar_kv *annotations, size_t n, int *fd, ar_error **err);
int ar_landlock_restrict (int fd, bool no_new_privs, ar_error **err);

#endif
