/* The unixconn supervisor (unixconn.h): one notification at a time from the
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
#define PIDFD_THREAD O_EXCL /* Linux 6.9 */
#endif
#define X32_BIT 0x40000000U
#define SOCKETCALL_SOCKET 1
#define SOCKETCALL_CONNECT 3
#define SOCKETCALL_ACCEPT 5
#define SOCKETCALL_ACCEPT4 18
#define SOCKETCALL_SENDTO 11
/* sendmmsg: at most this many messages a call (the caller gets the count) */
#define MMSG_MAX 64

enum op { OP_CONNECT, OP_SENDTO, OP_SENDMSG, OP_SENDMMSG, OP_SOCKET, OP_ACCEPT };

struct job {
  int listener;
  uint64_t id;
  pid_t tid;
  int sock; /* the caller's socket, our duplicate */
  enum op op;
  int flags;
  uint64_t peer_at, peer_len_at; /* accept: where the peer's address goes, and its length */
  socklen_t peer_room; /* accept: the caller's room for it */
  bool counted; /* a new TCP connection, counted under the socket cap */
  size_t n; /* messages (connect: the address in m[0]) */
  struct ar_unixconn_msg m[];
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

#define read_mem ar_unixconn_read_mem

/* The call's arguments: connect(fd, addr, len), sendto(fd, buf, blen,
 * flags, addr, len), sendmsg(fd, msg, flags), sendmmsg(fd, msg, vlen,
 * flags), socket(domain, type, protocol) (in fd, len, flags),
 * accept4(fd, addr, addrlen (in buf), flags); socketcall's live in memory. */
struct call {
  enum op op;
  int fd, len, flags;
  uint64_t addr, buf, blen; /* sendmsg, sendmmsg: buf is the msghdr, blen vlen */
};

#if defined(__x86_64__)
/* 32-bit x86: socketcall(2) or the direct calls (connect, sendto, socket
 * and accept4 only: a compat msghdr is refused, ENOSYS, never let through) */
static int
compat_args (const struct seccomp_notif *req, struct call *c, uint64_t a[6])
{
  const struct seccomp_data *d = &req->data;
  if (d->nr == 102)
    {
      uint32_t m[6];
      if (d->args[0] == SOCKETCALL_SOCKET)
        c->op = OP_SOCKET;
      else if (d->args[0] == SOCKETCALL_ACCEPT || d->args[0] == SOCKETCALL_ACCEPT4)
        c->op = OP_ACCEPT;
      else if (d->args[0] == SOCKETCALL_CONNECT || d->args[0] == SOCKETCALL_SENDTO)
        c->op = d->args[0] == SOCKETCALL_SENDTO ? OP_SENDTO : OP_CONNECT;
      else
        return -ENOSYS;
      size_t n = c->op == OP_SENDTO ? 6 : d->args[0] == SOCKETCALL_ACCEPT4 ? 4 : 3;
      int r = read_mem ((pid_t) req->pid, d->args[1], m, n * sizeof *m);
      if (r < 0)
        return r;
      for (size_t i = 0; i < 6; i++)
        a[i] = i < n ? m[i] : 0;
      return 0;
    }
  if (d->nr != 362 && d->nr != 369 && d->nr != 359 && d->nr != 364) /* connect, sendto, socket, accept4 */
    return -ENOSYS;
  c->op = d->nr == 369 ? OP_SENDTO : d->nr == 359 ? OP_SOCKET : d->nr == 364 ? OP_ACCEPT : OP_CONNECT;
  for (int i = 0; i < 6; i++)
    a[i] = (uint32_t) d->args[i];
  return 0;
}
#endif

/* -ENOSYS for a call we do not perform */
static int
call_args (const struct seccomp_notif *req, struct call *c)
{
  const struct seccomp_data *d = &req->data;
  uint64_t a[6];
  long nr = d->nr;
#if defined(__x86_64__)
  if (d->arch == AUDIT_ARCH_I386)
    {
      int r = compat_args (req, c, a);
      if (r < 0)
        return r;
    }
  else if (d->arch != AUDIT_ARCH_X86_64 || (nr & X32_BIT))
    {
      /* x32: connect, sendto, socket and the accepts are the native calls; its msghdr is compat */
      long x = nr & ~X32_BIT;
      if (d->arch != AUDIT_ARCH_X86_64
          || (x != SYS_connect && x != SYS_sendto && x != SYS_socket && x != SYS_accept && x != SYS_accept4))
        return -ENOSYS;
      nr &= ~X32_BIT;
    }
  if (d->arch != AUDIT_ARCH_I386)
#elif defined(__aarch64__)
  /* 32-bit ARM's socket(2), accept(2) and accept4(2): arguments in registers */
  if (d->arch == AUDIT_ARCH_ARM && nr == 281)
    {
      c->op = OP_SOCKET;
      c->fd = (int) d->args[0], c->len = (int) d->args[1], c->flags = (int) d->args[2];
      return 0;
    }
  if (d->arch == AUDIT_ARCH_ARM && (nr == 285 || nr == 366))
    {
      c->op = OP_ACCEPT;
      c->fd = (int) d->args[0], c->addr = (uint32_t) d->args[1], c->buf = (uint32_t) d->args[2];
      c->flags = nr == 366 ? (int) d->args[3] : 0;
      return 0;
    }
  if (d->arch != AUDIT_ARCH_AARCH64)
    return -ENOSYS; /* 32-bit ARM: other numbers, a compat msghdr */
#endif
    {
      if (nr == SYS_connect)
        c->op = OP_CONNECT;
      else if (nr == SYS_sendto)
        c->op = OP_SENDTO;
      else if (nr == SYS_sendmsg)
        c->op = OP_SENDMSG;
      else if (nr == SYS_sendmmsg)
        c->op = OP_SENDMMSG;
      else if (nr == SYS_socket)
        c->op = OP_SOCKET;
      else if (nr == SYS_accept || nr == SYS_accept4)
        c->op = OP_ACCEPT;
      else
        return -ENOSYS;
      for (int i = 0; i < 6; i++)
        a[i] = d->args[i];
      if (nr == SYS_accept)
        a[3] = 0; /* no flags: whatever the register holds */
    }
  c->fd = (int) a[0];
  if (c->op == OP_SENDTO)
    c->buf = a[1], c->blen = a[2], c->flags = (int) a[3], c->addr = a[4], c->len = (int) (uint32_t) a[5];
  else if (c->op == OP_SENDMSG)
    c->buf = a[1], c->flags = (int) a[2];
  else if (c->op == OP_SENDMMSG)
    c->buf = a[1], c->blen = (uint32_t) a[2], c->flags = (int) a[3];
  else if (c->op == OP_SOCKET)
    c->len = (int) a[1], c->flags = (int) a[2];
  else if (c->op == OP_ACCEPT)
    c->addr = a[1], c->buf = a[2], c->flags = (int) a[3]; /* accept(2): 0 */
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
      return ECONNREFUSED; /* what the kernel says of a file that is no socket */
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
rewrite_unix (pid_t tid, struct ar_unixconn_msg *m)
{
  struct sockaddr_un *un = (struct sockaddr_un *) &m->addr;
  size_t off = offsetof (struct sockaddr_un, sun_path);
  char path[sizeof un->sun_path + 1];

  if (m->addr_len < sizeof (sa_family_t) || m->addr.ss_family != AF_UNIX)
    return 0;
  if (m->addr_len > sizeof *un)
    return EINVAL;
  if (m->addr_len > off && un->sun_path[0] == '\0' && C->abstract_refused)
    return EPERM; /* what the Landlock scope would say */
  if (m->addr_len <= off || un->sun_path[0] == '\0')
    return 0; /* unnamed, or abstract: the container's own network namespace */
  memcpy (path, un->sun_path, m->addr_len - off);
  path[m->addr_len - off] = '\0';
  int e = open_allowed (tid, path, &m->path_fd);
  if (e)
    return e;
  memset (un->sun_path, 0, sizeof un->sun_path);
  snprintf (un->sun_path, sizeof un->sun_path, "%d", m->path_fd);
  m->addr_len = (socklen_t) (off + strlen (un->sun_path) + 1);
  return 0;
}

static struct job *
job_new (int listener, uint64_t id, pid_t tid, size_t n)
{
  struct job *j = calloc (1, sizeof *j + n * sizeof *j->m);
  if (!j)
    return NULL;
  *j = (struct job){ .listener = listener, .id = id, .tid = tid, .sock = -1, .n = n };
  for (size_t i = 0; i < n; i++)
    j->m[i].path_fd = -1;
  return j;
}

static void
job_free (struct job *j)
{
  if (j->counted)
    ar_unixconn_sockets_connected ();
  if (j->sock >= 0)
    close (j->sock);
  for (size_t i = 0; i < j->n; i++)
    ar_unixconn_msg_clear (&j->m[i]);
  free (j);
}

static void
reply_val (int listener, uint64_t id, int64_t val)
{
  struct seccomp_notif_resp resp = { .id = id, .val = val };
  ioctl (listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static ssize_t
send_one (struct job *j, struct ar_unixconn_msg *m)
{
  struct msghdr h = { .msg_name = m->addr_len ? &m->addr : NULL,
                      .msg_namelen = m->addr_len,
                      .msg_iov = &m->data,
                      .msg_iovlen = 1,
                      .msg_control = m->control,
                      .msg_controllen = m->control_len };
  /* MSG_NOSIGNAL: a SIGPIPE would be ours, not the caller's */
  return sendmsg (j->sock, &h, j->flags | MSG_NOSIGNAL);
}

/* accept(2)'s peer address, as the kernel gives it: as much as the
 * caller's room holds, and the whole length. */
static int
write_peer (const struct job *j, const struct sockaddr_storage *peer, socklen_t len)
{
  socklen_t n = len < j->peer_room ? len : j->peer_room;
  struct iovec local = { .iov_base = (void *) peer, .iov_len = n };
  struct iovec remote = { .iov_base = (void *) (uintptr_t) j->peer_at, .iov_len = n };
  if (n && process_vm_writev (j->tid, &local, 1, &remote, 1, 0) != (ssize_t) n)
    return EFAULT;
  local = (struct iovec){ .iov_base = &len, .iov_len = sizeof len };
  remote = (struct iovec){ .iov_base = (void *) (uintptr_t) j->peer_len_at, .iov_len = sizeof len };
  return process_vm_writev (j->tid, &local, 1, &remote, 1, 0) == (ssize_t) sizeof len ? 0 : EFAULT;
}

/* accept(2) here, on the caller's listener, so that the socket is counted
 * as ours (unixconn_sockets.c) for as long as it lives, then installed in
 * the caller. A connection accepted for a caller gone meanwhile is closed:
 * its peer sees a reset. */
static void
finish_accept (struct job *j)
{
  struct sockaddr_storage peer;
  socklen_t len = sizeof peer;
  bool want = j->peer_at != 0;
  int fd = accept4 (j->sock, want ? (struct sockaddr *) &peer : NULL, want ? &len : NULL, j->flags | SOCK_CLOEXEC);
  int e = fd < 0 ? errno : -ar_unixconn_sockets_track (fd);
  if (e == 0 && want)
    e = write_peer (j, &peer, len);
  if (e == 0)
    e = ar_unixconn_install (j->listener, j->id, fd, j->flags & SOCK_CLOEXEC);
  if (fd >= 0)
    close (fd);
  if (e)
    reply (j->listener, j->id, e);
}

static void
finish (struct job *j)
{
  if (j->op == OP_ACCEPT)
    finish_accept (j);
  else if (j->op == OP_CONNECT)
    {
      int r = connect (j->sock, (struct sockaddr *) &j->m[0].addr, j->m[0].addr_len);
      reply (j->listener, j->id, r < 0 ? errno : 0);
    }
  else if (j->op != OP_SENDMMSG)
    {
      ssize_t n = send_one (j, &j->m[0]);
      if (n < 0)
        reply (j->listener, j->id, errno);
      else
        reply_val (j->listener, j->id, n);
    }
  else
    {
      /* as the kernel does: the count sent, or the first error if none was */
      size_t done = 0;
      int e = 0;
      for (; done < j->n; done++)
        {
          ssize_t n = send_one (j, &j->m[done]);
          unsigned len = n < 0 ? 0 : (unsigned) n;
          if (n < 0)
            {
              e = errno;
              break;
            }
          struct iovec local = { .iov_base = &len, .iov_len = sizeof len };
          struct iovec remote = { .iov_base = (void *) (uintptr_t) j->m[done].len_at, .iov_len = sizeof len };
          if (process_vm_writev (j->tid, &local, 1, &remote, 1, 0) != (ssize_t) sizeof len)
            {
              e = EFAULT;
              done++;
              break;
            }
        }
      if (done)
        reply_val (j->listener, j->id, (int64_t) done);
      else
        reply (j->listener, j->id, e);
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
 * answer), a blocking send (a receiver's full queue), a blocking accept. */
static bool
may_block (const struct job *j)
{
  int type = 0, fl = fcntl (j->sock, F_GETFL);
  socklen_t tl = sizeof type;
  if (fl < 0 || (fl & O_NONBLOCK))
    return false;
  if (j->op == OP_ACCEPT)
    return true;
  if (j->op != OP_CONNECT)
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
      drop (j, EAGAIN); /* never wait here: that would stall every other connect */
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
  (void) sig; /* only there to make connect(2) return EINTR */
}

/* 0 when the job is ready to connect, else the errno to answer (-1: no
 * answer, the caller is gone). */
static int
sock_type (int sock)
{
  int type = 0;
  socklen_t tl = sizeof type;
  return getsockopt (sock, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 ? -1 : type;
}

/* The messages, copied once: sendto's buffer and address, sendmsg's and
 * sendmmsg's msghdrs with their data and fds. */
static int
read_msgs (pid_t tid, int pidfd, const struct call *c, struct job *j)
{
  int type = sock_type (j->sock), r = 0;
  if (c->op == OP_CONNECT || c->op == OP_SENDTO)
    {
      if (c->len < 0 || (size_t) c->len > sizeof j->m[0].addr)
        return -EINVAL;
      j->m[0].addr_len = (socklen_t) c->len;
      r = read_mem (tid, c->addr, &j->m[0].addr, (size_t) c->len);
      if (r == 0 && c->op == OP_SENDTO)
        {
          struct iovec remote = { .iov_base = (void *) (uintptr_t) c->buf, .iov_len = c->blen };
          r = ar_unixconn_read_data (tid, &remote, 1, type, &j->m[0]);
        }
      return r;
    }
  for (size_t i = 0; r == 0 && i < j->n; i++)
    {
      uint64_t at = c->buf + i * sizeof (struct mmsghdr);
      r = ar_unixconn_read_msghdr (tid, pidfd, at, type, &j->m[i]);
      if (c->op == OP_SENDMMSG)
        j->m[i].len_at = at + offsetof (struct mmsghdr, msg_len);
    }
  return r;
}

/* accept(2)'s addrlen, read once: the room for the peer's address. */
static int
read_peer_room (pid_t tid, const struct call *c, struct job *j)
{
  int room = 0;
  if (!c->addr)
    return 0;
  int r = read_mem (tid, c->buf, &room, sizeof room);
  if (r < 0)
    return r;
  if (room < 0)
    return -EINVAL;
  j->peer_at = c->addr;
  j->peer_len_at = c->buf;
  j->peer_room = (socklen_t) room;
  return 0;
}

static int
prepare (int listener, const struct seccomp_notif *req, struct call *c, struct job *j)
{
  pid_t tid = j->tid;
  int r;

  int pidfd = open_target (tid);
  if (pidfd < 0)
    return still_valid (listener, req->id) ? EACCES : -1;
  j->op = c->op;
  j->flags = c->flags;
  r = (j->sock = (int) syscall (SYS_pidfd_getfd, pidfd, c->fd, 0)) < 0 ? -errno : 0;
  if (r == 0)
    r = c->op == OP_ACCEPT ? read_peer_room (tid, c, j) : read_msgs (tid, pidfd, c, j);
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
  if (c->op == OP_SENDMMSG || c->op == OP_SENDMSG)
    if (c->flags & MSG_ZEROCOPY)
      return EOPNOTSUPP; /* the pages would be ours, freed before the kernel is done */
  for (size_t i = 0; i < j->n; i++)
    if ((r = rewrite_unix (tid, &j->m[i])) != 0)
      return r;
  return still_valid (listener, req->id) ? 0 : -1;
}

/* Under the socket cap, a call that makes a TCP connection counts it
 * before it is made, or is refused at the cap: the connection's other end
 * (or its place in a listener's queue) is one socket more. */
static int
count_connection (struct job *j)
{
  if (!C->max_sockets || (j->op != OP_CONNECT && !(j->op != OP_ACCEPT && (j->flags & MSG_FASTOPEN))))
    return 0;
  int r = ar_unixconn_sockets_connect (j->sock);
  if (r < 0)
    return -r;
  j->counted = r == 1;
  return 0;
}

static void
handle (int listener, const struct seccomp_notif *req)
{
  struct call c = { 0 };
  pid_t tid = (pid_t) req->pid;
  int e = tid <= 0 ? EACCES : 0; /* a caller outside our pid namespace: cannot be resolved */
  if (e == 0 && (e = -call_args (req, &c)) == 0 && c.op == OP_SENDMMSG && c.blen == 0)
    e = -1, reply_val (listener, req->id, 0);
  if (e == 0 && c.op == OP_SOCKET)
    e = ar_unixconn_socket (listener, req->id, c.fd, c.len, c.flags);
  if (e || c.op == OP_SOCKET)
    {
      if (e > 0)
        reply (listener, req->id, e);
      return;
    }
  size_t n = c.op == OP_SENDMMSG ? (c.blen < MMSG_MAX ? c.blen : MMSG_MAX) : 1;
  struct job *j = job_new (listener, req->id, tid, n);
  if (!j)
    {
      reply (listener, req->id, ENOMEM);
      return;
    }
  e = prepare (listener, req, &c, j);
  if (e == 0)
    e = count_connection (j);
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
      dprintf (2, "agentrun: unixconn supervisor: SECCOMP_GET_NOTIF_SIZES: %s\n", strerror (errno));
      _exit (1);
    }
  size_t size = sizes.seccomp_notif > sizeof (struct seccomp_notif) ? sizes.seccomp_notif : sizeof (struct seccomp_notif);
  struct seccomp_notif *req = calloc (1, size);
  if (!req || sizes.seccomp_notif_resp > sizeof (struct seccomp_notif_resp))
    _exit (1);
  struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART */
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
          dprintf (2, "agentrun: unixconn supervisor: SECCOMP_IOCTL_NOTIF_RECV: %s\n", strerror (errno));
          _exit (1);
        }
      handle (listener, req);
    }
  _exit (0);
}
