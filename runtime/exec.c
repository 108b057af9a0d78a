/* exec: join a running container and run one more process in it. */
#include "config.h"
#include "exec.h"
#include "selfexe.h"
#include "fault.h"
#include "caps.h"
#include "container.h"
#include "cgroups.h"
#include "log.h"
#include "lsm.h"
#include "passwd.h"
#include "process.h"
#include "landlock.h"
#include "seccomp.h"
#include "unixconn.h"
#include "signals.h"
#include "spec.h"
#include "state.h"
#include "sync.h"
#include "terminal.h"
#include "util.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* The process to run and what was allocated to build it. */
struct exec_proc {
  struct ar_process p;
  struct ar_process *loaded; /* from -p */
  char **env; /* owned array, borrowed strings */
  struct ar_caps caps; /* owned arrays, borrowed strings */
  uint32_t *gids; /* owned: additional gids from --user NAME */
};

static void
exec_proc_free (struct exec_proc *e)
{
  if (e->loaded)
    ar_process_free (e->loaded);
  free (e->env);
  free (e->gids);
  free (e->caps.bounding);
  free (e->caps.effective);
  free (e->caps.permitted);
  free (e->caps.inheritable);
  free (e->caps.ambient);
}

static char **
extend (char **base, size_t nb, char **add, size_t na, size_t *n)
{
  char **out = xmalloc0 ((nb + na + 1) * sizeof *out);
  /* base or add may be NULL when empty; memcpy's arguments must not be. */
  if (nb)
    memcpy (out, base, nb * sizeof *out);
  if (na)
    memcpy (out + nb, add, na * sizeof *out);
  *n = nb + na;
  return out;
}

static int
build_process (const struct ar_exec_opts *o, const struct ar_spec *spec, struct exec_proc *e, ar_error **err)
{
  memset (e, 0, sizeof *e);
  if (o->process_path)
    {
      if (ar_process_load_file (o->process_path, &e->loaded, err) < 0
          || ar_lsm_check_process (e->loaded, o->process_path, "", err) < 0)
        return -1;
      e->p = *e->loaded;
      return 0;
    }
  if (!o->n_args)
    return ar_err (err, 0, "no command given (pass it after the id, or use -p process.json)");
  const struct ar_process *c = spec->process;
  e->p = *c;
  e->p.args = o->args;
  e->p.n_args = o->n_args;
  e->p.terminal = o->tty;
  e->p.has_console_size = false;
  if (o->cwd)
    e->p.cwd = (char *) o->cwd;
  e->env = ar_env_merge (c->env, c->n_env, o->env, o->n_env, &e->p.n_env);
  e->p.env = e->env;
  e->p.no_new_privileges = c->no_new_privileges || o->no_new_privs;
  if (o->n_caps)
    {
      const struct ar_caps *cc = c->capabilities;
      struct ar_caps z = { 0 };
      if (!cc)
        cc = &z;
      e->caps.bounding = extend (cc->bounding, cc->n_bounding, o->caps, o->n_caps, &e->caps.n_bounding);
      e->caps.effective = extend (cc->effective, cc->n_effective, o->caps, o->n_caps, &e->caps.n_effective);
      e->caps.permitted = extend (cc->permitted, cc->n_permitted, o->caps, o->n_caps, &e->caps.n_permitted);
      e->caps.inheritable = extend (cc->inheritable, cc->n_inheritable, NULL, 0, &e->caps.n_inheritable);
      e->caps.ambient = extend (cc->ambient, cc->n_ambient, NULL, 0, &e->caps.n_ambient);
      e->p.capabilities = &e->caps;
    }
  return ar_caps_check (e->p.capabilities, err);
}

struct exec_ctx {
  const struct ar_exec_opts *o;
  const struct ar_spec *spec; /* the container's config (Landlock annotation) */
  struct ar_process *p;
  struct ar_seccomp_prog *prog;
  int sock;
  int pidfd; /* the container init */
  int rootfd; /* /proc/<init>/root */
  int unixconn_sock; /* to the unixconn supervisor, or -1 */
  const struct ar_cstate *st;
  unsigned long ns_flags;
  int nested_userns, outer_userns; /* a nested user namespace's fds (namespaces.h), or -1 */
};

__attribute__ ((noreturn)) static void
exec_fail (struct exec_ctx *x, ar_error *err)
{
  ar_sync_send (x->sock, SYNC_ERROR, 0, -1, err ? err->msg : "exec failed", NULL);
  _exit (1);
}

/* The parent is there until execve: it takes the listener to listenerPath. */
static int
send_listener (void *ctx, int fd, ar_error **err)
{
  struct exec_ctx *x = ctx;
  return ar_sync_send (x->sock, SYNC_SECCOMP_FD, 0, fd, NULL, err);
}

