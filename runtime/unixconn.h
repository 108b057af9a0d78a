/* Chosen Unix sockets: connect(2) and sendto(2) under a supervisor.
 *
 * Seccomp cannot read the address connect(2) points at, and Landlock does
 * not govern connecting to pathname sockets, so with the annotation
 * AR_UNIXCONN_ANNOTATION every connect(2) of the container's processes, and
 * every sendto(2) that names an address, is a seccomp user notification,
 * answered by a supervisor process outside every seccomp filter. The
 * annotation is a JSON array of paths inside the container, the pathname
 * sockets that may be reached besides the container's own:
 *     "run.agentrun.unixconn": "[\"/run/user/1000/ssh-agent.sock\"]"
 * A socket bound in the container's own network namespace (one it made,
 * not joined) was made inside and may be reached too.
 *
 * The supervisor lives outside the container's pid namespace (forked by
 * the runtime before the container's process), so nothing inside can
 * signal, ptrace or outlive-replace it; it joins the container's user
 * namespace and root and runs as the process's user with CAP_SYS_PTRACE
 * alone. It never answers CONTINUE (the kernel would read the address and
 * the fd again, after a racing thread could have changed them): it copies
 * the address (and a sendto's data) once, takes the caller's socket with
 * pidfd_getfd and performs the call on that same open file, answering with
 * the result. A pathname is opened O_PATH as the caller would resolve it
 * and reached through the supervisor's /proc/self/fd/N only when the inode
 * is an allowed socket; else EACCES. If the supervisor dies, connect(2)
 * fails with ENOSYS: never an unchecked connect. */
#ifndef AR_UNIXCONN_H
#define AR_UNIXCONN_H

#include "error.h"
#include "model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#define AR_UNIXCONN_ANNOTATION "run.agentrun.unixconn"
#define AR_UNIXCONN_OLD_ANNOTATION "run.agentrun.unix-connect" /* refused, never read */

/* A cap on the container's inet sockets (TCP, UDP, v4 and v6) alive at
 * once, "N" (1 to AR_SOCKCAP_MAX): their buffers count against the host's
 * net.ipv4.tcp_mem, one pool for every network namespace, whatever its
 * own tcp_rmem and tcp_wmem. Needs AR_UNIXCONN_ANNOTATION (the same
 * supervisor serves it): socket(2) with AF_INET or AF_INET6 is a user
 * notification too, and the supervisor makes the socket itself, in the
 * container's network namespace, and installs it in the caller
 * (SECCOMP_IOCTL_NOTIF_ADDFD), or answers ENOBUFS at the cap; accept(2)
 * and accept4(2) likewise, never refused (unixconn_sockets.c says what is
 * counted, and the bound it gives: twice the cap). */
#define AR_SOCKCAP_ANNOTATION "run.agentrun.max-sockets"
#define AR_SOCKCAP_MAX 65536

/* Upper bound of allowed sockets, and of connects served at once on
 * blocking stream sockets (each in its own thread: one stalled listener
 * must not stall the others). */
#define AR_UNIXCONN_MAX_ALLOW 64
#define AR_UNIXCONN_MAX_BLOCKING 64

struct ar_unixconn_allow {
  dev_t dev;
  ino_t ino;
};

/* The annotation's value, or NULL. */
const char *ar_unixconn_annotation (const struct ar_kv *annotations, size_t n);

/* The annotation's paths; with allow, each one's inode (it must be a
 * socket, seen from the calling process's root). */
int ar_unixconn_parse (const char *text, struct ar_unixconn_allow *allow, size_t *n, ar_error **err);

/* Check the annotation's text without touching the system (create, before
 * anything is made): a JSON array of absolute paths, and no
 * linux.seccomp.listenerPath (the supervisor would be under that filter). */
int ar_unixconn_validate (const struct ar_spec *spec, ar_error **err);

/* The cap in the annotation, 0 without it; -1 with a bad value. */
int ar_unixconn_max_sockets (const struct ar_kv *annotations, size_t n, long *max, ar_error **err);

