/* Test helper for run.agentrun.unixconn (tests/unixconn.bats): static,
 * so that it runs in any sandbox or bundle.
 *   unixconn-probe connect PATH         connect, print "ok LINE" (the server's first line) or "refused ERRNO"
 *   unixconn-probe nodump connect PATH  the same after PR_SET_DUMPABLE 0 (as ssh does)
 *   unixconn-probe race ALLOWED DENIED N
 *       N connects to a buffer that a second thread keeps rewriting between
 *       the two paths; prints "escaped" and exits 2 if a connect ever
 *       reached DENIED (getpeername), else "held OK_COUNT REFUSED_COUNT"
 *   unixconn-probe bench PATH N         microseconds per connect (new socket each time)
 *   unixconn-probe bench-udp HOST N     the same for a UDP socket to HOST:9
 *   unixconn-probe bench-socket HELD N  microseconds per socket(AF_INET, SOCK_STREAM) (closed at once),
 *       with HELD loopback connections (two sockets each) open meanwhile
 *   unixconn-probe bench-accept N       microseconds per accept4 of a pending loopback connection
 *   unixconn-probe serve PATH LINE      listen on PATH (mode 0777), answer LINE to each connection
 *   unixconn-probe hold PATH            listen on PATH with a backlog of 1, never accept
 *   unixconn-probe stall FULL OK        a child fills FULL's backlog until its blocking connect hangs;
 *       then connect OK: prints "ok-while-stalled MS" and whether the child is still blocked;
 *       3 s after the child is killed, "count the threads", and 3 s more before the exit
 *   unixconn-probe tcp HOST PORT        a TCP connect, "ok" or "refused ERRNO"
 *   unixconn-probe newlistener PATH     the escape: a filter of our own with a new listener, whose
 *       thread answers CONTINUE to every connect; prints "newlistener refused ERRNO" or, with a
 *       listener, connects PATH (exit 2 on "escaped")
 *   unixconn-probe allowfilter PATH     a filter of our own allowing everything, then connect PATH
 *   unixconn-probe sendto PATH MSG      a datagram with an address: "sent" or "refused ERRNO"
 *   unixconn-probe sendmsg PATH MSG     the same through sendmsg(2) with msg_name
 *   unixconn-probe sendfd PATH MSG      the same with an fd (SCM_RIGHTS) of /etc/hostname
 *   unixconn-probe dgram-serve PATH OUT bind a datagram socket on PATH (mode 0777), append each
 *       message (and " +fd" when one came with it) as a line to OUT
 *   unixconn-probe own DIR              bind a stream and a datagram socket in DIR, reach each:
 *       "own-stream ok|refused ERRNO", "own-dgram ok|refused ERRNO" */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

static int
unix_connect (const char *path)
{
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  snprintf (a.sun_path, sizeof a.sun_path, "%s", path);
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0 || connect (s, (struct sockaddr *) &a, sizeof a) < 0)
    {
      int e = errno;
      if (s >= 0)
        close (s);
      errno = e;
      return -1;
    }
  return s;
}

static int
do_connect (const char *path)
{
  int s = unix_connect (path);
  if (s < 0)
    {
      printf ("refused %s\n", strerrorname_np (errno));
      return 1;
    }
  char line[256] = "";
  ssize_t n = read (s, line, sizeof line - 1);
  line[n > 0 ? n : 0] = '\0';
  line[strcspn (line, "\n")] = '\0';
  printf ("ok %s\n", line);
  close (s);
  return 0;
}

static struct sockaddr_un race_addr = { .sun_family = AF_UNIX };
static char race_paths[2][sizeof race_addr.sun_path];
static atomic_int race_stop;

static void *
rewriter (void *arg)
{
  (void) arg;
  for (unsigned i = 0; !atomic_load (&race_stop); i++)
    memcpy (race_addr.sun_path, race_paths[i & 1], sizeof race_addr.sun_path);
  return NULL;
}

