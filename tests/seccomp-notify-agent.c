/* A small seccomp notify agent for tests/seccomp.bats.
 *
 *   seccomp-notify-agent SOCKET STATE_OUT [ERRNO]
 *
 * Listens on the Unix socket SOCKET, receives one containerProcessState from
 * the runtime (JSON with the listener fd in SCM_RIGHTS), writes the JSON to
 * STATE_OUT, then answers notifications: mkdir and mkdirat "succeed" without
 * doing anything (or fail with ERRNO when given); any other notified syscall
 * is let through (SECCOMP_USER_NOTIF_FLAG_CONTINUE). Exits 0 once no process
 * uses the filter any more.
 *
 *   seccomp-notify-agent --syscall NR [ARG...]
 *
 * Probe mode, for profiles tests run inside a busybox container (the binary
 * is static): make syscall NR with the given integer arguments and print
 * "ok" or "errno N".
 *
 *   seccomp-notify-agent --spawn PATH
 *
 * Start a thread (pthread_create) and PATH (posix_spawn): glibc makes both
 * with clone3 and falls back to clone only on ENOSYS. Prints "ok" or what
 * failed. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static void __attribute__ ((noreturn)) die (const char *what)
{
  fprintf (stderr, "seccomp-notify-agent: %s: %s\n", what, strerror (errno));
  exit (1);
}

/* Accept one connection; return the fd that came with it, JSON in buf. */
static int
receive_state (int srv, char *buf, size_t cap, size_t *len)
{
  union {
    struct cmsghdr align;
    char b[CMSG_SPACE (sizeof (int))];
  } ctl;
  struct iovec iov = { buf, cap - 1 };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof ctl.b };
  struct cmsghdr *cm;
  int c = accept4 (srv, NULL, NULL, SOCK_CLOEXEC), fd = -1;
  ssize_t n;

  if (c < 0)
    die ("accept");
  n = recvmsg (c, &msg, MSG_CMSG_CLOEXEC);
  if (n <= 0)
    die ("recvmsg");
  for (cm = CMSG_FIRSTHDR (&msg); cm; cm = CMSG_NXTHDR (&msg, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
      memcpy (&fd, CMSG_DATA (cm), sizeof fd);
  *len = (size_t) n;
  while (*len < cap - 1 && (n = read (c, buf + *len, cap - 1 - *len)) > 0)
    *len += (size_t) n;
  buf[*len] = '\0';
  close (c);
  if (fd < 0)
    {
      errno = EBADMSG;
      die ("no fd in SCM_RIGHTS");
    }
  return fd;
}

static void
serve (int lfd, int answer_errno)
{
  struct seccomp_notif_sizes sz;
  struct seccomp_notif *req;
  struct seccomp_notif_resp *resp;

  if (syscall (SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
    die ("SECCOMP_GET_NOTIF_SIZES");
  req = calloc (1, sz.seccomp_notif > sizeof *req ? sz.seccomp_notif : sizeof *req);
  resp = calloc (1, sz.seccomp_notif_resp > sizeof *resp ? sz.seccomp_notif_resp : sizeof *resp);
  if (!req || !resp)
    die ("calloc");
  for (;;)
    {
      struct pollfd p = { lfd, POLLIN, 0 };
      if (poll (&p, 1, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          die ("poll");
        }
      if (p.revents & (POLLHUP | POLLERR))
        return;
      memset (req, 0, sz.seccomp_notif);
      if (ioctl (lfd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
        {
          if (errno == EINTR || errno == ENOENT)
            continue;
          die ("SECCOMP_IOCTL_NOTIF_RECV");
        }
      memset (resp, 0, sz.seccomp_notif_resp);
      resp->id = req->id;
      if (req->data.nr == SYS_mkdir || req->data.nr == SYS_mkdirat)
        {
          resp->error = answer_errno ? -answer_errno : 0;
          resp->val = 0;
        }
      else
        resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      /* ENOENT: the caller went away (killed) meanwhile. */
      if (ioctl (lfd, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
        die ("SECCOMP_IOCTL_NOTIF_SEND");
    }
}

static int
probe (int argc, char **argv)
{
  unsigned long a[6] = { 0 };
  long r;
  int i;

  for (i = 0; i < 6 && i + 3 < argc; i++)
    a[i] = strtoul (argv[i + 3], NULL, 0);
  errno = 0;
  r = syscall (strtol (argv[2], NULL, 0), a[0], a[1], a[2], a[3], a[4], a[5]);
  if (r < 0)
    printf ("errno %d\n", errno);
  else
    printf ("ok\n");
  return 0;
}

static void *
thread_main (void *arg)
{
  return arg;
}

static int
spawn (const char *path)
{
  char *args[] = { (char *) path, NULL }, *env[] = { NULL };
  pthread_t t;
  pid_t pid;
  int r, st;

  if ((r = pthread_create (&t, NULL, thread_main, NULL)) != 0)
    return printf ("pthread_create: %s\n", strerror (r)), 0;
  pthread_join (t, NULL);
  if ((r = posix_spawn (&pid, path, NULL, NULL, args, env)) != 0)
    return printf ("posix_spawn: %s\n", strerror (r)), 0;
  if (waitpid (pid, &st, 0) != pid || !WIFEXITED (st) || WEXITSTATUS (st) != 0)
    return printf ("spawned %s failed\n", path), 0;
  printf ("ok\n");
  return 0;
}

int
main (int argc, char **argv)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  char buf[65536];
  size_t len;
  int srv, lfd, out, answer_errno = argc > 3 ? atoi (argv[3]) : 0;

  if (argc == 3 && strcmp (argv[1], "--spawn") == 0)
    return spawn (argv[2]);
  if (argc >= 3 && strcmp (argv[1], "--syscall") == 0)
    return probe (argc, argv);
  if (argc < 3 || strlen (argv[1]) >= sizeof addr.sun_path)
    {
      fprintf (stderr, "usage: %s SOCKET STATE_OUT [ERRNO]\n", argv[0]);
      return 2;
    }
  strcpy (addr.sun_path, argv[1]);
  srv = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (srv < 0 || bind (srv, (struct sockaddr *) &addr, sizeof addr) < 0 || listen (srv, 1) < 0)
    die (argv[1]);
  lfd = receive_state (srv, buf, sizeof buf, &len);
  close (srv);
  out = open (argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0 || write (out, buf, len) != (ssize_t) len || close (out) < 0)
    die (argv[2]);
  serve (lfd, answer_errno);
  return 0;
}
