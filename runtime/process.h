/* The container process, set up in the child after pivot_root (its /proc is
 * the container's): namespace-scoped settings, limits, cwd, the executable
 * lookup, the user switch and the final exec. Each step returns -1 with err. */
#ifndef AR_PROCESS_H
#define AR_PROCESS_H

#include <stdbool.h>
#include "error.h"
#include "model.h"

struct ar_seccomp_prog;

/* hostname, domainname. */
int ar_process_setup_ns (const struct ar_spec *spec, ar_error **err);
/* linux.sysctl, written under the container's /proc/sys reached from the
 * rootfs fd (before pivot: readonlyPaths make /proc/sys read-only after);
 * skip_ipc: but the IPC namespace's, written already. */
int ar_process_setup_sysctl (const struct ar_spec *spec, int rootfs_fd, bool skip_ipc, ar_error **err);
/* With a nested user namespace (namespaces.h): an O_PATH fd of the
 * container's /proc/sys reached from the rootfs fd, kept past the pivot
 * (the read-only mask is a mount over it, which the fd is under) and
 * closed once the nested namespace's sysctls are written; the outer
 * namespace's sysctls through it, user.max_user_namespaces 1 there (the
 * nested one alone); and, from the nested namespace, its user.* keys,
 * user.max_user_namespaces 0 whatever the spec says. */
int ar_process_open_sysctl (int rootfs_fd, ar_error **err);
int ar_process_setup_sysctl_outer (const struct ar_spec *spec, int sysfd, ar_error **err);
int ar_process_setup_sysctl_nested (const struct ar_spec *spec, int sysfd, ar_error **err);
/* The IPC namespace's sysctls (kernel.shm*, kernel.msg*, kernel.sem,
 * fs.mqueue.*): which keys, whether the spec has any, and writing them
 * alone through /proc (they are the writer's IPC namespace's). */
bool ar_process_has_ipc_sysctl (const struct ar_spec *spec);
int ar_process_setup_ipc_sysctl (const struct ar_spec *spec, ar_error **err);
/* rlimits, personality, oomScoreAdj, ioPriority, scheduler. */
int ar_process_setup_limits (const struct ar_process *p, const struct ar_personality *pers, ar_error **err);
/* cwd, created when missing (as root, before the user switch). */
int ar_process_setup_cwd (const struct ar_process *p, ar_error **err);
/* args[0] through the process's PATH; runc's wording on failure, with
 * err->errnum (ENOENT, EACCES...) and err->code AR_STEP_LOOKUP. */
int ar_process_lookup (const struct ar_process *p, char **path, ar_error **err);

/* The steps err->code names for ar_process_exit_status. */
enum { AR_STEP_LOOKUP = 1, AR_STEP_EXECVE };
/* The exit status of a container process whose command could not be
 * started, from the step that failed and its errno, as a shell has it and
 * Docker reads it: 127 when the lookup found no such file, 126 when the file
 * was found but may not be executed (EACCES from the lookup or from
 * execve), 1 for anything else (any other step, another errno). */
int ar_process_exit_status (int step, int errnum);
/* What the caller adds to the last steps (any callback may be NULL). */
struct ar_exec_tail {
  int preserve_fds; /* fds 3..3+n-1 stay open */
  void *ctx;
  /* after the user switch, before the fd hygiene (the parent-death signal) */
  int (*after_user) (void *ctx, ar_error **err);
  /* a SCMP_ACT_NOTIFY listener fd, closed by the caller; NULL: an error */
  int (*listener) (void *ctx, int fd, ar_error **err);
  /* with the process's user, capabilities and filter: startContainer hooks */
  int (*last) (void *ctx, ar_error **err);
};
/* The last steps: bounding set, user, capabilities, no_new_privs, fd
 * hygiene, seccomp, execve. Returns only on failure. */
int ar_process_exec (const struct ar_process *p, const char *path, struct ar_seccomp_prog *prog, bool seccomp_loaded,
                     const struct ar_exec_tail *t, ar_error **err);

/* base with each NAME=VALUE of add set (replacing base's NAME); the strings
 * are shared, only the array is new. */
char **ar_env_merge (char **base, size_t nb, char *const *add, size_t na, size_t *n);

#endif
