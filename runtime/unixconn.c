/* run.agentrun.unix-connect: the annotation, the connect filter, and the
 * start of the supervisor that serves it (unixconn.h). */
#include "config.h"
#include "unixconn.h"
#include "fault.h"
#include "sync.h"
#include "terminal.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#define LABEL "annotation " AR_UNIXCONN_ANNOTATION

const char *
ar_unixconn_annotation (const struct ar_kv *kv, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (kv[i].key, AR_UNIXCONN_ANNOTATION) == 0)
      return kv[i].value;
  return NULL;
}

static void
tree_release (yajl_val *v)
{
  if (*v)
    yajl_tree_free (*v);
}

/* The paths of the annotation; with st, each one's inode (it must be a
 * socket, seen from the calling process's root). */
static int
parse_paths (const char *text, struct ar_unixconn_allow *allow, size_t *n, ar_error **err)
{
  char ebuf[256] = "";
  __attribute__ ((cleanup (tree_release))) yajl_val root = yajl_tree_parse (text, ebuf, sizeof ebuf);
  if (!root || !YAJL_IS_ARRAY (root))
    {
      ebuf[strcspn (ebuf, "\n")] = '\0';
      return ar_err (err, 0, LABEL ": $: not a JSON array of paths%s%s", *ebuf ? ": " : "", ebuf);
    }
  if (root->u.array.len > AR_UNIXCONN_MAX_ALLOW)
    return ar_err (err, E2BIG, LABEL ": $: more than %d sockets", AR_UNIXCONN_MAX_ALLOW);
  for (size_t i = 0; i < root->u.array.len; i++)
    {
      const char *p = YAJL_GET_STRING (root->u.array.values[i]);
      if (!p || p[0] != '/')
        return ar_err (err, 0, LABEL ": $[%zu]: not an absolute path", i);
      if (!allow)
        continue;
      struct stat st;
      if (stat (p, &st) < 0)
        return ar_err (err, errno, LABEL ": $[%zu]: %s", i, p);
      if (!S_ISSOCK (st.st_mode))
        return ar_err (err, 0, LABEL ": $[%zu]: %s: not a Unix socket", i, p);
      allow[i] = (struct ar_unixconn_allow){ .dev = st.st_dev, .ino = st.st_ino };
    }
  *n = root->u.array.len;
  return 0;
}

int
ar_unixconn_validate (const struct ar_spec *spec, ar_error **err)
{
  const char *text = ar_unixconn_annotation (spec->annotations, spec->n_annotations);
  size_t n;
  if (!text)
    return 0;
  const struct ar_seccomp *sc = spec->linux_ ? spec->linux_->seccomp : NULL;
  if (sc && sc->listener_path && *sc->listener_path)
    return ar_err (err, 0, LABEL ": cannot be combined with linux.seccomp.listenerPath (the connect supervisor "
                   "would run under that filter)");
  return parse_paths (text, NULL, &n, err);
}

static void
ctx_release (scmp_filter_ctx *ctx)
{
  if (*ctx)
    seccomp_release (*ctx);
}

/* connect(2) -> user notification, everything else allowed (the container's
 * own profile, a separate filter, still applies: the kernel takes the
 * strictest answer of all filters, so a profile that denies connect wins).
 * libseccomp also catches socketcall(SYS_CONNECT) of 32-bit x86. */
