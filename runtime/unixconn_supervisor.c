/* The unixconn supervisor's start (unixconn.h): forked by the runtime on
 * the host, before the container's process exists, so it is in no pid
 * namespace of the container's (nothing inside can name it to signal or
 * ptrace it); it waits for the handover, then joins the container's user
 * namespace and root, takes the process's identity and serves. */
#include "config.h"
#include "unixconn.h"
#include "fault.h"
#include "landlock.h"
#include "sync.h"
#include "terminal.h"
#include "strio.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The supervisor's identity: the process's user, CAP_SYS_PTRACE alone (in
 * the container's user namespace: pidfd_getfd and process_vm_readv on a
 * target that made itself non-dumpable, as ssh does), nothing to gain. */
static int
drop_to (const struct ar_user *u, ar_error **err)
{
  unsigned max = cap_max_bits ();
  for (unsigned cap = 0; cap < max; cap++)
    if (cap != CAP_SYS_PTRACE && prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
      return ar_err (err, errno, "drop capability %u from the bounding set", cap);
  /* the process's groups: paths and sockets are checked as for the caller */
  gid_t gids[64];
  size_t ng = u->n_additional_gids < 64 ? u->n_additional_gids : 64;
  for (size_t i = 0; i < ng; i++)
    gids[i] = u->additional_gids[i];
  if (setgroups (ng, gids) < 0 && (ng || errno != EPERM))
    return ar_err (err, errno, "setgroups");
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setresgid (u->gid, u->gid, u->gid) < 0
      || setresuid (u->uid, u->uid, u->uid) < 0)
    return ar_err (err, errno, "take uid %u gid %u", u->uid, u->gid);
  cap_t caps = cap_init ();
  cap_value_t keep = CAP_SYS_PTRACE;
  int r = caps ? 0 : -1;
  if (r == 0)
    r = cap_set_flag (caps, CAP_PERMITTED, 1, &keep, CAP_SET) | cap_set_flag (caps, CAP_EFFECTIVE, 1, &keep, CAP_SET);
  if (r == 0)
    r = cap_set_proc (caps);
  int e = errno;
  cap_free (caps);
  if (r < 0)
    return ar_err (err, e, "keep CAP_SYS_PTRACE alone");
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return ar_err (err, errno, "clear the ambient capabilities");
  /* after the uid change, which resets it: nothing may ptrace us or read our fds */
  if (prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0 || prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0
      || prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return ar_err (err, errno, "prctl");
  return 0;
}

/* Before the handover only the socket to the container stays open: the
 * caller's stdio and every other fd of the runtime's (lock, state folder)
 * must not be held by a process that outlives it; a caller reading
 * create's output to EOF would wait for the container's end. */
static int
supervisor_fds (int sock, ar_error **err)
{
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0)
    return ar_err (err, errno, "open /dev/null");
  if (dup2 (null, 0) < 0 || dup2 (null, 1) < 0 || dup2 (null, 2) < 0)
    return ar_err (err, errno, "dup2 /dev/null");
  close (null);
  if (ar_close_fds_except (&sock, 1, 0) < 0)
    return ar_err (err, errno, "close_range");
  return 0;
}

/* `ps` on the host would show the runtime's command line, which we
 * inherited, for the container's whole life: name us and the container. Fields
 * 48 and 49 of /proc/self/stat are where it lies in our memory. */
