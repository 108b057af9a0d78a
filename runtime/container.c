/* The container choreography, parent side: create (clone, maps, cgroup,
 * hooks, state), start (the exec fifo), run, kill, delete. Every step of
 * create that fails undoes the steps before it. */
#include "config.h"
#include "container.h"
#include "lsm.h"
#include "mounts.h"
#include "pid1.h"
#include "cgroups.h"
#include "caps.h"
#include "hooks.h"
#include "log.h"
#include "namespaces.h"
#include "rootless.h"
#include "seccomp.h"
#include "unixconn.h"
#include "selfexe.h"
#include "fault.h"
#include "signals.h"
#include "spec.h"
#include "state.h"
#include "sync.h"
#include "terminal.h"
#include "util.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* What a create leaves for run (foreground) and for undoing. */
struct created {
  struct ar_spec *spec;
  struct ar_cstate st;
  int lockfd;
  pid_t child1;
  pid_t init;
  int init_pidfd;
  int root_fd; /* the container's /, when the foreground wait asks for it */
  int master; /* pty master kept for a foreground run */
  int init_sock; /* a foreground run's line to our pid 1 (pid1.h), or -1 */
};

static void
created_init (struct created *c)
{
  memset (c, 0, sizeof *c);
  c->lockfd = c->init_pidfd = c->root_fd = c->master = c->init_sock = -1;
}

static void
created_free (struct created *c)
{
  if (c->spec)
    ar_spec_free (c->spec);
  ar_cstate_clear (&c->st);
  if (c->lockfd >= 0)
    close (c->lockfd);
  if (c->init_pidfd >= 0)
    close (c->init_pidfd);
  if (c->root_fd >= 0)
    close (c->root_fd);
  if (c->master >= 0)
    close (c->master);
  if (c->init_sock >= 0)
    close (c->init_sock);
  created_init (c);
}

static bool
is_rootless (struct ar_ctx *ctx)
{
  return ar_rootless_detect (ctx->rootless);
}

int
ar_reap (pid_t pid)
{
  int ws;
  pid_t r;
  do
    r = waitpid (pid, &ws, 0);
  while (r < 0 && errno == EINTR);
  return r < 0 ? -1 : ws;
}

