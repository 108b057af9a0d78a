/* The sandbox's share of the host's budgets: memory in tmpfs, the file
 * table, and the per-user counts (inotify, fanotify) it is charged to. */
#ifndef AR_BUDGETS_H
#define AR_BUDGETS_H

#include "agent.h"
#include "error.h"

#define AR_BUDGET_TMPFS_MAX (1LL << 30)   /* /tmp and home: 1 GiB, or RAM/8 if less */
/* inotify of one sandbox by default: this, or a quarter of its user's
 * instances and an eighth of its watches if less */
#define AR_BUDGET_INOTIFY_INSTANCES 64
#define AR_BUDGET_INOTIFY_WATCHES 8192

/* Fill what the options left unset (0) from the host: tmp_size, home_size,
 * nofile, the user namespace's budgets; kernel_tcp when --memory is given
 * and the memory controller is cgroup v1's with a TCP limit. A value the
 * caller gave that the host cannot have is an error. */
int ar_budgets_fill (struct ar_agent_opts *o, ar_error **err);

#endif
