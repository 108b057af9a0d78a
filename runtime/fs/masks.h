/* linux.maskedPaths and linux.readonlyPaths, applied after pivot_root through
 * file descriptors: each path is opened once inside the root, and the mount
 * goes onto that fd, so the container cannot swap a path for a symlink between
 * a check and the mount (security invariant 3). */
#ifndef AR_MASKS_H
#define AR_MASKS_H

#include "error.h"
#include "model.h"

/* root_fd: the container's root ("/" after pivot_root). */
int ar_masks_apply (int root_fd, const struct ar_linux *lnx, ar_error **err);

#endif
