/* Sockets of the container's own (unixconn.h): a Unix socket bound in the
 * container's own network namespace was bound by a process inside, so the
 * file it made may be connected to from inside. sock_diag lists the bound
 * sockets of the namespace its netlink socket lives in, each with the
 * device and inode of its file (UDIAG_SHOW_VFS); a host socket, bound in
 * another namespace, is never among them, whatever name it has inside. */
#include "config.h"
#include "unixconn.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The kernel's dev_t (12 bits of major above 20 of minor), as sock_diag
 * gives it, in stat's encoding. */
static dev_t
kernel_dev (uint32_t d)
{
  return makedev (d >> 20, d & 0xfffff);
}

/* Does one reply hold a socket whose file is (dev, ino)? */
static bool
match_msg (const struct nlmsghdr *h, dev_t dev, ino_t ino)
{
  const struct unix_diag_msg *m = NLMSG_DATA (h);
  int len = (int) h->nlmsg_len - (int) NLMSG_LENGTH (sizeof *m);
  for (const struct nlattr *a = (const void *) (m + 1);
       len >= (int) sizeof *a && a->nla_len >= sizeof *a && a->nla_len <= len;
       len -= NLA_ALIGN (a->nla_len), a = (const void *) ((const char *) a + NLA_ALIGN (a->nla_len)))
    if (a->nla_type == UNIX_DIAG_VFS && a->nla_len >= NLA_HDRLEN + sizeof (struct unix_diag_vfs))
      {
        struct unix_diag_vfs v;
        memcpy (&v, (const char *) a + NLA_HDRLEN, sizeof v);
        return v.udiag_vfs_ino == ino && kernel_dev (v.udiag_vfs_dev) == dev;
      }
  return false;
}

bool
ar_unixconn_bound_inside (int diag, dev_t dev, ino_t ino)
{
  struct {
    struct nlmsghdr h;
    struct unix_diag_req r;
  } req = { .h = { .nlmsg_len = sizeof req, .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
            .r = { .sdiag_family = AF_UNIX, .udiag_states = ~0U, .udiag_show = UDIAG_SHOW_VFS } };
  /* sock_diag gives 32 bits of the inode number: a longer one could alias */
  if ((uint64_t) ino > UINT32_MAX)
    return false;
  if (send (diag, &req, sizeof req, MSG_NOSIGNAL) != (ssize_t) sizeof req)
    return false;
  bool found = false;
  static __thread uint32_t buf[8192];
  for (;;)
    {
      ssize_t n = recv (diag, buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      for (struct nlmsghdr *h = (void *) buf; NLMSG_OK (h, (size_t) n); h = NLMSG_NEXT (h, n))
        {
          if (h->nlmsg_type == NLMSG_DONE)
            return found;
          if (h->nlmsg_type == NLMSG_ERROR)
            return false;
          if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY && !found)
            found = match_msg (h, dev, ino);
        }
    }
}
