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

/* run.agentrun.nested-userns "UID:GID": the container's user namespace (the
 * outer one, which owns every other namespace of the container) maps its
 * root alone; after the set-up that needs that root (mounts, sysctls, the
 * hooks, the terminal), the init makes a nested user namespace mapping
 * UID:GID to it and the process (pid 1 too) runs there, with no capability
 * over any namespace of the container. Why: the IPC namespace's sysctls
 * belong to its user namespace's root, which a plain user can map only as
 * that outer root (ipc/ipc_sysctl.c), and the process must not be it. */
#define AR_NESTED_USERNS_ANNOTATION "run.agentrun.nested-userns"

struct ar_nested_userns {
  bool on;
  uint32_t uid, gid; /* the process's ids, in the nested namespace */
};

/* Read and check the annotation: a new user namespace mapping 0 alone, the
 * process's user UID:GID without additional groups. n->on false without it. */
int ar_ns_nested_read (const struct ar_spec *spec, struct ar_nested_userns *n, ar_error **err);
/* In the init, as root of the outer namespace: unshare the nested one and
 * write its maps (UID -> 0, GID -> 0, setgroups deny) through /proc/self. */
int ar_ns_enter_nested (const struct ar_nested_userns *n, ar_error **err);

/* For exec into such a container: pid's (nested) user namespace and its
 * parent, the container's, as fds (-1 when n is off), and the join: the
 * outer one (its root's rights over the container's namespaces), the
 * others in flags through pidfd, then the nested one, whose owner we are
 * from the outer one. */
int ar_ns_open_nested (pid_t pid, const struct ar_nested_userns *n, int *inner, int *outer, ar_error **err);
int ar_ns_join_nested (int pidfd, unsigned long flags, int inner, int outer, ar_error **err);

/* For exec: the CLONE_NEW* flags of pid's namespaces that differ from ours. */
int ar_ns_differing (pid_t pid, unsigned long *flags, ar_error **err);

#endif
