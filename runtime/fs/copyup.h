/* tmpcopyup: the runc/crun mount option podman puts on every tmpfs it asks
 * for (--tmpfs, --read-only's /tmp /var/tmp /run, --mount type=tmpfs): the
 * fresh tmpfs starts with a copy of what the image had at the destination.
 *
 * Meant for the detached mount from ar_mount_fresh(), before it is attached:
 *   mfd = ar_mount_fresh ("tmpfs", ...);
 *   if (o->copyup && ar_copyup (target_fd, mfd, what, err) < 0) ...
 *   ar_mount_attach (mfd, target_fd, ...);
 * so nothing in the container can see (or race) a half-filled directory. */
#ifndef AR_COPYUP_H
#define AR_COPYUP_H

#include "error.h"

/* Deepest directory nesting copied; deeper is an error (each level holds two
 * fds open while it is copied). */
#define AR_COPYUP_MAX_DEPTH 64

/* Copy the contents of directory src_fd into directory dst_fd (either may be
 * an O_PATH or mount fd): directories, regular files, symlinks (as symlinks,
 * never followed), device nodes, fifos and sockets, keeping mode (setuid and
 * sticky bits included), owner and times. Hard links become separate files.
 * `what` names the mount in errors ("mounts[3] (/tmp)"). */
int ar_copyup (int src_fd, int dst_fd, const char *what, ar_error **err);

#endif
