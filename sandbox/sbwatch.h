/* The names the run holds in the folders the command can write (the
 * protected names' read-only binds, a scratch copy over a folder, a mask),
 * watched on the host while the command runs. Each is a mount on the
 * host's entry of that name; when something on the host replaces or
 * removes that entry (git writes .git/config by renaming config.lock over
 * it, an editor saves by a rename), the kernel takes the mount away in
 * every namespace, and the command would find the new file writable. The
 * run is stopped then: it no longer has the confinement it was asked for. */
#ifndef AR_SBWATCH_H
#define AR_SBWATCH_H

#include <stdbool.h>
#include <sys/types.h>
#include "agent.h"
#include "error.h"

struct ar_sb_watched {
  char *path;
  const char *base; /* in path */
  int wd;
};

struct ar_sb_watch {
  int fd; /* inotify, or -1: nothing to watch */
  struct ar_sb_watched *w;
  size_t n;
  char **above; /* the folders watched for their own move or removal */
  size_t n_above;
};

/* An inotify instance for ar_sb_watch_start, or -1 with err. Made early,
 * so that a process that outlives the run (the janitor) can hold a copy:
 * the last close of an instance waits for an RCU grace period (~10 ms). */
int ar_sb_watch_open (ar_error **err);

/* Watch the folders of the held names of o in fd (ar_sb_watch_open's,
 * taken: closed by ar_sb_watch_close, or here on failure); w->fd -1 when
 * there are none. */
int ar_sb_watch_start (struct ar_sb_watch *w, const struct ar_agent_opts *o, int fd, ar_error **err);

/* After input on w->fd: the first held name an event tells of (all of
 * them, when a folder above one moved or events were lost) that is no
 * longer a mount in the container whose / is root (its path, in w), or
 * NULL; -1: every name told counts. NULL too when the container's mounts
 * are gone (the run ended). */
const char *ar_sb_watch_breached (struct ar_sb_watch *w, int root);

void ar_sb_watch_close (struct ar_sb_watch *w);

#endif
