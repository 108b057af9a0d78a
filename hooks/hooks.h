/* Running one stage of OCI hooks: in order, each with its path, args, env and
 * timeout, the container state JSON on stdin, output to the runtime's log.
 * A failing hook (non-zero exit, signal, timeout) is an error naming it; the
 * caller decides whether that stops the container (prestart, createRuntime,
 * createContainer, startContainer) or is only a warning (poststart, poststop). */
#ifndef AR_HOOKS_H
#define AR_HOOKS_H

#include "error.h"
#include "model.h"

/* Run the hooks of one stage in the calling process's namespaces. */
int ar_hooks_run (const struct ar_hooks *hooks, enum ar_hook_stage stage, const char *state_json, ar_error **err);

/* For createContainer and startContainer, which run inside the container's
 * mount namespace. createContainer paths resolve in the runtime's namespace:
 * ar_hooks_open opens them now (O_PATH|O_CLOEXEC) and ar_hooks_run_fds runs
 * them later with execveat(fd, "", AT_EMPTY_PATH). startContainer paths
 * resolve in the container's namespace (runtime-spec config.md), so for that
 * stage ar_hooks_open opens nothing (fds are -1) and ar_hooks_run_fds execs
 * the path where it runs. A script run through an fd gets /dev/fd/N as its
 * path: it needs /dev/fd (and /proc) where it runs; ELF hooks need nothing. */
struct ar_hook_fds {
  int *fds;
  size_t n;
};
int ar_hooks_open (const struct ar_hooks *hooks, enum ar_hook_stage stage, struct ar_hook_fds *out, ar_error **err);
int ar_hooks_run_fds (const struct ar_hooks *hooks, enum ar_hook_stage stage, const struct ar_hook_fds *fds,
                      const char *state_json, ar_error **err);
void ar_hook_fds_close (struct ar_hook_fds *f);

#endif
