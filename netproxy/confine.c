/* See confine.h. */
#include "config.h"
#include "confine.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- whom to become ---- */

static bool
parse_id (const char *s, const char *end, unsigned long *out)
{
  char *e;
  if (s == end || *s < '0' || *s > '9')
    return false;
  errno = 0;
  *out = strtoul (s, &e, 10);
  return errno == 0 && e == end && *out > 0 && *out < 0xffffffffUL;
}

void
np_ids_default (struct np_ids *ids)
{
  const char *su = getenv ("SUDO_UID"), *sg = getenv ("SUDO_GID");
  unsigned long u, g;
  ids->change = getuid () == 0 || geteuid () == 0;
  ids->uid = getuid ();
  ids->gid = getgid ();
  if (!ids->change)
    return;
  if (su && sg && parse_id (su, su + strlen (su), &u) && parse_id (sg, sg + strlen (sg), &g))
    {
      ids->uid = (uid_t) u;
      ids->gid = (gid_t) g;
      return;
    }
  ids->uid = NP_NOBODY;
  ids->gid = NP_NOBODY;
}

int
np_ids_parse (const char *arg, struct np_ids *ids, ar_error **err)
{
  const char *colon = strchr (arg, ':');
  unsigned long u, g;
  if (!colon || !parse_id (arg, colon, &u) || !parse_id (colon + 1, colon + 1 + strlen (colon + 1), &g))
    return ar_err (err, 0, "--user: expected UID:GID, neither 0, got '%s'", arg);
  ids->change = true;
  ids->uid = (uid_t) u;
  ids->gid = (gid_t) g;
  return 0;
}

/* ---- folders held across the drop ---- */

static struct {
  char *dir;
  int fd;
} held[NP_HELD_DIRS];
static size_t n_held;

/* The deepest held folder path is below, and path from there on. */
static int
held_fd (const char *path, const char **base)
{
  int fd = -1;
  size_t best = 0;
  for (size_t i = 0; i < n_held; i++)
    {
      size_t l = strlen (held[i].dir);
      if (l > best && strncmp (held[i].dir, path, l) == 0 && path[l] == '/' && path[l + 1])
        {
          fd = held[i].fd;
          best = l;
          *base = path + l + 1;
        }
    }
  return fd;
}

void
np_dirs_hold (const char *path)
{
  const char *slash = strrchr (path, '/');
  if (path[0] != '/' || !slash || slash == path || n_held == NP_HELD_DIRS)
    return;
  for (size_t i = 0; i < n_held; i++)
    if (strlen (held[i].dir) == (size_t) (slash - path) && strncmp (held[i].dir, path, (size_t) (slash - path)) == 0)
      return;
  char *dir = strndup (path, (size_t) (slash - path));
  if (!dir)
    return;
  int fd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    {
      free (dir);
      return;
    }
  held[n_held].dir = dir;
  held[n_held++].fd = fd;
}

size_t
np_dirs_fds (int *fds, size_t cap)
{
  size_t n = 0;
  for (; n < n_held && n < cap; n++)
    fds[n] = held[n].fd;
  return n;
}

int
np_sun_path (const char *path, char *out, size_t cap)
{
  const char *base = path;
  int fd = held_fd (path, &base);
  int n = fd >= 0 ? snprintf (out, cap, "/proc/self/fd/%d/%s", fd, base) : snprintf (out, cap, "%s", path);
  if (n < 0 || (size_t) n >= cap)
    {
      errno = ENAMETOOLONG;
      return -1;
    }
  return 0;
}

bool
np_ids_can_reach (const struct np_ids *ids, const char *path)
{
  if (!ids->change)
    return true;
  const char *base = path;
  int dfd = held_fd (path, &base);
  /* Root's supplementary groups still count here; the drop removes them,
   * so a socket reachable only through one of those fails later, at
   * connect, logged: never a way around a permission. */
  uid_t ou = (uid_t) setfsuid (ids->uid);
  gid_t og = (gid_t) setfsgid (ids->gid);
  bool ok = faccessat (dfd >= 0 ? dfd : AT_FDCWD, base, W_OK, AT_EACCESS) == 0;
  setfsgid (og);
  setfsuid (ou);
  return ok;
}

int
np_unpriv_ports (ar_error **err)
{
  static const char path[] = "/proc/sys/net/ipv4/ip_unprivileged_port_start";
  cleanup_close int fd = open (path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 || write (fd, "0\n", 2) != 2)
    return ar_err (err, errno, "set %s to 0 in the container's network namespace", path);
  return 0;
}

