/* /dev inside the container: the default device nodes, linux.devices, the
 * conventional symlinks, and /dev/pts and /dev/shm when the config's mounts do
 * not provide them. Runs before pivot_root: inside a user namespace nodes
 * cannot be made, so the host's are bind-mounted (checked to be the device the
 * config names). */
#ifndef AR_DEVICES_H
#define AR_DEVICES_H

#include "error.h"
#include "rootfs.h"

int ar_devices_setup (struct ar_rootfs_ctx *ctx, ar_error **err);

#endif
