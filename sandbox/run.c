/* The sandbox run: a private folder, the relay, the container run by this
 * process (which forwards signals, answers --ask and kills a command that
 * ignores a stop), and, however it ended, the removal of everything that was
 * made; and the one parse of the sandbox options for every command that
 * takes them (cli/cmd_sandbox.c, cli/cmd_check.c). */
#include "config.h"
#include "pathname.h"
#include "cgroups.h"
#include "clock.h"
#include "container.h"
#include "janitor.h"
#include "log.h"
#include "places.h"
#include "rootless.h"
#include "selfexe.h"
#include "sandbox.h"
#include "sbpaths.h"
#include "strio.h"
#include "sbwatch.h"
#include "profile.h"
#include "relay_child.h"
#include "settings.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>

#define STOP_GRACE_MS 10000

/* ---- limits without a cgroup ---- */

/* The cgroup manager of a run: the cgroupfs one makes the sandbox's cgroup
 * only for the controllers its limits need (memory, cpu with --cpus): each
 * hierarchy joined is a write to its cgroup.procs, and the pids cap is had
 * without one (pids_cap_only). "disabled" when no limit needs a cgroup. */
static const char *
run_manager (const struct ar_ctx *g, const struct ar_sandbox *sb)
{
  const struct ar_agent_opts *o = &sb->prof;
  if (!o->has_memory && !o->has_cpus)
    return "disabled";
  if (strcmp (g->cgroup_manager, "cgroupfs") != 0)
    return g->cgroup_manager;
  return o->has_memory && o->has_cpus ? "cgroupfs:memory,cpu" : o->has_memory ? "cgroupfs:memory" : "cgroupfs:cpu";
}

/* Rootless with no cgroup the user may write, memory and CPU caps cannot
 * be had at all (an error), and the pids cap becomes RLIMIT_NPROC. A
 * default memory limit goes where no cgroup will be made. */
int
ar_sandbox_fit_limits (struct ar_ctx *ctx, struct ar_sandbox *sb, ar_error **err)
{
  struct ar_agent_opts *o = &sb->prof;
  bool disabled = strcmp (ctx->cgroup_manager, "disabled") == 0;
  if (o->memory_default && disabled)
    {
      o->has_memory = o->memory_default = o->memory_swap = false;
      o->kernel_tcp = 0;
    }
  if ((o->has_memory || o->has_cpus) && disabled)
    return ar_err (err, 0, "%s needs a cgroup, and --cgroup-manager disabled makes none",
                   o->has_memory ? "--memory" : "--cpus");
  const char *m = o->has_memory || o->has_cpus ? run_manager (ctx, sb) : ctx->cgroup_manager;
  if (!ar_rootless_detect (ctx->rootless) || ar_cgroup_usable (m, "sandbox", NULL))
    return 0;
  if (o->has_memory || o->has_cpus)
    return ar_err (err, 0,
                   "%s needs a cgroup, and uid %u has no writable (delegated) cgroup here: drop it, or "
                   "run where a cgroup is delegated to you",
                   o->has_memory ? "--memory" : "--cpus", (unsigned) geteuid ());
  o->pids_rlimit = true;
  ar_debug ("rootless without a writable cgroup: pids limit %lld as RLIMIT_NPROC", (long long) o->pids);
  return 0;
}

/* The pids cap needs no cgroup: it is had as RLIMIT_NPROC. Why: joining a
 * cgroup is a write to cgroup.procs, and on cgroup2 that write takes the
 * kernel's cgroup threadgroup rwsem for writing and so waits for an RCU
 * grace period (3 ms, up to 50 ms on a loaded host). It is the same cap:
 * RLIMIT_NPROC is counted per uid in the sandbox's own user namespace,
 * where the agent's uid is the only one mapped, so every task the agent
 * makes counts (threads too), and lifting it needs CAP_SYS_RESOURCE in the
 * initial namespace, which nothing inside has. The device allowlist a
 * root-made cgroup also carried holds without it (the nodev binds,
 * sandbox/agent.c g_bind). Only systemd's scope, which joins every hierarchy
 * anyway, carries the pids cap in the cgroup. */
static bool
pids_cap_only (const struct ar_ctx *g, const struct ar_sandbox *sb)
{
  return strcmp (run_manager (g, sb), "systemd") != 0;
}

