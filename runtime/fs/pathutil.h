/* Paths inside a container's rootfs, resolved by the kernel against a root
 * fd (openat2 RESOLVE_IN_ROOT) so that no symlink, "..", or magic link in the
 * image can lead a lookup or a creation out of the rootfs. */
#ifndef AR_PATHUTIL_H
#define AR_PATHUTIL_H

#include <linux/openat2.h>
#include <stdint.h>
#include <sys/types.h>
#include "error.h"

/* The resolve flags every in-root lookup uses. */
#define AR_RESOLVE_ROOT_FLAGS (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)

/* openat2(2); returns an fd or -1 with errno set. O_CLOEXEC is always added. */
int ar_openat2 (int dirfd, const char *path, int flags, mode_t mode, uint64_t resolve);

/* Open path (absolute or relative, always taken inside root_fd) with flags.
 * Returns an fd or -1 with err naming the path. */
int ar_open_in_root (int root_fd, const char *path, int flags, ar_error **err);

enum ar_mk_kind { AR_MK_DIR, AR_MK_FILE };

/* Create path inside root_fd (each missing directory with mode 0755; the last
 * component a directory or an empty 0644 file as asked), following symlinks
 * only inside the root, dangling ones included. Returns an O_PATH fd of the
 * result, or -1 with err. An existing object of either kind is accepted;
 * the mount onto it reports a type mismatch. */
int ar_mk_in_root (int root_fd, const char *path, enum ar_mk_kind kind, ar_error **err);

/* An O_PATH|O_DIRECTORY fd of the parent of path inside root_fd (created as
 * needed) and the last component's name in *base (heap). */
int ar_mk_parent_in_root (int root_fd, const char *path, char **base, ar_error **err);

/* A mountinfo field in place: space, tab, newline and backslash come as \ooo. */
void ar_mountinfo_unescape (char *s);

#endif