static int
copy_file (const char *from, int dirfd, const char *to, ar_error **err)
{
  cleanup_close int in = open (from, O_RDONLY | O_CLOEXEC);
  cleanup_close int out = -1;
  char buf[65536];
  ssize_t n;

  if (in < 0)
    return ar_err (err, errno, "open %s", from);
  out = openat (dirfd, to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (out < 0)
    return ar_err (err, errno, "create state copy %s", to);
  while ((n = read (in, buf, sizeof buf)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      ssize_t w = n < 0 ? -1 : write (out, buf, (size_t) n);
      if (w < 0)
        return ar_err (err, errno, "copy %s into the state folder", from);
      if (w != n)
        return ar_err (err, EIO, "copy %s into the state folder: short write", from);
    }
  return 0;
}

int
ar_write_pid_file (const char *path, pid_t pid, ar_error **err)
{
  cleanup_free char *tmp = xasprintf ("%s.tmp", path);
  char buf[32];
  int len = snprintf (buf, sizeof buf, "%d", (int) pid);

  /* The folder may be writable by others (/tmp): we are root, so the temp
   * file is made fresh (O_EXCL never follows a symlink) after removing
   * whatever stands at its name; one planted again in between makes the
   * open fail rather than write through it. */
  if (unlink (tmp) < 0 && errno != ENOENT)
    return ar_err (err, errno, "--pid-file: remove the stale %s", tmp);
  cleanup_close int fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return ar_err (err, errno, "--pid-file: create %s", tmp);
  ssize_t w = write (fd, buf, (size_t) len);
  if (w != len)
    return ar_err (err, w < 0 ? errno : EIO, "--pid-file: write %s", tmp);
  if (rename (tmp, path) < 0)
    return ar_err (err, errno, "--pid-file: rename to %s", path);
  return 0;
}

int
ar_container_check (const struct ar_spec *s, const char *label, const char *bundle, char **rootfs, ar_error **err)
{
  if (!s->process || !s->process->n_args)
    return ar_err (err, 0, "%s: process.args: a container needs a process to run", label);
  if (!s->root || !s->root->path)
    return ar_err (err, 0, "%s: root.path: missing", label);
  if (!ar_ns_listed (s->linux_, AR_NS_MOUNT))
    return ar_err (err, 0, "%s: linux.namespaces: a mount namespace is required", label);
  if (ar_caps_check (s->process->capabilities, err) < 0 || ar_lsm_check (s, label, err) < 0)
    return -1;
  if (!bundle)
    return 0;
  cleanup_free char *root = s->root->path[0] == '/' ? xstrdup (s->root->path)
                                                    : xasprintf ("%s/%s", bundle, s->root->path);
  cleanup_free char *real = realpath (root, NULL);
  if (!real)
    return ar_err (err, errno, "rootfs %s", root);
  if (rootfs)
    *rootfs = ar_steal_ptr (real);
  return 0;
}

static bool
no_caps (const struct ar_caps *c)
{
  return !c || (!c->n_bounding && !c->n_effective && !c->n_inheritable && !c->n_permitted && !c->n_ambient);
}

bool
ar_container_confined_to (const struct ar_spec *s, uid_t uid)
{
  const struct ar_linux *l = s->linux_;
  if (!l || !s->process || !no_caps (s->process->capabilities) || !s->process->no_new_privileges)
    return false;
  bool own_userns = false;
  for (size_t i = 0; i < l->n_namespaces; i++)
    if (l->namespaces[i].type == AR_NS_USER)
      own_userns = !l->namespaces[i].path;
  return own_userns && l->n_uid_mappings == 1 && l->uid_mappings[0].size == 1 && l->uid_mappings[0].host_id == uid
         && l->n_gid_mappings == 1 && l->gid_mappings[0].size == 1;
}

/* CVE-2019-5736 (selfexe.h), before anything exists to lose: re-execute
 * from the sealed copy, or, for one_uid, only make sure none is needed. */
static int
seal_self (const struct ar_create_opts *o, ar_error **err)
{
  return o->one_uid ? 0 : ar_selfexe_ensure_sealed (err);
}

static int
check_one_uid (const struct ar_create_opts *o, const struct ar_spec *s, ar_error **err)
{
  if (!o->one_uid)
    return 0;
  if (!ar_container_confined_to (s, o->uid))
    return ar_err (err, 0,
                   "the container is not confined to uid %u alone (its own user namespace mapping only "
                   "it, no capabilities, no_new_privs): it must run from a sealed copy of agentrun",
                   (unsigned) o->uid);
  if (!ar_selfexe_safe_for (o->uid))
    return ar_err (err, 0,
                   "uid %u could write the agentrun binary and this process does not run from a sealed "
                   "copy of it",
                   (unsigned) o->uid);
  return 0;
}

/* Load and check everything that needs no process yet. */
static int
load_bundle (const struct ar_create_opts *o, struct created *c, char **config_abs, ar_error **err)
{
  cleanup_free char *bundle = NULL;
  const char *b = o->bundle && *o->bundle ? o->bundle : ".";

  if (ar_validate_id (o->id, err) < 0)
    return -1;
  bundle = realpath (b, NULL);
  if (!bundle)
    return ar_err (err, errno, "bundle %s", b);
  *config_abs = o->config_path ? realpath (o->config_path, NULL) : xasprintf ("%s/config.json", bundle);
  if (!*config_abs)
    return ar_err (err, errno, "--config %s", o->config_path);
  if (ar_spec_load_file (*config_abs, &c->spec, err) < 0)
    return -1;
  const struct ar_spec *s = c->spec;
  if (ar_container_check (s, *config_abs, bundle, &c->st.rootfs, err) < 0)
    return -1;
  c->st.bundle = ar_steal_ptr (bundle);
  c->st.id = xstrdup (o->id);
  c->st.created = ar_rfc3339_now ();
  c->st.owner = xstrdup ("");
  c->st.annotations = xmalloc0 (s->n_annotations * sizeof *c->st.annotations);
  for (size_t i = 0; i < s->n_annotations; i++)
    {
      c->st.annotations[i].key = xstrdup (s->annotations[i].key);
      c->st.annotations[i].value = xstrdup (s->annotations[i].value);
    }
  c->st.n_annotations = s->n_annotations;
  return 0;
}

/* Undo a failed create: processes, cgroup, state folder. Mounts live in the
 * container's mount namespace and go with its last process. */
static void
undo_create (struct ar_ctx *ctx, struct created *c)
{
  cleanup_error ar_error *err = NULL;
  if (c->init > 0)
    {
      if (c->init_pidfd >= 0)
        syscall (SYS_pidfd_send_signal, c->init_pidfd, SIGKILL, NULL, 0);
      else
        kill (c->init, SIGKILL);
      ar_reap (c->init);
    }
  if (c->child1 > 0)
    {
      kill (c->child1, SIGKILL);
      ar_reap (c->child1);
    }
  if (c->st.cgroup_path)
    {
      ar_cgroup_kill_all (c->st.cgroup_path, SIGKILL, NULL);
      if (ar_cgroup_systemd_stop (c->st.systemd_unit, &err) < 0)
        ar_warn ("undo create: %s", err->msg);
      ar_error_freep (&err);
      if (ar_cgroup_destroy (c->st.cgroup_path, &err) < 0)
        ar_warn ("undo create: %s", err->msg);
    }
  ar_error_freep (&err);
  if (c->st.id && ar_state_remove (ctx->root, c->st.id, &err) < 0)
    ar_warn ("undo create: %s", err->msg);
}

struct parent_io {
  struct ar_ctx *ctx;
  const struct ar_create_opts *o;
  struct created *c;
  int sock;
  bool foreground;
  bool devices_pending; /* the device rules wait for the init's mounts */
};

/* Hold the init by a pidfd and note its start time (state.json). It is our
 * child (CLONE_PARENT): the pid cannot be reused before we reap it. */
static int
note_init (struct created *c, pid_t pid, ar_error **err)
{
  c->init = pid;
  c->init_pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (c->init_pidfd < 0)
    return ar_err (err, errno, "pidfd_open %d", (int) pid);
  fcntl (c->init_pidfd, F_SETFD, FD_CLOEXEC);
  c->st.pid = pid;
  c->st.pid_start = ar_proc_start_time (pid);
  if (!c->st.pid_start)
    return ar_err (err, ESRCH, "read start time of container init %d", (int) pid);
  ar_fault_point ("create-after-pid");
  return 0;
}

static int
on_pid (struct parent_io *io, pid_t pid, ar_error **err)
{
  struct created *c = io->c;
  c->init = pid; /* undo_create kills it from here on */
  int ws = ar_reap (c->child1);
  c->child1 = 0;
  if (ws != 0)
    return ar_err (err, 0, "container setup process failed (status %d)", ws);
  if (note_init (c, pid, err) < 0)
    return -1;
  return ar_sync_send (io->sock, SYNC_PID_ACK, pid, -1, NULL, err);
}

static int
write_idmaps (struct parent_io *io, pid_t pid, ar_error **err)
{
  const struct ar_linux *lnx = io->c->spec->linux_;
  return is_rootless (io->ctx) ? ar_rootless_write_idmaps (pid, lnx, err) : ar_ns_write_idmaps (pid, lnx, false, err);
}

/* The cgroup of a direct init that joins by itself (sync.h cg_after_go),
 * made while it mounts: its "tasks" files go to it, one message each, and
 * it joins when it reads our ack of its pid. Files it cannot use: joined
 * from here instead (a wait for the kernel's grace period). */
static int
cgroup_after_go (struct parent_io *io, ar_error **err)
{
  struct created *c = io->c;
  cleanup_close int cgfd = -1;
  int fds[4];
  size_t n = 0;
  if (ar_cgroup_create_early (io->ctx->cgroup_manager, c->st.id, c->spec->linux_, is_rootless (io->ctx),
                              &c->st.cgroup_path, &cgfd, err)
      < 0)
    return -1;
  ar_fault_point ("create-after-cgroup");
  if (!c->st.cgroup_path)
    return 0;
  cleanup_error ar_error *jerr = NULL;
  if (ar_cgroup_self_join_fds (c->st.cgroup_path, false, fds, ARRAY_SIZE (fds), &n, &jerr) < 0)
    {
      ar_debug ("the init cannot join by itself (%s): joined from here", jerr->msg);
      return ar_cgroup_enter (c->st.cgroup_path, c->init, err);
    }
  int r = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (r == 0 && ar_sync_send (io->sock, SYNC_CGROUP_JOIN, 0, fds[i], NULL, err) < 0)
        r = -1;
      close (fds[i]);
    }
  return r;
}

/* The init cloned in its namespaces (init.c ar_init_direct): what child1
 * would have asked for is done before the go, and the pid it would have
 * sent is known here: four messages fewer. */
static int
direct_go (struct parent_io *io, bool new_userns, bool cg_after_go, ar_error **err)
{
  struct created *c = io->c;
  pid_t pid = c->init;
  /* the go first: the init makes its mounts while we take note of it
   * (and make its cgroup) */
  if ((new_userns && write_idmaps (io, pid, err) < 0) || ar_sync_send (io->sock, SYNC_GO, 0, -1, NULL, err) < 0
      || note_init (c, pid, err) < 0 || (cg_after_go && cgroup_after_go (io, err) < 0))
    return -1;
  return ar_sync_send (io->sock, SYNC_PID_ACK, pid, -1, NULL, err);
}

static int
on_hooks (struct parent_io *io, ar_error **err)
{
  struct created *c = io->c;
  /* the nodes are made: confine them before any hook or process runs */
  if (io->devices_pending
      && ar_cgroup_apply_devices (io->ctx->cgroup_manager, c->st.cgroup_path, c->spec->linux_, is_rootless (io->ctx), err)
             < 0)
    return -1;
  io->devices_pending = false;
  const struct ar_hooks *h = &c->spec->hooks;
  /* the state each hook reads, written only for hooks that read it */
  cleanup_free char *st = h->n[AR_HOOK_PRESTART] || h->n[AR_HOOK_CREATE_RUNTIME]
                              ? ar_cstate_hook_json (&c->st, c->st.id, "creating")
                              : NULL;
  if (st && (ar_hooks_run (h, AR_HOOK_PRESTART, st, err) < 0 || ar_hooks_run (h, AR_HOOK_CREATE_RUNTIME, st, err) < 0))
    return -1;
  ar_fault_point ("create-after-hooks");
  return ar_sync_send (io->sock, SYNC_HOOKS_ACK, 0, -1, NULL, err);
}

static int
on_pty (struct parent_io *io, int fd, ar_error **err)
{
  if (fd < 0)
    return ar_err (err, 0, "sync: the pty message carried no fd");
  if (io->o->console_socket)
    {
      int r = ar_console_socket_send (io->o->console_socket, fd, err);
      close (fd);
      return r;
    }
  io->c->master = fd;
  return 0;
}

static int
on_seccomp_fd (struct parent_io *io, int fd, ar_error **err)
{
  struct created *c = io->c;
  cleanup_free char *st = ar_cstate_hook_json (&c->st, c->st.id, "creating");
  int r = ar_seccomp_send_listener (c->spec->linux_->seccomp, fd, st, err);
  close (fd);
  return r;
}

static int
on_ready (struct parent_io *io, ar_error **err)
{
  struct created *c = io->c;
  if (ar_cstate_write (c->lockfd, &c->st, err) < 0)
    return -1;
  if (io->o->pid_file && ar_write_pid_file (io->o->pid_file, c->init, err) < 0)
    return -1;
  ar_debug ("create: the init is ready, state written");
  ar_fault_point ("create-before-commit");
  return ar_sync_send (io->sock, SYNC_COMMIT, 0, -1, NULL, err);
}

/* A step of ours failed (a broken pipe, the init's start time gone): the
 * init may have failed first, its report queued behind. When it is there,
 * it says why; ours only says the init is gone. */
static int
prefer_init_error (struct parent_io *io, ar_error **err)
{
  struct pollfd p = { .fd = io->sock, .events = POLLIN };
  struct ar_sync_msg m;
  int fd = -1;
  ar_error *e2 = NULL;
  while (poll (&p, 1, 0) == 1 && ar_sync_recv (io->sock, &m, &fd, &e2) == 1)
    {
      if (fd >= 0)
        close (fd);
      fd = -1;
      if (m.type == SYNC_ERROR)
        {
          ar_error_freep (err);
          return ar_err (err, 0, "%s", m.text);
        }
    }
  ar_error_freep (&e2);
  return -1;
}

/* Answer the children until the init is ready or something failed. */
static int
converse (struct parent_io *io, ar_error **err)
{
  struct created *c = io->c;
  for (;;)
    {
      struct ar_sync_msg m;
      int fd = -1, r = ar_sync_recv (io->sock, &m, &fd, err);
      /* an init that failed and exited with a message of ours unread
       * resets the socket, and the kernel reports that before the report
       * it queued: read on for it */
      if (r < 0)
        return *err && (*err)->errnum == ECONNRESET ? prefer_init_error (io, err) : -1;
      if (r == 0)
        return ar_err (err, 0, "container init exited during create");
      if (fd >= 0 && m.type != SYNC_PTY && m.type != SYNC_SECCOMP_FD && m.type != SYNC_READY)
        close (fd);
      switch (m.type)
        {
        case SYNC_USERMAP:
          if (write_idmaps (io, c->child1, err) < 0 || ar_sync_send (io->sock, SYNC_USERMAP_ACK, 0, -1, NULL, err) < 0)
            return -1;
          break;
        /* the init goes on with its mounts while we note its pid */
        case SYNC_PID:
          if (on_pid (io, m.value, err) < 0)
            return prefer_init_error (io, err);
          break;
        case SYNC_HOOKS:
          if (on_hooks (io, err) < 0)
            return -1;
          break;
        case SYNC_PTY:
          if (on_pty (io, fd, err) < 0)
            return -1;
          break;
        case SYNC_SECCOMP_FD:
          if (on_seccomp_fd (io, fd, err) < 0)
            return -1;
          break;
        case SYNC_READY:
          if (c->root_fd >= 0)
            close (c->root_fd);
          c->root_fd = fd;
          /* fail closed: never ready with the device rules unapplied */
          if (io->devices_pending)
            return ar_err (err, 0, "cgroup: the init did not stop for the device rules to be applied");
          /* without runtime hooks the init did not stop for them */
          if (!ar_sync_init_stops (c->spec))
            ar_fault_point ("create-after-hooks");
          return on_ready (io, err);
        case SYNC_ERROR: return ar_err (err, 0, "%s", m.text);
        default: return ar_err (err, 0, "sync: unexpected message %d", m.type);
        }
    }
}

/* With cgroup_fd >= 0 the child starts in that cgroup (cgroup2 only);
 * ns_flags are the namespaces it is born in. */
static pid_t
clone_child (int cgroup_fd, unsigned long ns_flags)
{
  struct clone_args a = { .flags = ns_flags, .exit_signal = SIGCHLD };
  if (cgroup_fd >= 0)
    {
      a.flags |= CLONE_INTO_CGROUP;
      a.cgroup = (uint64_t) cgroup_fd;
    }
  return (pid_t) syscall (SYS_clone3, &a, sizeof a);
}

/* The init can be cloned straight into all its new namespaces (one process
 * fewer, as bubblewrap does) unless something must happen between them:
 * joining namespaces by path (the user namespace first), time offsets
 * (written before the first process enters), an oom_score_adj set while
 * /proc/self is still the host's. */
static bool
direct_init_possible (const struct ar_init_ctx *ic, bool cgroup_after_clone)
{
  for (int i = 0; i < AR_NS_N; i++)
    if (ic->ns_fds[i] >= 0)
      return false;
  /* a cgroup namespace is rooted where its creator is: in the container's
   * cgroup only if the init is born there */
  if ((ic->new_flags & CLONE_NEWCGROUP) && cgroup_after_clone)
    return false;
  return !(ic->new_flags & 0x80 /* CLONE_NEWTIME */) && !ic->spec->process->has_oom_score_adj;
}

/* A cgroup file system mounted in the container shows the cgroup namespace
 * it was mounted in: that one must be made before the mounts. */
static bool
mounts_cgroupfs (const struct ar_spec *spec)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    if (spec->mounts[i].type
        && (strcmp (spec->mounts[i].type, "cgroup") == 0 || strcmp (spec->mounts[i].type, "cgroup2") == 0))
      return true;
  return false;
}

