/* The container side of create: the first child joins and creates the
 * namespaces, the init (its CLONE_PARENT sibling, so agentrun stays the
 * parent) sets up the filesystem and process, waits on exec.fifo, execs.
 * When nothing needs doing between the namespaces, the init is cloned in
 * all of them at once and there is no first child (ar_init_direct). */
#include "config.h"
#include "loopback.h"
#include "sync.h"
#include "caps.h"
#include "hooks.h"
#include "landlock.h"
#include "log.h"
#include "lsm.h"
#include "mounts.h"
#include "pid1.h"
#include "process.h"
#include "rootfs.h"
#include "rootless.h"
#include "seccomp.h"
#include "signals.h"
#include "strio.h"
#include "unixconn.h"
#include "spec_state.h"
#include "terminal.h"
#include "util.h"

#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

int
ar_sync_send (int sock, int type, int value, int fd, const char *text, ar_error **err)
{
  struct ar_sync_msg m = { .type = type, .value = value };
  if (text)
    snprintf (m.text, sizeof m.text, "%s", text);
  return ar_send_fd (sock, fd, &m, sizeof m, err);
}

int
ar_sync_recv (int sock, struct ar_sync_msg *m, int *fd, ar_error **err)
{
  memset (m, 0, sizeof *m);
  ssize_t n = ar_recv_fd (sock, fd, m, sizeof *m, err);
  if (n < 0)
    return -1;
  if (n == 0)
    return 0;
  if ((size_t) n != sizeof *m)
    return ar_err (err, 0, "sync: short message (%zd bytes)", n);
  m->text[sizeof m->text - 1] = '\0';
  return 1;
}

/* The write side of exec.fifo once `start` has read the go byte: failures
 * from then on are reported there (sync.h). One init per process, so a
 * file-scope variable is enough. */
static int start_report_fd = -1;
/* The LSM exec attributes, opened before pivot_root, written at the end. */
static struct ar_lsm_exec lsm_exec = { .apparmor_fd = -1, .selinux_fd = -1 };

/* Report a failure to the parent, which undoes everything and prints it. */
__attribute__ ((noreturn)) static void
fail (struct ar_init_ctx *c, ar_error *err)
{
  ar_sync_send (c->sock, SYNC_ERROR, err && err->errnum ? err->errnum : 0, -1, err ? err->msg : "container init failed",
                NULL);
  _exit (1);
}

/* After the parent left: only stderr can tell. */
__attribute__ ((noreturn)) static void
fail_late (ar_error *err)
{
  const char *msg = err ? err->msg : "container init failed";
  /* After the go, `start` is reading the fifo: tell it, so start fails. */
  if (start_report_fd >= 0)
    {
      char buf[AR_START_REPORT_MAX];
      int n = snprintf (buf, sizeof buf, "E%s", msg);
      /* with its '\0': the supervisor may write a record of its own */
      size_t len = n < 0 ? 0 : ((size_t) n < sizeof buf ? (size_t) n : sizeof buf - 1) + 1;
      if (len && write (start_report_fd, buf, len) == (ssize_t) len)
        _exit (1);
    }
  dprintf (STDERR_FILENO, "agentrun: %s\n", msg);
  _exit (err ? ar_process_exit_status (err->code, err->errnum) : 1);
}

static void
expect (struct ar_init_ctx *c, int type, struct ar_sync_msg *m)
{
  ar_error *err = NULL;
  int fd = -1;
  int r = ar_sync_recv (c->sock, m, &fd, &err);
  if (fd >= 0)
    close (fd);
  /* EOF: agentrun is gone, nobody will ever start us. */
  if (r <= 0)
    _exit (1);
  if (m->type != type)
    {
      ar_err (&err, 0, "sync: expected message %d, got %d", type, m->type);
      fail (c, err);
    }
}

static char *
hook_state (struct ar_init_ctx *c, pid_t pid, const char *status)
{
  struct ar_state s = { .id = (char *) c->id,
                        .status = (char *) status,
                        .pid = pid,
                        .bundle = (char *) c->bundle,
                        .annotations = c->spec->annotations,
                        .n_annotations = c->spec->n_annotations };
  return ar_state_to_json (&s);
}

