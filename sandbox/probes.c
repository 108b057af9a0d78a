/* The escape probes: see probes.h. Each probe tries one thing the sandbox
 * must prevent and reports what happened, in plain words: the errno text
 * when the kernel refused, or what got through. Probes that change the
 * calling process (unshare, mount) run in a forked child. */
#include "config.h"
#include "probes.h"
#include "util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void
report (const char *name, const char *expected, const char *got, const char *verdict)
{
  printf ("%s\t%s\t%s\t%s\n", name, expected, got, verdict);
  fflush (stdout);
}

/* ---- files ---- */

static void
probe_creds (const struct ar_probe_args *a)
{
  for (size_t i = 0; i < a->n_creds; i++)
    {
      char name[300], got[300];
      snprintf (name, sizeof name, "read-credential:%s", a->creds[i]);
      int fd = open (a->creds[i], O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
      if (fd < 0)
        {
          report (name, "unreadable", strerror (errno), "ok");
          continue;
        }
      char c;
      ssize_t n = read (fd, &c, 1);
      int e = errno;
      close (fd);
      if (n > 0)
        report (name, "unreadable", "read its content", "crossed");
      else
        {
          snprintf (got, sizeof got, "%s", n == 0 ? "empty (masked)" : strerror (e));
          report (name, "unreadable", got, "ok");
        }
    }
}

/* Create <dir>/<prefix><token>; the host then looks whether it is there. */
static void
probe_write (const char *kind, const char *dir, const char *token, const char *expected)
{
  char name[300], path[4200];
  snprintf (name, sizeof name, "%s:%s", kind, dir);
  snprintf (path, sizeof path, "%s/%s%s", strcmp (dir, "/") ? dir : "", AR_PROBE_FILE_PREFIX, token);
  int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      report (name, expected, strerror (errno), "host");
      return;
    }
  ssize_t w = write (fd, "probe\n", 6);
  close (fd);
  report (name, expected, w == 6 ? "created" : "created, write failed", "host");
}

/* ---- network ---- */

/* Connect with a short timeout: 0 connected, 1 still in progress (a route
 * exists), else the errno. */
