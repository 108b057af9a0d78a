/* Device nodes and /dev conventions (see devices.h). Every node is created
 * through an fd of its parent directory opened inside the rootfs. */
#include "config.h"
#include "devices.h"
#include "mounts.h"
#include "pathutil.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static const struct ar_device default_devices[] = {
  { (char *) "/dev/null", 'c', 1, 3, true, 0666, true, 0, true, 0 },
  { (char *) "/dev/zero", 'c', 1, 5, true, 0666, true, 0, true, 0 },
  { (char *) "/dev/full", 'c', 1, 7, true, 0666, true, 0, true, 0 },
  { (char *) "/dev/random", 'c', 1, 8, true, 0666, true, 0, true, 0 },
  { (char *) "/dev/urandom", 'c', 1, 9, true, 0666, true, 0, true, 0 },
  { (char *) "/dev/tty", 'c', 5, 0, true, 0666, true, 0, true, 0 },
};

static const struct {
  const char *path, *target;
} dev_symlinks[] = {
  { "/dev/fd", "/proc/self/fd" },       { "/dev/stdin", "/proc/self/fd/0" }, { "/dev/stdout", "/proc/self/fd/1" },
  { "/dev/stderr", "/proc/self/fd/2" }, { "/dev/ptmx", "pts/ptmx" },
};

static int
device_type (const struct ar_device *d, mode_t *type, ar_error **err)
{
  switch (d->type)
    {
    case 'c':
    case 'u': *type = S_IFCHR; return 0;
    case 'b': *type = S_IFBLK; return 0;
    case 'p': *type = S_IFIFO; return 0;
    default: return ar_err (err, 0, "linux.devices (%s): unknown type `%c`", d->path, d->type);
    }
}

static bool
same_node (const struct stat *st, mode_t type, dev_t rdev)
{
  return (st->st_mode & S_IFMT) == type && (type == S_IFIFO || st->st_rdev == rdev);
}

