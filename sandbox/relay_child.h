/* The sandbox's agentrun-relay children: the network step's, and one per
 * endpoint allowed at run time by --ask. One way to start them, to wait
 * for their sockets and to stop them. */
#ifndef AR_RELAY_CHILD_H
#define AR_RELAY_CHILD_H

#include <stddef.h>
#include <sys/types.h>
#include "error.h"

struct ar_sandbox;

#define AR_RELAY_WAIT_MS 5000 /* its sockets exist this soon after the start */
#define AR_RELAY_STOP_MS 2000 /* after SIGTERM, this long before SIGKILL */
#define AR_RELAY_AUDIT_FD 100 /* where the relay finds the audit log */

/* agentrun-relay --dir DIR --container ID --grace 1 --max-conns N
 * --idle-timeout S [--audit-fd FD] EXTRA... (EXTRA NULL-terminated): in a
 * process group of its own (a ^C on the terminal is ours to handle), dying
 * with us (parent-death signal), with no signal blocked, stdin and stdout
 * /dev/null and stderr into ERRLOG (never the terminal). The audit log is
 * the one sb opened: the relay never opens the path. *pid set. */
int ar_relay_start (const struct ar_sandbox *sb, const char *dir, const char *errlog, char *const *extra, pid_t *pid,
                    ar_error **err);
/* Ready when each of the N socket paths exists as a socket. An error with
 * the first line of ERRLOG when the relay exits first (*pid then -1), with
 * ETIMEDOUT after AR_RELAY_WAIT_MS. */
int ar_relay_wait (pid_t *pid, const char *errlog, char *const *socks, size_t n, ar_error **err);
/* SIGTERM, SIGKILL when it is still there after AR_RELAY_STOP_MS, reaped
 * either way; *pid then -1. Nothing when *pid <= 0. */
void ar_relay_stop (pid_t *pid);

#endif
