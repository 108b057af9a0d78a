/* Least privilege for agentrun-netproxy and agentrun-relay: once each has
 * done what needs privilege (joined the namespace, bound its listeners,
 * made its sockets), it becomes an unprivileged user with no capability,
 * no supplementary group, no_new_privs, not dumpable, and under a seccomp
 * filter that allows its event loop and nothing else. Both parse bytes the
 * sandboxed agent controls (DNS, CONNECT, TLS SNI): a bug there must reach
 * no more than this. */
#ifndef NP_CONFINE_H
#define NP_CONFINE_H

#include "error.h"

#include <stdbool.h>
#include <sys/types.h>

#define NP_NOBODY 65534
#define NP_HELD_DIRS 16 /* folders np_dirs_hold keeps at most */

/* Whom to become. change false: keep the uids we run as (a plain user's
 * relay, a rootless netproxy); the capabilities go all the same. */
struct np_ids {
  bool change;
  uid_t uid;
  gid_t gid;
};

enum np_role { NP_ROLE_NETPROXY, NP_ROLE_RELAY };

/* The default: not root, no change; root through sudo (SUDO_UID and
 * SUDO_GID, neither 0), the sudo caller; other root, nobody. */
void np_ids_default (struct np_ids *ids);

/* "UID:GID", neither 0: --user. */
int np_ids_parse (const char *arg, struct np_ids *ids, ar_error **err);

/* Hold the folder of the socket at path open (O_PATH) while still root:
 * after the drop, it and what is below it (an --ask answer's relay in a
 * subfolder) are reached through /proc/self/fd, so the folders above it (a
 * 0700 one of root's) need not be searchable by the new ids. A folder
 * that cannot be opened is not held: the path is used as is. */
void np_dirs_hold (const char *path);

/* The held folders' fds (for the list of fds a daemon keeps); how many. */
size_t np_dirs_fds (int *fds, size_t cap);

/* The sun_path to connect to path: through its held folder if any. -1
 * (ENAMETOOLONG) when it does not fit in cap. */
int np_sun_path (const char *path, char *out, size_t cap);

/* Can ids write to (connect to) the socket at path, as np_sun_path will
 * reach it? Asked with the file-system ids alone switched, so root
 * answers for them; true when ids change nothing. */
bool np_ids_can_reach (const struct np_ids *ids, const char *path);

/* In the current network namespace: let an unprivileged process bind any
 * port, so listeners made at run time (wildcard and --ask routes, on 443
 * and the like) need no capability. Needs CAP_NET_ADMIN over the netns. */
int np_unpriv_ports (ar_error **err);

/* Become ids for good, drop every capability (bounding and ambient too),
 * set no_new_privs and not dumpable, and load the role's seccomp filter.
 * Call it single-threaded. -1 when any step fails: the caller must exit. */
int np_confine (const struct np_ids *ids, enum np_role role, ar_error **err);

#endif