/* ---- removal ---- */

/* Most of the tree is empty mount-point folders and files: one rmdir or
 * one unlink each (type: the entry's d_type, DT_UNKNOWN when not known);
 * only a folder with something in it is looked into. A folder that is a
 * mount point here fails the rmdir (EBUSY), and one that holds another
 * file system is not descended into (EXDEV). */
static int
rm_at (int dfd, const char *name, unsigned char type, dev_t dev, ar_error **err)
{
  struct stat st;
  if (type != DT_UNKNOWN && type != DT_DIR)
    return unlinkat (dfd, name, 0) < 0 && errno != ENOENT ? ar_err (err, errno, "remove %s", name) : 0;
  if (unlinkat (dfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
    return 0;
  if (errno == ENOTDIR)
    return unlinkat (dfd, name, 0) < 0 && errno != ENOENT ? ar_err (err, errno, "remove %s", name) : 0;
  if (errno != ENOTEMPTY && errno != EEXIST)
    return ar_err (err, errno, "remove %s", name);
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : ar_err (err, errno, "stat %s", name);
  if (!S_ISDIR (st.st_mode))
    return unlinkat (dfd, name, 0) < 0 && errno != ENOENT ? ar_err (err, errno, "remove %s", name) : 0;
  if (st.st_dev != dev)
    return ar_err (err, EXDEV, "remove %s: a mount is still there", name);
  int fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return ar_err (err, errno, "open %s", name);
  DIR *d = fdopendir (fd);
  if (!d)
    {
      close (fd);
      return ar_err (err, errno, "fdopendir %s", name);
    }
  int r = 0;
  for (struct dirent *e; r == 0 && (e = readdir (d));)
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
      r = rm_at (dirfd (d), e->d_name, e->d_type, dev, err);
  closedir (d);
  if (r == 0 && unlinkat (dfd, name, AT_REMOVEDIR) < 0)
    return ar_err (err, errno, "remove %s", name);
  return r;
}

/* Remove a folder tree without following symlinks or crossing mounts. */
static int
ar_sandbox_rmtree (const char *path, ar_error **err)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    return errno == ENOENT ? 0 : ar_err (err, errno, "stat %s", path);
  if (rm_at (AT_FDCWD, path, DT_DIR, st.st_dev, err) < 0)
    return ar_err_prefix (err, "cleanup of %s", path);
  return 0;
}

/* ---- the private folder and the relay ---- */

/* Where the private folder goes: the user's runtime folder, else a tmpfs
 * (the bundle is written and removed on every run: on a disk-backed /tmp
 * that is most of the start-up time), else /tmp. Root does not write into
 * a user's XDG_RUNTIME_DIR: through sudo the folder is root's own, made by
 * mkdtemp under a fixed sticky folder no user can rename it out of, so
 * root's rights there reach nothing the person chose. */
static const char *
private_base (void)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  struct statfs sf;
  if (geteuid () != 0 && xdg && xdg[0] == '/' && access (xdg, W_OK | X_OK) == 0)
    return xdg;
  if (statfs ("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC && access ("/dev/shm", W_OK | X_OK) == 0)
    return "/dev/shm";
  return "/tmp";
}

static int
make_tmpdir (struct ar_sandbox *sb, ar_error **err)
{
  uint8_t rnd[6];
  if (getrandom (rnd, sizeof rnd, 0) != (ssize_t) sizeof rnd)
    return ar_err (err, errno, "getrandom");
  char hex[2 * sizeof rnd + 1];
  ar_hex (rnd, sizeof rnd, hex);
  sb->id = xasprintf ("sandbox-%s", hex);
  char *t = xasprintf ("%s/agentrun-%s-XXXXXX", private_base (), sb->id);
  if (!mkdtemp (t))
    {
      ar_err (err, errno, "create the sandbox folder %s", t);
      free (t);
      return -1;
    }
  sb->tmpdir = t;
  /* traversable, not listable: see open_bundle_dir */
  if (chmod (t, 0711) < 0)
    return ar_err (err, errno, "chmod %s", t);
  return 0;
}

/* No state root (a plain user without XDG_RUNTIME_DIR: su, cron, ssh
 * without pam_systemd): the run keeps its container state in a folder of
 * its own inside the private folder, removed with it. mkdir refuses a name
 * that exists, and the folder is checked to be ours and private before the
 * runtime trusts it. */
static int
make_private_root (struct ar_sandbox *sb, ar_error **err)
{
  struct stat st;
  char *root = xasprintf ("%s/state", sb->tmpdir);
  if (mkdir (root, 0700) < 0 || lstat (root, &st) < 0)
    {
      ar_err (err, errno, "create the private state folder %s", root);
      free (root);
      return -1;
    }
  sb->state_root = root;
  if (!S_ISDIR (st.st_mode) || st.st_uid != geteuid () || (st.st_mode & 07777) != 0700)
    return ar_err (err, 0, "private state folder %s: not a 0700 folder of uid %u", root, (unsigned) geteuid ());
  return 0;
}

/* The network step's relay: a route per --allow, ready when each socket
 * of ours exists. */
static int
start_relay (struct ar_sandbox *sb, const char *relay_dir, ar_error **err)
{
  const struct ar_agent_opts *o = &sb->prof;
  char **extra = xmalloc0 ((o->n_allow * 2 + 1) * sizeof *extra);
  char **socks = xmalloc0 ((o->n_allow + 1) * sizeof *socks);
  for (size_t i = 0; i < o->n_allow; i++)
    {
      const struct ar_agent_endpoint *e = &o->allow[i];
      extra[2 * i] = (char *) "--allow";
      extra[2 * i + 1] = e->upstream ? xasprintf ("%s:%d=%s", e->name, e->port, e->upstream)
                                     : xasprintf ("%s:%d%s", e->name, e->port, ar_agent_wildcard (e) ? "=connect" : "");
      socks[i] = xasprintf ("%s/%s:%d.sock", relay_dir, e->name, e->port);
    }
  cleanup_free char *errlog = xasprintf ("%s/relay.err", sb->tmpdir);
  int r = ar_relay_start (sb, relay_dir, errlog, extra, &sb->relay_pid, err);
  if (r == 0)
    r = ar_relay_wait (&sb->relay_pid, errlog, socks, o->n_allow, err);
  for (size_t i = 0; i < o->n_allow; i++)
    {
      free (extra[2 * i + 1]);
      free (socks[i]);
    }
  free (extra);
  free (socks);
  return r < 0 ? ar_err_prefix (err, "network step") : 0;
}

/* ---- the container, run by this process ---- */

/* The sandbox's part of the foreground wait (signals.h): the asker's
 * socket, and a stop signal that must end the command within the grace
 * time or the container is killed. */
struct supervision {
  struct ar_ctx *ctx;
  struct ar_sandbox *sb;
  int sfd; /* our INT/TERM/HUP signalfd: a signal ends a question */
  long long kill_at;
  struct ar_sb_watch watch; /* the held names (sbwatch.h) */
  int fd; /* what the wait watches for us: the asker's socket, the watch, or ep */
  int ep; /* epoll of the asker's socket and the watch, or -1 */
  int init_pidfd; /* the wait's, -1 before it */
  int root_fd; /* the container's / (the wait's), -1 before it */
  char *breached; /* a held name the host took away: the run was stopped */
};

static void
sup_kill (struct supervision *v)
{
  cleanup_error ar_error *kerr = NULL;
  /* pid 1 first, the fastest way to every process of its namespace */
  if (v->init_pidfd >= 0)
    syscall (SYS_pidfd_send_signal, v->init_pidfd, SIGKILL, NULL, 0);
  if (ar_container_kill (v->ctx, v->sb->id, SIGKILL, true, &kerr) < 0)
    ar_warn ("sandbox: %s", kerr->msg);
}

static void
sup_watched (struct supervision *v)
{
  const char *path = ar_sb_watch_breached (&v->watch, v->root_fd);
  if (!path || v->breached)
    return;
  /* said once the command is gone, as the run's error */
  v->breached = xstrdup (path);
  sup_kill (v);
}

static void
sup_readable (void *data)
{
  struct supervision *v = data;
  struct epoll_event ev[2] = { { .data.fd = v->fd } };
  int n = v->ep < 0 ? 1 : epoll_wait (v->ep, ev, 2, 0);
  for (int i = 0; i < n; i++)
    if (ev[i].data.fd == v->watch.fd)
      sup_watched (v);
    else if (!v->kill_at)
      ar_asker_serve (&v->sb->asker, v->sb, v->sfd);
}

/* v->fd, what the wait watches for us: the asker's socket, the watch, or
 * an epoll of both (-1: none). */
static int
sup_fd (struct supervision *v, ar_error **err)
{
  int asker = v->sb->asker.path ? v->sb->asker.lfd : -1;
  v->fd = v->watch.fd >= 0 ? v->watch.fd : asker;
  if (v->watch.fd < 0 || asker < 0)
    return 0;
  int fds[2] = { asker, v->watch.fd };
  if ((v->fd = v->ep = epoll_create1 (EPOLL_CLOEXEC)) < 0)
    return ar_err (err, errno, "epoll for the asker and the watch");
  for (int i = 0; i < 2; i++)
    {
      struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };
      if (epoll_ctl (v->ep, EPOLL_CTL_ADD, fds[i], &ev) < 0)
        return ar_err (err, errno, "epoll for the asker and the watch");
    }
  return 0;
}

static void
sup_signalled (void *data, int signo)
{
  struct supervision *v = data;
  if ((signo == SIGINT || signo == SIGTERM || signo == SIGHUP) && !v->kill_at)
    v->kill_at = ar_now_ms () + STOP_GRACE_MS;
}

static long long
sup_deadline (void *data)
{
  return ((struct supervision *) data)->kill_at;
}

static void
sup_expired (void *data)
{
  struct supervision *v = data;
  ar_warn ("sandbox: the command did not stop after a signal: killing it");
  sup_kill (v);
  v->kill_at = ar_now_ms () + STOP_GRACE_MS;
}

/* Point our fd `to` at `fd` for the container (it inherits our stdio);
 * *saved keeps ours for restore_fd. */
static int
redirect_fd (int fd, int to, int *saved, ar_error **err)
{
  *saved = -1;
  if (fd < 0)
    return 0;
  *saved = fcntl (to, F_DUPFD_CLOEXEC, 3);
  if (*saved < 0 || dup2 (fd, to) < 0)
    return ar_err (err, errno, "redirect the container's fd %d", to);
  return 0;
}

static void
restore_fd (int saved, int to)
{
  if (saved < 0)
    return;
  dup2 (saved, to);
  close (saved);
}

/* Without a pty, a terminal among our stdio is not handed in (the command
 * could read the person's keystrokes from it, change its settings, push
 * input with TIOCSTI): a pipe stands for it, copied by the foreground wait.
 * Files and pipes go in as they are. stdio[i]: the container's end. */
static int
terminal_pipes (int stdio[3], struct ar_fg_pipes *fp, ar_error **err)
{
  int *ours[3] = { &fp->in, &fp->out, &fp->err };
  for (int i = 0; i < 3; i++)
    {
      int p[2];
      if (!isatty (i))
        continue;
      if (pipe2 (p, O_CLOEXEC) < 0)
        return ar_err (err, errno, "a pipe for the terminal on fd %d", i);
      stdio[i] = p[i == 0 ? 0 : 1];
      *ours[i] = p[i == 0 ? 1 : 0];
    }
  return 0;
}

static void
close_pipes (int stdio[3], struct ar_fg_pipes *fp)
{
  int *fds[6] = { &stdio[0], &stdio[1], &stdio[2], &fp->in, &fp->out, &fp->err };
  for (int i = 0; i < 6; i++)
    if (*fds[i] >= 0)
      {
        close (*fds[i]);
        *fds[i] = -1;
      }
}

/* Create, start, wait and delete in this process: no runtime child (a
 * fork and an exit fewer at every start). */
static int
run_container (struct ar_ctx *ctx, struct ar_sandbox *sb, const char *bundle, int sfd, int watch_fd, bool *said_end,
               char **cgroup_left, int *status, ar_error **err)
{
  struct supervision v = { .ctx = ctx, .sb = sb, .sfd = sfd, .ep = -1, .init_pidfd = -1, .root_fd = -1 };
  struct ar_fg_pipes pipes = { -1, -1, -1 };
  int stdio[3] = { -1, -1, -1 };
  if (ar_sb_watch_start (&v.watch, &sb->prof, watch_fd, err) < 0)
    return -1;
  if (sup_fd (&v, err) < 0)
    {
      if (v.ep >= 0)
        close (v.ep);
      ar_sb_watch_close (&v.watch);
      return -1;
    }
  struct ar_fg_ops ops = { .fd = v.fd,
                           .readable = sup_readable,
                           .signalled = sup_signalled,
                           .deadline = sup_deadline,
                           .expired = sup_expired,
                           .data = &v,
                           .pipes = &pipes,
                           .said_end = said_end,
                           .init_pidfd = &v.init_pidfd,
                           .root_fd = &v.root_fd };
  struct ar_create_opts co = { .id = sb->id,
                               .bundle = bundle,
                               .fg_ops = &ops,
                               .die_with_parent = true,
                               .exec_env = sb->pass_env,
                               .n_exec_env = sb->n_pass_env,
                               .stdio = stdio,
                               .one_uid = true,
                               .uid = sb->prof.uid,
                               .cgroup_left = cgroup_left };
  int out = -1, in = -1, r = -1;
  if (redirect_fd (sb->stdout_fd, STDOUT_FILENO, &out, err) == 0 && redirect_fd (sb->stdin_fd, STDIN_FILENO, &in, err) == 0
      && (sb->prof.terminal || terminal_pipes (stdio, &pipes, err) == 0))
    r = ar_container_run (ctx, &co, status, err);
  close_pipes (stdio, &pipes);
  restore_fd (out, STDOUT_FILENO);
  restore_fd (in, STDIN_FILENO);
  if (v.ep >= 0)
    close (v.ep);
  ar_sb_watch_close (&v.watch);
  if (r == 0)
    *status &= 0xff;
  if (r == 0 && v.breached)
    r = ar_err (err, 0,
                "%s was replaced or removed on the host while the command ran, which took its read-only mount "
                "away: the command was stopped; look at %s before the host uses it (the command could write "
                "it from that moment to its stop)",
                v.breached, v.breached);
  free (v.breached);
  return r;
}

/* What the caller may see once we return: the asker, the relay, the
 * placeholders in the writable folders (files of the workspace). */
static void
cleanup_seen (struct ar_sandbox *sb)
{
  ar_asker_close (&sb->asker);
  ar_relay_stop (&sb->relay_pid);
  ar_sbpaths_cleanup (sb);
}

static void
delete_container (struct ar_ctx *ctx, struct ar_sandbox *sb)
{
  cleanup_free char *state = ctx->root && sb->id ? xasprintf ("%s/%s", ctx->root, sb->id) : NULL;
  if (state && access (state, F_OK) == 0)
    {
      cleanup_error ar_error *derr = NULL;
      if (ar_container_delete (ctx, sb->id, true, &derr) < 0)
        ar_warn ("sandbox cleanup: delete %s: %s", sb->id, derr->msg);
    }
}

/* The private folder: the bundle, whose rootfs the container's mount
 * namespace holds until its teardown. */
static void
remove_tmpdir (struct ar_sandbox *sb)
{
  if (sb->tmpdir)
    {
      cleanup_error ar_error *rerr = NULL;
      if (ar_sandbox_rmtree (sb->tmpdir, &rerr) < 0)
        ar_warn ("sandbox %s", rerr->msg);
    }
}

/* In the janitor, with its copy of what we knew at its start. After our
 * death: the whole removal (the relay is gone by its parent-death signal).
 * Handed over when our pid 1 told the command's end and we returned (all
 * else removed): the container's cgroup, named by word ("": none), which
 * its pid 1 leaves at the end of its exit (ar_cgroup_destroy waits for
 * that), then the private folder, the mount namespace gone with it (its
 * folders, unlinked while still mount points there, would cost the kernel
 * a detach each). */
struct undo {
  struct ar_ctx *ctx;
  struct ar_sandbox *sb;
};

static void
undo_after_death (void *data)
{
  struct undo *u = data;
  u->sb->relay_pid = -1;
  delete_container (u->ctx, u->sb);
  remove_tmpdir (u->sb);
  cleanup_seen (u->sb);
}

static void
finish_after_return (void *data, const char *word)
{
  struct undo *u = data;
  cleanup_error ar_error *err = NULL;
  if (*word && ar_cgroup_destroy (word, &err) < 0)
    ar_warn ("sandbox cleanup: %s", err->msg);
  remove_tmpdir (u->sb);
}

static int
pending_stop (const sigset_t *set)
{
  sigset_t pend;
  sigpending (&pend);
  static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
  for (size_t i = 0; i < ARRAY_SIZE (sigs); i++)
    if (sigismember (set, sigs[i]) && sigismember (&pend, sigs[i]))
      return sigs[i];
  return 0;
}

int
ar_sandbox_run (struct ar_ctx *ctx, struct ar_sandbox *sb, int *status, ar_error **err)
{
  sigset_t set, old;
  sigemptyset (&set);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGHUP);
  *status = AR_SANDBOX_FAILED;
  /* CVE-2019-5736 (selfexe.h): what runs inside has one uid, no
   * capabilities and no_new_privs, so a binary that uid cannot write needs
   * no sealed copy (it would cost a copy and an exec on every start). Here,
   * before anything is made: the run (one_uid) only checks it. */
  if (ar_selfexe_seal_unless_unwritable (sb->prof.uid, err) < 0)
    return -1;
  if (ar_sandbox_check_userns (err) < 0 || ar_sandbox_fit_limits (ctx, sb, err) < 0
      || ar_places_check_state_root (&sb->prof, ctx->root, err) < 0)
    return -1;
  struct ar_ctx run_ctx = *ctx;
  ctx = &run_ctx;
  sb->prof.pids_rlimit = pids_cap_only (ctx, sb);
  run_ctx.cgroup_manager = run_manager (ctx, sb);
  /* from here a ^C or a kill is held until we can act on it, so that
   * whatever was made gets removed */
  if (sigprocmask (SIG_BLOCK, &set, &old) < 0)
    return ar_err (err, errno, "sigprocmask");
  cleanup_close int sfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  cleanup_free char *bundle = NULL, *relay_dir = NULL, *abs_root = NULL;
  struct ar_janitor janitor = { .fd = -1 };
  struct undo undo = { .ctx = ctx, .sb = sb };
  struct ar_janitor_ops jops = { .undo = undo_after_death, .finish = finish_after_return, .data = &undo };
  bool said_end = false;
  cleanup_close int watch_fd = -1;
  cleanup_free char *cgroup_left = NULL;
  int r = -1, sig;
  if (sfd < 0)
    {
      ar_err (err, errno, "signalfd");
      goto out;
    }
  /* the state root known before the janitor's fork: its copy deletes the
   * container there */
  if (make_tmpdir (sb, err) < 0 || (!run_ctx.root && make_private_root (sb, err) < 0))
    goto out;
  if (!run_ctx.root)
    run_ctx.root = sb->state_root;
  /* the janitor works in / (janitor.h): the state root it deletes the
   * container in is named from there */
  if (!(abs_root = ar_path_absolute (run_ctx.root)))
    {
      ar_err (err, errno, "--root %s: the working folder it is relative to", run_ctx.root);
      goto out;
    }
  run_ctx.root = abs_root;
  /* the watch's instance before the janitor, which keeps a copy */
  if ((watch_fd = ar_sb_watch_open (err)) < 0 || ar_janitor_start (&janitor, &jops, watch_fd, err) < 0)
    goto out;
  bundle = xasprintf ("%s/bundle", sb->tmpdir);
  relay_dir = xasprintf ("%s/relay", sb->tmpdir);
  bool net = (sb->prof.n_allow > 0 || sb->ask) && !sb->prof.no_network;
  sb->runtime_validates = true;
  sb->prof.compact = true;
  /* the asker answers every lookup the netproxy cannot: it routes a name
   * a wildcard allows, tells the person what was refused, and with --ask
   * asks them */
  sb->prof.ask_person = sb->ask;
  if (net && ar_asker_open (&sb->asker, sb, err) < 0)
    goto out;
  if (net && ar_sbpaths_open_audit (sb, err) < 0)
    {
      ar_err_prefix (err, "network step");
      goto out;
    }
  if (ar_sandbox_write_bundle (sb, bundle, net ? relay_dir : NULL, err) < 0)
    goto out;
  ar_debug ("sandbox: bundle written in %s", bundle);
  if (net && sb->prof.n_allow > 0 && start_relay (sb, relay_dir, err) < 0)
    goto out;
  if ((sig = pending_stop (&set)))
    {
      *status = 128 + sig;
      r = 0;
      goto out;
    }
  r = run_container (ctx, sb, bundle, sfd, ar_steal_fd (watch_fd), &said_end, &cgroup_left, status, err);
  ar_debug ("sandbox: the command ended (status %d)%s", *status,
            said_end ? ", told by our pid 1 in its exit" : ", the container is gone");
  ar_asker_summary (&sb->asker, sb);
out:
  /* told the command's end by our pid 1 in its exit, the container
   * deleted but for its cgroup: that and the private folder go with the
   * janitor, once the kernel's teardown of the namespaces is done, so that
   * we return as soon as the status is known, with nothing of the command
   * running and what the caller sees removed */
  if (!said_end)
    delete_container (ctx, sb);
  cleanup_seen (sb);
  if (said_end)
    ar_janitor_hand_over (&janitor, cgroup_left ? cgroup_left : "");
  else
    {
      remove_tmpdir (sb);
      ar_janitor_dismiss (&janitor);
    }
  ar_debug ("sandbox: cleaned up");
  sigprocmask (SIG_SETMASK, &old, NULL);
  return r;
}