/* In the container: root, cwd, limits, pty, user, caps, seccomp, execve. */
__attribute__ ((noreturn)) static void
exec_process (struct exec_ctx *x)
{
  ar_error *err = NULL;
  char *path = NULL;
  struct ar_lsm_exec lsm;

  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || setsid () < 0)
    ar_err (&err, errno, "prctl/setsid"), exec_fail (x, err);
  /* the host's /proc, before entering the container's root */
  if (ar_lsm_prepare (x->p, &lsm, &err) < 0)
    exec_fail (x, err);
  /* The init's root, not the mount namespace's: right with --no-pivot too. */
  if (fchdir (x->rootfd) < 0 || chroot (".") < 0 || chdir ("/") < 0)
    ar_err (&err, errno, "enter the container's root"), exec_fail (x, err);
  close (x->rootfd);
  if (ar_process_setup_limits (x->p, NULL, &err) < 0 || ar_process_setup_cwd (x->p, &err) < 0
      || ar_process_lookup (x->p, &path, &err) < 0)
    exec_fail (x, err);
  if (x->p->terminal)
    {
      int master, slave;
      if (ar_pty_open (&master, &slave, &err) < 0 || ar_pty_own (slave, x->p->user.uid, &err) < 0
          || (x->p->has_console_size && ar_pty_set_size (slave, &x->p->console_size, &err) < 0)
          || ar_sync_send (x->sock, SYNC_PTY, 0, master, NULL, &err) < 0 || ar_pty_make_stdio (slave, &err) < 0)
        exec_fail (x, err);
      close (master);
      close (slave);
    }
  /* The same Landlock domain as the init: a process joining the container
   * must not get around the second wall. Before seccomp, like the init. */
  if (ar_landlock_apply_kv (x->spec->annotations, x->spec->n_annotations, x->p->no_new_privileges, &err) < 0
      || ar_unixconn_start (x->spec->annotations, x->spec->n_annotations, NULL, x->unixconn_sock,
                            ar_unixconn_own_netns (x->spec), -1, &err)
             < 0)
    exec_fail (x, err);
  if (ar_lsm_apply (&lsm, &err) < 0)
    exec_fail (x, err);
  if (ar_sync_send (x->sock, SYNC_READY, 0, -1, NULL, &err) < 0)
    _exit (1);
  /* The socket is close-on-exec: EOF tells the parent execve worked. */
  struct ar_exec_tail t = { .preserve_fds = x->o->preserve_fds, .ctx = x, .listener = send_listener };
  ar_process_exec (x->p, path, x->prog, false, &t, &err);
  exec_fail (x, err);
}

__attribute__ ((noreturn)) static void
exec_child1 (struct exec_ctx *x)
{
  struct ar_sync_msg m;
  ar_error *err = NULL;
  int fd = -1;

  ar_signals_reset ();
  /* Before joining anything, and inherited by the process we fork: nothing
   * in the container may ptrace us or read our fds (CVE-2016-9962). */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    ar_err (&err, errno, "prctl PR_SET_DUMPABLE"), exec_fail (x, err);
  if (ar_sync_recv (x->sock, &m, &fd, &err) <= 0 || m.type != SYNC_GO)
    _exit (1);
  /* One call joins them all, the user namespace first; with a nested one,
   * three (namespaces.h): the outer one's rights are needed in between. */
  if (x->nested_userns >= 0 && ar_ns_join_nested (x->pidfd, x->ns_flags, x->nested_userns, x->outer_userns, &err) < 0)
    exec_fail (x, err);
  if (x->nested_userns < 0 && x->ns_flags && syscall (SYS_setns, x->pidfd, (int) x->ns_flags) < 0)
    ar_err (&err, errno, "join the container's namespaces"), exec_fail (x, err);
  close (x->pidfd);
  if (x->nested_userns >= 0)
    close (x->nested_userns), close (x->outer_userns);
  struct clone_args a = { .flags = CLONE_PARENT };
  pid_t pid = (pid_t) syscall (SYS_clone3, &a, sizeof a);
  if (pid < 0)
    ar_err (&err, errno, "clone"), exec_fail (x, err);
  if (pid == 0)
    exec_process (x);
  ar_sync_send (x->sock, SYNC_PID, pid, -1, NULL, NULL);
  _exit (0);
}

struct exec_parent {
  pid_t child1, pid;
  int pidfd; /* the exec'd process */
  int master;
};

