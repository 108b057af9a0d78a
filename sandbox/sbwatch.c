/* The held names of a run, watched on the host (sbwatch.h). */
#include "config.h"
#include "sbwatch.h"
#include "pathutil.h"
#include "sbpaths.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

/* what takes the entry of a name from its folder */
#define GONE_EVENTS (IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)
/* what takes a folder from where the container sees it: the held mounts
 * in it move with it, a new folder made there holds nothing */
#define SELF_EVENTS (IN_MOVE_SELF | IN_DELETE_SELF | IN_UNMOUNT)
#define WATCH_FLAGS (IN_ONLYDIR | IN_DONT_FOLLOW | IN_MASK_ADD)

/* The folders at and above a held name's own that are mounts of the
 * container's in a writable folder (.git, pinned onto itself): a rename of
 * one on the host (mv .git .git.old; git init) takes the held names in it
 * along, and leaves a folder without them at their place. The command
 * cannot rename these (mount points); one it can rename is not watched:
 * what moves with it stays held, below its new name. */
static int
watch_above (struct ar_sb_watch *w, const struct ar_agent_opts *o, const char *dir, ar_error **err)
{
  cleanup_free char *p = xstrdup (dir);
  for (char *slash; ar_sbpaths_in_writable (o, p) && (slash = strrchr (p, '/')) && slash != p; *slash = '\0')
    {
      bool seen = !ar_sbpaths_is_bind (o, p);
      for (size_t i = 0; i < w->n_above && !seen; i++)
        seen = strcmp (w->above[i], p) == 0;
      if (seen)
        continue;
      if (inotify_add_watch (w->fd, p, SELF_EVENTS | WATCH_FLAGS) < 0)
        return ar_err (err, errno, "folder %s of a held name: watch it (inotify; fs.inotify.max_user_watches?)", p);
      w->above = xrealloc (w->above, (w->n_above + 1) * sizeof *w->above);
      w->above[w->n_above++] = xstrdup (p);
    }
  return 0;
}

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
    wd = inotify_add_watch (w->fd, p, GONE_EVENTS | WATCH_FLAGS);
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
  if (!ar_sbpaths_in_writable (o, path))
    return 0;
  if (watch_one (w, path, err) < 0)
    return -1;
  cleanup_free char *dir = xstrdup (path);
  *strrchr (dir, '/') = '\0';
  return watch_above (w, o, dir, err);
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

/* Is path a mount in the container (seen from its root)? */
static bool
held_at (int root, const char *path)
{
  struct statx sx;
  cleanup_close int fd = ar_openat2 (root, path, O_PATH | O_NOFOLLOW, 0, AR_RESOLVE_ROOT_FLAGS);
  if (fd < 0 || statx (fd, "", AT_EMPTY_PATH, 0, &sx) < 0)
    return false;
  return (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

const char *
ar_sb_watch_breached (struct ar_sb_watch *w, int root)
{
  char buf[4096] __attribute__ ((aligned (__alignof__(struct inotify_event))));
  bool all = false;
  size_t hit = w->n; /* none */
  ssize_t len;
  /* read all that is there; look at the names the events told (all of
   * them when a folder above moved or events were lost) */
  bool *named = xmalloc0 (w->n + 1);
  while ((len = read (w->fd, buf, sizeof buf)) > 0)
    for (char *p = buf; p < buf + len;)
      {
        const struct inotify_event *ev = (const struct inotify_event *) p;
        p += sizeof *ev + ev->len;
        if (ev->mask & (IN_Q_OVERFLOW | SELF_EVENTS))
          all = true;
        for (size_t i = 0; i < w->n && ev->len; i++)
          if (w->w[i].wd == ev->wd && strcmp (w->w[i].base, ev->name) == 0)
            named[i] = true;
      }
  /* in the container: a name saved before its mount was made is held in
   * its new version; without a view of it, every name told is lost */
  for (size_t i = 0; i < w->n && hit == w->n; i++)
    if ((all || named[i]) && (root < 0 || !held_at (root, w->w[i].path)))
      hit = i;
  /* its /proc still mounted after that: the namespace was there when the
   * name was looked at (its mounts go all at once, when its last process
   * exits), else the run ended meanwhile and the mounts no longer matter */
  if (hit < w->n && root >= 0 && !held_at (root, "/proc"))
    hit = w->n;
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
  for (size_t i = 0; i < w->n_above; i++)
    free (w->above[i]);
  free (w->above);
  free (w->w);
  *w = (struct ar_sb_watch){ .fd = -1 };
}
