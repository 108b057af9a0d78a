/* `agentrun sandbox --ask`: the side of the question that reaches the
 * person. The netproxy server in the container's netns connects to a Unix
 * socket in the sandbox's private folder when the agent looks up a name that
 * is not allowed ("ask NAME PORT", netproxy/ask.h); this process asks on its
 * controlling terminal (/dev/tty, never the agent's stdio):
 *     agentrun: allow NAME:443 for this run? [y/N/always]
 * yes starts a relay for the new route and answers "allow RELAY_SOCKET";
 * always also adds NAME:443 to the --save-profile file; anything else, and
 * no terminal at all, answers "deny". */
#ifndef AR_ASKER_H
#define AR_ASKER_H

#include <stdbool.h>
#include <sys/types.h>
#include "error.h"

#define AR_ASKER_MAX_RELAYS 64

struct ar_sandbox;

struct ar_asker {
  int lfd;                                  /* listening socket, -1 when off */
  char *path;
  pid_t relays[AR_ASKER_MAX_RELAYS];        /* one relay per route allowed at run time */
  size_t n_relays;
};

/* The help lines of --ask and --save-profile. */
extern const char ar_asker_opts_help[];

/* Listen on <sb->tmpdir>/ask.sock; sb->prof.ask_socket names it. */
int ar_asker_open (struct ar_asker *a, struct ar_sandbox *sb, ar_error **err);
/* One question from the server (lfd is readable), asked from the loop that
 * also relays the container's terminal (so it waits meanwhile). sfd is a
 * signal fd: a signal while asking answers no and is left for the caller. */
void ar_asker_serve (struct ar_asker *a, struct ar_sandbox *sb, int sfd);
/* Stop the relays, close and remove the socket. */
void ar_asker_close (struct ar_asker *a);

#endif