static int
try_connect (int family, const void *sa, socklen_t len, int ms, int *sfd)
{
  int fd = socket (family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return errno;
  if (connect (fd, sa, len) == 0)
    goto connected;
  if (errno != EINPROGRESS)
    {
      int e = errno;
      close (fd);
      return e;
    }
  struct pollfd p = { .fd = fd, .events = POLLOUT };
  if (poll (&p, 1, ms) <= 0)
    {
      close (fd);
      return 1;
    }
  int soerr = 0;
  socklen_t sl = sizeof soerr;
  getsockopt (fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
  if (soerr)
    {
      close (fd);
      return soerr;
    }
connected:
  if (sfd)
    *sfd = fd;
  else
    close (fd);
  return 0;
}

static void
probe_tcp4 (const char *name, const char *ip, int port, int ms)
{
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
  char got[200];
  inet_pton (AF_INET, ip, &sin.sin_addr);
  int r = try_connect (AF_INET, &sin, sizeof sin, ms, NULL);
  if (r == 0)
    report (name, "unreachable", "connected", "crossed");
  else if (r == 1)
    report (name, "unreachable", "no answer, but a route exists", "crossed");
  else
    {
      snprintf (got, sizeof got, "%s", strerror (r));
      report (name, "unreachable", got, "ok");
    }
}

static void
probe_dns (const struct ar_probe_args *a)
{
  struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
  char name[300], got[300];
  snprintf (name, sizeof name, "resolve-denied-name:%s", a->deny_name);
  int r = getaddrinfo (a->deny_name, "443", &hints, &res);
  if (r != 0)
    {
      report (name, "not resolved", gai_strerror (r), "ok");
      return;
    }
  bool crossed = false;
  char addr[INET_ADDRSTRLEN] = "";
  for (struct addrinfo *p = res; p; p = p->ai_next)
    {
      const struct sockaddr_in *s = (const struct sockaddr_in *) p->ai_addr;
      inet_ntop (AF_INET, &s->sin_addr, addr, sizeof addr);
      crossed |= strncmp (addr, "127.", 4) != 0;
    }
  freeaddrinfo (res);
  snprintf (got, sizeof got, "resolved to %s", addr);
  report (name, "not resolved", got, crossed ? "crossed" : "ok");
}

/* Control: the allowed endpoint answers (connect and one exchange). */
static void
probe_allowed (const struct ar_probe_args *a)
{
  char name[300], port[16];
  struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
  snprintf (name, sizeof name, "control-allowed-endpoint:%s:%d", a->allow_name, a->allow_port);
  snprintf (port, sizeof port, "%d", a->allow_port);
  int r = getaddrinfo (a->allow_name, port, &hints, &res);
  if (r != 0)
    {
      report (name, "reachable", gai_strerror (r), "crossed");
      return;
    }
  int fd = -1;
  r = try_connect (res->ai_family, res->ai_addr, res->ai_addrlen, 5000, &fd);
  freeaddrinfo (res);
  if (r != 0)
    {
      report (name, "reachable", r == 1 ? "connect timed out" : strerror (r), "crossed");
      return;
    }
  /* one exchange: an echo answers with the line, TLS with an alert */
  static const char hello[] = "agentrun-check\r\n\r\n";
  char buf[64];
  struct pollfd p = { .fd = fd, .events = POLLIN };
  ssize_t n = -1;
  if (send (fd, hello, sizeof hello - 1, MSG_NOSIGNAL) == (ssize_t) sizeof hello - 1 && poll (&p, 1, 5000) > 0)
    n = recv (fd, buf, sizeof buf, 0);
  close (fd);
  report (name, "reachable", n > 0 ? "connected and answered" : "connected, no answer", n > 0 ? "ok" : "crossed");
}

/* ---- process ---- */

static void
probe_host_pid (const struct ar_probe_args *a)
{
  char path[64], comm[64] = "", got[200];
  snprintf (path, sizeof path, "/proc/%ld/comm", a->host_pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read (fd, comm, sizeof comm - 1) : -1;
  if (fd >= 0)
    close (fd);
  int nproc = 0;
  DIR *d = opendir ("/proc");
  for (struct dirent *e; d && (e = readdir (d));)
    nproc += e->d_name[0] >= '0' && e->d_name[0] <= '9';
  if (d)
    closedir (d);
  bool seen = n > 0 && strncmp (comm, "agentrun", 8) == 0 && a->host_pid > nproc;
  snprintf (got, sizeof got, "%s; %d processes in /proc", seen ? "the host process is visible" : "not visible", nproc);
  report ("see-host-process", "not visible", got, seen ? "crossed" : "ok");
}

void
ar_probes_fds (const struct ar_probe_args *a)
{
  char got[512] = "", link[256], path[64];
  size_t len = 0;
  bool found = false;
  DIR *d = opendir ("/proc/self/fd");
  if (!d)
    {
      report ("inherited-fd", "only stdio", strerror (errno), "crossed");
      return;
    }
  for (struct dirent *e; (e = readdir (d));)
    {
      int fd = atoi (e->d_name);
      if (e->d_name[0] == '.' || fd <= 2 || fd == dirfd (d))
        continue;
      snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
      ssize_t n = readlink (path, link, sizeof link - 1);
      link[n > 0 ? n : 0] = '\0';
      found = true;
      if (len < sizeof got - 1)
        len += (size_t) snprintf (got + len, sizeof got - len, "%sfd %d -> %s", len ? ", " : "", fd, link);
    }
  closedir (d);
  if (a->fd > 2 && fcntl (a->fd, F_GETFD) >= 0 && !found)
    found = true, snprintf (got, sizeof got, "fd %d is open", a->fd);
  report ("inherited-fd", "only stdio", found ? got : "only stdio", found ? "crossed" : "ok");
}

static bool
prctl_capbset (int cap)
{
  return prctl (PR_CAPBSET_READ, cap, 0, 0, 0) > 0;
}

static void
probe_caps (void)
{
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct data[2];
  char got[200];
  if (syscall (SYS_capget, &h, data) < 0)
    {
      report ("effective-capability", "none", strerror (errno), "crossed");
      return;
    }
  unsigned long long eff = data[0].effective | ((unsigned long long) data[1].effective << 32);
  unsigned long long prm = data[0].permitted | ((unsigned long long) data[1].permitted << 32);
  unsigned long long bnd = 0;
  for (int c = 0; c < 64; c++)
    if (prctl_capbset (c))
      bnd |= 1ULL << c;
  snprintf (got, sizeof got, "effective %#llx permitted %#llx bounding %#llx", eff, prm, bnd);
  report ("effective-capability", "none", got, eff || prm || bnd ? "crossed" : "ok");
}

/* Run fn in a child: its exit code is 0 when the action succeeded, else errno. */
static int
in_child (int (*fn) (void))
{
  pid_t pid = fork ();
  if (pid < 0)
    return errno;
  if (pid == 0)
    _exit (fn () == 0 ? 0 : (errno ? errno : 255));
  int st;
  if (waitpid (pid, &st, 0) < 0)
    return errno;
  if (WIFSIGNALED (st))
    return WTERMSIG (st) == SIGSYS ? EPERM : EINTR; /* seccomp kill counts as refused */
  return WEXITSTATUS (st);
}

static int
do_userns (void)
{
  return unshare (CLONE_NEWUSER);
}
static int
do_mount (void)
{
  return mount ("tmpfs", "/tmp", "tmpfs", 0, "size=1m");
}

static void
probe_child (const char *name, int (*fn) (void))
{
  int r = in_child (fn);
  report (name, "refused", r == 0 ? "succeeded" : strerror (r), r == 0 ? "crossed" : "ok");
}

static void
probe_tiocsti (void)
{
  char c = '\0';
  char got[200];
  int r0 = ioctl (STDIN_FILENO, TIOCSTI, &c), e0 = errno;
  int tty = open ("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  int e1 = errno, r1 = -1;
  if (tty >= 0)
    {
      r1 = ioctl (tty, TIOCSTI, &c);
      e1 = errno;
      close (tty);
    }
  snprintf (got, sizeof got, "stdin: %s; /dev/tty: %s", r0 == 0 ? "injected" : strerror (e0),
            r1 == 0 ? "injected" : strerror (e1));
  report ("tiocsti", "refused", got, r0 == 0 || r1 == 0 ? "crossed" : "ok");
}

/* Opening for write is enough to tell: none of these may be writable. */
static void
probe_kernel_write (const char *name, const char *const *paths)
{
  char got[400] = "";
  size_t len = 0;
  bool crossed = false;
  for (size_t i = 0; paths[i]; i++)
    {
      int fd = open (paths[i], O_WRONLY | O_CLOEXEC | O_NOCTTY);
      crossed |= fd >= 0;
      len += (size_t) snprintf (got + len, sizeof got - len, "%s%s: %s", i ? "; " : "", paths[i],
                                fd >= 0 ? "opened for writing" : strerror (errno));
      if (fd >= 0)
        close (fd);
      if (len >= sizeof got)
        break;
    }
  report (name, "refused", got, crossed ? "crossed" : "ok");
}

#ifdef __x86_64__
/* One foreign-ABI getpid in a child: "i386" through int 0x80, "x32" with
 * the x32 bit set in the syscall number. */
static void
foreign_getpid (const char *abi, char *got, size_t size, bool *crossed)
{
  int st = 0;
  pid_t pid = fork ();
  if (pid == 0)
    {
      long r;
      if (abi[0] == 'i')
        {
          r = 20; /* getpid in the i386 table */
          __asm__ volatile("int $0x80" : "+a"(r) : : "memory", "r8", "r9", "r10", "r11");
        }
      else
        r = syscall (0x40000000L | SYS_getpid);
      _exit (r > 0 ? 0 : 1);
    }
  if (pid < 0 || waitpid (pid, &st, 0) < 0)
    {
      snprintf (got, size, "%s: could not run: %s", abi, strerror (errno));
      *crossed = true;
    }
  else if (WIFSIGNALED (st))
    snprintf (got, size, "%s: killed by SIG%s", abi, sigabbrev_np (WTERMSIG (st)));
  else
    {
      snprintf (got, size, "%s: getpid %s", abi, WEXITSTATUS (st) == 0 ? "answered" : "failed");
      *crossed |= WEXITSTATUS (st) == 0;
    }
}

/* The filter allows the native ABI only: a syscall through another table
 * kills the thread (or the kernel has no such ABI at all). */
static void
probe_foreign_abi (void)
{
  char a[120], b[120], got[250];
  bool crossed = false;
  foreign_getpid ("i386", a, sizeof a, &crossed);
  foreign_getpid ("x32", b, sizeof b, &crossed);
  snprintf (got, sizeof got, "%s; %s", a, b);
  report ("foreign-syscall-abi", "refused", got, crossed ? "crossed" : "ok");
}
#endif

/* ---- Landlock ---- */

/* A domain is active when "/" cannot be listed: the sandbox's root is its
 * own folder, owned by the agent and named in no read rule. Each
 * --landlock-write folder is one the mounts let through (a bind made
 * writable by mistake): creating a file there must still fail, EACCES. */
static void
probe_landlock (const struct ar_probe_args *a)
{
  char got[400];
  long abi = syscall (444 /* landlock_create_ruleset */, NULL, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */);
  if (abi < 0)
    {
      snprintf (got, sizeof got, "the kernel offers no Landlock: %s", strerror (errno));
      report ("landlock", "a Landlock domain", got, "crossed");
    }
  else
    {
      int fd = open ("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      int e = errno;
      if (fd >= 0)
        close (fd);
      snprintf (got, sizeof got, "ABI %ld; listing /: %s", abi, fd >= 0 ? "allowed, no domain" : strerror (e));
      report ("landlock", "a Landlock domain", got, fd < 0 && e == EACCES ? "ok" : "crossed");
    }
  for (size_t i = 0; i < a->n_ll_writes; i++)
    {
      char name[300], p[PATH_MAX];
      snprintf (name, sizeof name, "landlock-write:%s", a->ll_writes[i]);
      snprintf (p, sizeof p, "%s/%s%s", a->ll_writes[i], AR_PROBE_FILE_PREFIX, a->token);
      int fd = open (p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
      int e = errno;
      if (fd >= 0)
        {
          close (fd);
          unlink (p);
        }
      report (name, "refused by Landlock", fd >= 0 ? "created a file" : strerror (e),
              fd < 0 && e == EACCES ? "ok" : "crossed");
    }
}

/* A host socket inside the workspace: visible, listening, mode 0777, so
 * only the unixconn supervisor stands between the agent and it. */
static void
probe_unix_socket (const char *path)
{
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  snprintf (a.sun_path, sizeof a.sun_path, "%s", path);
  cleanup_close int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int r = s < 0 ? -1 : connect (s, (struct sockaddr *) &a, sizeof a);
  int e = errno;
  report ("unixconn:visible-host-socket", "refused", r == 0 ? "connected to the host's socket" : strerror (e),
          r == 0 ? "crossed" : "ok");
}

/* ---- all of them, in order ---- */

void
ar_probes_run (const struct ar_probe_args *a)
{
  probe_creds (a);
  for (size_t i = 0; i < a->n_writes; i++)
    probe_write ("write-outside", a->writes[i], a->token, "not on the host");
  for (size_t i = 0; i < a->n_controls; i++)
    probe_write ("control-write", a->controls[i], a->token, "on the host");
  if (a->loopback_port)
    probe_tcp4 ("host-loopback:127.0.0.1", "127.0.0.1", a->loopback_port, 1000);
  probe_tcp4 ("outside-address:10.255.255.1:80", "10.255.255.1", 80, 1000);
  probe_tcp4 ("outside-address:1.1.1.1:53", "1.1.1.1", 53, 1000);
  probe_dns (a);
  if (a->host_pid)
    probe_host_pid (a);
  probe_caps ();
  probe_child ("create-user-namespace", do_userns);
  probe_child ("mount", do_mount);
#ifdef __x86_64__
  probe_foreign_abi ();
#endif
  probe_tiocsti ();
  probe_kernel_write ("write-proc-sys",
                      (const char *const[]){ "/proc/sys/kernel/hostname", "/proc/sys/vm/drop_caches", NULL });
  probe_kernel_write ("write-sys",
                      (const char *const[]){ "/sys/kernel/uevent_helper", "/sys/fs/cgroup/cgroup.procs", NULL });
  if (a->allow_name)
    probe_allowed (a);
  if (a->landlock)
    probe_landlock (a);
  if (a->unix_socket)
    probe_unix_socket (a->unix_socket);
}
