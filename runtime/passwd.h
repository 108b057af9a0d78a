/* User and group names of a container, from its own /etc/passwd and
 * /etc/group, read through its root (never the host's files). */
#ifndef AR_PASSWD_H
#define AR_PASSWD_H

#include "error.h"
#include "model.h"

/* Resolve "USER[:GROUP]" (each a number or a name) into u: uid, gid and,
 * when USER is a name, the additional gids of the groups that list it. A
 * numeric USER keeps gid 0 unless GROUP is given, and no additional gids.
 * root_fd is the container's root (e.g. /proc/<init>/root); the files are
 * opened beneath it with RESOLVE_IN_ROOT. u->additional_gids is heap. */
int ar_passwd_resolve (int root_fd, const char *spec, struct ar_user *u, ar_error **err);

#endif
