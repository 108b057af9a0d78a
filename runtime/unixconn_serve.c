/* The connect supervisor (unixconn.h): one notification at a time from the
 * listener; each connect is performed here, on the caller's own open file
 * (pidfd_getfd), with the address copied once, and answered with its
 * result. Never SECCOMP_USER_NOTIF_FLAG_CONTINUE. */
#include "config.h"
#include "unixconn.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL    /* Linux 6.9 */
#endif
#define X32_BIT 0x40000000U
#define SOCKETCALL_CONNECT 3

struct job {
  int listener;
  uint64_t id;
  int sock;                    /* the caller's socket, our duplicate */
  int path_fd;                 /* O_PATH of an allowed socket, or -1 */
  socklen_t len;
  struct sockaddr_storage addr;
};

static const struct ar_unixconn_allow *allowed;
static size_t n_allowed;
/* Connects waiting in a thread of their own, by notification id: when the
 * caller is gone (or interrupted by a signal, and will ask again) the
 * thread's connect is interrupted too, as the kernel's own would be. */
static struct waiting {
  pthread_t t;
  uint64_t id;
  bool used;
} waiting[AR_UNIXCONN_MAX_BLOCKING];
static pthread_mutex_t waiting_lock = PTHREAD_MUTEX_INITIALIZER;