static int
do_race (const char *allowed, const char *denied, int n)
{
  pthread_t t;
  int ok = 0, refused = 0;
  snprintf (race_paths[0], sizeof race_paths[0], "%s", allowed);
  snprintf (race_paths[1], sizeof race_paths[1], "%s", denied);
  memcpy (race_addr.sun_path, race_paths[0], sizeof race_addr.sun_path);
  pthread_create (&t, NULL, rewriter, NULL);
  for (int i = 0; i < n; i++)
    {
      int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (connect (s, (struct sockaddr *) &race_addr, sizeof race_addr) < 0)
        {
          refused++;
          close (s);
          continue;
        }
      ok++;
      struct sockaddr_un peer = { 0 };
      socklen_t len = sizeof peer;
      if (getpeername (s, (struct sockaddr *) &peer, &len) == 0 && strcmp (peer.sun_path, denied) == 0)
        {
          atomic_store (&race_stop, 1);
          printf ("escaped after %d connects\n", i + 1);
          return 2;
        }
      close (s);
    }
  atomic_store (&race_stop, 1);
  pthread_join (t, NULL);
  printf ("held %d %d\n", ok, refused);
  return ok > 0 && refused > 0 ? 0 : 1;
}

static double
now_us (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* Median and 90th percentile of n connects; the outcome (ok or errno) of
 * the first is printed too, so a run that measured failures says so. */
static int
do_bench (const char *path, const char *host, int n)
{
  struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons (9) };
  struct sockaddr_un un = { .sun_family = AF_UNIX };
  double *t = calloc ((size_t) n, sizeof *t);
  int first = -1;
  if (host)
    inet_pton (AF_INET, host, &in.sin_addr);
  if (path)
    snprintf (un.sun_path, sizeof un.sun_path, "%s", path);
  if (!t || n <= 0)
    return 64;
  for (int i = 0; i < n; i++)
    {
      int s = socket (path ? AF_UNIX : AF_INET, (path ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
      double t0 = now_us ();
      int r = path ? connect (s, (struct sockaddr *) &un, sizeof un) : connect (s, (struct sockaddr *) &in, sizeof in);
      t[i] = now_us () - t0;
      if (i == 0)
        first = r < 0 ? errno : 0;
      close (s);
    }
  qsort (t, (size_t) n, sizeof *t, cmp_double);
  printf ("%s %s: median %.1f us, p90 %.1f us (%s)\n", path ? "unix" : "udp", path ? path : host, t[n / 2],
          t[n * 9 / 10], first ? strerrorname_np (first) : "ok");
  free (t);
  return 0;
}

static void
print_times (const char *what, double *t, int n, int first)
{
  qsort (t, (size_t) n, sizeof *t, cmp_double);
  printf ("%s: median %.1f us, p90 %.1f us (%s)\n", what, t[n / 2], t[n * 9 / 10],
          first ? strerrorname_np (first) : "ok");
}

/* A loopback listener on an ephemeral port; its address in *a. */
static int
tcp_listener (struct sockaddr_in *a)
{
  socklen_t len = sizeof *a;
  *a = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int l = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (l < 0 || bind (l, (struct sockaddr *) a, sizeof *a) < 0 || listen (l, 4096) < 0
      || getsockname (l, (struct sockaddr *) a, &len) < 0)
    return perror ("listener"), -1;
  return l;
}

static int
do_bench_socket (int held, int n)
{
  struct sockaddr_in a;
  double *t = calloc ((size_t) n, sizeof *t);
  int l = tcp_listener (&a), first = -1;
  if (!t || n <= 0 || l < 0)
    return 64;
  for (int i = 0; i < held; i++)
    {
      int c = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (c < 0 || connect (c, (struct sockaddr *) &a, sizeof a) < 0 || accept4 (l, NULL, NULL, SOCK_CLOEXEC) < 0)
        return perror ("held connection"), 1;
    }
  for (int i = 0; i < n; i++)
    {
      double t0 = now_us ();
      int s = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      t[i] = now_us () - t0;
      if (i == 0)
        first = s < 0 ? errno : 0;
      if (s >= 0)
        close (s);
    }
  char what[64];
  snprintf (what, sizeof what, "socket with %d connections open", held);
  print_times (what, t, n, first);
  free (t);
  return 0;
}

static int
do_bench_accept (int n)
{
  struct sockaddr_in a;
  double *t = calloc ((size_t) n, sizeof *t);
  int l = tcp_listener (&a), first = -1;
  if (!t || n <= 0 || l < 0)
    return 64;
  for (int i = 0; i < n; i++)
    {
      int c = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (c < 0 || connect (c, (struct sockaddr *) &a, sizeof a) < 0)
        return perror ("connect"), 1;
      double t0 = now_us ();
      int s = accept4 (l, NULL, NULL, SOCK_CLOEXEC);
      t[i] = now_us () - t0;
      if (i == 0)
        first = s < 0 ? errno : 0;
      close (c);
      if (s >= 0)
        close (s);
    }
  print_times ("accept (blocking listener, connection pending)", t, n, first);
  free (t);
  return 0;
}

static int
do_tcp (const char *host, int port)
{
  struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons ((unsigned short) port) };
  inet_pton (AF_INET, host, &in.sin_addr);
  int s = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (connect (s, (struct sockaddr *) &in, sizeof in) < 0)
    {
      printf ("refused %s\n", strerrorname_np (errno));
      return 1;
    }
  printf ("ok\n");
  return 0;
}

static int
do_hold (const char *path)
{
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  snprintf (a.sun_path, sizeof a.sun_path, "%s", path);
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0 || bind (s, (struct sockaddr *) &a, sizeof a) < 0 || chmod (path, 0777) < 0 || listen (s, 1) < 0)
    return perror (path), 1;
  for (;;)
    pause ();
}

