/* The messages of sendto, sendmsg and sendmmsg (unixconn.h), copied once
 * from the caller's memory: the address, the data (gathered from its
 * iovecs into one buffer), the control data with every SCM_RIGHTS fd
 * taken from the caller (pidfd_getfd) and renumbered ours. The supervisor
 * sends the copy: what it checked is what the kernel gets. */
#include "config.h"
#include "unixconn.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* Control data beyond this is refused (the kernel's own optmem limit is
 * about 20 KiB). */
#define CONTROL_MAX (64U << 10)

int
ar_unixconn_read_mem (pid_t tid, uint64_t addr, void *buf, size_t len)
{
  struct iovec local = { .iov_base = buf, .iov_len = len };
  struct iovec remote = { .iov_base = (void *) (uintptr_t) addr, .iov_len = len };
  if (len == 0)
    return 0;
  ssize_t n = process_vm_readv (tid, &local, 1, &remote, 1, 0);
  if (n == (ssize_t) len)
    return 0;
  return n < 0 && errno != EFAULT ? -errno : -EFAULT;
}

void
ar_unixconn_msg_clear (struct ar_unixconn_msg *m)
{
  if (m->path_fd >= 0)
    close (m->path_fd);
  for (size_t i = 0; i < m->n_fds; i++)
    close (m->fds[i]);
  free (m->fds);
  free (m->data.iov_base);
  free (m->control);
  *m = (struct ar_unixconn_msg){ .path_fd = -1 };
}

int
ar_unixconn_read_data (pid_t tid, const struct iovec *remote, size_t n, int sock_type, struct ar_unixconn_msg *m)
{
  size_t total = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (remote[i].iov_len > SSIZE_MAX - total)
        return -EINVAL;
      total += remote[i].iov_len;
    }
  /* a stream takes a short write; a datagram that large could never be sent */
  if (total > AR_UNIXCONN_SEND_MAX)
    {
      if (sock_type != SOCK_STREAM)
        return -EMSGSIZE;
      total = AR_UNIXCONN_SEND_MAX;
    }
  m->data.iov_base = malloc (total ? total : 1);
  m->data.iov_len = total;
  if (!m->data.iov_base)
    return -ENOMEM;
  if (!total)
    return 0;
  struct iovec local = m->data;
  ssize_t got = process_vm_readv (tid, &local, 1, remote, n, 0);
  if (got == (ssize_t) total)
    return 0;
  return got < 0 && errno != EFAULT ? -errno : -EFAULT;
}

/* The caller's fds in SCM_RIGHTS become ours; SCM_CREDENTIALS names us
 * (the kernel lets a sender claim its own pid only). */
static int
take_fds (int pidfd, struct ar_unixconn_msg *m)
{
  struct msghdr h = { .msg_control = m->control, .msg_controllen = m->control_len };
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&h); c; c = CMSG_NXTHDR (&h, c))
    {
      if (c->cmsg_len < sizeof *c || c->cmsg_len > m->control_len - ((char *) c - (char *) m->control))
        return -EINVAL;
      if (c->cmsg_level != SOL_SOCKET)
        continue;
      if (c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN (sizeof (struct ucred)))
        {
          struct ucred u;
          memcpy (&u, CMSG_DATA (c), sizeof u);
          u.pid = getpid ();
          memcpy (CMSG_DATA (c), &u, sizeof u);
        }
      if (c->cmsg_type != SCM_RIGHTS)
        continue;
      size_t n = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      int *fds = realloc (m->fds, (m->n_fds + n) * sizeof *fds);
      if (!fds)
        return -ENOMEM;
      m->fds = fds;
      for (size_t i = 0; i < n; i++)
        {
          int theirs, ours;
          memcpy (&theirs, CMSG_DATA (c) + i * sizeof (int), sizeof theirs);
          if ((ours = (int) syscall (SYS_pidfd_getfd, pidfd, theirs, 0)) < 0)
            return errno == EBADF ? -EBADF : -errno;
          m->fds[m->n_fds++] = ours;
          memcpy (CMSG_DATA (c) + i * sizeof (int), &ours, sizeof ours);
        }
    }
  return 0;
}

int
ar_unixconn_read_msghdr (pid_t tid, int pidfd, uint64_t at, int sock_type, struct ar_unixconn_msg *m)
{
  struct msghdr h;
  int r = ar_unixconn_read_mem (tid, at, &h, sizeof h);
  if (r < 0)
    return r;
  if (h.msg_name && h.msg_namelen)
    {
      if (h.msg_namelen > sizeof m->addr)
        return -EINVAL;
      if ((r = ar_unixconn_read_mem (tid, (uintptr_t) h.msg_name, &m->addr, h.msg_namelen)) < 0)
        return r;
      m->addr_len = h.msg_namelen;
    }
  if (h.msg_iovlen > IOV_MAX)
    return -EMSGSIZE;
  struct iovec *iov = malloc ((h.msg_iovlen ? h.msg_iovlen : 1) * sizeof *iov);
  if (!iov)
    return -ENOMEM;
  r = ar_unixconn_read_mem (tid, (uintptr_t) h.msg_iov, iov, h.msg_iovlen * sizeof *iov);
  if (r == 0)
    r = ar_unixconn_read_data (tid, iov, h.msg_iovlen, sock_type, m);
  free (iov);
  if (r < 0 || !h.msg_control || !h.msg_controllen)
    return r;
  if (h.msg_controllen > CONTROL_MAX)
    return -ENOBUFS;
  if (!(m->control = malloc (h.msg_controllen)))
    return -ENOMEM;
  m->control_len = h.msg_controllen;
  if ((r = ar_unixconn_read_mem (tid, (uintptr_t) h.msg_control, m->control, h.msg_controllen)) < 0)
    return r;
  return take_fds (pidfd, m);
}