static int
exec_converse (struct exec_ctx *x, int sock, struct exec_parent *ep, ar_error **err)
{
  for (;;)
    {
      struct ar_sync_msg m;
      int fd = -1, r = ar_sync_recv (sock, &m, &fd, err);
      if (r < 0)
        return -1;
      if (r == 0)
        return ep->pid > 0 ? 0 : ar_err (err, 0, "the process exited during setup");
      if (m.type == SYNC_PID)
        {
          ep->pid = m.value;
          ep->pidfd = (int) syscall (SYS_pidfd_open, ep->pid, 0);
          if (ep->pidfd < 0)
            return ar_err (err, errno, "pidfd_open %d", (int) ep->pid);
          fcntl (ep->pidfd, F_SETFD, FD_CLOEXEC);
          if (ar_reap (ep->child1) != 0)
            return ar_err (err, 0, "joining the container failed");
          ep->child1 = 0;
        }
      else if (m.type == SYNC_PTY && fd >= 0)
        {
          if (x->o->console_socket)
            {
              int rr = ar_console_socket_send (x->o->console_socket, fd, err);
              close (fd);
              if (rr < 0)
                return -1;
            }
          else
            ep->master = fd;
        }
      else if (m.type == SYNC_SECCOMP_FD && fd >= 0)
        {
          struct ar_cstate cs = *x->st;
          cs.pid = ep->pid;
          cleanup_free char *json = ar_cstate_hook_json (&cs, cs.id, "running");
          int rr = ar_seccomp_send_listener (x->spec->linux_->seccomp, fd, json, err);
          close (fd);
          if (rr < 0)
            return -1;
        }
      else if (m.type == SYNC_ERROR)
        return ar_err (err, 0, "%s", m.text);
      else if (fd >= 0)
        close (fd);
      /* SYNC_READY: keep reading until execve closes the socket. */
    }
}

static int
open_container (struct ar_ctx *ctx, const char *id, bool ignore_paused, struct ar_cstate *st, struct ar_spec **spec,
                ar_error **err)
{
  cleanup_close int dirfd = -1;
  if (ar_validate_id (id, err) < 0 || ar_state_open (ctx->root, id, false, &dirfd, err) < 0)
    return -1;
  int r = ar_cstate_read (dirfd, st, err);
  if (r <= 0)
    return r < 0 ? -1 : ar_err (err, 0, "container \"%s\" is still being created", id);
  const char *status = ar_cstate_status (dirfd, st);
  /* a process joining a frozen cgroup would wait there, and so would we */
  if (strcmp (status, "paused") == 0 && !ignore_paused)
    return ar_err (err, 0, "cannot exec in a paused container (use --ignore-paused to override)");
  if (strcmp (status, "running") != 0 && strcmp (status, "created") != 0 && strcmp (status, "paused") != 0)
    return ar_err (err, 0, "container \"%s\" is %s", id, status);
  return ar_spec_load_file (st->config_path, spec, err);
}

static int
spawn_exec (struct exec_ctx *x, const struct ar_cstate *st, struct exec_parent *ep, ar_error **err)
{
  int sv[2];
  bool in_cgroup;
  if (ar_unixconn_prepare (x->o->id, x->spec, &x->p->user, -1, &x->unixconn_sock, &in_cgroup, err) < 0)
    return -1;
  cleanup_close int uc = x->unixconn_sock; /* the exec'd process's alone after the clone */
  /* the container's cgroup, not a --cgroup sub one: the supervisor's
   * sockets are the container's */
  if (ar_unixconn_cgroup (uc, st->cgroup_path, err) < 0)
    return -1;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return ar_err (err, errno, "socketpair");
  x->sock = sv[1];
  struct clone_args a = { .exit_signal = SIGCHLD };
  ep->child1 = (pid_t) syscall (SYS_clone3, &a, sizeof a);
  if (ep->child1 < 0)
    {
      close (sv[0]);
      close (sv[1]);
      return ar_err (err, errno, "clone");
    }
  if (ep->child1 == 0)
    {
      close (sv[0]);
      exec_child1 (x);
    }
  close (sv[1]);
  close (ar_steal_fd (uc));
  cleanup_close int sock = sv[0];
  ar_fault_point ("exec-after-clone");
  if (st->cgroup_path && ar_cgroup_enter_sub (st->cgroup_path, x->o->cgroups, x->o->n_cgroups, ep->child1, err) < 0)
    return -1;
  ar_fault_point ("exec-after-cgroup");
  if (ar_sync_send (sock, SYNC_GO, 0, -1, NULL, err) < 0)
    return -1;
  return exec_converse (x, sock, ep, err);
}

static void
undo_exec (struct exec_parent *ep)
{
  if (ep->child1 > 0)
    {
      kill (ep->child1, SIGKILL);
      ar_reap (ep->child1);
    }
  if (ep->pid > 0)
    {
      syscall (SYS_pidfd_send_signal, ep->pidfd, SIGKILL, NULL, 0);
      ar_reap (ep->pid);
    }
}