static void
blank_cmdline (const char *id)
{
  char buf[2048], *save = NULL;
  unsigned long start = 0, end = 0;
  int fd = open ("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);
  if (fd >= 0)
    close (fd);
  if (n <= 0)
    return;
  buf[n] = '\0';
  char *p = strrchr (buf, ')');
  int field = 2; /* the comm, which may hold spaces, ends the second field */
  for (char *t = p ? strtok_r (p + 1, " ", &save) : NULL; t && field < 49; t = strtok_r (NULL, " ", &save))
    if (++field == 48)
      start = strtoul (t, NULL, 10);
    else if (field == 49)
      end = strtoul (t, NULL, 10);
  if (!start || end <= start + sizeof "ar-unixconn")
    return;
  /* id may lie in that memory (exec's is its argument): copy it first */
  char name[256];
  snprintf (name, sizeof name, "ar-unixconn %s", id);
  memset ((void *) start, 0, end - start);
  snprintf ((char *) start, end - start, "%s", name);
}

/* The supervisor cannot serve: say why where someone waits for it. With a
 * report fd (the init's exec.fifo), `start` fails with the text and kills
 * the container; else the init waiting in handover fails with it. */
static void
report_failure (int sock, int report, const char *msg)
{
  char buf[AR_START_REPORT_MAX];
  int len = snprintf (buf, sizeof buf, "%s%s", report >= 0 ? AR_START_REPORT_HELPER : "", msg);
  size_t n = len < 0 ? 0 : ((size_t) len < sizeof buf ? (size_t) len : sizeof buf - 1) + (report >= 0);
  if (report >= 0 ? write (report, buf, n) != (ssize_t) n : ar_send_fd (sock, -1, buf, n, NULL) < 0)
    dprintf (STDERR_FILENO, "agentrun: %s\n", msg);
}

/* What the container's process hands over (unixconn.c send_handover),
 * and the runtime's word on the container's cgroup (ar_unixconn_cgroup). */
struct handover {
  int listener, root, userns, err, diag, report, netns;
  bool handed, cgroup_told;
  ar_error *join_err; /* the first cgroup file we could not join */
};

static void
handover_close (struct handover *h)
{
  int *fds[] = { &h->listener, &h->root, &h->userns, &h->err, &h->diag, &h->report, &h->netns };
  for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
    if (*fds[i] >= 0)
      {
        close (*fds[i]);
        *fds[i] = -1;
      }
}

/* Into the container's cgroup through one of its files (the runtime opened
 * it: the kernel checks the opener's rights): "0" moves the writer. We are
 * single-threaded until we serve, so a v1 "tasks" file, which moves one
 * thread, moves all of us; before any socket is made, so the kernel
 * charges each socket's buffers to the memory cgroup we are in when it is
 * made or accepted. */
static void
join_cgroup (int fd, struct handover *h)
{
  if (h->join_err)
    return;
  if (ar_fault_fails ("unixconn-supervisor-cgroup"))
    errno = EPERM;
  else if (write (fd, "0", 1) == 1)
    return;
  int e = errno;
  char link[64], path[512];
  snprintf (link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t len = readlink (link, path, sizeof path - 1);
  path[len > 0 ? len : 0] = '\0';
  ar_err (&h->join_err, e, "join the container's cgroup (write 0 to %s)", len > 0 ? path : "its file");
}

/* The runtime's message: a 'C' per cgroup file to join, then 'G' (no fd). */
static int
recv_cgroup (struct handover *h, const char *tags, size_t n_tags, int *fds, size_t n_fds, ar_error **err)
{
  bool ok = !h->cgroup_told && n_tags == n_fds + 1 && tags[n_fds] == 'G';
  for (size_t i = 0; i < n_fds; i++)
    {
      ok = ok && tags[i] == 'C';
      if (ok)
        join_cgroup (fds[i], h);
      close (fds[i]);
    }
  if (!ok)
    return ar_err (err, EPROTO, "the handover: unexpected cgroup message");
  h->cgroup_told = true;
  return 0;
}

/* The container's message: a tag per fd, in order. */
static int
recv_fds_of (struct handover *h, const char *tags, size_t n_tags, int *fds, size_t n_fds, ar_error **err)
{
  for (size_t i = 0; i < n_fds; i++)
    {
      char tag = i < n_tags ? tags[i] : 0;
      int *slot = tag == 'L'   ? &h->listener
                  : tag == 'R' ? &h->root
                  : tag == 'U' ? &h->userns
                  : tag == 'E' ? &h->err
                  : tag == 'D' ? &h->diag
                  : tag == 'F' ? &h->report
                  : tag == 'N' ? &h->netns
                               : NULL;
      if (h->handed || !slot || *slot >= 0)
        {
          for (size_t j = i; j < n_fds; j++)
            close (fds[j]);
          return ar_err (err, EPROTO, "the handover: unexpected fd '%c'", tag ? tag : '?');
        }
      *slot = fds[i];
    }
  if (n_tags != n_fds || h->listener < 0 || h->root < 0 || h->userns < 0 || h->err < 0)
    return ar_err (err, EPROTO, "the handover: %zu fds for %zu tags, or one missing", n_fds, n_tags);
  h->handed = true;
  return 0;
}

/* 1 with every fd, 0 at EOF (the container's process failed before, and
 * says why itself), -1 on error. Two messages, in either order: the
 * runtime's cgroup files (recv_cgroup) and the container's handover. */
static int
recv_handover (int sock, struct handover *h, ar_error **err)
{
  while (!h->handed || !h->cgroup_told)
    {
      char tags[AR_FDS_MAX];
      int fds[AR_FDS_MAX];
      size_t n_fds = 0;
      ssize_t r = ar_recv_fds (sock, fds, AR_FDS_MAX, &n_fds, tags, sizeof tags, err);
      if (r <= 0)
        {
          for (size_t i = 0; i < n_fds; i++)
            close (fds[i]);
          handover_close (h);
          return (int) r;
        }
      bool cgroup = tags[0] == 'C' || tags[0] == 'G';
      if ((cgroup ? recv_cgroup (h, tags, (size_t) r, fds, n_fds, err)
                  : recv_fds_of (h, tags, (size_t) r, fds, n_fds, err))
          < 0)
        {
          handover_close (h);
          return -1;
        }
    }
  return 1;
}

/* Join the namespace of fd, unless we are in it already (the container
 * shares it with the host: joining it would need a capability over the
 * host's, which a plain user lacks). */
static int
join_ns (int fd, const char *self, int type, const char *what, ar_error **err)
{
  struct stat mine, theirs;
  if (stat (self, &mine) < 0 || fstat (fd, &theirs) < 0)
    return ar_err (err, errno, "stat the %s namespaces", what);
  if ((mine.st_dev != theirs.st_dev || mine.st_ino != theirs.st_ino) && setns (fd, type) < 0)
    return ar_err (err, errno, "join the container's %s namespace", what);
  return 0;
}

/* The network namespace, through the user namespace that owns it: the
 * process's own may be nested below that one (a plain user's sandbox, the
 * runtime's namespaces.h), where no capability over the network namespace
 * is had. The process's user namespace is joined after, from its owner. */
static int
join_netns (int netns, ar_error **err)
{
  cleanup_close int owner = ioctl (netns, NS_GET_USERNS);
  if (owner < 0)
    return ar_err (err, errno, "the user namespace that owns the container's network namespace");
  if (join_ns (owner, "/proc/self/ns/user", CLONE_NEWUSER, "user", err) < 0)
    return -1;
  return join_ns (netns, "/proc/self/ns/net", CLONE_NEWNET, "network", err);
}

/* The container's user namespace (when it has one of its own) and root:
 * ids, capabilities and paths are then the container's. With the socket
 * cap, its network namespace too (while we hold the capabilities of its
 * user namespace), where the sockets are made. The current directory stays
 * /proc/self/fd of the host's /proc, where the checked sockets are reached
 * by number. */
static int
enter_container (const struct handover *h, int self_fd, ar_error **err)
{
  if (h->netns >= 0 && join_netns (h->netns, err) < 0)
    return -1;
  if (join_ns (h->userns, "/proc/self/ns/user", CLONE_NEWUSER, "user", err) < 0)
    return -1;
  if (fchdir (h->root) < 0 || chroot (".") < 0)
    return ar_err (err, errno, "enter the container's root");
  if (fchdir (self_fd) < 0)
    return ar_err (err, errno, "enter /proc/self/fd");
  return 0;
}

/* In the container's network namespace, before the identity is dropped
 * (its sock_diag socket is made here). */
static int
sockets_init (long max, int proc, ar_error **err)
{
  int r = max > 0 ? ar_unixconn_sockets_init (max, proc) : 0;
  return r < 0 ? ar_err (err, -r, "the socket cap's count") : 0;
}

/* The supervisor: wait for the handover, enter the container, drop to the
 * process's identity, say ready (close the report fd, or an empty message
 * to the process waiting for it), serve. */
__attribute__ ((noreturn)) static void
supervisor (int sock, const char *id, const char *text, bool scoped, long max_sockets, const struct ar_user *u)
{
  struct handover h = { -1, -1, -1, -1, -1, -1, -1, false, false, NULL };
  struct ar_unixconn_allow allow[AR_UNIXCONN_MAX_ALLOW];
  ar_error *err = NULL;
  size_t n = 0;

  prctl (PR_SET_NAME, "ar-unixconn", 0, 0, 0);
  blank_cmdline (id);
  signal (SIGPIPE, SIG_IGN);
  for (int s = 1; s < NSIG; s++)
    if (s != SIGPIPE && s != SIGKILL && s != SIGSTOP)
      signal (s, SIG_DFL);
  /* the runtime's mask (a foreground run blocks what its signalfd reads)
   * would keep the interrupt of a waiting connect from us */
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  /* no terminal can signal us, nothing of the caller's can read our fds */
  if (setsid () < 0 || prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || supervisor_fds (sock, &err) < 0)
    _exit (1);
  int proc = open ("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  int self_fd = proc < 0 ? -1 : open ("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
  int proc_errno = errno; /* the handover below may change errno */
  int r = recv_handover (sock, &h, &err);
  if (r <= 0)
    _exit (r == 0 ? 0 : 1);
  dup2 (h.err, STDERR_FILENO);
  ar_fault_point ("unixconn-supervisor-start");
  err = ar_steal_ptr (h.join_err);
  if (!err && ar_fault_fails ("unixconn-supervisor-error"))
    ar_err (&err, EPERM, "take uid %u gid %u", u->uid, u->gid);
  if (!err && (proc < 0 || self_fd < 0))
    ar_err (&err, proc_errno, "open the host's /proc");
  if (!err && (max_sockets > 0) != (h.netns >= 0))
    ar_err (&err, EPROTO, "the handover: the network namespace %s", max_sockets > 0 ? "is missing" : "was not asked for");
  if (err || enter_container (&h, self_fd, &err) < 0 || ar_unixconn_parse (text, allow, &n, &err) < 0
      || sockets_init (max_sockets, proc, &err) < 0 || drop_to (u, &err) < 0)
    {
      ar_err_prefix (&err, "unixconn supervisor");
      report_failure (sock, h.report, err->msg);
      _exit (1);
    }
  close (self_fd);
  close (h.root);
  close (h.userns);
  close (h.err);
  if (h.netns >= 0)
    close (h.netns);
  if (h.report >= 0)
    close (h.report);
  else if (ar_send_fd (sock, -1, "", 0, &err) < 0)
    _exit (1);
  close (sock);
  /* We are outside the container's Landlock domain, whose abstract scope
   * the kernel checks against the connecting process: with a network
   * namespace of the container's own, every abstract name in it is the
   * container's; without one, names of the host's would be in reach. */
  struct ar_unixconn_ctx ctx = { .listener = h.listener,
                                 .proc = proc,
                                 .diag = h.diag,
                                 .allow = allow,
                                 .n_allow = n,
                                 .max_sockets = max_sockets,
                                 .abstract_refused = scoped && h.diag < 0 };
  ar_unixconn_serve (&ctx);
}

int
ar_unixconn_pair (const struct ar_spec *spec, int *sock, int *mine, ar_error **err)
{
  int sv[2];

  *sock = *mine = -1;
  if (!ar_unixconn_annotation (spec->annotations, spec->n_annotations))
    return 0;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return ar_err (err, errno, "annotation " AR_UNIXCONN_ANNOTATION ": socketpair");
  *mine = sv[0];
  *sock = sv[1];
  return 0;
}

/* One fork, not waited for (a wait for a second fork's middle process
 * would put its scheduling on every start): no exit signal, so a runtime
 * that stays (`run`, `sandbox`, `exec`) is not woken by its end, and its
 * zombie goes when the runtime does. Born in cgroup_fd's cgroup when
 * asked and the kernel can (5.7): a later join through cgroup.procs would
 * wait for an RCU grace period. */
static pid_t
fork_supervisor (int cgroup_fd, bool *in_cgroup)
{
  struct clone_args a = { .exit_signal = 0 };
  if (cgroup_fd >= 0)
    {
      a.flags = CLONE_INTO_CGROUP;
      a.cgroup = (uint64_t) cgroup_fd;
    }
  pid_t pid = (pid_t) syscall (SYS_clone3, &a, sizeof a);
  if (pid < 0 && cgroup_fd >= 0 && (errno == EINVAL || errno == E2BIG))
    return fork_supervisor (-1, in_cgroup);
  *in_cgroup = cgroup_fd >= 0 && pid >= 0;
  return pid;
}

int
ar_unixconn_spawn (const char *id, const struct ar_spec *spec, const struct ar_user *user, int cgroup_fd, int *mine,
                   bool *in_cgroup, ar_error **err)
{
  const char *text = ar_unixconn_annotation (spec->annotations, spec->n_annotations);
  int sv0 = *mine;

  *mine = -1;
  *in_cgroup = false;
  if (sv0 < 0 || !text)
    return 0;
  long max_sockets;
  if (ar_unixconn_max_sockets (spec->annotations, spec->n_annotations, &max_sockets, err) < 0)
    return -1;
  bool scoped = false;
  for (size_t i = 0; i < spec->n_annotations; i++)
    if (strcmp (spec->annotations[i].key, AR_LANDLOCK_ANNOTATION) == 0)
      scoped = strstr (spec->annotations[i].value, "\"abstract-unix-socket\"") != NULL;
  pid_t pid = fork_supervisor (cgroup_fd, in_cgroup);
  if (pid == 0)
    supervisor (sv0, id, text, scoped, max_sockets, user);
  int e = errno;
  close (sv0);
  if (pid < 0)
    return ar_err (err, e, "annotation " AR_UNIXCONN_ANNOTATION ": fork the unixconn supervisor");
  return 0;
}

int
ar_unixconn_prepare (const char *id, const struct ar_spec *spec, const struct ar_user *user, int cgroup_fd, int *sock,
                     bool *in_cgroup, ar_error **err)
{
  int mine;
  *in_cgroup = false;
  if (ar_unixconn_pair (spec, sock, &mine, err) < 0)
    return -1;
  if (ar_unixconn_spawn (id, spec, user, cgroup_fd, &mine, in_cgroup, err) < 0)
    {
      close (*sock);
      *sock = -1;
      return -1;
    }
  return 0;
}