/* The first child: the init itself when possible, else child1 (init.c).
 * *joined: it was born in the cgroup. A direct clone that fails is tried
 * again the two-step way, whose error says which namespace and why. */
static pid_t
clone_first (struct ar_init_ctx *ic, int cgfd, bool *joined)
{
  unsigned long ns = ic->direct ? ic->new_flags : 0;
  /* born outside its cgroup, it makes that namespace once inside */
  if (ic->direct && (ic->n_cg_join || ic->cg_after_go))
    ns &= ~(unsigned long) CLONE_NEWCGROUP;
  pid_t pid = clone_child (cgfd, ns);
  *joined = cgfd >= 0 && pid >= 0;
  /* a kernel before 5.7 knows no CLONE_INTO_CGROUP: join the usual way
   * (not with a cgroup namespace made at clone: it would be rooted here) */
  if (pid < 0 && cgfd >= 0 && (errno == EINVAL || errno == E2BIG) && !(ns & CLONE_NEWCGROUP))
    pid = clone_child (-1, ns);
  if (pid < 0 && ic->direct)
    {
      /* child1 makes every namespace, after we joined it to the cgroup */
      ic->direct = false;
      ic->cg_after_go = false;
      for (; ic->n_cg_join; ic->n_cg_join--)
        close (ic->cg_join_fds[ic->n_cg_join - 1]);
      return clone_first (ic, cgfd, joined);
    }
  return pid;
}

