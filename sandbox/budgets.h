/* The sandbox's share of the host's budgets: memory in tmpfs, the file
 * table, and the per-user counts (inotify, fanotify) it is charged to. */
#ifndef AR_BUDGETS_H
#define AR_BUDGETS_H

#include "agent.h"
#include "error.h"

#define AR_BUDGET_TMPFS_MAX (1LL << 30) /* /tmp and home: 1 GiB, or RAM/8 if less */
#define AR_BUDGET_MEMORY_MAX (16LL << 30) /* the default memory limit: RAM/2, at most 16 GiB */
#define AR_BUDGET_TCP_DIV 4 /* TCP buffers (cgroup v1): at most a quarter of tcp_mem's */
/* The socket cap by default: so many sockets at the sandbox's largest
 * buffers within that quarter, and at least this many (a node agent, a
 * test suite and a dev server at once). */
#define AR_BUDGET_SOCKETS_MIN 128
/* inotify of one sandbox by default: this, or a quarter of its user's
 * instances and an eighth of its watches if less */
#define AR_BUDGET_INOTIFY_INSTANCES 64
#define AR_BUDGET_INOTIFY_WATCHES 8192

/* Fill what the options left unset (0) from the host: tmp_size, home_size,
 * nofile, max_sockets (unless max_sockets_unlimited), the user namespace's budgets; memory where a memory cgroup can be
 * made (unless memory_unlimited), and with a memory limit, memory_swap and
 * kernel_tcp (cgroup v1's TCP limit: the memory, or a quarter of the host's
 * tcp_mem if less). A value the caller gave that the host cannot have is
 * an error. */
int ar_budgets_fill (struct ar_agent_opts *o, ar_error **err);

#endif
