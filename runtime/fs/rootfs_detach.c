/* --no-pivot: before the rootfs is moved onto /, every mount of the old
 * root that is neither the rootfs (with what is under it) nor one of its
 * ancestors is detached. MS_MOVE and chroot leave the old mounts in the
 * namespace, merely hidden; a fully visible procfs or sysfs among them is
 * what lets a nested user namespace mount a fresh, unmasked one. A mount
 * that cannot be detached (locked by a user namespace) is covered by an
 * empty read-only tmpfs, and one that can be neither fails the container.
 * The old root is rslave by then, so nothing reaches the host. */
#include "config.h"
#include "rootfs.h"
#include "pathutil.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

/* a at or below b */
static bool
under (const char *a, const char *b)
{
  size_t l = strlen (b);
  if (strcmp (b, "/") == 0)
    return true;
  return strncmp (a, b, l) == 0 && (a[l] == '/' || a[l] == '\0');
}

static int
detach_one (const char *mp, ar_error **err)
{
  if (umount2 (mp, MNT_DETACH) == 0 || errno == EINVAL || errno == ENOENT)
    return 0; /* EINVAL, ENOENT: already gone with a parent */
  if (mount ("tmpfs", mp, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0,mode=0") == 0)
    return 0;
  return ar_err (err, errno, "--no-pivot: detach or cover the host's mount %s", mp);
}

int
ar_rootfs_detach_others (const char *rootfs, ar_error **err)
{
  cleanup_fclose FILE *f = fopen ("/proc/self/mountinfo", "re");
  if (!f)
    return ar_err (err, errno, "--no-pivot: open /proc/self/mountinfo");
  cleanup_free char *line = NULL;
  size_t cap = 0, n = 0;
  char **mps = NULL;
  while (getline (&line, &cap, f) > 0)
    {
      char mp[4096];
      if (sscanf (line, "%*s %*s %*s %*s %4095s", mp) != 1)
        continue;
      ar_mountinfo_unescape (mp);
      if (under (mp, rootfs) || under (rootfs, mp))
        continue;
      mps = xrealloc (mps, (n + 1) * sizeof *mps);
      mps[n++] = xstrdup (mp);
    }
  int r = 0;
  /* children come after their parents in mountinfo: last first */
  for (size_t i = n; i-- > 0;)
    {
      if (r == 0)
        r = detach_one (mps[i], err);
      free (mps[i]);
    }
  free (mps);
  return r;
}