/* Does the container make a network namespace of its own (whose bound
 * sockets were all made inside)? */
bool ar_unixconn_own_netns (const struct ar_spec *spec);

/* On the host, before the container's process is cloned: the socket pair
 * between the supervisor and the container; *sock is the end the
 * container's process inherits, *mine the supervisor's (both -1 without
 * the annotation). */
int ar_unixconn_pair (const struct ar_spec *spec, int *sock, int *mine, ar_error **err);

/* Fork the supervisor on *mine (taken: -1 after) once the container's
 * process is cloned, while it makes its mounts: the fork is off the start's
 * path (the supervisor waits for the handover, non-dumpable, in no session,
 * its first step closing every fd but its own). `ps` on the host shows it
 * as "ar-unixconn ID". It runs as `user` once it has the listener, and
 * exits when every process under the filter is gone, or at EOF before the
 * handover. cgroup_fd >= 0: a cgroup2 directory to start it in
 * (CLONE_INTO_CGROUP); *in_cgroup says whether it was. */
int ar_unixconn_spawn (const char *id, const struct ar_spec *spec, const struct ar_user *user, int cgroup_fd, int *mine,
                       bool *in_cgroup, ar_error **err);

/* Both at once, where nothing runs in parallel with the fork (exec). */
int ar_unixconn_prepare (const char *id, const struct ar_spec *spec, const struct ar_user *user, int cgroup_fd,
                         int *sock, bool *in_cgroup, ar_error **err);

/* On the host, once the container's cgroup exists and the supervisor is
 * forked, while sock (the container's end) is still ours: hand the
 * supervisor the files through which it joins that cgroup by itself
 * (record, as state.json stores it; NULL: there is none, or the supervisor
 * was born in it), then the word that no more come. It joins as each
 * arrives, single-threaded and before it makes any socket, so the sockets
 * it makes and accepts for the container are charged to the container's
 * memory cgroup and carry its cgroup; it does not serve until it has the
 * word, and a file it cannot join fails it (closed). No-op with sock < 0. */
int ar_unixconn_cgroup (int sock, const char *record, ar_error **err);

/* In the container, after pivot_root and Landlock, while the capabilities
 * are still held, before process.user is taken: load the connect filter
 * into the calling process and hand the supervisor (over sock, from
 * ar_unixconn_pair) its listener, the root, the user namespace, stderr
 * and, with own_netns, a sock_diag socket of this network namespace;
 * with AR_SOCKCAP_ANNOTATION, the network namespace too.
 * No-op without the annotation. report >= 0 (the init's exec.fifo, read by
 * `start` until EOF): the supervisor keeps it until it is ready and writes
 * AR_START_REPORT_HELPER and its failure there (sync.h), and this returns
 * without waiting for it; -1: wait here for its word. filter: the connect
 * filter from ar_unixconn_build, or NULL to build it here. */
struct ar_seccomp_prog;
struct ar_unixconn_handover;
/* ar_unixconn_start in two steps, the first before the go: what the
 * supervisor gets opened and the thread that hands it over started (*h:
 * NULL without the annotation); the second loads the filter and hands
 * over as ar_unixconn_start does, and frees h. */
int ar_unixconn_begin (const struct ar_kv *annotations, size_t n, int sock, bool own_netns,
                       struct ar_unixconn_handover **h, ar_error **err);
int ar_unixconn_finish (struct ar_unixconn_handover *h, struct ar_seccomp_prog *filter, int report, ar_error **err);
/* ar_unixconn_finish in two steps: the filter loaded and the thread told
 * to hand over (-1: failed, h freed), then the handover waited for and
 * told (h freed). Between them this thread may start the command, whose
 * process inherits the filter, while the thread hands over. */
int ar_unixconn_release (struct ar_unixconn_handover *h, struct ar_seccomp_prog *filter, int report, ar_error **err);
int ar_unixconn_join (struct ar_unixconn_handover *h, ar_error **err);
int ar_unixconn_start (const struct ar_kv *annotations, size_t n, struct ar_seccomp_prog *filter, int sock,
                       bool own_netns, int report, ar_error **err);