static void
init_ctx_free (struct ar_init_ctx *ic)
{
  ar_ns_close (ic->ns_fds);
  if (ic->state_fd >= 0)
    close (ic->state_fd);
  if (ic->sock >= 0)
    close (ic->sock);
  if (ic->unixconn_sock >= 0)
    close (ic->unixconn_sock);
  if (ic->unixconn_mine >= 0)
    close (ic->unixconn_mine);
  if (ic->prog)
    ar_seccomp_prog_free (ic->prog);
  if (ic->connect_filter)
    ar_seccomp_prog_free (ic->connect_filter);
  ar_hook_fds_close (&ic->cc_hooks);
  ar_hook_fds_close (&ic->sc_hooks);
  ar_mounts_close_binds (ic->bind_fds, ic->spec ? ic->spec->n_mounts : 0);
  ic->bind_fds = NULL;
}

/* Rootless, the init's host uid is a subordinate one we cannot chown to:
 * let it write the fifo through the mode instead. Only safe when no other
 * host user can reach the folder, i.e. the state root is ours and private. */
static int
fifo_open_to_init (int dirfd, const char *root, uint32_t uid, ar_error **err)
{
  struct stat st;
  if (stat (root, &st) < 0)
    return ar_err (err, errno, "stat state root %s", root);
  if (st.st_uid != geteuid () || (st.st_mode & 077))
    return ar_err (err, 0,
                   "rootless: the container's init is host uid %u, which cannot own exec.fifo, and the state "
                   "root %s is not private (mode %04o): use a state root only you can enter (chmod 700)",
                   uid, root, (unsigned) (st.st_mode & 07777));
  if (fchmodat (dirfd, AR_STATE_FIFO, 0622, 0) < 0)
    return ar_err (err, errno, "chmod " AR_STATE_FIFO);
  return 0;
}

