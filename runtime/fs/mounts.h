/* One config mount at a time, with the new mount API: a detached mount is
 * built (open_tree for binds, fsopen/fsconfig/fsmount for fresh filesystems),
 * its flags set with mount_setattr, then it is attached with move_mount onto an
 * fd of the destination opened inside the rootfs. No path is looked up twice. */
#ifndef AR_MOUNTS_H
#define AR_MOUNTS_H

#include <stdbool.h>
#include <stdint.h>
#include "error.h"
#include "model.h"
#include "rootfs.h"

struct ar_mount_opts {
  uint64_t attr_set, attr_clr; /* MOUNT_ATTR_* on the mount itself */
  uint64_t rattr_set, rattr_clr; /* "r*" options: the whole subtree (AT_RECURSIVE) */
  uint64_t propagation; /* MS_PRIVATE|MS_SHARED|MS_SLAVE|MS_UNBINDABLE or 0 */
  bool propagation_rec;
  bool bind, rbind, remount;
  bool idmap, ridmap;
  bool copyup; /* tmpcopyup: fill a fresh tmpfs from what was there */
  char **sb_flags;
  size_t n_sb_flags; /* fsconfig flags: sync, dirsync, mand, lazytime... */
  char **data;
  size_t n_data; /* anything else, handed to the filesystem */
};

/* Set o's attributes on a mount fd (detached or attached). */
int ar_mount_setattr (int mnt_fd, const struct ar_mount_opts *o, const char *what, ar_error **err);
/* Attach mnt_fd onto target_fd, then apply o's propagation (if any). */
int ar_mount_attach (int mnt_fd, int target_fd, const struct ar_mount_opts *o, const char *what, ar_error **err);
/* A detached fresh filesystem of type with source and o's data; fsmount'ed with
 * o's attributes. Returns the mount fd or -1 with the kernel's own message. */
int ar_mount_fresh (const char *type, const char *source, const struct ar_mount_opts *o, const char *what,
                    ar_error **err);
/* SELinux context= for the filesystems ar_mount_fresh makes from now on (NULL: none). */
void ar_mount_set_label (const char *label);

/* For a container in a user namespace: the bind sources, opened (open_tree)
 * while we still have the host's access (a source under a 0700 folder of
 * root's is out of the namespace's reach). One per mount, -1 where not a
 * bind or not openable (the init then tries itself and reports). */
int *ar_mounts_open_binds (const struct ar_spec *spec, const char *bundle);
void ar_mounts_close_binds (int *fds, size_t n);

/* Mount config mount number index (spec->mounts[index]) into the rootfs. */
int ar_mount_one (struct ar_rootfs_ctx *ctx, size_t index, ar_error **err);

#endif