/* The connect filter ar_unixconn_start loads (*filter; NULL without the
 * annotation), built beforehand, before the init's clone (which inherits
 * it), through the compiled-filter cache of state_root (NULL: none), off
 * the path from start's go to the command's exec. A start given none
 * builds it itself. */
int ar_unixconn_build (const struct ar_kv *annotations, size_t n, const char *state_root,
                       struct ar_seccomp_prog **filter, ar_error **err);

/* unixconn_serve.c: the supervisor's loop (does not return). */
struct ar_unixconn_ctx {
  int listener;
  int proc; /* the host's /proc (O_PATH): notifications name host pids */
  int diag; /* NETLINK_SOCK_DIAG in the container's own netns, or -1 */
  bool abstract_refused; /* no own netns, and Landlock scopes abstract sockets */
  long max_sockets; /* AR_SOCKCAP_ANNOTATION's cap, or 0 */
  const struct ar_unixconn_allow *allow;
  size_t n_allow;
};
__attribute__ ((noreturn)) void ar_unixconn_serve (const struct ar_unixconn_ctx *ctx);

/* unixconn_msg.c: one message of sendto, sendmsg or sendmmsg, copied from
 * the caller (its SCM_RIGHTS fds taken and renumbered ours). A sendto's or
 * sendmsg's data beyond AR_UNIXCONN_SEND_MAX is refused for a datagram
 * (EMSGSIZE) and cut for a stream (a short write). */
#define AR_UNIXCONN_SEND_MAX (4U << 20)
struct ar_unixconn_msg {
  struct sockaddr_storage addr;
  socklen_t addr_len; /* 0: no address */
  int path_fd; /* O_PATH of the checked socket, or -1 */
  struct iovec data;
  void *control;
  size_t control_len;
  int *fds; /* ours, closed with the message */
  size_t n_fds;
  uint64_t len_at; /* sendmmsg: the caller's msg_len, else 0 */
};
int ar_unixconn_read_mem (pid_t tid, uint64_t addr, void *buf, size_t len);
int ar_unixconn_read_data (pid_t tid, const struct iovec *remote, size_t n, int sock_type, struct ar_unixconn_msg *m);
/* The struct msghdr at `at`; -errno. */
int ar_unixconn_read_msghdr (pid_t tid, int pidfd, uint64_t at, int sock_type, struct ar_unixconn_msg *m);
void ar_unixconn_msg_clear (struct ar_unixconn_msg *m);

/* unixconn_diag.c: is (dev, ino) the file of a Unix socket bound in the
 * network namespace of the sock_diag socket diag? */
bool ar_unixconn_bound_inside (int diag, dev_t dev, ino_t ino);

/* unixconn_sockets.c: the socket cap. Before serving (in the container's
 * network namespace): the count's epoll and sock_diag socket; proc is the
 * host's /proc (our fdinfo). -errno. */
int ar_unixconn_sockets_init (long max, int proc);
/* socket(domain, type, protocol) of notification id: made here and
 * installed in the caller (answered), else the errno to answer (0: none,
 * the caller is gone). */
int ar_unixconn_socket (int listener, uint64_t id, int domain, int type, int protocol);
/* An inet socket made here (an accepted one) is counted from now on, as
 * long as it lives: 0, or -ENOBUFS. Other families, or no cap: 0. */
int ar_unixconn_sockets_track (int fd);
/* Before a connect (or a send that connects: MSG_FASTOPEN) on fd: 1 when
 * it makes a new TCP connection, counted (call
 * ar_unixconn_sockets_connected once it is done); 0 when it makes none;
 * -ENOBUFS at the cap. */
int ar_unixconn_sockets_connect (int fd);
void ar_unixconn_sockets_connected (void);
/* Our fd becomes the caller's (O_CLOEXEC with cloexec), and the answer to
 * notification id: 0, or the errno to answer. */
int ar_unixconn_install (int listener, uint64_t id, int fd, bool cloexec);

#endif