/* The init opens exec.fifo as the container's root: in a new user namespace
 * that is a host uid other than ours, so the fifo must be its own. */
static int
fifo_owner (int dirfd, const struct ar_linux *lnx, const struct ar_process *proc, bool userns, const char *root,
            ar_error **err)
{
  uint32_t cuid, cgid, uid = geteuid (), gid = getegid ();
  if (!userns || !lnx->n_uid_mappings)
    return 0;
  /* The ids enter_user_ns (init.c) switches to; else it keeps ours. */
  if (ar_ns_init_ids (lnx, &proc->user, &cuid, &cgid)
      && (ar_ns_host_id (lnx->uid_mappings, lnx->n_uid_mappings, cuid, &uid) < 0
          || ar_ns_host_id (lnx->gid_mappings, lnx->n_gid_mappings, cgid, &gid) < 0))
    return ar_err (err, 0, "user namespace: ids %u:%u are not mapped", cuid, cgid);
  if (fchownat (dirfd, AR_STATE_FIFO, uid, gid, AT_SYMLINK_NOFOLLOW) == 0)
    return 0;
  if (errno != EPERM || !root)
    return ar_err (err, errno, "chown " AR_STATE_FIFO " to %u:%u", uid, gid);
  return fifo_open_to_init (dirfd, root, uid, err);
}

/* Everything the children need, opened while errors are still easy. */
static int
prepare_init (struct ar_ctx *ctx, const struct ar_create_opts *o, struct created *c, struct ar_init_ctx *ic,
              ar_error **err)
{
  const struct ar_linux *lnx = c->spec->linux_;
  *ic = (struct ar_init_ctx){ .spec = c->spec,
                              .id = c->st.id,
                              .bundle = c->st.bundle,
                              .rootfs = c->st.rootfs,
                              .no_pivot = o->no_pivot,
                              .no_new_keyring = o->no_new_keyring,
                              .preserve_fds = o->preserve_fds,
                              .sock = -1,
                              .state_fd = -1,
                              .unixconn_sock = -1,
                              .unixconn_mine = -1,
                              .die_with_parent = o->die_with_parent,
                              .send_root = o->fg_ops && o->fg_ops->root_fd,
                              .exec_env = o->exec_env,
                              .n_exec_env = o->n_exec_env };
  for (int i = 0; i < AR_NS_N; i++)
    ic->ns_fds[i] = -1;
  ic->new_flags = ar_ns_new_flags (lnx);
  ic->userns = ar_ns_listed (lnx, AR_NS_USER);
  ic->rootless = is_rootless (ctx);
  if (ar_ns_open_paths (lnx, ic->ns_fds, err) < 0 || ar_ns_nested_read (c->spec, &ic->nested, err) < 0)
    return -1;
  /* Root of a user namespace (podman rootless) already has its rights
   * there; an unprivileged user has none without a new one. */
  if (!ic->userns && is_rootless (ctx) && geteuid () != 0)
    return ar_err (err, 0, "rootless containers need a user namespace (linux.namespaces)");
  /* Refuse a map we could not write now, with the reason, not after clone. */
  if (is_rootless (ctx) && (ic->new_flags & CLONE_NEWUSER) && ar_rootless_check_idmaps (lnx, err) < 0)
    return -1;
  cleanup_free char *dir = xasprintf ("%s/%s", ctx->root, c->st.id);
  ic->state_fd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (ic->state_fd < 0)
    return ar_err (err, errno, "open state folder %s", dir);
  if (mkfifoat (c->lockfd, AR_STATE_FIFO, 0600) < 0)
    return ar_err (err, errno, "mkfifo %s/" AR_STATE_FIFO, dir);
  if (fifo_owner (c->lockfd, lnx, c->spec->process, ic->userns && (ic->new_flags & CLONE_NEWUSER),
                  is_rootless (ctx) ? ctx->root : NULL, err)
      < 0)
    return -1;
  if (lnx && lnx->seccomp && ar_seccomp_compile_cached (lnx->seccomp, ctx->root, &ic->prog, err) < 0)
    return -1;
  if (ar_unixconn_validate (c->spec, err) < 0
      || ar_unixconn_pair (c->spec, &ic->unixconn_sock, &ic->unixconn_mine, err) < 0
      || ar_unixconn_build (c->spec->annotations, c->spec->n_annotations, ctx->root, &ic->connect_filter, err) < 0)
    return -1;
  if (ar_hooks_open (&c->spec->hooks, AR_HOOK_CREATE_CONTAINER, &ic->cc_hooks, err) < 0
      || ar_hooks_open (&c->spec->hooks, AR_HOOK_START_CONTAINER, &ic->sc_hooks, err) < 0)
    return -1;
  /* as runc: sources are opened with our access, not the namespace's */
  if (ic->userns && !is_rootless (ctx))
    ic->bind_fds = ar_mounts_open_binds (c->spec, c->st.bundle);
  return 0;
}