/* ---- the sandbox options of every command that takes them ---- */

/* The command's own options, then the sandbox's but drop_id (0: none). */
static const struct ar_opt *
opts_with (const struct ar_opt *own, size_t n_own, int drop_id)
{
  static struct ar_opt all[AR_SB_N_OPTS + 8];
  size_t n = n_own;
  memcpy (all, own, n_own * sizeof *own);
  for (size_t i = 0; i < ARRAY_SIZE (ar_sandbox_opts); i++)
    if (!drop_id || ar_sandbox_opts[i].id != drop_id)
      all[n++] = ar_sandbox_opts[i];
  return all;
}

static int
note_save_profile (struct ar_sandbox *sb, const char *path, ar_error **err)
{
  (void) err;
  free (sb->save_profile);
  sb->save_profile = xstrdup (path);
  return 0;
}

/* --profile F with --save-profile F: F may not exist yet (the first run
 * that asks makes it). */
static int
load_profile (struct ar_sandbox *sb, const char *path, ar_error **err)
{
  if (sb->save_profile && strcmp (sb->save_profile, path) == 0 && access (path, F_OK) < 0 && errno == ENOENT)
    {
      ar_debug ("profile %s: not there yet, --save-profile will make it", path);
      return 0;
    }
  return ar_profile_load (sb, path, err);
}