static int
join_keyring (struct ar_init_ctx *c, ar_error **err)
{
  if (c->no_new_keyring)
    return 0;
  /* A fresh session keyring: the host's keys are not the container's. It
   * counts against the uid's key quota (200 for a user) until the kernel's
   * key garbage collector, a work queue, frees those of containers that
   * ended: starts in a quick burst get ahead of it by that much, so EDQUOT
   * is waited out for a while (2 s at most) before it fails the start. */
  long r;
  for (int tries = 0;
       (r = syscall (SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, c->id)) < 0 && errno == EDQUOT && tries < 200; tries++)
    usleep (10000);
  if (r < 0 && errno != ENOSYS)
    return ar_err (err, errno, "join a new session keyring");
  return 0;
}

static void
setup_terminal (struct ar_init_ctx *c, const struct ar_process *p)
{
  ar_error *err = NULL;
  int master, slave;
  /* made in the outer user namespace of a nested one, where the process's
   * uid is the root's (namespaces.h) */
  uid_t owner = c->nested.on ? 0 : p->user.uid;
  if (ar_pty_open (&master, &slave, &err) < 0 || ar_pty_own (slave, owner, &err) < 0
      || ar_pty_bind_console (master, &err) < 0
      || (p->has_console_size && ar_pty_set_size (slave, &p->console_size, &err) < 0)
      || ar_sync_send (c->sock, SYNC_PTY, 0, master, NULL, &err) < 0 || ar_pty_make_stdio (slave, &err) < 0)
    fail (c, err);
  close (master);
  close (slave);
}