/* Before the cgroup exists, write where it will be: if this process is
 * killed between making it and committing state.json, delete --force still
 * finds it (state.json, once written, carries the path). */
static int
record_pending_cgroup (struct ar_ctx *ctx, struct created *c, bool *has_cgroup, ar_error **err)
{
  cleanup_free char *path = NULL;
  if (ar_cgroup_resolve (ctx->cgroup_manager, c->st.id, c->spec->linux_, &path, err) < 0)
    return -1;
  *has_cgroup = path != NULL;
  if (!path)
    return 0;
  cleanup_close int fd = openat (c->lockfd, AR_STATE_CGROUP_PENDING,
                                 O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return ar_err (err, errno, "create %s in the state folder", AR_STATE_CGROUP_PENDING);
  size_t len = strlen (path);
  if (write (fd, path, len) != (ssize_t) len)
    return ar_err (err, errno ? errno : EIO, "write %s in the state folder", AR_STATE_CGROUP_PENDING);
  return 0;
}

/* In the first child: the stdio the caller chose for the container. */
static void
take_stdio (const int *stdio, int sock)
{
  for (int i = 0; stdio && i < 3; i++)
    if (stdio[i] >= 0 && dup2 (stdio[i], i) < 0)
      {
        ar_sync_send (sock, SYNC_ERROR, errno, -1, "set the container's stdio", NULL);
        _exit (1);
      }
}

static int
spawn (struct ar_ctx *ctx, const struct ar_create_opts *o, struct created *c, struct ar_init_ctx *ic, bool foreground,
       ar_error **err)
{
  int sv[2];
  const char *mgr = ctx->cgroup_manager;
  cleanup_close int cgfd = -1;
  bool has_cgroup;
  if (record_pending_cgroup (ctx, c, &has_cgroup, err) < 0)
    return -1;
  /* one the init joins after its clone anyway (v1, hybrid), by itself: it
   * is made after the clone too, while the init mounts (cgroup_after_go) */
  ic->cg_after_go = has_cgroup && !mounts_cgroupfs (c->spec) && direct_init_possible (ic, false)
                    && ar_cgroup_joined_after_clone (mgr, c->st.id, c->spec->linux_);
  bool after_go = ic->cg_after_go;
  if (!after_go
      && ar_cgroup_create_early (mgr, c->st.id, c->spec->linux_, is_rootless (ctx), &c->st.cgroup_path, &cgfd, err) < 0)
    return -1;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return ar_err (err, errno, "socketpair");
  ic->sock = sv[1];
  /* made but not joined (v1, some controllers only): a direct init joins
   * by itself, and makes its cgroup namespace then; else we join it */
  bool join_late = c->st.cgroup_path && cgfd < 0;
  bool by_itself = join_late && !mounts_cgroupfs (c->spec);
  ic->direct = after_go || direct_init_possible (ic, has_cgroup && cgfd < 0 && !by_itself);
  cleanup_error ar_error *jerr = NULL;
  if (ic->direct && by_itself
      && ar_cgroup_self_join_fds (c->st.cgroup_path, false, ic->cg_join_fds, ARRAY_SIZE (ic->cg_join_fds),
                                  &ic->n_cg_join, &jerr)
             < 0)
    {
      ar_debug ("the init cannot join by itself (%s): joined from here", jerr->msg);
      ic->direct = direct_init_possible (ic, has_cgroup && cgfd < 0);
    }
  bool joined;
  pid_t first = clone_first (ic, cgfd, &joined);
  if (first > 0)
    ar_debug ("create: init %d cloned", (int) first);
  if (first < 0)
    {
      int e = errno;
      close (sv[0]);
      for (size_t i = 0; i < ic->n_cg_join; i++)
        close (ic->cg_join_fds[i]);
      ic->n_cg_join = 0;
      return ar_err (err, e, "clone");
    }
  if (first == 0)
    {
      close (sv[0]);
      close (c->lockfd); /* the lock must not outlive create in the container */
      if (ic->unixconn_mine >= 0)
        close (ic->unixconn_mine); /* the supervisor's end is never the container's */
      take_stdio (o->stdio, ic->sock);
      ar_init_close_fds (ic);
      if (ic->direct)
        ar_init_direct (ic);
      ar_init_child1 (ic);
    }
  /* undo_create kills whichever it is */
  *(ic->direct ? &c->init : &c->child1) = first;
  close (ic->sock);
  ic->sock = -1;
  cleanup_close int sock = sv[0];
  ar_fault_point ("create-after-clone");
  /* the init's copies of the tasks files are its own */
  bool self_join = ic->direct && ic->n_cg_join;
  for (; ic->n_cg_join; ic->n_cg_join--)
    close (ic->cg_join_fds[ic->n_cg_join - 1]);
  /* the direct clone failed: child1 is joined from here, before the go */
  if (after_go && !ic->cg_after_go)
    {
      if (ar_cgroup_create_early (mgr, c->st.id, c->spec->linux_, is_rootless (ctx), &c->st.cgroup_path, &cgfd, err) < 0)
        return -1;
      join_late = c->st.cgroup_path != NULL;
    }
  /* else made and joined after the go (direct_go) */
  if (!ic->cg_after_go)
    {
      if (cgfd >= 0   ? !joined && ar_cgroup_enter (c->st.cgroup_path, first, err) < 0
          : join_late ? !self_join && ar_cgroup_enter (c->st.cgroup_path, first, err) < 0
                      : ar_cgroup_create (mgr, c->st.id, c->spec->linux_, first, is_rootless (ctx), &c->st.cgroup_path,
                                          &c->st.systemd_unit, err)
                            < 0)
        return -1;
      ar_fault_point ("create-after-cgroup");
    }
  struct parent_io io = { .ctx = ctx, .o = o, .c = c, .sock = sock, .foreground = foreground };
  io.devices_pending = c->st.cgroup_path && ar_cgroup_devices_deferred (c->spec->linux_);
  if (ic->direct ? direct_go (&io, ic->new_flags & CLONE_NEWUSER, ic->cg_after_go, err) < 0
                 : ar_sync_send (sock, SYNC_GO, 0, -1, NULL, err) < 0)
    return ic->direct ? prefer_init_error (&io, err) : -1;
  /* the init makes its mounts meanwhile: this fork is off the start's
   * path; the supervisor is born in the cgroup (cgroup2), or is handed its
   * files to join it by itself before it makes any socket */
  bool sup_in_cgroup = false;
  if (ar_unixconn_spawn (c->st.id, c->spec, &c->spec->process->user, cgfd, &ic->unixconn_mine, &sup_in_cgroup, err) < 0
      || ar_unixconn_cgroup (ic->unixconn_sock, sup_in_cgroup ? NULL : c->st.cgroup_path, err) < 0)
    return -1;
  /* then the supervisor's end is the container's alone: its EOF says the init is gone */
  if (ic->unixconn_sock >= 0)
    close (ar_steal_fd (ic->unixconn_sock));
  if (converse (&io, err) < 0)
    return -1;
  /* our pid 1 tells a foreground run when the command stops */
  if (foreground && ar_pid1_wanted (c->spec))
    c->init_sock = ar_steal_fd (sock);
  return 0;
}

static int
create_internal (struct ar_ctx *ctx, const struct ar_create_opts *o, bool foreground, struct created *c, ar_error **err)
{
  cleanup_free char *config_abs = NULL;
  struct ar_init_ctx ic = { .sock = -1, .state_fd = -1, .unixconn_sock = -1, .unixconn_mine = -1 };
  bool have_state = false;
  int r = -1;

  for (int i = 0; i < AR_NS_N; i++)
    ic.ns_fds[i] = -1;
  if (load_bundle (o, c, &config_abs, err) < 0 || check_one_uid (o, c->spec, err) < 0)
    goto out;
  if (c->spec->process->terminal && !o->console_socket && !foreground)
    {
      ar_err (err, 0, "process.terminal is set: --console-socket is required when detached");
      goto out;
    }
  if (ar_state_create (ctx->root, o->id, &c->lockfd, err) < 0)
    goto out;
  have_state = true;
  if (copy_file (config_abs, c->lockfd, AR_STATE_CONFIG, err) < 0)
    goto out;
  c->st.config_path = xasprintf ("%s/%s/" AR_STATE_CONFIG, ctx->root, o->id);
  ar_fault_point ("create-after-state");
  if (prepare_init (ctx, o, c, &ic, err) < 0 || spawn (ctx, o, c, &ic, foreground, err) < 0)
    goto out;
  r = 0;
out:
  init_ctx_free (&ic);
  if (r < 0 && have_state)
    undo_create (ctx, c);
  return r;
}

int
ar_container_create (struct ar_ctx *ctx, const struct ar_create_opts *o, ar_error **err)
{
  struct created c;
  if (seal_self (o, err) < 0)
    return -1;
  created_init (&c);
  int r = create_internal (ctx, o, false, &c, err);
  created_free (&c);
  return r;
}

/* What the fifo carried before EOF (sync.h): records ending in '\0'. None
 * is a start that worked. A failed init exits right after its report:
 * wait for that (bounded), so the container reads as stopped once start
 * has failed. A helper's report leaves the init running the command
 * without its helper: kill it first. */
static int
start_report (const struct ar_cstate *st, int pidfd, const char *msg, size_t len, ar_error **err)
{
  const char *init_fail = NULL, *helper_fail = NULL;
  size_t hl = strlen (AR_START_REPORT_HELPER);
  if (len == 0)
    return 0;
  for (size_t i = 0; i < len; i += strlen (msg + i) + 1)
    if (msg[i] == 'E' && !init_fail)
      init_fail = msg + i + 1;
    else if (strncmp (msg + i, AR_START_REPORT_HELPER, hl) == 0 && !helper_fail)
      helper_fail = msg + i + hl;
  if (!init_fail && syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH)
    ar_warn ("container \"%s\": kill its init after a failed start: %s", st->id, strerror (errno));
  struct pollfd pp = { .fd = pidfd, .events = POLLIN };
  while (poll (&pp, 1, 5000) < 0 && errno == EINTR)
    ;
  const char *text = init_fail ? init_fail : helper_fail ? helper_fail : "the init failed after start";
  return ar_err (err, 0, "container \"%s\": %s", st->id, text);
}

/* Open the fifo's read side: the init, blocked opening the write side,
 * wakes, writes one byte and goes on to exec. */
static int
release_init (int dirfd, const struct ar_cstate *st, int pidfd, ar_error **err)
{
  cleanup_close int fifo = openat (dirfd, AR_STATE_FIFO, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  char b;

  if (fifo < 0)
    return ar_err (err, errno, "open %s", AR_STATE_FIFO);
  for (;;)
    {
      struct pollfd p[2] = { { .fd = fifo, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
      if (poll (p, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return ar_err (err, errno, "poll exec fifo");
        }
      if (p[0].revents & POLLIN)
        break;
      if (p[1].revents)
        return ar_err (err, 0, "container \"%s\": its init exited before start", st->id);
    }
  if (read (fifo, &b, 1) != 1)
    return ar_err (err, errno, "read %s", AR_STATE_FIFO);
  if (unlinkat (dirfd, AR_STATE_FIFO, 0) < 0)
    return ar_err (err, errno, "remove %s", AR_STATE_FIFO);
  /* The init holds the write side until execve (or exit), the connect
   * supervisor until it is ready: wait for EOF. Bytes before it are their
   * reports (start_report): room for one of each. */
  char msg[2 * AR_START_REPORT_MAX + 1];
  size_t len = 0;
  for (;;)
    {
      struct pollfd p = { .fd = fifo, .events = POLLIN };
      if (poll (&p, 1, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return ar_err (err, errno, "poll exec fifo");
        }
      ssize_t n = read (fifo, msg + len, sizeof msg - 1 - len);
      if (n > 0)
        len += (size_t) n;
      else if (n == 0 || (errno != EAGAIN && errno != EINTR) || len == sizeof msg - 1)
        break;
    }
  msg[len] = '\0';
  return start_report (st, pidfd, msg, len, err);
}

static void
run_poststart (const struct ar_spec *spec, const struct ar_cstate *st)
{
  cleanup_error ar_error *err = NULL;
  if (spec->hooks.n[AR_HOOK_POSTSTART] == 0)
    return;
  cleanup_free char *json = ar_cstate_hook_json (st, st->id, "running");
  if (ar_hooks_run (&spec->hooks, AR_HOOK_POSTSTART, json, &err) < 0)
    ar_warn ("poststart hook: %s", err->msg);
}

static int
start_locked (int dirfd, struct ar_cstate *st, const struct ar_spec *spec, ar_error **err)
{
  const char *status = ar_cstate_status (dirfd, st);
  if (strcmp (status, "created") != 0)
    return ar_err (err, 0, "cannot start container \"%s\": it is %s, not created", st->id, status);
  cleanup_close int pidfd = ar_cstate_pidfd (st);
  if (pidfd < 0)
    return ar_err (err, 0, "cannot start container \"%s\": its init is gone", st->id);
  ar_fault_point ("start-before-release");
  if (release_init (dirfd, st, pidfd, err) < 0)
    return -1;
  ar_debug ("start: the process runs (exec.fifo closed)");
  ar_fault_point ("start-before-poststart");
  run_poststart (spec, st);
  return 0;
}

int
ar_container_start (struct ar_ctx *ctx, const char *id, ar_error **err)
{
  cleanup_close int dirfd = -1;
  struct ar_cstate st;
  struct ar_spec *spec = NULL;
  int r;

  if (ar_validate_id (id, err) < 0 || ar_state_open (ctx->root, id, true, &dirfd, err) < 0)
    return -1;
  r = ar_cstate_read (dirfd, &st, err);
  if (r == 0)
    return ar_err (err, 0, "cannot start container \"%s\": it is still being created", id);
  if (r < 0)
    return -1;
  if (ar_spec_load_file (st.config_path, &spec, err) < 0)
    {
      ar_cstate_clear (&st);
      return -1;
    }
  r = start_locked (dirfd, &st, spec, err);
  ar_spec_free (spec);
  ar_cstate_clear (&st);
  return r;
}

int
ar_container_run (struct ar_ctx *ctx, const struct ar_create_opts *o, int *status, ar_error **err)
{
  struct created c;
  sigset_t old;
  int r = -1;

  *status = 0;
  if (seal_self (o, err) < 0)
    return -1;
  created_init (&c);
  if (!o->detach && ar_signals_block (&old, err) < 0)
    return -1;
  if (create_internal (ctx, o, !o->detach, &c, err) < 0)
    goto out;
  if (start_locked (c.lockfd, &c.st, c.spec, err) < 0)
    {
      /* Created but never started: take it down as create would. */
      undo_create (ctx, &c);
      goto out;
    }
  if (o->detach)
    {
      r = 0;
      goto out;
    }
  /* The lock is for commands; others may now kill or inspect us. */
  close (c.lockfd);
  c.lockfd = -1;
  if (o->fg_ops && o->fg_ops->init_pidfd)
    *o->fg_ops->init_pidfd = c.init_pidfd;
  if (o->fg_ops && o->fg_ops->root_fd)
    *o->fg_ops->root_fd = c.root_fd;
  r = ar_foreground_wait (c.init, c.init_pidfd, c.master, c.init_sock, o->fg_ops, status, err);
  if (c.root_fd >= 0)
    close (c.root_fd); /* the container's mounts are not kept past their end */
  c.root_fd = -1;
  /* told the command's end before the init's exit: all but the cgroup now */
  bool said = r == 0 && o->fg_ops && o->fg_ops->said_end && *o->fg_ops->said_end && o->cgroup_left;
  if (!o->keep)
    {
      cleanup_error ar_error *derr = NULL;
      if ((said ? ar_container_delete_told (ctx, o->id, c.spec, o->cgroup_left, &derr)
                : ar_container_delete_spec (ctx, o->id, true, c.spec, &derr))
          < 0)
        ar_warn ("run: delete after exit: %s", derr->msg);
    }
out:
  if (!o->detach)
    sigprocmask (SIG_SETMASK, &old, NULL);
  created_free (&c);
  return r;
}
