/* The connect supervisor (unixconn.h): one notification at a time from the
 * listener; each connect, or sendto with an address, is performed here, on
 * the caller's own open file (pidfd_getfd), with the address and data
 * copied once, and answered with its result. Never
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE. */
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
#define SOCKETCALL_SENDTO 11
/* A sendto's data is copied: at most this much (a datagram larger than a
 * socket's send buffer fails anyway; a stream takes a short write). */
#define SEND_MAX (4U << 20)

struct job {
  int listener;
  uint64_t id;
  int sock;                    /* the caller's socket, our duplicate */
  int path_fd;                 /* O_PATH of an allowed socket, or -1 */
  socklen_t len;
  struct sockaddr_storage addr;
  bool send;                   /* sendto, else connect */
  int flags;
  size_t data_len;
  void *data;
};

static const struct ar_unixconn_ctx *C;
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

/* The call's arguments, as connect(fd, addr, len) or sendto(fd, buf,
 * blen, flags, addr, len); socketcall's live in memory. */
struct call {
  bool send;
  int fd, len, flags;
  uint64_t addr, buf, blen;
};

/* -ENOSYS for a call that is neither connect nor sendto */
static int
call_args (const struct seccomp_notif *req, struct call *c)
{
  const struct seccomp_data *d = &req->data;
  uint64_t a[6];
  bool compat = false;
#if defined(__x86_64__)
  if (d->arch == AUDIT_ARCH_I386 && d->nr == 102)
    {
      uint32_t m[6];
      if (d->args[0] != SOCKETCALL_CONNECT && d->args[0] != SOCKETCALL_SENDTO)
        return -ENOSYS;
      c->send = d->args[0] == SOCKETCALL_SENDTO;
      int r = read_mem ((pid_t) req->pid, d->args[1], m, (c->send ? 6 : 3) * sizeof *m);
      if (r < 0)
        return r;
      for (int i = 0; i < 6; i++)
        a[i] = c->send || i < 3 ? m[i] : 0;
    }
  else if (d->arch == AUDIT_ARCH_I386 && (d->nr == 362 || d->nr == 369))   /* connect, sendto */
    {
      compat = true;
      c->send = d->nr == 369;
    }
  else if (d->arch == AUDIT_ARCH_X86_64 && ((d->nr & ~X32_BIT) == SYS_connect || (d->nr & ~X32_BIT) == SYS_sendto))
    c->send = (d->nr & ~X32_BIT) == SYS_sendto;
  else
    return -ENOSYS;
#else
  if (d->nr != SYS_connect && d->nr != SYS_sendto)
    return -ENOSYS;
  c->send = d->nr == SYS_sendto;
#endif
  if (!(d->arch == AUDIT_ARCH_I386 && d->nr == 102))
    for (int i = 0; i < 6; i++)
      a[i] = compat ? (uint32_t) d->args[i] : d->args[i];
  c->fd = (int) a[0];
  if (c->send)
    {
      c->buf = a[1], c->blen = a[2], c->flags = (int) a[3], c->addr = a[4], c->len = (int) (uint32_t) a[5];
      if (compat)
        c->blen = (uint32_t) c->blen;
    }
  else
    c->addr = a[1], c->len = (int) (uint32_t) a[2];
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
  snprintf (path, sizeof path, "%d/status", (int) tid);
  int sfd = openat (C->proc, path, O_RDONLY | O_CLOEXEC);
  FILE *f = sfd < 0 ? NULL : fdopen (sfd, "re");
  int tgid = -1;
  while (f && fgets (line, sizeof line, f))
    if (sscanf (line, "Tgid: %d", &tgid) == 1)
      break;
  if (f)
    fclose (f);
  return tgid > 0 ? (int) syscall (SYS_pidfd_open, tgid, 0) : -1;
}