static void
reply (int listener, uint64_t id, int error)
{
  struct seccomp_notif_resp resp = { .id = id, .error = error ? -error : 0 };
  /* ENOENT: the caller is gone or was interrupted by a signal; its
   * connect restarts with a new notification. Nothing to tell. */
  ioctl (listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static bool
still_valid (int listener, uint64_t id)
{
  return ioctl (listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static int
read_mem (pid_t tid, uint64_t addr, void *buf, size_t len)
{
  struct iovec local = { .iov_base = buf, .iov_len = len };
  struct iovec remote = { .iov_base = (void *) (uintptr_t) addr, .iov_len = len };
  ssize_t n = process_vm_readv (tid, &local, 1, &remote, 1, 0);
  if (n == (ssize_t) len)
    return 0;
  return n < 0 && errno != EFAULT ? -errno : -EFAULT;
}

static bool
is_connect (const struct seccomp_data *d)
{
#if defined(__x86_64__)
  if (d->arch == AUDIT_ARCH_X86_64)
    return (d->nr & ~X32_BIT) == SYS_connect;
  if (d->arch == AUDIT_ARCH_I386)
    return d->nr == 362 || d->nr == 102;   /* connect, socketcall(SYS_CONNECT) */
  return false;
#else
  return d->nr == SYS_connect;
#endif
}

/* fd, address and length of the call; socketcall's live in memory. */
static int
call_args (const struct seccomp_notif *req, int *fd, uint64_t *addr, int *len)
{
  const struct seccomp_data *d = &req->data;
  if (d->arch == AUDIT_ARCH_I386 && d->nr == 102)
    {
      uint32_t a[3];
      if (d->args[0] != SOCKETCALL_CONNECT)
        return -ENOSYS;
      int r = read_mem ((pid_t) req->pid, d->args[1], a, sizeof a);
      if (r < 0)
        return r;
      *fd = (int) a[0], *addr = a[1], *len = (int) a[2];
      return 0;
    }
  bool compat = d->arch == AUDIT_ARCH_I386;
  *fd = (int) d->args[0];
  *addr = compat ? (uint32_t) d->args[1] : d->args[1];
  *len = (int) (uint32_t) d->args[2];
  return 0;
}

/* The caller's thread: its fd table, memory and cwd are that thread's. */
static int
open_target (pid_t tid)
{
  int fd = (int) syscall (SYS_pidfd_open, tid, PIDFD_THREAD);
  if (fd >= 0 || errno != EINVAL)
    return fd;
  /* before 6.9: the thread group, which shares the fd table unless the
   * thread unshared it (then the fd number may name another socket, which
   * is connected under the same rules) */
  char path[64], line[128];
  snprintf (path, sizeof path, "/proc/%d/status", (int) tid);
  FILE *f = fopen (path, "re");
  int tgid = -1;
  while (f && fgets (line, sizeof line, f))
    if (sscanf (line, "Tgid: %d", &tgid) == 1)
      break;
  if (f)
    fclose (f);
  return tgid > 0 ? (int) syscall (SYS_pidfd_open, tgid, 0) : -1;
}

/* A pathname as the caller resolves it: relative to its cwd, absolute from
 * the container's root (ours), never through a /proc magic link (which
 * would name our own fds). 0 with *out an O_PATH fd of an allowed socket,
 * else the errno to answer. */
static int
open_allowed (pid_t tid, const char *path, int *out)
{
  struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
  int dir = AT_FDCWD, fd, e;
  char cwd[64];

  if (path[0] != '/')
    {
      snprintf (cwd, sizeof cwd, "/proc/%d/cwd", (int) tid);
      if ((dir = open (cwd, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return EACCES;
    }
  fd = (int) syscall (SYS_openat2, dir, path, &how, sizeof how);
  e = errno;
  if (dir >= 0)
    close (dir);
  if (fd < 0)
    return e == ENOENT || e == ENOTDIR || e == ENAMETOOLONG || e == EACCES ? e : EACCES;
  struct stat st;
  if (fstat (fd, &st) < 0 || !S_ISSOCK (st.st_mode))
    {
      close (fd);
      return ECONNREFUSED;    /* what the kernel says of a file that is no socket */
    }
  for (size_t i = 0; i < n_allowed; i++)
    if (allowed[i].dev == st.st_dev && allowed[i].ino == st.st_ino)
      {
        *out = fd;
        return 0;
      }
  close (fd);
  return EACCES;
}

/* A pathname Unix address becomes /proc/self/fd/N of the checked inode. */
static int
rewrite_unix (pid_t tid, struct job *j)
{
  struct sockaddr_un *un = (struct sockaddr_un *) &j->addr;
  size_t off = offsetof (struct sockaddr_un, sun_path);
  char path[sizeof un->sun_path + 1];

  if (j->len > sizeof *un)
    return EINVAL;
  if (j->len <= off || un->sun_path[0] == '\0')
    return 0;                  /* unnamed, or abstract: the container's own network namespace */
  memcpy (path, un->sun_path, j->len - off);
  path[j->len - off] = '\0';
  int e = open_allowed (tid, path, &j->path_fd);
  if (e)
    return e;
  memset (un->sun_path, 0, sizeof un->sun_path);
  snprintf (un->sun_path, sizeof un->sun_path, "/proc/self/fd/%d", j->path_fd);
  j->len = (socklen_t) (off + strlen (un->sun_path) + 1);
  return 0;
}

static void
finish (struct job *j)
{
  int r = connect (j->sock, (struct sockaddr *) &j->addr, j->len);
  reply (j->listener, j->id, r < 0 ? errno : 0);
  close (j->sock);
  if (j->path_fd >= 0)
    close (j->path_fd);
  free (j);
}

struct work {
  struct job *j;
  size_t slot;
};

static void *
worker (void *arg)
{
  struct work w = *(struct work *) arg;
  free (arg);
  finish (w.j);
  pthread_mutex_lock (&waiting_lock);
  waiting[w.slot].used = false;
  pthread_mutex_unlock (&waiting_lock);
  return NULL;
}

/* A connect that may wait (a blocking stream socket: a Unix listener with
 * a full backlog, a TCP SYN that gets no answer) gets its own thread. */
static bool
may_block (int sock)
{
  int type = 0, fl = fcntl (sock, F_GETFL);
  socklen_t tl = sizeof type;
  if (fl < 0 || (fl & O_NONBLOCK))
    return false;
  return getsockopt (sock, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && (type == SOCK_STREAM || type == SOCK_SEQPACKET);
}

static void
drop (struct job *j, int error)
{
  reply (j->listener, j->id, error);
  close (j->sock);
  if (j->path_fd >= 0)
    close (j->path_fd);
  free (j);
}

static void
dispatch (struct job *j)
{
  pthread_attr_t a;
  size_t i;
  if (!may_block (j->sock))
    {
      finish (j);
      return;
    }
  struct work *w = malloc (sizeof *w);
  if (!w)
    {
      drop (j, ENOMEM);
      return;
    }
  pthread_mutex_lock (&waiting_lock);
  for (i = 0; i < AR_UNIXCONN_MAX_BLOCKING && waiting[i].used; i++)
    ;
  /* the thread clears its slot under the lock, so it cannot be gone
   * before t is stored */
  *w = (struct work){ .j = j, .slot = i };
  int r = i == AR_UNIXCONN_MAX_BLOCKING ? EAGAIN : 0;
  if (r == 0)
    {
      waiting[i] = (struct waiting){ .id = j->id, .used = true };
      pthread_attr_init (&a);
      pthread_attr_setdetachstate (&a, PTHREAD_CREATE_DETACHED);
      pthread_attr_setstacksize (&a, 64 * 1024);
      r = pthread_create (&waiting[i].t, &a, worker, w);
      pthread_attr_destroy (&a);
      if (r)
        waiting[i].used = false;
    }
  pthread_mutex_unlock (&waiting_lock);
  if (r)
    {
      free (w);
      drop (j, EAGAIN);        /* never wait here: that would stall every other connect */
    }
}

/* Interrupt the waiting connects whose caller no longer waits; true while
 * some are waiting (the loop then looks again each second). */
static bool
interrupt_orphans (int listener)
{
  bool any = false;
  pthread_mutex_lock (&waiting_lock);
  for (size_t i = 0; i < AR_UNIXCONN_MAX_BLOCKING; i++)
    if (waiting[i].used)
      {
        any = true;
        if (!still_valid (listener, waiting[i].id))
          pthread_kill (waiting[i].t, SIGUSR1);
      }
  pthread_mutex_unlock (&waiting_lock);
  return any;
}

static void
on_usr1 (int sig)
{
  (void) sig;                  /* only there to make connect(2) return EINTR */
}

/* 0 when the job is ready to connect, else the errno to answer (-1: no
 * answer, the caller is gone). */
static int
prepare (int listener, const struct seccomp_notif *req, struct job *j)
{
  pid_t tid = (pid_t) req->pid;
  uint64_t addr = 0;
  int fd = -1, len = 0, r;

  if (!is_connect (&req->data))
    return ENOSYS;
  if (tid <= 0)
    return EACCES;             /* a caller outside our pid namespace: cannot be resolved */
  int pidfd = open_target (tid);
  if (pidfd < 0)
    return still_valid (listener, req->id) ? EACCES : -1;
  r = call_args (req, &fd, &addr, &len);
  if (r == 0 && (len < 0 || (size_t) len > sizeof j->addr))
    r = -EINVAL;
  if (r == 0)
    r = read_mem (tid, addr, &j->addr, (size_t) len);
  j->len = (socklen_t) len;
  if (r == 0 && (j->sock = (int) syscall (SYS_pidfd_getfd, pidfd, fd, 0)) < 0)
    r = -errno;
  close (pidfd);
  /* The tid, the memory read and the cwd below belong to the caller only
   * if the notification is still alive after them. */
  if (r == 0 && !still_valid (listener, req->id))
    return -1;
  if (r < 0)
    return r == -ESRCH ? -1 : -r;
  struct stat st;
  if (fstat (j->sock, &st) < 0 || !S_ISSOCK (st.st_mode))
    return ENOTSOCK;
  if (len >= (int) sizeof (sa_family_t) && j->addr.ss_family == AF_UNIX && (r = rewrite_unix (tid, j)) != 0)
    return r;
  return still_valid (listener, req->id) ? 0 : -1;
}

static void
handle (int listener, const struct seccomp_notif *req)
{
  struct job *j = calloc (1, sizeof *j);
  if (!j)
    {
      reply (listener, req->id, ENOMEM);
      return;
    }
  *j = (struct job){ .listener = listener, .id = req->id, .sock = -1, .path_fd = -1 };
  int e = prepare (listener, req, j);
  if (e == 0)
    {
      dispatch (j);
      return;
    }
  if (e > 0)
    reply (listener, req->id, e);
  if (j->sock >= 0)
    close (j->sock);
  if (j->path_fd >= 0)
    close (j->path_fd);
  free (j);
}

void
ar_unixconn_serve (int listener, const struct ar_unixconn_allow *allow, size_t n)
{
  struct seccomp_notif_sizes sizes;
  allowed = allow;
  n_allowed = n;
  if (syscall (SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
    {
      dprintf (2, "agentrun: connect supervisor: SECCOMP_GET_NOTIF_SIZES: %s\n", strerror (errno));
      _exit (1);
    }
  size_t size = sizes.seccomp_notif > sizeof (struct seccomp_notif) ? sizes.seccomp_notif : sizeof (struct seccomp_notif);
  struct seccomp_notif *req = calloc (1, size);
  if (!req || sizes.seccomp_notif_resp > sizeof (struct seccomp_notif_resp))
    _exit (1);
  struct sigaction sa = { .sa_handler = on_usr1 };   /* no SA_RESTART */
  sigemptyset (&sa.sa_mask);
  sigaction (SIGUSR1, &sa, NULL);
  for (;;)
    {
      struct pollfd p = { .fd = listener, .events = POLLIN };
      bool waits = interrupt_orphans (listener);
      int r = poll (&p, 1, waits ? 1000 : -1);
      if (r < 0 && errno != EINTR)
        break;
      if (r <= 0)
        continue;
      /* every process under the filter is gone */
      if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
        break;
      if (!(p.revents & POLLIN))
        continue;
      memset (req, 0, size);
      if (ioctl (listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
        {
          if (errno == EINTR || errno == ENOENT)
            continue;
          dprintf (2, "agentrun: connect supervisor: SECCOMP_IOCTL_NOTIF_RECV: %s\n", strerror (errno));
          _exit (1);
        }
      handle (listener, req);
    }
  _exit (0);
}
