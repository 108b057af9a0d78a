/* Masked and read-only paths (see masks.h). The /dev/null bound over masked
 * files is checked to be the real character device 1:3 (CVE-2025-31133: a
 * container-controlled /dev/null, e.g. a symlink to /proc/sys/kernel/core_pattern,
 * would otherwise turn a mask into a writable bind of that file). */
#include "config.h"
#include "masks.h"
#include "mounts.h"
#include "pathname.h"
#include "pathutil.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* An O_PATH fd of the container's /dev/null, proven to be char 1:3. */
static int
open_devnull (int root_fd, ar_error **err)
{
  struct stat st;
  int fd = ar_openat2 (root_fd, "/dev/null", O_PATH | O_NOFOLLOW, 0, AR_RESOLVE_ROOT_FLAGS | RESOLVE_NO_SYMLINKS);
  if (fd < 0)
    return ar_err (err, errno, "maskedPaths: open /dev/null");
  if (fstat (fd, &st) < 0)
    {
      int e = errno;
      close (fd);
      return ar_err (err, e, "maskedPaths: stat /dev/null");
    }
  if (!S_ISCHR (st.st_mode) || major (st.st_rdev) != 1 || minor (st.st_rdev) != 3)
    {
      close (fd);
      return ar_err (err, 0, "maskedPaths: /dev/null is not the null device (1:3)");
    }
  return fd;
}

/* What is known of the folders of the masked paths that were missing:
 * the last folder found missing, and the last one found there. */
struct mask_memo {
  char *missing, *present;
};

/* path has no "." or ".." component and no empty one: a folder above it
 * that is missing (as a string prefix) makes it missing too. */
static bool
plain_path (const char *path)
{
  for (const char *c = path; *c; c++)
    if (c[0] == '/' && (c[1] == '/' || (c[1] == '.' && (c[2] == '/' || !c[2] || (c[2] == '.' && (c[3] == '/' || !c[3]))))))
      return false;
  return true;
}

/* path is missing inside the root because a folder above it is: true
 * without a lookup. The many credential paths of a home that is not bound
 * in (root's, another user's), or of a folder missing from the agent's
 * home, cost one lookup together, not one each. */
static bool
above_missing (const struct mask_memo *m, const char *path)
{
  return m->missing && plain_path (path) && ar_path_under (path, m->missing) && strcmp (path, m->missing) != 0;
}

/* path was just found missing: is its folder? (Looked up once a folder.) */
static void
learn_missing (int root_fd, struct mask_memo *m, const char *path)
{
  const char *slash = strrchr (path, '/');
  if (!slash || slash == path || !plain_path (path))
    return;
  cleanup_free char *dir = xasprintf ("%.*s", (int) (slash - path), path);
  if (m->present && strcmp (m->present, dir) == 0)
    return;
  cleanup_close int fd = ar_openat2 (root_fd, dir, O_PATH, 0, AR_RESOLVE_ROOT_FLAGS);
  char **slot = fd < 0 && errno == ENOENT ? &m->missing : &m->present;
  free (*slot);
  *slot = ar_steal_ptr (dir);
}

static int
mask_one (int root_fd, int devnull, struct mask_memo *m, const char *path, ar_error **err)
{
  struct stat st;
  if (above_missing (m, path))
    return 0;
  cleanup_close int target = ar_openat2 (root_fd, path, O_PATH, 0, AR_RESOLVE_ROOT_FLAGS);
  if (target < 0)
    {
      int e = errno;
      if (e == ENOENT)
        learn_missing (root_fd, m, path);
      return (e == ENOENT || e == ENOTDIR) ? 0 : ar_err (err, e, "maskedPaths: open `%s`", path);
    }
  if (fstat (target, &st) < 0)
    return ar_err (err, errno, "maskedPaths: stat `%s`", path);
  cleanup_close int mfd = -1;
  if (S_ISDIR (st.st_mode))
    {
      struct ar_mount_opts o = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
                                             | MOUNT_ATTR_NOEXEC };
      char *data[] = { (char *) "size=0", (char *) "mode=0555" };
      o.data = data;
      o.n_data = 2;
      mfd = ar_mount_fresh ("tmpfs", "tmpfs", &o, path, err);
      if (mfd < 0)
        return ar_err_prefix (err, "maskedPaths");
    }
  else
    {
      mfd = open_tree (devnull, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
      if (mfd < 0)
        return ar_err (err, errno, "maskedPaths: bind /dev/null over `%s`", path);
    }
  if (ar_mount_attach (mfd, target, NULL, path, err) < 0)
    return ar_err_prefix (err, "maskedPaths");
  return 0;
}

static int
readonly_one (int root_fd, const char *path, ar_error **err)
{
  cleanup_close int target = ar_openat2 (root_fd, path, O_PATH, 0, AR_RESOLVE_ROOT_FLAGS);
  if (target < 0)
    return (errno == ENOENT || errno == ENOTDIR) ? 0 : ar_err (err, errno, "readonlyPaths: open `%s`", path);
  /* A recursive clone keeps mounts under path (and any the kernel locked)
   * whole; the clone, not the original, is made read-only and put on top. */
  cleanup_close int mfd = open_tree (target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
  if (mfd < 0)
    return ar_err (err, errno, "readonlyPaths: bind `%s`", path);
  struct ar_mount_opts o = { .rattr_set = MOUNT_ATTR_RDONLY };
  if (ar_mount_setattr (mfd, &o, path, err) < 0 || ar_mount_attach (mfd, target, NULL, path, err) < 0)
    return ar_err_prefix (err, "readonlyPaths");
  return 0;
}

int
ar_masks_apply (int root_fd, const struct ar_linux *lnx, ar_error **err)
{
  if (!lnx)
    return 0;
  if (lnx->n_masked_paths)
    {
      cleanup_close int devnull = open_devnull (root_fd, err);
      struct mask_memo m = { NULL, NULL };
      int r = devnull < 0 ? -1 : 0;
      for (size_t i = 0; r == 0 && i < lnx->n_masked_paths; i++)
        r = mask_one (root_fd, devnull, &m, lnx->masked_paths[i], err);
      free (m.missing);
      free (m.present);
      if (r < 0)
        return -1;
    }
  for (size_t i = 0; i < lnx->n_readonly_paths; i++)
    if (readonly_one (root_fd, lnx->readonly_paths[i], err) < 0)
      return -1;
  return 0;
}