static bool
is_allowed (const struct stat *st)
{
  for (size_t i = 0; i < C->n_allow; i++)
    if (C->allow[i].dev == st->st_dev && C->allow[i].ino == st->st_ino)
      return true;
  /* bound in the container's own network namespace: made inside */
  return C->diag >= 0 && ar_unixconn_bound_inside (C->diag, st->st_dev, st->st_ino);
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
      snprintf (cwd, sizeof cwd, "%d/cwd", (int) tid);
      if ((dir = openat (C->proc, cwd, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
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
  if (is_allowed (&st))
    {
      *out = fd;
      return 0;
    }
  close (fd);
  return EACCES;
}

/* A pathname Unix address becomes N of the checked inode, relative to our
 * current directory: /proc/self/fd of the host's /proc. */
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
  snprintf (un->sun_path, sizeof un->sun_path, "%d", j->path_fd);
  j->len = (socklen_t) (off + strlen (un->sun_path) + 1);
  return 0;
}

static void
job_free (struct job *j)
{
  if (j->sock >= 0)
    close (j->sock);
  if (j->path_fd >= 0)
    close (j->path_fd);
  free (j->data);
  free (j);
}

static void
reply_val (int listener, uint64_t id, int64_t val)
{
  struct seccomp_notif_resp resp = { .id = id, .val = val };
  ioctl (listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static void
finish (struct job *j)
{
  if (j->send)
    {
      /* MSG_NOSIGNAL: a SIGPIPE would be ours, not the caller's */
      ssize_t n = sendto (j->sock, j->data, j->data_len, j->flags | MSG_NOSIGNAL, (struct sockaddr *) &j->addr, j->len);
      if (n < 0)
        reply (j->listener, j->id, errno);
      else
        reply_val (j->listener, j->id, n);
    }
  else
    {
      int r = connect (j->sock, (struct sockaddr *) &j->addr, j->len);
      reply (j->listener, j->id, r < 0 ? errno : 0);
    }
  job_free (j);
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

/* A call that may wait gets its own thread: a connect on a blocking stream
 * socket (a Unix listener with a full backlog, a TCP SYN that gets no
 * answer), a blocking send (a receiver's full queue). */
static bool
may_block (const struct job *j)
{
  int type = 0, fl = fcntl (j->sock, F_GETFL);
  socklen_t tl = sizeof type;
  if (fl < 0 || (fl & O_NONBLOCK))
    return false;
  if (j->send)
    return !(j->flags & MSG_DONTWAIT);
  return getsockopt (j->sock, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && (type == SOCK_STREAM || type == SOCK_SEQPACKET);
}

static void
drop (struct job *j, int error)
{
  reply (j->listener, j->id, error);
  job_free (j);
}

static void
dispatch (struct job *j)
{
  pthread_attr_t a;
  size_t i;
  if (!may_block (j))
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
/* A sendto's data, copied once (at most SEND_MAX: a stream takes a short
 * write, a datagram that large could never be sent). */
static int
copy_data (pid_t tid, const struct call *c, struct job *j)
{
  j->data_len = c->blen;
  if (c->blen > SEND_MAX)
    {
      int type = 0;
      socklen_t tl = sizeof type;
      if (getsockopt (j->sock, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM)
        return -EMSGSIZE;
      j->data_len = SEND_MAX;
    }
  j->data = malloc (j->data_len ? j->data_len : 1);
  if (!j->data)
    return -ENOMEM;
  return j->data_len ? read_mem (tid, c->buf, j->data, j->data_len) : 0;
}

static int
prepare (int listener, const struct seccomp_notif *req, struct job *j)
{
  pid_t tid = (pid_t) req->pid;
  struct call c = { 0 };
  int r;

  if (tid <= 0)
    return EACCES;             /* a caller outside our pid namespace: cannot be resolved */
  int pidfd = open_target (tid);
  if (pidfd < 0)
    return still_valid (listener, req->id) ? EACCES : -1;
  r = call_args (req, &c);
  if (r == 0 && (c.len < 0 || (size_t) c.len > sizeof j->addr))
    r = -EINVAL;
  if (r == 0)
    r = read_mem (tid, c.addr, &j->addr, (size_t) c.len);
  j->len = (socklen_t) c.len;
  j->send = c.send;
  j->flags = c.flags;
  if (r == 0 && (j->sock = (int) syscall (SYS_pidfd_getfd, pidfd, c.fd, 0)) < 0)
    r = -errno;
  if (r == 0 && c.send)
    r = copy_data (tid, &c, j);
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
  if (c.len >= (int) sizeof (sa_family_t) && j->addr.ss_family == AF_UNIX && (r = rewrite_unix (tid, j)) != 0)
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
  job_free (j);
}

void
ar_unixconn_serve (const struct ar_unixconn_ctx *ctx)
{
  struct seccomp_notif_sizes sizes;
  int listener = ctx->listener;
  C = ctx;
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
