/* Writes into kernel control files (procfs, cgroupfs): each write(2) is one
 * command the kernel acts on, so the value goes out in a single write and a
 * short write is an error rather than something to retry. */
#ifndef AR_KFILE_H
#define AR_KFILE_H

#include "error.h"
#include "model.h"

#include <stddef.h>
#include <sys/types.h>

/* Open PATH write-only (no symlink at the last component), write DATA once. */
int ar_kfile_write (const char *path, const char *data, size_t len, ar_error **err);

/* The same for /proc/PID/NAME. */
int ar_kfile_write_proc (pid_t pid, const char *name, const char *data, ar_error **err);

/* Write N id-map lines into /proc/PID/NAME (uid_map or gid_map). */
int ar_kfile_write_idmap (pid_t pid, const char *name, const struct ar_idmap *m, size_t n, ar_error **err);

#endif
