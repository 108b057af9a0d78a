/* Namespaces: which ones a container gets new, which it joins by path,
 * uid/gid maps (written by the parent) and time namespace offsets. */
#ifndef AR_NAMESPACES_H
#define AR_NAMESPACES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "error.h"
#include "model.h"

/* CLONE_NEW* flags of the namespaces to create (listed without a path). */
unsigned long ar_ns_new_flags (const struct ar_linux *lnx);
bool ar_ns_listed (const struct ar_linux *lnx, enum ar_ns_type t);

/* Open every namespace given by path (fds[t] = -1 when none), checking
 * with NS_GET_NSTYPE that each is of the type it is listed as. */
int ar_ns_open_paths (const struct ar_linux *lnx, int fds[AR_NS_N], ar_error **err);
void ar_ns_close (int fds[AR_NS_N]);
/* Join them, the user namespace first (it grants rights over the others). */
int ar_ns_join (int fds[AR_NS_N], ar_error **err);

/* Write /proc/PID/{uid_map,setgroups,gid_map}. deny_setgroups is needed when
 * the writer lacks CAP_SETGID over the parent namespace (rootless). */
int ar_ns_write_idmaps (pid_t pid, const struct ar_linux *lnx, bool deny_setgroups, ar_error **err);
/* Write linux.timeOffsets into /proc/self/timens_offsets, after unshare(CLONE_NEWTIME)
 * and before the first child enters it. */
int ar_ns_write_time_offsets (const struct ar_linux *lnx, ar_error **err);

/* Map a container id to the host through one mapping list; -1 when unmapped. */
int ar_ns_host_id (const struct ar_idmap *m, size_t n, uint32_t id, uint32_t *out);
/* The ids the init takes on right after entering a new user namespace: 0
 * when mapped, else the process's user (e.g. an agent's own uid mapped
 * alone), so files it creates get a mapped owner. false: neither is mapped. */
bool ar_ns_init_ids (const struct ar_linux *lnx, const struct ar_user *u, uint32_t *uid, uint32_t *gid);

/* For exec: the CLONE_NEW* flags of pid's namespaces that differ from ours. */
int ar_ns_differing (pid_t pid, unsigned long *flags, ar_error **err);

#endif
