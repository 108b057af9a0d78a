/* The create-time conversation between agentrun (parent) and the container's
 * first child and init, over a SOCK_SEQPACKET socketpair: one message per
 * step, an fd riding along where one is handed over. Private to container.c
 * and init.c. */
#ifndef AR_SYNC_H
#define AR_SYNC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cgroups.h"
#include "error.h"
#include "model.h"
#include "namespaces.h"
#include "hooks.h"

enum ar_sync_type {
  SYNC_GO = 1, /* parent -> child: in the cgroup, go on */
  SYNC_USERMAP, /* child -> parent: user ns made, write its maps */
  SYNC_USERMAP_ACK,
  SYNC_PID, /* child -> parent: value = init's pid */
  SYNC_PID_ACK, /* parent -> init: value = its pid as the host sees it */
  SYNC_HOOKS, /* init -> parent: mounts done, run prestart/createRuntime */
  SYNC_HOOKS_ACK,
  SYNC_PTY, /* init -> parent: the pty master (fd) */
  SYNC_SECCOMP_FD, /* init -> parent: the seccomp listener (fd) */
  SYNC_READY, /* init -> parent: waiting for start is all that is left (fd: /, when asked) */
  SYNC_COMMIT, /* parent -> init: state written, wait on the fifo */
  SYNC_ERROR, /* init -> parent: text says what failed */
  SYNC_STOPPED, /* pid1 -> foreground parent: the command stopped (value: the signal) */
  SYNC_EXITED, /* pid1 -> foreground parent: the command ended (value: its status) */
  SYNC_CGROUP_JOIN, /* parent -> init, before SYNC_PID_ACK: a "tasks" file of its cgroup (fd), made after the go */
};

struct ar_sync_msg {
  int32_t type;
  int32_t value;
  char text[3072];
};

/* After `start` read the go byte from exec.fifo, the init may still fail
 * (startContainer hook, execve): it writes 'E', the message and a '\0' (one
 * write, at most this many bytes, below PIPE_BUF so it is atomic) to the
 * fifo before it exits; `start` reads until EOF and fails with it. The
 * unixconn supervisor the init forks holds the fifo too, until it is ready,
 * and writes AR_START_REPORT_HELPER, its failure and a '\0' if it cannot
 * be (the init goes on running the command, so `start` kills it). One that
 * dies silently (SIGKILL) takes the seccomp listener with it: connect(2)
 * fails with ENOSYS, as after a later death. */
#define AR_START_REPORT_MAX 2048
#define AR_START_REPORT_HELPER "S"

/* Are there prestart or createRuntime hooks for the parent to run? */
static inline bool
ar_sync_runtime_hooks (const struct ar_spec *s)
{
  return s->hooks.n[AR_HOOK_PRESTART] || s->hooks.n[AR_HOOK_CREATE_RUNTIME];
}

/* Does the init stop after its mounts (SYNC_HOOKS), for the parent to
 * apply the device rules that waited for linux.devices' nodes and to run
 * those hooks? Both sides ask the same spec, so without either that round
 * trip is left out. */
static inline bool
ar_sync_init_stops (const struct ar_spec *s)
{
  return ar_sync_runtime_hooks (s) || ar_cgroup_devices_deferred (s->linux_);
}

int ar_sync_send (int sock, int type, int value, int fd, const char *text, ar_error **err);
/* Returns 0 on EOF, 1 with a message. */
int ar_sync_recv (int sock, struct ar_sync_msg *m, int *fd, ar_error **err);

/* What the children need, prepared by the parent before clone. */
struct ar_init_ctx {
  const struct ar_spec *spec;
  const char *id;
  const char *bundle;
  const char *rootfs;
  bool no_pivot;
  bool no_new_keyring;
  int preserve_fds;
  int sock; /* the child end */
  int state_fd; /* O_PATH of the state folder: exec.fifo */
  int unixconn_sock; /* to the unixconn supervisor, or -1 (unixconn.h) */
  int unixconn_mine; /* the supervisor's end until it is forked, or -1 (parent only) */
  int ns_fds[AR_NS_N];
  unsigned long new_flags;
  bool direct; /* the init is cloned in its namespaces, no child1 */
  /* direct, born outside its cgroup (v1, not joined at clone): it moves
   * itself in through these "tasks" files (ar_cgroup_self_join_fds), then
   * makes its cgroup namespace when the spec asks for one */
  int cg_join_fds[4];
  size_t n_cg_join;
  /* direct, its cgroup (v1, hybrid) made by the parent after the go, while
   * the init mounts: those files come as SYNC_CGROUP_JOIN messages before
   * SYNC_PID_ACK, and the init joins and makes the namespace then */
  bool cg_after_go;
  bool die_with_parent; /* PR_SET_PDEATHSIG before execve (sandbox) */
  bool send_root; /* an O_PATH fd of / with SYNC_READY (ar_fg_ops.root_fd) */
  char *const *exec_env;
  size_t n_exec_env; /* added to process.env at exec (sandbox) */
  bool userns; /* new or joined */
  bool rootless; /* parent is an unprivileged user (rootless.h) */
  struct ar_seccomp_prog *prog;
  struct ar_seccomp_prog *connect_filter; /* unixconn.h, or NULL */
  struct ar_hook_fds cc_hooks, sc_hooks;
  int *bind_fds; /* bind sources opened by the parent (user namespace), or NULL */
  struct ar_nested_userns nested; /* the process runs in a nested user namespace (namespaces.h) */
};

/* In the first child, at once: close every fd but those in c, the log's
 * and the caller's --preserve-fds (init.c). */
void ar_init_close_fds (struct ar_init_ctx *c);
/* Child side (init.c): never returns. */
__attribute__ ((noreturn)) void ar_init_child1 (struct ar_init_ctx *c);
/* The init cloned straight into its new namespaces (ic->direct). */
__attribute__ ((noreturn)) void ar_init_direct (struct ar_init_ctx *c);

#endif