int
ar_sandbox_parse_args (struct ar_sandbox *sb, const struct ar_sb_cmd *c, int argc, char **argv, int *first_arg)
{
  const struct ar_opt *opts = opts_with (c->own, c->n_own, c->drop_id);
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = opts };
  cleanup_error ar_error *err = NULL;
  const char *arg;
  int id;
  /* profiles first, so that the command line overrides them */
  ar_profile_apply_opts (sb, p, AR_SBC_SAVE_PROFILE, note_save_profile, &err);
  if (!err)
    ar_profile_apply_opts (sb, p, AR_SBC_PROFILE, load_profile, &err);
  while (!err && (id = ar_opt_next (&p, &arg, &err)) > 0)
    {
      if (id == AR_SBC_HELP)
        {
          c->usage (stdout);
          return 1;
        }
      if (id == AR_SBC_ASK)
        sb->ask = true;
      if (id > AR_SB_OPT_BASE ? ar_sandbox_opt (sb, id, arg, &err) < 0
                              : id < AR_SBC_PROFILE && c->own_opt && c->own_opt (c->data, id, arg, &err) < 0)
        break;
    }
  /* settings last, so that their denies cover every allow */
  if (!err)
    ar_profile_apply_opts (sb, (struct ar_optparser){ .argc = argc, .argv = argv, .i = 1, .opts = opts },
                           AR_SBC_SETTINGS, ar_settings_load, &err);
  if (err)
    {
      ar_log_error (ar_steal_ptr (err));
      return -1;
    }
  *first_arg = p.i;
  return 0;
}
