/* Paths the agent can plant. A folder the sandbox can write (the workspace,
 * --out, each --rw) outlives the run: whatever the agent leaves there, a
 * symlink, a renamed folder, a rewritten policy file or git hook, is there
 * when the person runs the same command again or runs their own tools.
 * So every path the sandbox is started with that lies beneath such a folder
 * is resolved without following a symlink there, a mask there must exist,
 * the folders between such a folder and a mask are pinned (bound onto
 * themselves: a rename of a mount point is EBUSY), the files of the host's
 * tools that run what they find (git hooks and config, shell startup files,
 * editor and agent settings) are bound read-only, and the audit log is
 * opened once, outside, by the invoking user. */
#ifndef AR_SBPATHS_H
#define AR_SBPATHS_H

#include <stdbool.h>
#include <sys/types.h>
#include "error.h"
#include "sandbox.h"

/* Remember a path as the person gave it (made absolute from the current
 * folder, not resolved), so that prepare can check how it resolves. */
void ar_sbpaths_note (struct ar_sandbox *sb, const char *opt, const char *given, enum ar_sb_note_kind kind);

/* After every option is in: check each noted path, pin the folders above
 * masks, add the read-only binds of the protected names (creating the
 * placeholders of missing ones) and open the audit log. */
int ar_sbpaths_prepare (struct ar_sandbox *sb, ar_error **err);

/* Does path lie in a folder the command can write (its parent's deepest
 * bind is writable)? */
bool ar_sbpaths_in_writable (const struct ar_agent_opts *o, const char *path);

/* Is path a mount of the container's own (the workspace, out, a bind, a
 * folder pinned onto itself)? */
bool ar_sbpaths_is_bind (const struct ar_agent_opts *o, const char *path);

/* Open the --audit log once, as the invoking user, without following a
 * symlink; the relay and the netproxy get the fd (audit_fd_ref). */
int ar_sbpaths_open_audit (struct ar_sandbox *sb, ar_error **err);

/* The protected names as excludes of the workspace's repository inside (a
 * bundle file bound read-only over .git/info/exclude, the repository's own
 * lines first), so that `git status` and `git add -A` of the command do not
 * take the placeholders for its files. */
int ar_sbpaths_git_ignore (struct ar_sandbox *sb, int bundle_fd, const char *bundle, ar_error **err);

/* The person's own answer (--ask `always`) rewrote path: if it is one of
 * the policy files, the new content is the trusted one. */
int ar_sbpaths_repin (struct ar_sandbox *sb, const char *path, ar_error **err);

/* After the run: remove the placeholders that are still as we made them
 * and that no other run has bound, and warn about a repository the run
 * created. */
void ar_sbpaths_cleanup (struct ar_sandbox *sb);

/* A protected folder's name at the top of a writable folder that a
 * profile's "folders" may name, and the list of them all. */
bool ar_sbpaths_is_folder_name (const char *name);
const char *ar_sbpaths_folder_names (void);

/* Who invoked agentrun: SUDO_UID/SUDO_GID when root through sudo, else the
 * real ids; home is that user's home (caller frees). */
void ar_sbpaths_invoker (uid_t *uid, gid_t *gid, char **home);

/* The ids agentrun-relay and the netproxy server drop to once set up (the
 * relay's own default, netproxy/confine.c): for root, the sudo caller or
 * else nobody. False when not root: they keep the caller's ids. */
bool ar_sbpaths_helper_ids (uid_t *uid, gid_t *gid);

/* Run file-system calls as uid/gid (setfsuid) while root, so that what is
 * created belongs to that user and what that user may not write is refused. */
struct ar_fsid {
  uid_t uid;
  gid_t gid;
  bool on;
};
void ar_fsid_enter (struct ar_fsid *s, uid_t uid, gid_t gid);
void ar_fsid_leave (struct ar_fsid *s);
/* Close the folder c holds, if any. */
void ar_sb_dirfd_close (struct ar_sb_dirfd *c);

/* Resolve the absolute path from / without following a symlink once inside
 * one of the folders (dev, ino) of w[0..n). Returns an O_PATH fd, or -1 with
 * errno: ELOOP for such a symlink (or ".." there). *inside says whether the
 * point reached lies inside one of them (also on failure), *which which. */
struct ar_devino {
  dev_t dev;
  ino_t ino;
};

#endif