int
ar_container_exec (struct ar_ctx *ctx, const struct ar_exec_opts *o, int *status, ar_error **err)
{
  struct ar_cstate st = { 0 };
  struct ar_spec *spec = NULL;
  struct exec_proc e = { 0 };
  struct exec_ctx x = {
    .o = o, .sock = -1, .pidfd = -1, .rootfd = -1, .unixconn_sock = -1, .nested_userns = -1, .outer_userns = -1
  };
  struct ar_nested_userns nested;
  struct exec_parent ep = { .pidfd = -1, .master = -1 };
  cleanup_free char *root = NULL;
  sigset_t old;
  bool blocked = false;
  int r = -1;

  *status = 0;
  /* CVE-2019-5736 (selfexe.h): a process --cap and --user can make anything
   * must find no writable binary behind /proc/<our pid>/exe */
  if (ar_selfexe_ensure_sealed (err) < 0)
    return -1;
  if (open_container (ctx, o->id, o->ignore_paused, &st, &spec, err) < 0 || build_process (o, spec, &e, err) < 0)
    goto out;
  x.p = &e.p;
  x.spec = spec;
  x.st = &st;
  if (x.p->terminal && o->detach && !o->console_socket)
    {
      ar_err (err, 0, "--tty with --detach needs --console-socket");
      goto out;
    }
  if (spec->linux_ && spec->linux_->seccomp
      && ar_seccomp_compile_cached (spec->linux_->seccomp, ctx->root, &x.prog, err) < 0)
    goto out;
  x.pidfd = ar_cstate_pidfd (&st);
  if (x.pidfd < 0)
    {
      ar_err (err, 0, "container \"%s\" is not running", o->id);
      goto out;
    }
  root = xasprintf ("/proc/%d/root", (int) st.pid);
  x.rootfd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (x.rootfd < 0 || ar_ns_differing (st.pid, &x.ns_flags, err) < 0)
    {
      if (x.rootfd < 0)
        ar_err (err, errno, "open %s", root);
      goto out;
    }
  if (ar_ns_nested_read (spec, &nested, err) < 0
      || ar_ns_open_nested (st.pid, &nested, &x.nested_userns, &x.outer_userns, err) < 0)
    goto out;
  /* The root and namespaces above were reached by pid: if the pidfd's
   * process is still alive now, the pid could not have been recycled in
   * between, so they are the container's and not a newcomer's. */
  if (syscall (SYS_pidfd_send_signal, x.pidfd, 0, NULL, 0) < 0)
    {
      ar_err (err, errno, "container \"%s\": its init exited while joining", o->id);
      goto out;
    }
  /* --user names are the container's: resolved in its root, not ours. */
  if (o->user && !o->process_path)
    {
      if (ar_passwd_resolve (x.rootfd, o->user, &e.p.user, err) < 0)
        goto out;
      e.gids = e.p.user.additional_gids;
    }
  if (o->n_add_gids)
    {
      struct ar_user *u = &e.p.user;
      uint32_t *all = xmalloc0 ((u->n_additional_gids + o->n_add_gids) * sizeof *all);
      if (u->n_additional_gids)
        memcpy (all, u->additional_gids, u->n_additional_gids * sizeof *all);
      memcpy (all + u->n_additional_gids, o->add_gids, o->n_add_gids * sizeof *all);
      free (e.gids);
      e.gids = u->additional_gids = all;
      u->n_additional_gids += o->n_add_gids;
    }
  if (!o->detach)
    {
      if (ar_signals_block (&old, err) < 0)
        goto out;
      blocked = true;
    }
  if (spawn_exec (&x, &st, &ep, err) < 0)
    {
      undo_exec (&ep);
      goto out;
    }
  if (o->pid_file && ar_write_pid_file (o->pid_file, ep.pid, err) < 0)
    {
      undo_exec (&ep);
      goto out;
    }
  ar_fault_point ("exec-before-wait");
  if (o->detach)
    r = 0;
  else
    r = ar_foreground_wait (ep.pid, ep.pidfd, ep.master, -1, NULL, status, err);
out:
  if (blocked)
    sigprocmask (SIG_SETMASK, &old, NULL);
  if (ep.pidfd >= 0)
    close (ep.pidfd);
  if (ep.master >= 0)
    close (ep.master);
  if (x.pidfd >= 0)
    close (x.pidfd);
  if (x.rootfd >= 0)
    close (x.rootfd);
  if (x.nested_userns >= 0)
    close (x.nested_userns);
  if (x.outer_userns >= 0)
    close (x.outer_userns);
  if (x.prog)
    ar_seccomp_prog_free (x.prog);
  exec_proc_free (&e);
  if (spec)
    ar_spec_free (spec);
  ar_cstate_clear (&st);
  return r;
}
