/* The held names of a run, watched on the host (sbwatch.h). */
#include "config.h"
#include "sbwatch.h"
#include "pathutil.h"
#include "sbpaths.h"
#include "container.h"
#include "terminal.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* what takes the entry of a name from its folder */
#define GONE_EVENTS (IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)

static int
watch_one (struct ar_sb_watch *w, const char *path, ar_error **err)
{
  char *p = xstrdup (path);
  char *slash = strrchr (p, '/');
  size_t dir_len = (size_t) (slash - p);
  int wd = -1;
  /* a folder watched already (most names are in a few folders) */
  for (size_t i = 0; i < w->n && wd < 0; i++)
    if ((size_t) (w->w[i].base - w->w[i].path) == dir_len + 1 && strncmp (w->w[i].path, p, dir_len + 1) == 0)
      wd = w->w[i].wd;
  *slash = '\0';
  if (wd < 0)
    wd = inotify_add_watch (w->fd, p, GONE_EVENTS | IN_ONLYDIR | IN_DONT_FOLLOW);
  *slash = '/';
  if (wd < 0)
    {
      int e = errno;
      free (p);
      return ar_err (err, e, "held name %s: watch its folder (inotify; fs.inotify.max_user_watches?)", path);
    }
  w->w = xrealloc (w->w, (w->n + 1) * sizeof *w->w);
  w->w[w->n++] = (struct ar_sb_watched){ .path = p, .base = slash + 1, .wd = wd };
  return 0;
}

static int
watch_if_held (struct ar_sb_watch *w, const struct ar_agent_opts *o, const char *path, ar_error **err)
{
  return ar_sbpaths_in_writable (o, path) ? watch_one (w, path, err) : 0;
}

int
ar_sb_watch_open (ar_error **err)
{
  int fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0)
    ar_err (err, errno, "watch the held names (inotify; fs.inotify.max_user_instances?)");
  return fd;
}

int
ar_sb_watch_start (struct ar_sb_watch *w, const struct ar_agent_opts *o, int fd, ar_error **err)
{
  *w = (struct ar_sb_watch){ .fd = fd };
  int r = 0;
  for (size_t i = 0; r == 0 && i < o->n_binds; i++)
    if (!o->binds[i].src && (!o->binds[i].writable || o->binds[i].scratch))
      r = watch_if_held (w, o, o->binds[i].path, err);
  for (size_t i = 0; r == 0 && i < o->n_extra; i++)
    r = watch_if_held (w, o, o->extra_dst[i], err);
  for (size_t i = 0; r == 0 && i < o->n_masks; i++)
    r = watch_if_held (w, o, o->masks[i], err);
  if (r < 0 || w->n == 0)
    ar_sb_watch_close (w);
  return r;
}

/* The container's / as its processes see it, to look at its mounts: a
 * child of ours joins the init's user and mount namespaces (this process
 * owns the user namespace: no ptrace access to the init is needed, which
 * a plain user lacks) and sends back an O_PATH fd of its root. -1 with
 * errno: ESRCH when the init has no namespaces any more (it is exiting,
 * and every process of the container with it). */
static int
container_root (int init_pidfd)
{
  int sv[2], fd = -1, e = EIO;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return -1;
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (sv[0]);
      int root = setns (init_pidfd, CLONE_NEWUSER | CLONE_NEWNS) < 0 ? -1 : open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      int why = root < 0 ? errno : 0;
      _exit (ar_send_fd (sv[1], root, &why, sizeof why, NULL) < 0);
    }
  close (sv[1]);
  if (pid > 0 && ar_recv_fd (sv[0], &fd, &e, sizeof e, NULL) < 0)
    e = EIO, fd = -1;
  close (sv[0]);
  if (pid > 0)
    ar_reap (pid);
  else
    e = errno;
  errno = fd < 0 ? e : 0;
  return fd;
}

/* Is path still a mount in the container (seen from its root)? */
static bool
still_held (int root, const char *path)
{
  struct statx sx;
  cleanup_close int fd = ar_openat2 (root, path, O_PATH | O_NOFOLLOW, 0, AR_RESOLVE_ROOT_FLAGS);
  if (fd < 0 || statx (fd, "", AT_EMPTY_PATH, 0, &sx) < 0)
    return false;
  return (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

const char *
ar_sb_watch_breached (struct ar_sb_watch *w, int init_pidfd)
{
  char buf[4096] __attribute__ ((aligned (__alignof__(struct inotify_event))));
  bool all = false, any = false;
  size_t hit = w->n; /* none */
  ssize_t len;
  /* read all that is there; look at the names the events told */
  bool *named = xmalloc0 (w->n + 1);
  while ((len = read (w->fd, buf, sizeof buf)) > 0)
    for (char *p = buf; p < buf + len;)
      {
        const struct inotify_event *ev = (const struct inotify_event *) p;
        p += sizeof *ev + ev->len;
        if (ev->mask & IN_Q_OVERFLOW)
          all = any = true;
        for (size_t i = 0; i < w->n && ev->len; i++)
          if (w->w[i].wd == ev->wd && strcmp (w->w[i].base, ev->name) == 0)
            named[i] = any = true;
      }
  /* looked at afresh each time: a root kept from before would show the
   * mounts of a namespace torn down at the init's exit as gone. The init
   * exiting or gone: the run is over, the mounts no longer matter. */
  cleanup_close int root = any && init_pidfd >= 0 ? container_root (init_pidfd) : -1;
  bool over = !any || init_pidfd < 0 || (root < 0 && errno == ESRCH);
  for (size_t i = 0; !over && i < w->n && hit == w->n; i++)
    if ((all || named[i]) && (root < 0 || !still_held (root, w->w[i].path)))
      hit = i;
  /* a namespace still there now was there when it was looked at (its
   * mounts go only with it): else the run ended meanwhile */
  if (hit < w->n && root >= 0)
    {
      cleanup_close int again = container_root (init_pidfd);
      if (again < 0 && errno == ESRCH)
        hit = w->n;
    }
  free (named);
  return hit < w->n ? w->w[hit].path : NULL;
}

void
ar_sb_watch_close (struct ar_sb_watch *w)
{
  if (w->fd >= 0)
    close (w->fd);
  for (size_t i = 0; i < w->n; i++)
    free (w->w[i].path);
  free (w->w);
  *w = (struct ar_sb_watch){ .fd = -1 };
}