/* ---- capabilities ---- */

static int
capset_none (void)
{
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct d[2] = { 0 };
  return (int) syscall (SYS_capset, &h, d);
}

static bool
caps_all_gone (void)
{
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct d[2];
  if (syscall (SYS_capget, &h, d) < 0)
    return false;
  for (int i = 0; i < 2; i++)
    if (d[i].effective || d[i].permitted || d[i].inheritable)
      return false;
  for (int c = 0; c <= 63; c++)
    {
      int r = prctl (PR_CAPBSET_READ, c, 0, 0, 0);
      if (r < 0)
        break; /* past the last capability this kernel knows */
      if (r > 0 || prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) > 0)
        return false;
    }
  return true;
}

static bool
have_setpcap (void)
{
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct d[2];
  return syscall (SYS_capget, &h, d) == 0 && (d[0].effective & (1U << CAP_SETPCAP));
}

/* Emptying the bounding set takes CAP_SETPCAP. A plain user's process has
 * none: a user namespace of its own gives it that right there (its kernel
 * uid, and so every file permission, stays what it was), and the drop then
 * leaves it with less than it started with, not more. */
static int
drop_bounding (ar_error **err)
{
  if (!have_setpcap () && unshare (CLONE_NEWUSER) < 0)
    return ar_err (err, errno, "unshare a user namespace to empty the capability bounding set");
  for (int c = 0; c <= 63; c++)
    if (prctl (PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
      {
        if (errno == EINVAL)
          break;
        return ar_err (err, errno, "drop capability %d from the bounding set", c);
      }
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
    return ar_err (err, errno, "clear the ambient capabilities");
  return 0;
}

static int
become (const struct np_ids *ids, ar_error **err)
{
  if (!ids->change)
    return 0;
  if (setgroups (0, NULL) < 0)
    return ar_err (err, errno, "setgroups to none");
  if (setresgid (ids->gid, ids->gid, ids->gid) < 0)
    return ar_err (err, errno, "setresgid %u", (unsigned) ids->gid);
  if (setresuid (ids->uid, ids->uid, ids->uid) < 0)
    return ar_err (err, errno, "setresuid %u", (unsigned) ids->uid);
  uid_t r, e, s;
  gid_t gr, ge, gs;
  if (getresuid (&r, &e, &s) < 0 || r != ids->uid || e != ids->uid || s != ids->uid || getresgid (&gr, &ge, &gs) < 0
      || gr != ids->gid || ge != ids->gid || gs != ids->gid || getgroups (0, NULL) != 0)
    return ar_err (err, 0, "the ids did not change to %u:%u", (unsigned) ids->uid, (unsigned) ids->gid);
  return 0;
}

/* ---- seccomp ---- */

/* What the event loop of either process does: epoll, accept, connect,
 * sendmsg/recvmsg (SCM_RIGHTS), splice through pipes, timers, memory,
 * the audit log's writes, signals and exit. No open, no exec, no file
 * change. */
static const int common_calls[] = {
  SCMP_SYS (read),
  SCMP_SYS (write),
  SCMP_SYS (readv),
  SCMP_SYS (writev),
  SCMP_SYS (close),
  SCMP_SYS (epoll_create1),
  SCMP_SYS (epoll_wait),
  SCMP_SYS (epoll_pwait),
  SCMP_SYS (epoll_pwait2),
  SCMP_SYS (epoll_ctl),
  SCMP_SYS (accept4),
  SCMP_SYS (accept),
  SCMP_SYS (connect),
  SCMP_SYS (bind),
  SCMP_SYS (listen),
  SCMP_SYS (setsockopt),
  SCMP_SYS (getsockopt),
  SCMP_SYS (getsockname),
  SCMP_SYS (getpeername),
  SCMP_SYS (sendmsg),
  SCMP_SYS (recvmsg),
  SCMP_SYS (sendto),
  SCMP_SYS (recvfrom),
  SCMP_SYS (shutdown),
  SCMP_SYS (splice),
  SCMP_SYS (pipe2),
  SCMP_SYS (fcntl),
  SCMP_SYS (dup),
  SCMP_SYS (clock_gettime),
  SCMP_SYS (clock_nanosleep),
  SCMP_SYS (nanosleep),
  SCMP_SYS (gettimeofday),
  SCMP_SYS (time),
  SCMP_SYS (brk),
  SCMP_SYS (mmap),
  SCMP_SYS (munmap),
  SCMP_SYS (mremap),
  SCMP_SYS (madvise),
  SCMP_SYS (mprotect),
  SCMP_SYS (futex),
  SCMP_SYS (getpid),
  SCMP_SYS (gettid),
  SCMP_SYS (getrandom),
  SCMP_SYS (rt_sigreturn),
  SCMP_SYS (rt_sigprocmask),
  SCMP_SYS (rt_sigaction),
  SCMP_SYS (restart_syscall),
  SCMP_SYS (exit),
  SCMP_SYS (exit_group),
  SCMP_SYS (fstat),
  SCMP_SYS (newfstatat),
  SCMP_SYS (lseek),
};

/* The relay alone: its resolver threads (getaddrinfo reads the host's
 * resolver files, asks DNS and the kernel's addresses through netlink),
 * its SIGTERM through signalfd, and removing its sockets when it stops. */
static const int relay_calls[] = {
  SCMP_SYS (poll),     SCMP_SYS (ppoll),       SCMP_SYS (sendmmsg),
  SCMP_SYS (recvmmsg), SCMP_SYS (uname),       SCMP_SYS (set_robust_list),
  SCMP_SYS (rseq),     SCMP_SYS (sched_yield), SCMP_SYS (sched_getaffinity),
  SCMP_SYS (eventfd2), SCMP_SYS (statx),       SCMP_SYS (unlinkat),
  SCMP_SYS (getuid),   SCMP_SYS (geteuid),     SCMP_SYS (getgid),
  SCMP_SYS (getegid),  SCMP_SYS (prlimit64),   SCMP_SYS (getrlimit),
};

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
#define NP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define NP_SANITIZED 1
#endif
#endif

#ifdef NP_SANITIZED
/* A sanitizer build's runtime (ASan, UBSan, LSan) runs inside the same
 * process: it reads /proc/self/maps and exe at a thread's start, gives each
 * thread an alternate signal stack, and at exit LSan stops the threads from
 * a helper it clones and ptraces them. Refused, it aborts the process, so a
 * sanitizer build allows those too; the plain build's filter is the one
 * that ships, and CI runs every test against it as well. */
static const int sanitizer_calls[] = {
  SCMP_SYS (sigaltstack),
  SCMP_SYS (open),
  SCMP_SYS (openat),
  SCMP_SYS (readlink),
  SCMP_SYS (readlinkat),
  SCMP_SYS (prctl),
  SCMP_SYS (ptrace),
  SCMP_SYS (wait4),
  SCMP_SYS (waitid),
  SCMP_SYS (clone),
  SCMP_SYS (getppid),
  SCMP_SYS (sched_yield),
  SCMP_SYS (sched_getaffinity),
  SCMP_SYS (getrlimit),
  SCMP_SYS (prlimit64),
  SCMP_SYS (setrlimit),
  SCMP_SYS (mincore),
  SCMP_SYS (getdents64),
  SCMP_SYS (kill),
  SCMP_SYS (tgkill),
  SCMP_SYS (tkill),
  SCMP_SYS (uname),
  SCMP_SYS (pread64),
  SCMP_SYS (dup2),
  SCMP_SYS (dup3),
  SCMP_SYS (pipe),
  SCMP_SYS (stat),
  SCMP_SYS (lstat),
  SCMP_SYS (access),
  SCMP_SYS (set_robust_list),
  SCMP_SYS (rseq),
  SCMP_SYS (statx),
};
#endif

#ifdef NP_SANITIZED
/* LeakSanitizer's check at exit stops the threads from a helper that
 * ptraces them and reads /proc/PID/task: a process dropped to another uid,
 * not dumpable and under this filter can give it neither, and LSan then
 * fails the exit. The confined netproxy and relay are checked by ASan and
 * UBSan alone. */
const char *__lsan_default_options (void);
const char *
__lsan_default_options (void)
{
  return "detect_leaks=0";
}
#endif

static int
rule (scmp_filter_ctx ctx, int nr, unsigned n, const struct scmp_arg_cmp *a)
{
  return seccomp_rule_add_array (ctx, SCMP_ACT_ALLOW, nr, n, a);
}

static int
add_rules (scmp_filter_ctx ctx, enum np_role role)
{
  int rc = 0;
  for (size_t i = 0; i < ARRAY_SIZE (common_calls) && rc == 0; i++)
    rc = rule (ctx, common_calls[i], 0, NULL);
  if (role == NP_ROLE_RELAY)
    for (size_t i = 0; i < ARRAY_SIZE (relay_calls) && rc == 0; i++)
      rc = rule (ctx, relay_calls[i], 0, NULL);
  /* Sockets of the families each uses, nothing else (no raw packet, no
   * netlink for the netproxy, which must not reconfigure the netns). */
  static const int np_fam[] = { AF_UNIX, AF_INET };
  static const int relay_fam[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };
  const int *fam = role == NP_ROLE_RELAY ? relay_fam : np_fam;
  size_t nfam = role == NP_ROLE_RELAY ? ARRAY_SIZE (relay_fam) : ARRAY_SIZE (np_fam);
  for (size_t i = 0; i < nfam && rc == 0; i++)
    {
      struct scmp_arg_cmp a = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t) fam[i] };
      rc = rule (ctx, SCMP_SYS (socket), 1, &a);
    }
  /* ioctl only to ask how much is waiting and whether an fd is a
   * terminal (stdio, the resolver): no device, no interface is touched. */
  static const unsigned long ioctls[] = { FIONREAD, TCGETS };
  for (size_t i = 0; i < ARRAY_SIZE (ioctls) && rc == 0; i++)
    {
      struct scmp_arg_cmp a = { .arg = 1, .op = SCMP_CMP_EQ, .datum_a = ioctls[i] };
      rc = rule (ctx, SCMP_SYS (ioctl), 1, &a);
    }
  if (role != NP_ROLE_RELAY || rc != 0)
    return rc;
  /* The resolver's files, read only. */
  struct scmp_arg_cmp ro = {
    .arg = 2, .op = SCMP_CMP_MASKED_EQ, .datum_a = O_ACCMODE | O_CREAT | O_TRUNC, .datum_b = O_RDONLY
  };
  rc = rule (ctx, SCMP_SYS (openat), 1, &ro);
  /* Threads, never a new process: clone3's flags are behind a pointer the
   * filter cannot read, so it answers ENOSYS and glibc falls back to
   * clone, whose flags must hold CLONE_THREAD. */
  if (rc == 0)
    rc = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (ENOSYS), SCMP_SYS (clone3), 0);
  struct scmp_arg_cmp thr = { .arg = 0, .op = SCMP_CMP_MASKED_EQ, .datum_a = CLONE_THREAD, .datum_b = CLONE_THREAD };
  if (rc == 0)
    rc = rule (ctx, SCMP_SYS (clone), 1, &thr);
  return rc;
}

