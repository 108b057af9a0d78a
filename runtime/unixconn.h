/* Chosen Unix sockets: connect(2) under a supervisor.
 *
 * Seccomp cannot read the address connect(2) points at, and Landlock does
 * not govern connecting to pathname sockets, so with the annotation
 * AR_UNIXCONN_ANNOTATION every connect(2) of the container's processes is a
 * seccomp user notification, answered by a supervisor process that lives
 * in the container (its mount, pid and network namespaces, its root and
 * Landlock domain) but outside every seccomp filter. The annotation is a
 * JSON array of paths inside the container, the only pathname sockets that
 * may be connected:
 *     "run.agentrun.unix-connect": "[\"/run/user/1000/ssh-agent.sock\"]"
 *
 * The supervisor never answers CONTINUE (the kernel would read the address
 * and the fd again, after a racing thread could have changed them): it
 * copies the address once, takes the caller's socket with pidfd_getfd and
 * connects that same open file itself, answering with the result. A
 * pathname is opened O_PATH as the caller would resolve it (its cwd, the
 * container's root, no magic links) and connected through /proc/self/fd/N
 * only when the inode is one of the allowed sockets; else EACCES. Other
 * families (TCP, UDP, abstract Unix names, which live in the container's
 * own network namespace) are connected as asked. If the supervisor dies,
 * connect(2) fails with ENOSYS: never an unchecked connect. */
#ifndef AR_UNIXCONN_H
#define AR_UNIXCONN_H

#include "error.h"
#include "model.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define AR_UNIXCONN_ANNOTATION "run.agentrun.unix-connect"

/* Upper bound of allowed sockets, and of connects served at once on
 * blocking stream sockets (each in its own thread: one stalled listener
 * must not stall the others). */
#define AR_UNIXCONN_MAX_ALLOW 64
#define AR_UNIXCONN_MAX_BLOCKING 64

/* The annotation's value, or NULL. */
const char *ar_unixconn_annotation (const struct ar_kv *annotations, size_t n);

/* Check the annotation's text without touching the system (create, before
 * anything is made): a JSON array of absolute paths, and no
 * linux.seccomp.listenerPath (the supervisor would be under that filter). */
int ar_unixconn_validate (const struct ar_spec *spec, ar_error **err);

/* In the container, after pivot_root and Landlock, while the capabilities
 * are still held, before process.user is taken: start the supervisor (as
 * `user`, with CAP_SYS_PTRACE alone in the user namespace, non-dumpable,
 * reparented to the pid namespace's init) and load the connect filter into
 * the calling process. No-op without the annotation. report >= 0 (the
 * init's exec.fifo, read by `start` until EOF): the supervisor keeps it
 * until it is ready and writes AR_START_REPORT_HELPER and its failure
 * there (sync.h), and this returns without waiting for it; -1: wait here
 * for its word. */
int ar_unixconn_start (const struct ar_kv *annotations, size_t n, const struct ar_user *user, int report,
                       ar_error **err);

/* unixconn_serve.c: the supervisor's loop (does not return). */
struct ar_unixconn_allow {
  dev_t dev;
  ino_t ino;
};
__attribute__ ((noreturn)) void ar_unixconn_serve (int listener, const struct ar_unixconn_allow *allow, size_t n);

#endif
