/* Which host folders the sandbox may bind: the kernel's own file systems
 * never, system folders and the caller's home read-write only when asked
 * for on the command line. */
#ifndef AR_PLACES_H
#define AR_PLACES_H

#include <stdbool.h>
#include "agent.h"
#include "error.h"

/* Check the workspace, --out and every bind of o (paths already resolved):
 * 0, or -1 with a message naming the option and the path. */
int ar_places_check (const struct ar_agent_opts *o, bool allow_home, bool allow_system, ar_error **err);
/* The same for the state root (NULL: a private one of the run's own): no
 * writable bind holds it or lies in it. */
int ar_places_check_state_root (const struct ar_agent_opts *o, const char *root, ar_error **err);

#endif
