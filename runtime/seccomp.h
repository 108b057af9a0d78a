/* linux.seccomp through libseccomp. Compile early (in the runtime, where
 * errors can still be reported to the caller), load as the very last step
 * before execve.
 *
 * Ordering the lifecycle must respect:
 *  - ar_seccomp_load is the last call before execve: after it, the only
 *    syscalls made are seccomp(2) itself and execve (plus, with NOTIFY, the
 *    sendmsg that hands the listener fd to the runtime). Compilation refuses
 *    a profile that denies execve ("seccomp profile denies execve").
 *  - Without process.noNewPrivileges the kernel requires CAP_SYS_ADMIN in the
 *    current user namespace to load a filter: load before dropping it then. */
#ifndef AR_SECCOMP_H
#define AR_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>
#include "error.h"
#include "model.h"

struct ar_seccomp_prog; /* a compiled BPF program plus its flags */

/* Build the filter (no cache). Unknown syscall names are skipped (debug
 * line); unknown action, operator, arch or flag is an error naming its JSON path. */
int ar_seccomp_compile (const struct ar_seccomp *sc, struct ar_seccomp_prog **out, ar_error **err);
/* Same, through the compiled-filter cache under <state_root>/.seccomp-cache/
 * (state_root NULL: no cache). Cache trouble never fails the call: it falls
 * back to compiling. */
int ar_seccomp_compile_cached (const struct ar_seccomp *sc, const char *state_root, struct ar_seccomp_prog **out,
                               ar_error **err);
/* A filter built with libseccomp (scmp_ctx: its scmp_filter_ctx) as a
 * program to load with ar_seccomp_load; notify: it has SCMP_ACT_NOTIFY
 * rules (loaded with a listener). */
int ar_seccomp_export (void *scmp_ctx, bool notify, struct ar_seccomp_prog **out, ar_error **err);
/* A filter built by code (build, with its ar_seccomp_export), through the
 * same cache: name says what it is, with a version to change whenever that
 * code does; notify as for ar_seccomp_export. */
int ar_seccomp_build_cached (const char *name, bool notify, const char *state_root,
                             int (*build) (struct ar_seccomp_prog **out, void *arg, ar_error **err), void *arg,
                             struct ar_seccomp_prog **out, ar_error **err);
/* Load it into the calling thread. With SCMP_ACT_NOTIFY rules, *listener_fd gets
 * the notify fd (O_CLOEXEC; else -1). Allocates nothing. */
int ar_seccomp_load (struct ar_seccomp_prog *prog, int *listener_fd, ar_error **err);
/* Send the notify fd and the container state JSON to listenerPath (SCM_RIGHTS),
 * as the runtime-spec describes (containerProcessState, fds ["seccompFd"]). */
int ar_seccomp_send_listener (const struct ar_seccomp *sc, int listener_fd, const char *state_json, ar_error **err);
void ar_seccomp_prog_free (struct ar_seccomp_prog *prog);

/* Internal to runtime/seccomp*.c. */
struct sock_filter;
struct ar_seccomp_prog {
  struct sock_filter *insns;
  size_t len; /* instructions */
  unsigned int flags; /* SECCOMP_FILTER_FLAG_* for seccomp(2) */
  bool notify;
  bool from_cache;
};
/* seccomp_names.c: names from config.json to libseccomp values; -1 if unknown. */
int ar_seccomp_action_value (const char *name, bool has_ret, unsigned int ret, uint32_t *action);
int ar_seccomp_arch_value (const char *name, uint32_t *arch);
int ar_seccomp_flag_value (const char *name, unsigned int *flag);
/* seccomp_enosys.c: put the ENOSYS check for calls newer than the profile
 * in front of the program. */
int ar_seccomp_enosys_prefix (const struct ar_seccomp *sc, struct ar_seccomp_prog *prog, ar_error **err);
/* Check every name of the profile; errors name the JSON path. */
int ar_seccomp_validate (const struct ar_seccomp *sc, ar_error **err);

#endif