/* mknod, replacing whatever non-directory the image has at that name. */
static int
mknod_device (int parent, const char *base, const struct ar_device *d, mode_t type, ar_error **err)
{
  dev_t rdev = makedev ((unsigned) d->major, (unsigned) d->minor);
  mode_t perm = (d->has_file_mode ? d->file_mode : 0666) & 07777;
  struct stat st;

  if (mknodat (parent, base, type | perm, type == S_IFIFO ? 0 : rdev) < 0)
    {
      if (errno != EEXIST)
        return ar_err (err, errno, "mknod %s", d->path);
      if (fstatat (parent, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return ar_err (err, errno, "stat %s", d->path);
      if (!same_node (&st, type, rdev))
        {
          if (S_ISDIR (st.st_mode) || unlinkat (parent, base, 0) < 0)
            return ar_err (err, S_ISDIR (st.st_mode) ? EISDIR : errno, "replace %s", d->path);
          if (mknodat (parent, base, type | perm, type == S_IFIFO ? 0 : rdev) < 0)
            return ar_err (err, errno, "mknod %s", d->path);
        }
    }
  /* mknod's mode went through the umask; the config's mode is exact. The node
   * is fresh and the container not running yet, so the name is still ours. */
  if (fchmodat (parent, base, perm, 0) < 0)
    return ar_err (err, errno, "chmod %s", d->path);
  if (fchownat (parent, base, d->has_uid ? d->uid : 0, d->has_gid ? d->gid : 0, AT_SYMLINK_NOFOLLOW) < 0)
    return ar_err (err, errno, "chown %s", d->path);
  return 0;
}

/* In a user namespace: bind the host's node, after checking it is the one asked for. */
static int
bind_device (struct ar_rootfs_ctx *ctx, const struct ar_device *d, mode_t type, ar_error **err)
{
  cleanup_close int src = open_tree (AT_FDCWD, d->path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  struct stat st;
  if (src < 0)
    return ar_err (err, errno, "open the host's %s to bind it", d->path);
  if (fstat (src, &st) < 0)
    return ar_err (err, errno, "stat the host's %s", d->path);
  if (!same_node (&st, type, makedev ((unsigned) d->major, (unsigned) d->minor)))
    return ar_err (err, 0, "the host's %s is not the device %c %lld:%lld", d->path, d->type, (long long) d->major,
                   (long long) d->minor);
  cleanup_close int target = ar_mk_in_root (ctx->rootfs_fd, d->path, AR_MK_FILE, err);
  if (target < 0)
    return -1;
  struct ar_mount_opts o = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC };
  if (ar_mount_setattr (src, &o, d->path, err) < 0)
    return -1;
  return ar_mount_attach (src, target, NULL, d->path, err);
}

static int
make_device (struct ar_rootfs_ctx *ctx, const struct ar_device *d, ar_error **err)
{
  mode_t type;
  if (!d->path || device_type (d, &type, err) < 0)
    return d->path ? -1 : ar_err (err, 0, "linux.devices: an entry has no path");
  if (ctx->new_userns && type != S_IFIFO)
    return bind_device (ctx, d, type, err);
  cleanup_free char *base = NULL;
  cleanup_close int parent = ar_mk_parent_in_root (ctx->rootfs_fd, d->path, &base, err);
  if (parent < 0)
    return -1;
  /* The device cgroup may deny the node to the init already: bind the
   * host's, as runc does (its use stays denied all the same). */
  cleanup_error ar_error *mk = NULL;
  if (mknod_device (parent, base, d, type, &mk) == 0)
    return 0;
  if (mk->errnum == EPERM && type != S_IFIFO)
    return bind_device (ctx, d, type, err);
  if (err && !*err)
    *err = ar_steal_ptr (mk);
  return -1;
}

static bool
config_has (const struct ar_linux *lnx, const char *path)
{
  for (size_t i = 0; lnx && i < lnx->n_devices; i++)
    if (lnx->devices[i].path && strcmp (lnx->devices[i].path, path) == 0)
      return true;
  return false;
}

static bool
config_mounts (const struct ar_spec *spec, const char *dest)
{
  for (size_t i = 0; i < spec->n_mounts; i++)
    if (spec->mounts[i].destination && strcmp (spec->mounts[i].destination, dest) == 0)
      return true;
  return false;
}

static int
mount_default (struct ar_rootfs_ctx *ctx, const char *type, const char *dest, char **data, size_t n, uint64_t attrs,
               ar_error **err)
{
  struct ar_mount_opts o = { .attr_set = attrs, .data = data, .n_data = n };
  cleanup_close int target = ar_mk_in_root (ctx->rootfs_fd, dest, AR_MK_DIR, err);
  if (target < 0)
    return -1;
  cleanup_close int mfd = ar_mount_fresh (type, type, &o, dest, err);
  return mfd < 0 ? -1 : ar_mount_attach (mfd, target, NULL, dest, err);
}

static int
default_mounts (struct ar_rootfs_ctx *ctx, ar_error **err)
{
  char *pts[] = { (char *) "newinstance", (char *) "ptmxmode=0666", (char *) "mode=0620", (char *) "gid=5" };
  char *shm[] = { (char *) "mode=1777", (char *) "size=65536k" };
  /* gid 5 (tty) need not exist in a user namespace's map. */
  if (!config_mounts (ctx->spec, "/dev/pts")
      && mount_default (ctx, "devpts", "/dev/pts", pts, ctx->new_userns ? 3 : 4, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err)
             < 0)
    return -1;
  if (!config_mounts (ctx->spec, "/dev/shm")
      && mount_default (ctx, "tmpfs", "/dev/shm", shm, 2, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err)
             < 0)
    return -1;
  return 0;
}

static int
make_symlinks (struct ar_rootfs_ctx *ctx, ar_error **err)
{
  for (size_t i = 0; i < ARRAY_SIZE (dev_symlinks); i++)
    {
      cleanup_free char *base = NULL;
      cleanup_close int parent = ar_mk_parent_in_root (ctx->rootfs_fd, dev_symlinks[i].path, &base, err);
      if (parent < 0)
        return -1;
      if (symlinkat (dev_symlinks[i].target, parent, base) == 0)
        continue;
      struct stat st;
      if (errno != EEXIST || fstatat (parent, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return ar_err (err, errno, "symlink %s", dev_symlinks[i].path);
      /* A ptmx node in the image would bypass the container's devpts instance. */
      if (strcmp (base, "ptmx") == 0 && !S_ISLNK (st.st_mode)
          && (unlinkat (parent, base, 0) < 0 || symlinkat (dev_symlinks[i].target, parent, base) < 0))
        return ar_err (err, errno, "replace %s with a symlink", dev_symlinks[i].path);
    }
  return 0;
}

int
ar_devices_setup (struct ar_rootfs_ctx *ctx, ar_error **err)
{
  const struct ar_linux *lnx = ctx->spec->linux_;
  for (size_t i = 0; i < ARRAY_SIZE (default_devices); i++)
    if (!config_has (lnx, default_devices[i].path) && make_device (ctx, &default_devices[i], err) < 0)
      return -1;
  for (size_t i = 0; lnx && i < lnx->n_devices; i++)
    if (make_device (ctx, &lnx->devices[i], err) < 0)
      return -1;
  if (default_mounts (ctx, err) < 0)
    return -1;
  return make_symlinks (ctx, err);
}
