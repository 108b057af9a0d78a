/* The container's root: isolation from the host's mount propagation, the
 * rootfs bind, config mounts in order, /dev, then pivot_root (or MS_MOVE and
 * chroot), masks, read-only root and the root's final propagation. */
#include "config.h"
#include "devices.h"
#include "masks.h"
#include "mounts.h"
#include "pathutil.h"
#include "rootfs.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
  const char *name;
  unsigned long flags;
} propagations[] = {
  { "shared", MS_SHARED },         { "rshared", MS_SHARED | MS_REC },
  { "slave", MS_SLAVE },           { "rslave", MS_SLAVE | MS_REC },
  { "private", MS_PRIVATE },       { "rprivate", MS_PRIVATE | MS_REC },
  { "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
};

/* linux.rootfsPropagation as MS_* flags; 0 when absent. */
static int
rootfs_propagation (const struct ar_spec *spec, unsigned long *flags, ar_error **err)
{
  const char *p = spec->linux_ ? spec->linux_->rootfs_propagation : NULL;
  *flags = 0;
  if (!p)
    return 0;
  for (size_t i = 0; i < ARRAY_SIZE (propagations); i++)
    if (strcmp (p, propagations[i].name) == 0)
      {
        *flags = propagations[i].flags;
        return 0;
      }
  return ar_err (err, 0, "config.json: linux.rootfsPropagation: unknown value `%s`", p);
}

static bool
has_mount_ns (const struct ar_spec *spec)
{
  for (size_t i = 0; spec->linux_ && i < spec->linux_->n_namespaces; i++)
    if (spec->linux_->namespaces[i].type == AR_NS_MOUNT)
      return true;
  return false;
}

int
ar_rootfs_prepare (struct ar_rootfs_ctx *ctx, ar_error **err)
{
  unsigned long prop;
  ctx->rootfs_fd = -1;
  if (rootfs_propagation (ctx->spec, &prop, err) < 0)
    return -1;
  /* Every step below would change the host's mounts without a namespace of our own. */
  if (!has_mount_ns (ctx->spec))
    return ar_err (err, 0, "config.json: linux.namespaces: a mount namespace is required");
  /* First: from here on nothing we mount can propagate back to the host. A
   * shared rootfsPropagation is applied after pivot_root, to the container's
   * own root only: it never makes the host's mounts peers of the container's. */
  unsigned long first = (prop & MS_PRIVATE) ? MS_PRIVATE : MS_SLAVE;
  if (mount (NULL, "/", NULL, MS_REC | first, NULL) < 0)
    return ar_err (err, errno, "make / %s", first == MS_PRIVATE ? "rprivate" : "rslave");
  /* A mount of its own, so pivot_root has a mount root and root.readonly can
   * flip just this one. */
  if (mount (ctx->rootfs, ctx->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return ar_err (err, errno, "bind the rootfs `%s` onto itself", ctx->rootfs);
  ctx->rootfs_fd = open (ctx->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (ctx->rootfs_fd < 0)
    return ar_err (err, errno, "open the rootfs `%s`", ctx->rootfs);
  for (size_t i = 0; i < ctx->spec->n_mounts; i++)
    if (ar_mount_one (ctx, i, err) < 0)
      return -1;
  if (ar_devices_setup (ctx, err) < 0)
    return -1;
  if (ctx->dev_ro)
    {
      /* the terminal is bound over /dev/console later: the file must be there first */
      if (ctx->spec->process && ctx->spec->process->terminal)
        {
          cleanup_close int con = ar_mk_in_root (ctx->rootfs_fd, "/dev/console", AR_MK_FILE, err);
          if (con < 0)
            return -1;
        }
      cleanup_close int dev = ar_open_in_root (ctx->rootfs_fd, "/dev", O_PATH | O_DIRECTORY, err);
      struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
      if (dev < 0)
        return -1;
      if (mount_setattr (dev, "", AT_EMPTY_PATH, &a, sizeof a) < 0)
        return ar_err (err, errno, "mounts: make /dev read-only");
    }
  return 0;
}

static int
enter_root (struct ar_rootfs_ctx *ctx, ar_error **err)
{
  if (fchdir (ctx->rootfs_fd) < 0)
    return ar_err (err, errno, "chdir to the rootfs `%s`", ctx->rootfs);
  if (ctx->no_pivot)
    {
      /* Weaker than pivot_root (a process with CAP_SYS_CHROOT can leave a
       * chroot): only when asked for, e.g. on a ramfs root. */
      if (ar_rootfs_detach_others (ctx->rootfs, err) < 0)
        return -1;
      if (mount (".", "/", NULL, MS_MOVE, NULL) < 0)
        return ar_err (err, errno, "move the rootfs `%s` onto /", ctx->rootfs);
      if (chroot (".") < 0)
        return ar_err (err, errno, "chroot to the rootfs `%s`", ctx->rootfs);
    }
  else
    {
      /* pivot_root(".", "."): the old root ends up stacked on the new one and
       * is detached right away, so no directory for it is needed. It is
       * already rslave (prepare), so the detach does not reach the host. */
      if (syscall (SYS_pivot_root, ".", ".") < 0)
        return ar_err (err, errno, "pivot_root to `%s`", ctx->rootfs);
      if (umount2 (".", MNT_DETACH) < 0)
        return ar_err (err, errno, "detach the old root");
    }
  if (chdir ("/") < 0)
    return ar_err (err, errno, "chdir to the new /");
  close (ctx->rootfs_fd);
  ctx->rootfs_fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (ctx->rootfs_fd < 0)
    return ar_err (err, errno, "open the new /");
  return 0;
}

int
ar_rootfs_pivot (struct ar_rootfs_ctx *ctx, ar_error **err)
{
  unsigned long prop;
  if (rootfs_propagation (ctx->spec, &prop, err) < 0 || enter_root (ctx, err) < 0)
    return -1;
  if (ar_masks_apply (ctx->rootfs_fd, ctx->spec->linux_, err) < 0)
    return -1;
  if (ctx->spec->root && ctx->spec->root->readonly)
    {
      /* Only set ro: flags the kernel locked in a user namespace stay as they are. */
      struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
      if (mount_setattr (ctx->rootfs_fd, "", AT_EMPTY_PATH, &a, sizeof a) < 0)
        return ar_err (err, errno, "root.readonly: remount / read-only");
    }
  if (prop && mount (NULL, "/", NULL, prop, NULL) < 0)
    return ar_err (err, errno, "linux.rootfsPropagation: set `%s` on /", ctx->spec->linux_->rootfs_propagation);
  return 0;
}
