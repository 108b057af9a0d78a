/* Test helper for run.agentrun.unix-connect (tests/unixsock.bats): static,
 * so that it runs in any sandbox or bundle.
 *   unixconn-probe connect PATH         connect, print "ok LINE" (the server's first line) or "refused ERRNO"
 *   unixconn-probe nodump connect PATH  the same after PR_SET_DUMPABLE 0 (as ssh does)
 *   unixconn-probe race ALLOWED DENIED N
 *       N connects to a buffer that a second thread keeps rewriting between
 *       the two paths; prints "escaped" and exits 2 if a connect ever
 *       reached DENIED (getpeername), else "held OK_COUNT REFUSED_COUNT"
 *   unixconn-probe bench PATH N         microseconds per connect (new socket each time)
 *   unixconn-probe bench-udp HOST N     the same for a UDP socket to HOST:9
 *   unixconn-probe serve PATH LINE      listen on PATH (mode 0777), answer LINE to each connection
 *   unixconn-probe hold PATH            listen on PATH with a backlog of 1, never accept
 *   unixconn-probe stall FULL OK        a child fills FULL's backlog until its blocking connect hangs;
 *       then connect OK: prints "ok-while-stalled MS" and whether the child is still blocked
 *   unixconn-probe tcp HOST PORT        a TCP connect, "ok" or "refused ERRNO" */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
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

/* Threads of the process named ar-unixconn (our pid namespace has one
 * supervisor per filter: the sandbox's). */
static int
supervisor_threads (void)
{
  char path[64], line[256];
  for (int pid = 1; pid < 4096; pid++)
    {
      snprintf (path, sizeof path, "/proc/%d/status", pid);
      FILE *f = fopen (path, "re");
      int threads = -1;
      bool it = false;
      while (f && fgets (line, sizeof line, f))
        if (strcmp (line, "Name:\tar-unixconn\n") == 0)
          it = true;
        else
          sscanf (line, "Threads: %d", &threads);
      if (f)
        fclose (f);
      if (it)
        return threads;
    }
  return -1;
}

static int
do_stall (const char *full, const char *ok)
{
  pid_t child = fork ();
  if (child == 0)
    {
      for (int i = 0; i < 64; i++)
        unix_connect (full);   /* kept open; one of them blocks for good */
      _exit (0);
    }
  usleep (300 * 1000);
  alarm (5);                   /* a stalled supervisor must fail the test, not hang it */
  double t0 = now_us ();
  int s = unix_connect (ok);
  double ms = (now_us () - t0) / 1000;
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
   * be interrupted within its one-second look */
  sleep (3);
  printf ("supervisor threads %d\n", supervisor_threads ());
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
  if (argc == 3 && strcmp (argv[1], "hold") == 0)
    return do_hold (argv[2]);
  if (argc == 4 && strcmp (argv[1], "stall") == 0)
    return do_stall (argv[2], argv[3]);
  if (argc == 4 && strcmp (argv[1], "serve") == 0)
    return do_serve (argv[2], argv[3]);
  if (argc == 4 && strcmp (argv[1], "tcp") == 0)
    return do_tcp (argv[2], atoi (argv[3]));
  fprintf (stderr, "usage: see tests/unixconn-probe.c\n");
  return 64;
}
