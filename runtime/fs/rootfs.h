/* The container's filesystem: run in the child, inside its new mount
 * namespace (and user namespace), in this order:
 *   ar_rootfs_prepare  propagation, rootfs bind, config mounts in order, devices
 *   (createContainer hooks run here, before pivot_root)
 *   ar_rootfs_pivot    pivot_root (or MS_MOVE+chroot with no_pivot), maskedPaths,
 *                      readonlyPaths, root.readonly, rootfsPropagation
 * Mount destinations are resolved inside the rootfs without following a symlink
 * out of it; masks are applied through file descriptors. */
#ifndef AR_ROOTFS_H
#define AR_ROOTFS_H

#include <stdbool.h>
#include "error.h"
#include "model.h"

struct ar_rootfs_ctx {
  const struct ar_spec *spec;
  const char *rootfs; /* absolute host path of root.path */
  const char *bundle; /* absolute bundle path (relative mount sources) */
  bool no_pivot;
  bool new_userns; /* devices must be bind-mounted, not mknod'ed */
  int rootfs_fd; /* O_PATH fd of the rootfs, set by prepare */
  int *bind_fds; /* ar_mounts_open_binds, or NULL */
  bool dev_ro; /* a read-only /dev tmpfs, made so once /dev is filled */
};

int ar_rootfs_prepare (struct ar_rootfs_ctx *ctx, ar_error **err);
int ar_rootfs_pivot (struct ar_rootfs_ctx *ctx, ar_error **err);

/* rootfs_detach.c: --no-pivot detaches the old root's other mounts. */
int ar_rootfs_detach_others (const char *rootfs, ar_error **err);

#endif