static int
load_filter (enum np_role role, ar_error **err)
{
  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ERRNO (EPERM));
  if (!ctx)
    return ar_err (err, 0, "seccomp_init failed");
  int rc = add_rules (ctx, role);
#ifdef NP_SANITIZED
  for (size_t i = 0; i < ARRAY_SIZE (sanitizer_calls) && rc == 0; i++)
    {
      /* the same call may have a narrower rule of its own: the filter then
       * takes the wider one */
      rc = seccomp_rule_add (ctx, SCMP_ACT_ALLOW, sanitizer_calls[i], 0);
      if (rc == -EEXIST)
        rc = 0;
    }
#endif
  if (rc == 0)
    rc = seccomp_load (ctx);
  seccomp_release (ctx);
  if (rc < 0)
    return ar_err (err, -rc, "load the seccomp filter");
  return 0;
}

/* ---- all of it ---- */

int
np_confine (const struct np_ids *ids, enum np_role role, ar_error **err)
{
  /* A change of uid clears the parent-death signal: set it again, and make
   * sure the parent did not go in between. */
  int pdeath = 0;
  pid_t parent = getppid ();
  if (prctl (PR_GET_PDEATHSIG, &pdeath, 0, 0, 0) < 0)
    return ar_err (err, errno, "prctl PR_GET_PDEATHSIG");
  if (drop_bounding (err) < 0 || become (ids, err) < 0)
    return -1;
  if (capset_none () < 0)
    return ar_err (err, errno, "drop every capability");
  if (!caps_all_gone ())
    return ar_err (err, 0, "capabilities left after the drop");
  if (pdeath && (prctl (PR_SET_PDEATHSIG, pdeath, 0, 0, 0) < 0 || getppid () != parent))
    return ar_err (err, errno, "the parent went while dropping privileges");
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return ar_err (err, errno, "prctl PR_SET_NO_NEW_PRIVS");
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    return ar_err (err, errno, "prctl PR_SET_DUMPABLE");
  return load_filter (role, err);
}