static int
load_filter (int *listener, ar_error **err)
{
  __attribute__ ((cleanup (ctx_release))) scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
  int r;
  if (!ctx)
    return ar_err (err, ENOMEM, LABEL ": seccomp_init");
  if ((r = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0
      || (r = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0)
    return ar_err (err, -r, LABEL ": seccomp_attr_set");
  if (seccomp_arch_native () == SCMP_ARCH_X86_64)
    {
      if ((r = seccomp_arch_add (ctx, SCMP_ARCH_X86)) < 0 || (r = seccomp_arch_add (ctx, SCMP_ARCH_X32)) < 0)
        return ar_err (err, -r, LABEL ": seccomp_arch_add");
    }
  else if (seccomp_arch_native () == SCMP_ARCH_AARCH64 && (r = seccomp_arch_add (ctx, SCMP_ARCH_ARM)) < 0)
    return ar_err (err, -r, LABEL ": seccomp_arch_add");
  if ((r = seccomp_rule_add (ctx, SCMP_ACT_NOTIFY, SCMP_SYS (connect), 0)) < 0)
    return ar_err (err, -r, LABEL ": seccomp_rule_add connect");
  if ((r = seccomp_load (ctx)) < 0)
    return ar_err (err, -r, LABEL ": load the connect filter");
  *listener = seccomp_notify_fd (ctx);
  if (*listener < 0)
    return ar_err (err, -*listener, LABEL ": the connect filter has no listener");
  return 0;
}

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

/* Close every fd from 3 on but a and b (-1: none). */
static int
close_all_but (int a, int b)
{
  int keep[2] = { a < b ? a : b, a < b ? b : a }, from = 3;
  for (int i = 0; i < 2; i++)
    {
      if (keep[i] < from)
        continue;
      if (keep[i] > from && syscall (SYS_close_range, from, keep[i] - 1, 0) < 0)
        return -1;
      from = keep[i] + 1;
    }
  return (int) syscall (SYS_close_range, from, ~0U, 0);
}

/* Only the socket to the init, the report fd and stderr (errors) stay
 * open; stdin and stdout must not be held open by a process the caller
 * does not know of. */
static int
supervisor_fds (int sock, int report, ar_error **err)
{
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0)
    return ar_err (err, errno, "open /dev/null");
  if (dup2 (null, 0) < 0 || dup2 (null, 1) < 0)
    return ar_err (err, errno, "dup2 /dev/null");
  close (null);
  if (close_all_but (sock, report) < 0)
    return ar_err (err, errno, "close_range");
  return 0;
}

/* `ps` in the container would show the runtime's command line (its
 * options, state root, bundle path), which we inherited: blank it. Fields
 * 48 and 49 of /proc/self/stat are where it lies in our memory. */
static void
blank_cmdline (void)
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
  int field = 2;    /* the comm, which may hold spaces, ends the second field */
  for (char *t = p ? strtok_r (p + 1, " ", &save) : NULL; t && field < 49; t = strtok_r (NULL, " ", &save))
    if (++field == 48)
      start = strtoul (t, NULL, 10);
    else if (field == 49)
      end = strtoul (t, NULL, 10);
  if (!start || end <= start + sizeof "ar-unixconn")
    return;
  memset ((void *) start, 0, end - start);
  memcpy ((void *) start, "ar-unixconn", sizeof "ar-unixconn");
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

/* The supervisor: drop to its identity, take the listener, say ready
 * (close the report fd, or an empty message to the init), serve. */
__attribute__ ((noreturn)) static void
supervisor (int sock, int report, const struct ar_user *u, const struct ar_unixconn_allow *allow, size_t n)
{
  ar_error *err = NULL;
  char ok;
  int listener = -1;

  ar_fault_point ("unixconn-supervisor-start");
  prctl (PR_SET_NAME, "ar-unixconn", 0, 0, 0);
  blank_cmdline ();
  signal (SIGPIPE, SIG_IGN);
  for (int s = 1; s < NSIG; s++)
    if (s != SIGPIPE && s != SIGKILL && s != SIGSTOP)
      signal (s, SIG_DFL);
  ssize_t r = -1;
  if (ar_fault_fails ("unixconn-supervisor-error"))
    ar_err (&err, EPERM, "take uid %u gid %u", u->uid, u->gid);
  if (err || supervisor_fds (sock, report, &err) < 0 || drop_to (u, &err) < 0
      || (r = ar_recv_fd (sock, &listener, &ok, 1, &err)) < 0)
    {
      ar_err_prefix (&err, "connect supervisor");
      report_failure (sock, report, err->msg);
      _exit (1);
    }
  /* EOF with no listener: the init failed before the handover, and says
   * why itself. Nothing to serve, and no filter waits for us. */
  if (listener < 0)
    _exit (r == 0 ? 0 : 1);
  if (report >= 0)
    close (report);
  else if (ar_send_fd (sock, -1, "", 0, &err) < 0)
    _exit (1);
  close (sock);
  ar_unixconn_serve (listener, allow, n);
}

/* Fork twice: the supervisor is reparented to the pid namespace's init,
 * so a process joining with `exec` does not get a child it never made. The
 * init itself (pid 1 of its namespace) is where the grandchild would land
 * anyway: one fork does. */
static int
spawn (int sock, int report, const struct ar_user *u, const struct ar_unixconn_allow *allow, size_t n, ar_error **err)
{
  if (getpid () == 1)
    {
      pid_t pid = fork ();
      if (pid < 0)
        return ar_err (err, errno, LABEL ": fork the connect supervisor");
      if (pid == 0)
        supervisor (sock, report, u, allow, n);
      return 0;
    }
  pid_t mid = fork ();
  if (mid < 0)
    return ar_err (err, errno, LABEL ": fork the connect supervisor");
  if (mid == 0)
    {
      pid_t pid = fork ();
      if (pid == 0)
        supervisor (sock, report, u, allow, n);
      _exit (pid < 0 ? 1 : 0);
    }
  int st;
  while (waitpid (mid, &st, 0) < 0)
    if (errno != EINTR)
      return ar_err (err, errno, LABEL ": wait for the connect supervisor's parent");
  if (!WIFEXITED (st) || WEXITSTATUS (st) != 0)
    return ar_err (err, EAGAIN, LABEL ": fork the connect supervisor");
  return 0;
}

/* Hand the listener over. With a report fd the supervisor answers there,
 * to `start` (which waits for it as for our execve), and we go on: its
 * start-up runs beside ours. Without one, wait for its word. Either way a
 * supervisor that dies takes the listener with it: connect(2) then fails
 * with ENOSYS, never unchecked. */
static int
handover (int sock, int listener, bool wait, ar_error **err)
{
  char msg[AR_START_REPORT_MAX];
  int fd = -1;
  if (ar_send_fd (sock, listener, "L", 1, err) < 0)
    {
      /* Gone before the handover: with a report fd it has said why there,
       * and `start` fails with that; a silent death leaves no one holding
       * the listener once we close it, so connect(2) fails with ENOSYS. */
      if (!wait && *err && ((*err)->errnum == EPIPE || (*err)->errnum == ECONNRESET))
        {
          ar_error_freep (err);
          return 0;
        }
      return ar_err_prefix (err, LABEL ": hand the listener to the connect supervisor");
    }
  if (!wait)
    return 0;
  ssize_t r = ar_recv_fd (sock, &fd, msg, sizeof msg - 1, err);
  if (fd >= 0)
    close (fd);
  if (r < 0)
    return ar_err_prefix (err, LABEL ": the connect supervisor's answer");
  if (r == 0)
    return ar_err (err, 0, LABEL ": the connect supervisor exited before it was ready");
  msg[r] = '\0';
  if (msg[0])
    return ar_err (err, 0, "%s", msg);
  return 0;
}

int
ar_unixconn_start (const struct ar_kv *annotations, size_t n_ann, const struct ar_user *user, int report,
                   ar_error **err)
{
  const char *text = ar_unixconn_annotation (annotations, n_ann);
  struct ar_unixconn_allow allow[AR_UNIXCONN_MAX_ALLOW];
  size_t n = 0;
  int sv[2];

  if (!text)
    return 0;
  if (parse_paths (text, allow, &n, err) < 0)
    return -1;
  if (access ("/proc/self/fd", X_OK) < 0)
    return ar_err (err, errno, LABEL ": the connect supervisor needs /proc mounted in the container");
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return ar_err (err, errno, LABEL ": socketpair");
  cleanup_close int mine = sv[0];
  int theirs = sv[1];
  int r = spawn (theirs, report, user, allow, n, err);
  close (theirs);
  if (r < 0)
    return -1;
  /* Loaded after the fork: the supervisor is under no filter of ours. */
  cleanup_close int listener = -1;
  if (load_filter (&listener, err) < 0)
    return -1;
  return handover (mine, listener, report < 0, err);
}