static int
do_stall (const char *full, const char *ok)
{
  pid_t child = fork ();
  if (child == 0)
    {
      for (int i = 0; i < 64; i++)
        unix_connect (full); /* kept open; one of them blocks for good */
      _exit (0);
    }
  usleep (300 * 1000);
  alarm (5); /* a stalled supervisor must fail the test, not hang it */
  double t0 = now_us ();
  int s = unix_connect (ok);
  double ms = (now_us () - t0) / 1000;
  alarm (0); /* only the connect was bounded */
  int st;
  bool blocked = waitpid (child, &st, WNOHANG) == 0;
  kill (child, SIGKILL);
  waitpid (child, &st, 0);
  if (s < 0)
    printf ("refused-while-stalled %s\n", strerrorname_np (errno));
  else
    printf ("ok-while-stalled %.0f\n", ms);
  printf ("child %s\n", blocked ? "still-blocked" : "not-blocked");
  /* the child is gone: the supervisor's thread that connected for it must
   * be interrupted within its one-second look; the test counts its threads
   * from the host meanwhile */
  sleep (3);
  printf ("count the threads\n");
  sleep (3);
  return s < 0 || !blocked;
}

static int
do_serve (const char *path, const char *line)
{
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  snprintf (a.sun_path, sizeof a.sun_path, "%s", path);
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0 || bind (s, (struct sockaddr *) &a, sizeof a) < 0 || chmod (path, 0777) < 0 || listen (s, 4096) < 0)
    return perror (path), 1;
  signal (SIGPIPE, SIG_IGN);
  for (;;)
    {
      int c = accept4 (s, NULL, NULL, SOCK_CLOEXEC);
      if (c < 0)
        continue;
      dprintf (c, "%s\n", line);
      close (c);
    }
}

/* A filter of the agent's own: every connect(2) a user notification */
static int listener_fd = -1;
static atomic_int listener_ready;

