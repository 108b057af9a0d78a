/* process.terminal: a pty opened from the container's devpts, its master
 * handed to --console-socket (SCM_RIGHTS, as runc does) or relayed by the
 * runtime for a foreground run/exec. Also the fd-passing helpers. */
#ifndef AR_TERMINAL_H
#define AR_TERMINAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "error.h"
#include "model.h"

/* Send one fd (-1: none) with a payload over a unix socket. */
int ar_send_fd (int sock, int fd, const void *data, size_t len, ar_error **err);
/* Receive a message; *fd gets the fd it carried or -1. Returns its length (0 on EOF). */
ssize_t ar_recv_fd (int sock, int *fd, void *data, size_t cap, ar_error **err);
/* The same with up to AR_FDS_MAX fds in one message (one sendmsg where
 * several would each cost a wake-up of the receiver). */
#define AR_FDS_MAX 16 /* the handover (7), or a cgroup file per v1 hierarchy and cgroup2 */
int ar_send_fds (int sock, const int *fds, size_t n_fds, const void *data, size_t len, ar_error **err);
/* *n_fds gets how many it carried, in fds (at most cap_fds; more are closed). */
ssize_t ar_recv_fds (int sock, int *fds, size_t cap_fds, size_t *n_fds, void *data, size_t cap, ar_error **err);

/* Open /dev/ptmx under the current root; the slave comes from TIOCGPTPEER,
 * so no path is looked up twice. */
int ar_pty_open (int *master, int *slave, ar_error **err);
/* In the container's root: bind the pty of master over /dev/console (made
 * as an empty file when missing), as the runtime-spec asks when
 * process.terminal is set. */
int ar_pty_bind_console (int master, ar_error **err);
/* The process's uid owns its pty (it may then chmod it, as mesg does). */
int ar_pty_own (int slave, uid_t uid, ar_error **err);
int ar_pty_set_size (int fd, const struct ar_console_size *sz, ar_error **err);
/* Make slave the controlling terminal (the caller is a session leader) and stdio. */
int ar_pty_make_stdio (int slave, ar_error **err);
/* Tell the process on the pty its input ended: the VEOF character (^D) as
 * the terminal is set now; twice when a partial line is pending, since the
 * first one only ends that line in canonical mode. */
int ar_pty_send_eof (int master, bool line_pending, ar_error **err);
/* Connect to the console socket and send the master. */
int ar_console_socket_send (const char *path, int master, ar_error **err);

#endif
