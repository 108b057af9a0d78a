/* agentrun exec: a new process in a running container, joining all its
 * namespaces (user first), its cgroup and root, with its capabilities,
 * rlimits, no_new_privs and seccomp unless process.json says otherwise. */
#ifndef AR_EXEC_H
#define AR_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "context.h"
#include "error.h"

struct ar_exec_opts {
  const char *id;
  const char *process_path; /* -p: replaces everything below but detach/console/pid-file */
  bool detach;
  bool tty;
  const char *console_socket;
  const char *pid_file;
  const char *cwd;
  char **env;
  size_t n_env; /* -e, added to (or replacing in) the container's env */
  const char *user; /* USER[:GROUP], numbers or the container's names */
  char **caps;
  size_t n_caps; /* --cap, added */
  bool no_new_privs;
  int preserve_fds;
  uint32_t *add_gids;
  size_t n_add_gids; /* --additional-gids, added to the user's */
  char **cgroups;
  size_t n_cgroups; /* --cgroup [CTRL[,CTRL]:]SUB, below the container's */
  bool ignore_paused;
  char **args;
  size_t n_args;
};

/* In the foreground, *status gets the exit status (128+N on signal N). */
int ar_container_exec (struct ar_ctx *ctx, const struct ar_exec_opts *o, int *status, ar_error **err);

#endif
