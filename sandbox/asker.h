/* `agentrun sandbox --ask`: the side of the question that reaches the
 * person. The netproxy server in the container's netns connects to a Unix
 * socket in the sandbox's private folder when the agent looks up a name that
 * is not allowed ("ask NAME PORT", netproxy/ask.h); this process asks on its
 * controlling terminal (/dev/tty, never the agent's stdio):
 *     agentrun: allow NAME:443 for this run? [y/N/always]
 * yes starts a relay for the new route and answers "allow RELAY_SOCKET";
 * always also adds NAME:443 to the --save-profile file; anything else, and
 * no terminal at all, answers "deny".
 * Every sandbox with a network has an asker, --ask or not: the policy
 * answers first (a deny refuses, a wildcard allow answers "via PORT
 * RELAY_SOCKET", its relay route), and without --ask the rest is refused.
 * Each refusal, and each "blocked NAME PORT" the netproxy sends for a
 * CONNECT target it refused, is said once on stderr. */
#ifndef AR_ASKER_H
#define AR_ASKER_H

#include <stdbool.h>
#include <sys/types.h>
#include "error.h"

#define AR_ASKER_MAX_RELAYS 64
#define AR_ASKER_MAX_TOLD 256 /* refusals remembered and said; more are counted */

struct ar_sandbox;

struct ar_asker {
  int lfd; /* listening socket, -1 when off */
  char *path;
  pid_t relays[AR_ASKER_MAX_RELAYS]; /* one relay per route allowed at run time */
  size_t n_relays;
  char **blocked;
  size_t n_blocked; /* refusals already told */
  size_t n_untold; /* past AR_ASKER_MAX_TOLD */
  bool held_back; /* not drawn over the command's pty: the summary says them */
};

/* The help lines of --ask and --save-profile. */
extern const char ar_asker_opts_help[];

/* Listen on <sb->tmpdir>/ask.sock; sb->prof.ask_socket names it. */
int ar_asker_open (struct ar_asker *a, struct ar_sandbox *sb, ar_error **err);
/* One question from the server (lfd is readable), asked from the loop that
 * also relays the container's terminal (so it waits meanwhile). sfd is a
 * signal fd: a signal while asking answers no and is left for the caller. */
void ar_asker_serve (struct ar_asker *a, struct ar_sandbox *sb, int sfd);
/* The one line at exit: how many names and endpoints were refused, which. */
void ar_asker_summary (const struct ar_asker *a, const struct ar_sandbox *sb);
/* Stop the relays, close and remove the socket. */
void ar_asker_close (struct ar_asker *a);

#endif