static void *
answer_continue (void *arg)
{
  (void) arg;
  while (!atomic_load (&listener_ready))
    usleep (1000);
  for (;;)
    {
      struct seccomp_notif req;
      memset (&req, 0, sizeof req);
      if (ioctl (listener_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
        continue;
      struct seccomp_notif_resp resp = { .id = req.id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };
      ioctl (listener_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    }
  return NULL;
}

static int
own_filter (unsigned ret, unsigned flags)
{
  struct sock_filter f[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_connect, 0, 1),
    BPF_STMT (BPF_RET | BPF_K, ret),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { .len = sizeof f / sizeof *f, .filter = f };
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return -1;
  return (int) syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static int
do_newlistener (const char *path)
{
  pthread_t t;
  /* the answering thread exists before the filter: it is not under it */
  pthread_create (&t, NULL, answer_continue, NULL);
  listener_fd = own_filter (SECCOMP_RET_USER_NOTIF, SECCOMP_FILTER_FLAG_NEW_LISTENER);
  if (listener_fd < 0)
    {
      printf ("newlistener refused %s\n", strerrorname_np (errno));
      return do_connect (path);
    }
  atomic_store (&listener_ready, 1);
  int s = unix_connect (path);
  if (s >= 0)
    {
      printf ("escaped\n");
      return 2;
    }
  printf ("newlistener held %s\n", strerrorname_np (errno));
  return 0;
}

static int
do_allowfilter (const char *path)
{
  if (own_filter (SECCOMP_RET_ALLOW, 0) < 0)
    return perror ("seccomp"), 1;
  return do_connect (path);
}

static socklen_t
unix_addr (struct sockaddr_un *a, const char *path)
{
  memset (a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  snprintf (a->sun_path, sizeof a->sun_path, "%s", path);
  return (socklen_t) (offsetof (struct sockaddr_un, sun_path) + strlen (a->sun_path) + 1);
}

/* how: 0 sendto, 1 sendmsg, 2 sendmsg with an fd */
static int
do_send (const char *path, const char *msg, int how)
{
  struct sockaddr_un a;
  socklen_t len = unix_addr (&a, path);
  int s = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ssize_t n;
  if (how == 0)
    n = sendto (s, msg, strlen (msg), 0, (struct sockaddr *) &a, len);
  else
    {
      struct iovec v = { .iov_base = (void *) msg, .iov_len = strlen (msg) };
      char cbuf[CMSG_SPACE (sizeof (int))];
      struct msghdr m = { .msg_name = &a, .msg_namelen = len, .msg_iov = &v, .msg_iovlen = 1 };
      int fd = open ("/etc/hostname", O_RDONLY | O_CLOEXEC);
      if (how == 2)
        {
          memset (cbuf, 0, sizeof cbuf);
          m.msg_control = cbuf;
          m.msg_controllen = sizeof cbuf;
          struct cmsghdr *c = CMSG_FIRSTHDR (&m);
          c->cmsg_level = SOL_SOCKET;
          c->cmsg_type = SCM_RIGHTS;
          c->cmsg_len = CMSG_LEN (sizeof (int));
          memcpy (CMSG_DATA (c), &fd, sizeof fd);
        }
      n = sendmsg (s, &m, 0);
    }
  if (n < 0)
    {
      printf ("refused %s\n", strerrorname_np (errno));
      return 1;
    }
  printf ("sent\n");
  return 0;
}

static int
do_dgram_serve (const char *path, const char *out)
{
  struct sockaddr_un a;
  socklen_t len = unix_addr (&a, path);
  int s = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0 || bind (s, (struct sockaddr *) &a, len) < 0 || chmod (path, 0777) < 0)
    return perror (path), 1;
  for (;;)
    {
      char buf[512], cbuf[CMSG_SPACE (4 * sizeof (int))];
      struct iovec v = { .iov_base = buf, .iov_len = sizeof buf - 1 };
      struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
      ssize_t n = recvmsg (s, &m, MSG_CMSG_CLOEXEC);
      if (n < 0)
        continue;
      buf[n] = '\0';
      bool fd = false;
      for (struct cmsghdr *c = CMSG_FIRSTHDR (&m); c; c = CMSG_NXTHDR (&m, c))
        fd |= c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS;
      int o = open (out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      dprintf (o, "%s%s\n", buf, fd ? " +fd" : "");
      close (o);
    }
}

/* Sockets bound inside, reached from inside. */
static int
do_own (const char *dir)
{
  char sp[256], dp[256];
  struct sockaddr_un a;
  snprintf (sp, sizeof sp, "%s/own-stream.sock", dir);
  snprintf (dp, sizeof dp, "%s/own-dgram.sock", dir);
  unlink (sp);
  unlink (dp);
  socklen_t len = unix_addr (&a, sp);
  int l = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (l < 0 || bind (l, (struct sockaddr *) &a, len) < 0 || listen (l, 4) < 0)
    return perror (sp), 1;
  int c = unix_connect (sp);
  printf ("own-stream %s%s\n", c >= 0 ? "ok" : "refused ", c >= 0 ? "" : strerrorname_np (errno));
  len = unix_addr (&a, dp);
  int d = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (d < 0 || bind (d, (struct sockaddr *) &a, len) < 0)
    return perror (dp), 1;
  int e = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  char buf[8] = "";
  bool ok = sendto (e, "hi", 2, 0, (struct sockaddr *) &a, len) == 2;
  int err = errno;
  ok = ok && recv (d, buf, sizeof buf, MSG_DONTWAIT) == 2;
  printf ("own-dgram %s%s\n", ok ? "ok" : "refused ", ok ? "" : strerrorname_np (err));
  unlink (sp);
  unlink (dp);
  return c < 0 || !ok;
}

int
main (int argc, char **argv)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  if (argc > 1 && strcmp (argv[1], "nodump") == 0)
    {
      if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        return perror ("prctl"), 1;
      argv++, argc--;
    }
  if (argc == 3 && strcmp (argv[1], "connect") == 0)
    return do_connect (argv[2]);
  if (argc == 5 && strcmp (argv[1], "race") == 0)
    return do_race (argv[2], argv[3], atoi (argv[4]));
  if (argc == 4 && strcmp (argv[1], "bench") == 0)
    return do_bench (argv[2], NULL, atoi (argv[3]));
  if (argc == 4 && strcmp (argv[1], "bench-udp") == 0)
    return do_bench (NULL, argv[2], atoi (argv[3]));
  if (argc == 4 && strcmp (argv[1], "bench-socket") == 0)
    return do_bench_socket (atoi (argv[2]), atoi (argv[3]));
  if (argc == 3 && strcmp (argv[1], "bench-accept") == 0)
    return do_bench_accept (atoi (argv[2]));
  if (argc == 3 && strcmp (argv[1], "hold") == 0)
    return do_hold (argv[2]);
  if (argc == 4 && strcmp (argv[1], "stall") == 0)
    return do_stall (argv[2], argv[3]);
  if (argc == 4 && strcmp (argv[1], "serve") == 0)
    return do_serve (argv[2], argv[3]);
  if (argc == 4 && strcmp (argv[1], "tcp") == 0)
    return do_tcp (argv[2], atoi (argv[3]));
  if (argc == 3 && strcmp (argv[1], "newlistener") == 0)
    return do_newlistener (argv[2]);
  if (argc == 3 && strcmp (argv[1], "allowfilter") == 0)
    return do_allowfilter (argv[2]);
  if (argc == 4 && strcmp (argv[1], "sendto") == 0)
    return do_send (argv[2], argv[3], 0);
  if (argc == 4 && strcmp (argv[1], "sendmsg") == 0)
    return do_send (argv[2], argv[3], 1);
  if (argc == 4 && strcmp (argv[1], "sendfd") == 0)
    return do_send (argv[2], argv[3], 2);
  if (argc == 4 && strcmp (argv[1], "dgram-serve") == 0)
    return do_dgram_serve (argv[2], argv[3]);
  if (argc == 3 && strcmp (argv[1], "own") == 0)
    return do_own (argv[2]);
  fprintf (stderr, "usage: see tests/unixconn-probe.c\n");
  return 64;
}