static void
wait_for_start (struct ar_init_ctx *c)
{
  ar_error *err = NULL;
  /* Blocks until `start` opens the read side; the byte says go. */
  int fd = openat (c->state_fd, "exec.fifo", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    {
      ar_err (&err, errno, "open exec.fifo");
      fail_late (err);
    }
  if (write (fd, "0", 1) != 1)
    {
      ar_err (&err, errno, "write exec.fifo");
      fail_late (err);
    }
  /* fd stays open (close-on-exec): `start` reads EOF once we have exec'd,
   * so poststart hooks run after startContainer ones and the execve; or
   * the report of what failed before it (fail_late). */
  start_report_fd = fd;
  close (c->state_fd);
  c->state_fd = -1;
}

/* The IPC sysctls of an IPC namespace whose user namespace maps no root
 * belong to the host's root (the kernel's ipc_set_ownership), not to
 * anyone the init can become there: they are written while the init still
 * has root's ids, in its new IPC namespace, before it takes mapped ones.
 * With a root mapped they are that root's, and written with the rest. */
static bool
ipc_sysctl_early (const struct ar_init_ctx *c)
{
  const struct ar_linux *l = c->spec->linux_;
  uint32_t h;
  return l && !c->rootless && (c->new_flags & CLONE_NEWUSER) && (c->new_flags & CLONE_NEWIPC)
         && ar_ns_host_id (l->uid_mappings, l->n_uid_mappings, 0, &h) != 0 && ar_process_has_ipc_sysctl (c->spec);
}

static void
write_ipc_sysctl_early (struct ar_init_ctx *c)
{
  ar_error *err = NULL;
  if (ipc_sysctl_early (c) && ar_process_setup_ipc_sysctl (c->spec, &err) < 0)
    fail (c, err);
}

/* The process's nested user namespace (namespaces.h), once nothing is left
 * that needs the outer one's root: its maps, its user.* sysctls through
 * the container's /proc/sys opened before the pivot (read-only from here
 * on, but not under that fd), then the fd goes. The process and our pid 1
 * live there. */
static void
enter_nested_userns (struct ar_init_ctx *c, int sysfd)
{
  ar_error *err = NULL;
  if (ar_ns_enter_nested (&c->nested, &err) < 0 || ar_process_setup_sysctl_nested (c->spec, sysfd, &err) < 0)
    fail (c, err);
  close (sysfd);
}

/* Into the container's cgroup by ourselves (cgroups.h: no grace period to
 * wait for) through one of its "tasks" files, which is closed. */
static void
join_through (struct ar_init_ctx *c, int fd)
{
  ar_error *err = NULL;
  if (write (fd, "0", 1) != 1)
    ar_err (&err, errno, "join the container's cgroup"), fail (c, err);
  close (fd);
}

/* Once inside: the cgroup namespace, rooted there, as a clone would have
 * made it had we been born inside. */
static void
cgroup_namespace (struct ar_init_ctx *c)
{
  ar_error *err = NULL;
  if ((c->new_flags & CLONE_NEWCGROUP) && unshare (CLONE_NEWCGROUP) < 0)
    ar_err (&err, errno, "unshare the cgroup namespace"), fail (c, err);
}

static void
join_own_cgroup (struct ar_init_ctx *c)
{
  for (size_t i = 0; i < c->n_cg_join; i++)
    join_through (c, c->cg_join_fds[i]);
  cgroup_namespace (c);
}

/* The cgroup the parent made while we mounted (cg_after_go): its files,
 * one message each, then our pid's ack. */
static void
expect_cgroup_then_pid (struct ar_init_ctx *c, struct ar_sync_msg *m)
{
  ar_error *err = NULL;
  for (;;)
    {
      int fd = -1;
      int r = ar_sync_recv (c->sock, m, &fd, &err);
      if (r <= 0)
        _exit (1); /* agentrun is gone */
      if (m->type != SYNC_CGROUP_JOIN)
        {
          if (fd >= 0)
            close (fd);
          break;
        }
      if (fd < 0)
        ar_err (&err, 0, "sync: a cgroup file message carried no fd"), fail (c, err);
      join_through (c, fd);
    }
  if (m->type != SYNC_PID_ACK)
    ar_err (&err, 0, "sync: expected message %d, got %d", SYNC_PID_ACK, m->type), fail (c, err);
  cgroup_namespace (c);
}

/* Everything that can fail visibly happens here, before READY. */
static void
init_setup (struct ar_init_ctx *c, pid_t *host_pid, char **exec_path, bool *seccomp_loaded)
{
  const struct ar_spec *spec = c->spec;
  const struct ar_process *p = spec->process;
  struct ar_rootfs_ctx rc = { .spec = spec,
                              .rootfs = c->rootfs,
                              .bundle = c->bundle,
                              .no_pivot = c->no_pivot,
                              .new_userns = c->userns || c->rootless,
                              .rootfs_fd = -1,
                              .bind_fds = c->bind_fds };
  struct ar_sync_msg m;
  ar_error *err = NULL;

  if (setsid () < 0)
    ar_err (&err, errno, "setsid"), fail (c, err);
  ar_mount_set_label (ar_lsm_mount_label (spec));
  if (ar_lsm_prepare (p, &lsm_exec, &err) < 0 || join_keyring (c, &err) < 0 || ar_rootfs_prepare (&rc, &err) < 0)
    fail (c, err);
  ar_debug ("init: mounts made");
  ar_mounts_close_binds (c->bind_fds, spec->n_mounts);
  c->bind_fds = NULL;
  /* The mounts above ran while the parent took note of us (pidfd, start
   * time); from here on what we do is seen from outside, so wait for it. */
  if (c->cg_after_go)
    expect_cgroup_then_pid (c, &m);
  else
    expect (c, SYNC_PID_ACK, &m);
  *host_pid = m.value;
  /* A rootless hook (netproxy) joins our namespaces through a pidfd, which
   * the kernel allows only over a dumpable process (no CAP_SYS_PTRACE on
   * the host). Only for the hooks' run: no container process exists yet. */
  bool hooks = ar_sync_runtime_hooks (spec), stop = ar_sync_init_stops (spec);
  bool open_up = c->rootless && hooks;
  if (open_up && prctl (PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
    ar_err (&err, errno, "prctl PR_SET_DUMPABLE for the createRuntime hooks"), fail (c, err);
  if (stop && ar_sync_send (c->sock, SYNC_HOOKS, 0, -1, NULL, &err) < 0)
    fail (c, err);
  if (stop)
    expect (c, SYNC_HOOKS_ACK, &m);
  /* A network namespace of ours starts with lo down: up it, as runc does,
   * before the container's own hooks and process. After the createRuntime
   * hooks: netproxy tunes a lo it finds down (and leaves others alone). */
  if ((c->new_flags & CLONE_NEWNET) && ar_loopback_up (NULL, &err) < 0)
    fail (c, err);
  if (open_up && prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    ar_err (&err, errno, "prctl PR_SET_DUMPABLE"), fail (c, err);
  cleanup_free char *st = c->cc_hooks.n ? hook_state (c, *host_pid, "creating") : NULL;
  /* in the rootfs, as runc's are: a relative path a hook writes (an
   * ldconfig run, a library it copies in) lands in the container */
  if (c->cc_hooks.n && rc.rootfs_fd >= 0 && fchdir (rc.rootfs_fd) < 0)
    ar_err (&err, errno, "chdir to the rootfs for the createContainer hooks"), fail (c, err);
  if (c->cc_hooks.n && ar_hooks_run_fds (&spec->hooks, AR_HOOK_CREATE_CONTAINER, &c->cc_hooks, st, &err) < 0)
    fail (c, err);
  int sysfd = c->nested.on ? ar_process_open_sysctl (rc.rootfs_fd, &err) : -1;
  if ((c->nested.on && sysfd < 0)
      || (c->nested.on ? ar_process_setup_sysctl_outer (spec, sysfd, &err)
                       : ar_process_setup_sysctl (spec, rc.rootfs_fd, ipc_sysctl_early (c), &err))
             < 0
      || ar_rootfs_pivot (&rc, &err) < 0)
    fail (c, err);
  ar_debug ("init: root pivoted, masks applied");
  if (rc.rootfs_fd >= 0)
    close (rc.rootfs_fd);
  if (ar_process_setup_ns (spec, &err) < 0
      || ar_process_setup_limits (p, spec->linux_ ? spec->linux_->personality : NULL, &err) < 0
      || ar_process_setup_cwd (p, &err) < 0 || ar_process_lookup (p, exec_path, &err) < 0)
    fail (c, err);
  if (p->terminal)
    setup_terminal (c, p);
  if (c->nested.on)
    enter_nested_userns (c, sysfd);
  /* A listener must reach the parent, which is only here until READY. */
  const struct ar_seccomp *sc = spec->linux_ ? spec->linux_->seccomp : NULL;
  if (c->prog && sc && sc->listener_path && *sc->listener_path)
    {
      int lfd = -1;
      if ((p->no_new_privileges && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 && ar_err (&err, errno, "no_new_privs"))
          || ar_seccomp_load (c->prog, &lfd, &err) < 0)
        fail (c, err);
      *seccomp_loaded = true;
      if (lfd >= 0 && ar_sync_send (c->sock, SYNC_SECCOMP_FD, 0, lfd, NULL, &err) < 0)
        fail (c, err);
      if (lfd >= 0)
        close (lfd);
    }
}

/* sandbox: the command must not outlive the agentrun that supervises it
 * (as bubblewrap's --die-with-parent). Set after the last credential
 * change, which would clear it. That parent also reads exec.fifo, so a fifo
 * with no reader left means it died before we asked. */
static int
die_with_parent (ar_error **err)
{
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    return ar_err (err, errno, "prctl PR_SET_PDEATHSIG");
  struct pollfd p = { .fd = start_report_fd, .events = POLLOUT };
  if (start_report_fd >= 0 && poll (&p, 1, 0) == 1 && (p.revents & POLLERR))
    return ar_err (err, ESRCH, "the agentrun that runs the container is gone");
  return 0;
}

struct tail_ctx {
  struct ar_init_ctx *c;
  char *st; /* the state the hooks read */
  pid_t host_pid;
  char *exec_path;
  bool seccomp_loaded;
  bool pid1; /* in our own pid 1's child */
};

static int
after_user (void *ctx, ar_error **err)
{
  (void) ctx;
  return die_with_parent (err);
}

/* As runc runs them: in the container, with the process's user and
 * capabilities and its filter applied; their fds close at execve. */
static int
start_container_hooks (void *ctx, ar_error **err)
{
  struct tail_ctx *t = ctx;
  return ar_hooks_run_fds (&t->c->spec->hooks, AR_HOOK_START_CONTAINER, &t->c->sc_hooks, t->st, err);
}

/* The command's final steps, from the user switch to execve: in the child
 * of our own pid 1 when there is one (err: its set-up there failed), else
 * in the init itself. */
__attribute__ ((noreturn)) static void
command_tail (void *data, ar_error *err)
{
  struct tail_ctx *tc = data;
  struct ar_init_ctx *c = tc->c;
  const struct ar_process *p = c->spec->process;
  if (err)
    fail_late (err);
  if (tc->pid1)
    {
      close (c->sock); /* pid 1's, not the command's */
      c->die_with_parent = false; /* pid 1 holds it; the command cannot clear that */
    }
  struct ar_process px = *p;
  if (c->n_exec_env)
    px.env = ar_env_merge (p->env, p->n_env, c->exec_env, c->n_exec_env, &px.n_env);
  tc->st = c->sc_hooks.n ? hook_state (c, tc->host_pid, "running") : NULL;
  struct ar_exec_tail t = { .preserve_fds = c->preserve_fds,
                            .ctx = tc,
                            .after_user = c->die_with_parent ? after_user : NULL,
                            .last = c->sc_hooks.n ? start_container_hooks : NULL };
  ar_process_exec (&px, tc->exec_path, c->prog, tc->seccomp_loaded, &t, &err);
  fail_late (err);
}

/* pid 1, once the command's process has exec'd (or failed): the handover
 * to the unixconn supervisor, started before it, is over. */
static int
handover_joined (void *data, ar_error **err)
{
  return ar_unixconn_join (data, err);
}

__attribute__ ((noreturn)) static void
init_main (struct ar_init_ctx *c)
{
  const struct ar_process *p = c->spec->process;
  struct ar_sync_msg m;
  ar_error *err = NULL;
  char *exec_path = NULL;
  bool seccomp_loaded = false;

  /* Nothing in the container may read our fds through /proc until execve. */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    ar_err (&err, errno, "prctl PR_SET_DUMPABLE"), fail (c, err);
  pid_t host_pid = 0;
  init_setup (c, &host_pid, &exec_path, &seccomp_loaded);
  int root = c->send_root ? open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
  if (c->send_root && root < 0)
    ar_err (&err, errno, "open the container's / for the foreground wait"), fail (c, err);
  if (ar_sync_send (c->sock, SYNC_READY, 0, root, NULL, &err) < 0)
    fail (c, err);
  if (root >= 0)
    close (root);
  /* The Landlock ruleset is built while agentrun commits and opens
   * exec.fifo, and applied after the go (a failure is told then too);
   * the handover to the unixconn supervisor made ready too */
  ar_error *ruleset_err = NULL;
  int ruleset = -1;
  ar_landlock_prepare (c->spec->annotations, c->spec->n_annotations, &ruleset, &ruleset_err);
  struct ar_unixconn_handover *handover = NULL;
  ar_error *handover_err = NULL;
  ar_unixconn_begin (c->spec->annotations, c->spec->n_annotations, c->unixconn_sock, (c->new_flags & CLONE_NEWNET) != 0,
                     &handover, &handover_err);
  expect (c, SYNC_COMMIT, &m);
  bool pid1 = ar_pid1_wanted (c->spec);
  if (!pid1)
    close (c->sock); /* our pid 1 keeps it, to tell a foreground run of stops */
  wait_for_start (c);

  ar_hook_fds_close (&c->cc_hooks);
  /* Landlock while we still hold our capabilities, before the user switch
   * and the filter (startContainer hooks run under it, as the process). */
  if (ruleset_err || ar_landlock_restrict (ruleset, p->no_new_privileges, &err) < 0)
    fail_late (ruleset_err ? ruleset_err : err);
  /* The unixconn supervisor, on the host, gets the filter's listener. It
   * reports to `start` through the fifo, so we need not wait for it. With
   * our own pid 1 the thread hands it over while the command's process
   * makes its final steps, and pid 1 waits for it before it lets go of
   * the fifo (a failure is start's error then, the command killed) */
  if (handover_err
      || (pid1 ? ar_unixconn_release (handover, c->connect_filter, start_report_fd, &err)
               : ar_unixconn_finish (handover, c->connect_filter, start_report_fd, &err))
             < 0)
    fail_late (handover_err ? handover_err : err);
  /* The exec attribute is this task's, inherited by a child over fork. */
  if (ar_lsm_apply (&lsm_exec, &err) < 0)
    fail_late (err);
  /* Our own pid 1 stays here, with the Landlock domain and the connect
   * filter (which it never meets: it connects nowhere); the command's final
   * steps, from the user switch to execve, are its child's. */
  struct ar_pid1 p1 = { .sock = c->sock,
                        .report_fd = start_report_fd,
                        .terminal = p->terminal,
                        .die_with_parent = c->die_with_parent,
                        .uid = p->user.uid,
                        .gid = p->user.gid,
                        .spawned = pid1 && handover ? handover_joined : NULL,
                        .spawned_data = handover };
  struct tail_ctx tc = {
    .c = c, .host_pid = host_pid, .exec_path = exec_path, .seccomp_loaded = seccomp_loaded, .pid1 = pid1
  };
  if (pid1 && ar_pid1_fork (&p1, command_tail, &tc, &err) < 0)
    fail_late (err);
  command_tail (&tc, NULL);
}

/* Whatever agentrun held (its caller's fds, the sandbox's held names,
 * pipes, sockets) is none of the container's business: only what c names
 * survives, besides stdio, the log and the fds the caller passes on. Done
 * first, before any rlimit of the container's applies to what we hold. */
void
ar_init_close_fds (struct ar_init_ctx *c)
{
  size_t n_binds = c->bind_fds ? c->spec->n_mounts : 0;
  size_t cap = 4 + AR_NS_N + c->n_cg_join + c->cc_hooks.n + c->sc_hooks.n + n_binds, n = 0;
  cleanup_free int *keep = xmalloc0 (cap * sizeof *keep);
  ar_error *err = NULL;
  keep[n++] = c->sock;
  keep[n++] = c->state_fd;
  keep[n++] = c->unixconn_sock;
  keep[n++] = ar_log_fd ();
  for (int i = 0; i < AR_NS_N; i++)
    keep[n++] = c->ns_fds[i];
  for (size_t i = 0; i < c->n_cg_join; i++)
    keep[n++] = c->cg_join_fds[i];
  for (size_t i = 0; i < c->cc_hooks.n; i++)
    keep[n++] = c->cc_hooks.fds[i];
  for (size_t i = 0; i < c->sc_hooks.n; i++)
    keep[n++] = c->sc_hooks.fds[i];
  for (size_t i = 0; i < n_binds; i++)
    keep[n++] = c->bind_fds[i];
  if (ar_close_fds_except (keep, n, c->preserve_fds) < 0)
    ar_err (&err, errno, "close the runtime's files in the container's init"), fail (c, err);
}

static pid_t
clone_parent (void)
{
  struct clone_args a = { .flags = CLONE_PARENT, .exit_signal = 0 };
  return (pid_t) syscall (SYS_clone3, &a, sizeof a);
}

/* After a switch to a non-zero uid the effective set is cleared (permitted
 * stays, thanks to KEEPCAPS): raise it again for the setup still to come. */
static void
restore_effective_caps (struct ar_init_ctx *c)
{
  ar_error *err = NULL;
  if (ar_caps_raise_effective (&err) < 0)
    ar_err_prefix (&err, "in the user namespace"), fail (c, err);
}

/* In a new user namespace whose maps are written, take ids mapped there. */
static void
take_mapped_ids (struct ar_init_ctx *c)
{
  ar_error *err = NULL;
  /* Take mapped ids (root, else the process's user), so files we create
   * have an owner in the namespace. Capabilities in it are ours either way;
   * KEEPCAPS keeps them over a switch to a non-root uid. */
  uint32_t uid, gid;
  if (ar_ns_init_ids (c->spec->linux_, &c->spec->process->user, &uid, &gid))
    {
      if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
        ar_err (&err, errno, "prctl PR_SET_KEEPCAPS"), fail (c, err);
      if (setresgid (gid, gid, gid) < 0)
        ar_err (&err, errno, "setresgid %u in the user namespace", gid), fail (c, err);
      if (setresuid (uid, uid, uid) < 0)
        ar_err (&err, errno, "setresuid %u in the user namespace", uid), fail (c, err);
      if (uid != 0)
        restore_effective_caps (c);
    }
}

static void
enter_user_ns (struct ar_init_ctx *c)
{
  ar_error *err = NULL;
  if (unshare (CLONE_NEWUSER) < 0)
    {
      int e = errno;
      const char *why = ar_rootless_userns_hint (e);
      ar_err (&err, e, "unshare user namespace%s%s%s", *why ? " (" : "", why, *why ? ")" : "");
      fail (c, err);
    }
  struct ar_sync_msg m;
  if (ar_sync_send (c->sock, SYNC_USERMAP, 0, -1, NULL, &err) < 0)
    fail (c, err);
  expect (c, SYNC_USERMAP_ACK, &m);
}

static void
take_ids_dumpable (struct ar_init_ctx *c)
{
  ar_error *err = NULL;
  take_mapped_ids (c);
  /* The uid change made us non-dumpable, which hands /proc/self to the
   * host's root: timens_offsets would be out of reach. No container process
   * exists yet that could make use of a dumpable us. */
  if (prctl (PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
    ar_err (&err, errno, "prctl PR_SET_DUMPABLE"), fail (c, err);
}

void
ar_init_child1 (struct ar_init_ctx *c)
{
  struct ar_sync_msg m;
  ar_error *err = NULL;
  unsigned long rest = c->new_flags & ~(unsigned long) CLONE_NEWUSER;

  ar_signals_reset ();
  expect (c, SYNC_GO, &m);
  const struct ar_process *p = c->spec->process;
  if (p->has_oom_score_adj)
    {
      /* Inherited by the init; done here while /proc/self is ours. */
      struct ar_process only = { .has_oom_score_adj = true, .oom_score_adj = p->oom_score_adj };
      if (ar_process_setup_limits (&only, NULL, &err) < 0)
        fail (c, err);
    }
  if (ar_ns_join (c->ns_fds, &err) < 0)
    fail (c, err);
  ar_ns_close (c->ns_fds);
  bool ipc_early = ipc_sysctl_early (c);
  if (c->new_flags & CLONE_NEWUSER)
    enter_user_ns (c);
  if ((c->new_flags & CLONE_NEWUSER) && !ipc_early)
    take_ids_dumpable (c);
  if (rest && unshare ((int) rest) < 0)
    ar_err (&err, errno, "unshare namespaces 0x%lx", rest), fail (c, err);
  if (ipc_early)
    {
      write_ipc_sysctl_early (c);
      take_ids_dumpable (c);
    }
  if ((rest & 0x80 /* CLONE_NEWTIME */) && ar_ns_write_time_offsets (c->spec->linux_, &err) < 0)
    fail (c, err);
  /* The init is born non-dumpable: no window in which a process of the
   * container could ptrace it or read its fds through /proc. */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    ar_err (&err, errno, "prctl PR_SET_DUMPABLE"), fail (c, err);
  pid_t pid = clone_parent ();
  if (pid < 0)
    ar_err (&err, errno, "clone the container init"), fail (c, err);
  if (pid == 0)
    init_main (c);
  if (ar_sync_send (c->sock, SYNC_PID, pid, -1, NULL, &err) < 0)
    _exit (1);
  _exit (0);
}

void
ar_init_direct (struct ar_init_ctx *c)
{
  struct ar_sync_msg m;

  ar_signals_reset ();
  /* our maps are written by then, and our pid (PID_ACK) follows */
  expect (c, SYNC_GO, &m);
  if (c->new_flags & CLONE_NEWUSER)
    {
      write_ipc_sysctl_early (c);
      take_mapped_ids (c);
    }
  if (c->n_cg_join)
    join_own_cgroup (c);
  init_main (c);
}
