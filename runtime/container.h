/* The container choreography: create, start, run, delete, and the state
 * folder each container owns under --root. */
#ifndef AR_CONTAINER_H
#define AR_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>
#include "context.h"
#include "error.h"
#include "signals.h"
#include "model.h"

struct ar_create_opts {
  const char *id;
  const char *bundle; /* default: the current directory */
  const char *config_path; /* default: <bundle>/config.json */
  const char *pid_file;
  const char *console_socket;
  bool no_pivot;
  bool no_new_keyring;
  int preserve_fds;
  bool detach; /* run -d */
  bool keep; /* run --keep: do not delete after exit */
  const struct ar_fg_ops *fg_ops; /* run in the foreground: the caller's part of the wait */
  /* With fg_ops->said_end set on return (the init told the command's end
   * and is exiting), the container is deleted but for its cgroup, which
   * the init leaves only at the end of its exit: its record is set here for
   * the caller to remove (ar_cgroup_destroy, which waits for that), or
   * NULL when it had none or it is removed already. */
  char **cgroup_left;
  bool die_with_parent; /* the container's command is killed when this process dies */
  char *const *exec_env; /* NAME=VALUE set in the command's environment at exec, never
                                  written anywhere (the sandbox's pass-through variables) */
  size_t n_exec_env;
  const int *stdio; /* [3]: fds the container gets as 0, 1, 2 (-1: ours); NULL: ours */
  /* CVE-2019-5736 (selfexe.h): create and run start by re-executing this
   * process from a sealed copy of its binary. A caller whose container is
   * one unprivileged uid (one uid and one gid mapped, no capability,
   * no_new_privs: the sandbox) sets one_uid: the copy is then needed only
   * when that uid could write the binary, and the caller has made it
   * (ar_selfexe_seal_unless_unwritable) before it set up anything a re-exec
   * would lose. Create never re-executes then: a copy still needed, or a
   * config that is not so confined, is an error. */
  bool one_uid;
  uid_t uid;
};

/* Everything create judges before it touches the system, also run by
 * `validate`: process.args, root.path, a mount namespace, capabilities this
 * libcap knows, no LSM label asked for (lsm.h). `label` names the config in
 * messages. With `bundle` non-NULL the rootfs must resolve and *rootfs (if
 * rootfs is non-NULL) gets its real path. */
struct ar_spec;
int ar_container_check (const struct ar_spec *s, const char *label, const char *bundle, char **rootfs, ar_error **err);

/* The config's side of ar_create_opts.one_uid: a user namespace of its own
 * mapping uid alone (and one gid), a process with no capability in any set
 * and no_new_privs. Then nothing in the container holds more than that
 * uid's own permission bits over the host's files: root of the namespace is
 * no one else, and no exec can raise what no_new_privs holds down. */
bool ar_container_confined_to (const struct ar_spec *s, uid_t uid);

int ar_container_create (struct ar_ctx *ctx, const struct ar_create_opts *o, ar_error **err);
int ar_container_start (struct ar_ctx *ctx, const char *id, ar_error **err);
/* create + start; in the foreground forwards signals and stores the exit status
 * (128+N when killed by signal N) in *status, then deletes unless keep. */
int ar_container_run (struct ar_ctx *ctx, const struct ar_create_opts *o, int *status, ar_error **err);
int ar_container_kill (struct ar_ctx *ctx, const char *id, int sig, bool all, ar_error **err);
int ar_container_delete (struct ar_ctx *ctx, const char *id, bool force, ar_error **err);
/* The same, with the container's spec in hand (run, which created it):
 * its poststop hooks are taken from it instead of the config snapshot. */
int ar_container_delete_spec (struct ar_ctx *ctx, const char *id, bool force, const struct ar_spec *spec, ar_error **err);
/* Delete a container whose init told the command's end (signals.h
 * said_end): nothing else of it runs, the init is exiting. Its cgroup,
 * which the init leaves only at the end of that exit, is left: *cgroup is
 * its record (NULL: none, or a systemd scope, which is stopped here after
 * the init's exit, as delete does). */
int ar_container_delete_told (struct ar_ctx *ctx, const char *id, const struct ar_spec *spec, char **cgroup,
                              ar_error **err);

/* --pid-file: the pid goes to PATH.tmp, then a rename, so a reader never
 * sees a partial number. */
int ar_write_pid_file (const char *path, pid_t pid, ar_error **err);

/* waitpid retried on EINTR: the wait status, or -1. */
int ar_reap (pid_t pid);

#endif
