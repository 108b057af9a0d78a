/* Paths the agent can plant: see sbpaths.h. */
#include "config.h"
#include "sbpaths.h"
#include "agent.h"
#include "fault.h"
#include "log.h"
#include "pathname.h"
#include "pathutil.h"
#include "strio.h"
#include "trust.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINKS 40
/* Repositories below a writable folder's root: how deep the walk looks for
 * a .git (folders below the root), and how many folders it looks at most;
 * submodules' git folders (.git/modules/NAME, their own modules/...): how
 * deep, and how many git folders (those and nested ones) in all. Beyond, none is protected (the docs say so):
 * every start pays for the walk (256 folders: about 0.7 ms here). */
#define NESTED_DEPTH 3
#define NESTED_MAX_DIRS 256
#define MODULES_DEPTH 3
#define MODULES_MAX 64

/* Names under each writable folder that the person's own tools run or
 * obey. dir: a folder. A missing one below another (.git/hooks) is held by
 * an empty folder; one at the top by an empty file, as sandbox-runtime
 * holds a missing path (nothing can be made below a file either; the tool
 * finds no settings there), where a folder would cost a new block at every
 * start, allocated and freed again (a discard each, on a disk mounted so),
 * unless the run's agent reads below it (held_by_folder). present: held
 * only when it exists (a tool that asks before it obeys a new one: mise's
 * trust, given to a file by its path, outlives a change of it). */
static const struct {
  const char *name;
  bool dir;
  bool present;
} protected_names[] = {
  { ".git/config", false, false },
  { ".git/hooks", true, false },
  { ".gitmodules", false, false },
  { ".gitconfig", false, false },
  { ".bashrc", false, false },
  { ".bash_profile", false, false },
  { ".profile", false, false },
  { ".bash_logout", false, false },
  { ".zshrc", false, false },
  { ".zprofile", false, false },
  { ".zshenv", false, false },
  { ".envrc", false, false },
  { ".vscode", true, false },
  { ".idea", true, false },
  { ".mcp.json", false, false },
  { ".ripgreprc", false, false },
  { ".claude/commands", true, false },
  { ".claude/agents", true, false },
  { ".claude/hooks", true, false },
  { ".claude/settings.json", false, false },
  { ".claude/settings.local.json", false, false },
  { ".claude/skills", true, false },
  /* the other presets' agents: project settings with MCP servers and
   * commands (Gemini CLI, Codex, in a folder the person trusted), plugins
   * OpenCode loads and runs. OpenCode writes its .opencode/.gitignore and
   * plugin package at start: where it is the run's agent, a scratch copy */
  { ".gemini", true, false },
  { ".codex", true, false },
  { ".opencode", true, false },
  { "opencode.json", false, false },
  { "opencode.jsonc", false, false },
  /* editors that start the language servers or tasks a project file
   * names (Helix's languages.toml, Zed's settings and tasks, Cursor's MCP
   * servers) */
  { ".helix", true, false },
  { ".zed", true, false },
  { ".cursor", true, false },
  { "mise.toml", false, true },
  { ".mise.toml", false, true },
  { "mise.local.toml", false, true },
  { ".mise.local.toml", false, true },
  { ".mise", true, true },
};

/* Protected folders held on the host as the others, and covered inside by a
 * tmpfs of the run's own holding a copy of them, which the command may
 * write: an agent that writes its project folder at start (OpenCode's
 * .gitignore and plugin package in .opencode/) and stops when it cannot. */
static const char *const scratch_names[] = { ".opencode" };

/* The top-level folder that protected name i is or lies in, as the length
 * of its name (a missing .claude holds all the .claude/ names at once);
 * 0 for a file, and for .git's names (a missing .git is held, if at all,
 * by a folder, which git looks past to the repository above). */
static size_t
top_folder (size_t i)
{
  const char *name = protected_names[i].name, *slash = strchr (name, '/');
  if (slash)
    return strncmp (name, ".git/", 5) == 0 ? 0 : (size_t) (slash - name);
  return protected_names[i].dir && !protected_names[i].present ? strlen (name) : 0;
}

bool
ar_sbpaths_is_folder_name (const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE (protected_names); i++)
    {
      size_t n = top_folder (i);
      if (n && strlen (name) == n && strncmp (protected_names[i].name, name, n) == 0)
        return true;
    }
  return false;
}

const char *
ar_sbpaths_folder_names (void)
{
  static char list[256];
  if (list[0])
    return list;
  for (size_t i = 0; i < ARRAY_SIZE (protected_names); i++)
    {
      /* the .claude/ names follow each other: their folder said once */
      size_t n = top_folder (i);
      if (n && !(i > 0 && top_folder (i - 1) == n && !strncmp (protected_names[i - 1].name, protected_names[i].name, n)))
        snprintf (list + strlen (list), sizeof list - strlen (list), "%s%.*s", list[0] ? ", " : "", (int) n,
                  protected_names[i].name);
    }
  return list;
}

/* Is name the folder of protected names below it, held whole when missing
 * (.claude)? */
static bool
held_whole (const char *name)
{
  size_t n = strlen (name);
  for (size_t i = 0; i < ARRAY_SIZE (protected_names); i++)
    if (top_folder (i) == n && protected_names[i].name[n] == '/' && !strncmp (protected_names[i].name, name, n))
      return true;
  return false;
}

/* Is the missing top-level folder name held by a folder: named by the
 * run's "folders" (its agent reads its project settings below it, and an
 * error reading there is the agent's error, not "no settings")? */
static bool
held_by_folder (const struct ar_sandbox *sb, const char *name)
{
  for (size_t k = 0; k < sb->n_folders; k++)
    if (strcmp (sb->folders[k], name) == 0)
      return true;
  return false;
}

/* The shape of protected name i's placeholder: a folder or a file. */
static bool
placed_dir (const struct ar_sandbox *sb, size_t i)
{
  const char *name = protected_names[i].name;
  return protected_names[i].dir && (strchr (name, '/') || held_by_folder (sb, name));
}

static bool
is_scratch_name (const char *name)
{
  for (size_t i = 0; i < ARRAY_SIZE (scratch_names); i++)
    if (strcmp (scratch_names[i], name) == 0)
      return true;
  return false;
}

/* ---- who, and as whom ---- */

void
ar_sbpaths_invoker (uid_t *uid, gid_t *gid, char **home)
{
  *uid = getuid ();
  *gid = getgid ();
  const char *su = getenv ("SUDO_UID"), *sg = getenv ("SUDO_GID");
  if (*uid == 0 && su && sg)
    {
      char *e1, *e2;
      unsigned long u = strtoul (su, &e1, 10), g = strtoul (sg, &e2, 10);
      if (*su && *sg && !*e1 && !*e2 && u < 0xffffffffUL && g < 0xffffffffUL)
        *uid = (uid_t) u, *gid = (gid_t) g;
    }
  if (!home)
    return;
  const char *h = getenv ("HOME");
  /* through sudo HOME is the target's; the invoker's own home is in passwd */
  if (*uid == getuid () && h && h[0] == '/')
    {
      *home = xstrdup (h);
      return;
    }
  struct passwd *pw = getpwuid (*uid);
  *home = pw && pw->pw_dir ? xstrdup (pw->pw_dir) : NULL;
}

bool
ar_sbpaths_helper_ids (uid_t *uid, gid_t *gid)
{
  if (geteuid () != 0)
    return false;
  ar_sbpaths_invoker (uid, gid, NULL);
  if (*uid == 0 || *gid == 0)
    *uid = *gid = 65534;
  return true;
}

void
ar_fsid_enter (struct ar_fsid *s, uid_t uid, gid_t gid)
{
  *s = (struct ar_fsid){ .on = geteuid () == 0 && (uid != 0 || gid != 0) };
  if (!s->on)
    return;
  s->gid = (gid_t) setfsgid (gid);
  s->uid = (uid_t) setfsuid (uid);
}

void
ar_fsid_leave (struct ar_fsid *s)
{
  if (!s->on)
    return;
  setfsuid (s->uid);
  setfsgid (s->gid);
  s->on = false;
}

/* ---- notes ---- */

void
ar_sbpaths_note (struct ar_sandbox *sb, const char *opt, const char *given, enum ar_sb_note_kind kind)
{
  char *abs = ar_path_absolute (given);
  if (!abs)
    return; /* the option itself fails on the same missing cwd */
  sb->notes = xrealloc (sb->notes, (sb->n_notes + 1) * sizeof *sb->notes);
  sb->notes[sb->n_notes++] = (struct ar_sb_note){ .opt = xstrdup (opt), .path = abs, .kind = kind };
}

/* ---- the walk ---- */

static bool
is_one_of (const struct ar_devino *w, size_t n, int fd, size_t *which)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    return false;
  for (size_t i = 0; i < n; i++)
    if (w[i].dev == st.st_dev && w[i].ino == st.st_ino)
      {
        *which = i;
        return true;
      }
  return false;
}

/* One step: the next component of *rest (consumed), "" at the end. */
static char *
next_component (char **rest)
{
  while (**rest == '/')
    (*rest)++;
  char *c = *rest, *slash = strchr (c, '/');
  *rest = slash ? (*slash = '\0', slash + 1) : c + strlen (c);
  return c;
}

static int
ar_sbpaths_walk (const struct ar_devino *w, size_t n, const char *path, bool *inside, size_t *which)
{
  cleanup_free char *buf = xstrdup (path);
  char *rest = buf;
  int links = 0;
  int fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  *inside = false;
  if (fd < 0)
    return -1;
  for (;;)
    {
      char *c = next_component (&rest);
      if (!*c)
        return fd;
      if (strcmp (c, ".") == 0)
        continue;
      struct stat st;
      int e = 0;
      if (strcmp (c, "..") == 0 && *inside)
        e = ELOOP;
      else if (fstatat (fd, c, &st, AT_SYMLINK_NOFOLLOW) < 0)
        e = errno;
      else if (S_ISLNK (st.st_mode) && (*inside || ++links > MAX_LINKS))
        e = ELOOP;
      if (e)
        {
          close (fd);
          errno = e;
          return -1;
        }
      if (S_ISLNK (st.st_mode) && strcmp (c, ".."))
        {
          /* a symlink of the host outside every writable folder: followed */
          char t[PATH_MAX];
          ssize_t len = readlinkat (fd, c, t, sizeof t - 1);
          if (len < 0)
            return e = errno, close (fd), errno = e, -1;
          t[len] = '\0';
          char *joined = xasprintf ("%s/%s", t, rest);
          free (buf);
          buf = rest = joined;
          if (t[0] == '/')
            {
              close (fd);
              if ((fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                return -1;
            }
          continue;
        }
      int nfd = openat (fd, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      e = errno;
      close (fd);
      if (nfd < 0)
        return errno = e, -1;
      fd = nfd;
      if (!*inside)
        *inside = is_one_of (w, n, fd, which);
    }
}

/* ---- the writable folders ---- */

struct wset {
  struct ar_devino *id;
  const char **path; /* resolved, for messages and the protected names */
  size_t n;
};

static void
wset_add (struct wset *w, const char *path)
{
  struct stat st;
  if (!path || stat (path, &st) < 0)
    return;
  w->id = xrealloc (w->id, (w->n + 1) * sizeof *w->id);
  w->path = xrealloc (w->path, (w->n + 1) * sizeof *w->path);
  w->id[w->n] = (struct ar_devino){ st.st_dev, st.st_ino };
  w->path[w->n++] = path;
}

static void
wset_build (const struct ar_agent_opts *o, struct wset *w)
{
  memset (w, 0, sizeof *w);
  if (!o->workspace_ro)
    wset_add (w, o->workspace);
  wset_add (w, o->out);
  /* a preset's state (a bind with a src) comes from agentrun's own state
   * folder, which only the next sandbox run reads: not the host's */
  for (size_t i = 0; i < o->n_binds; i++)
    if (o->binds[i].writable && !o->binds[i].src)
      wset_add (w, o->binds[i].path);
}

static void
wset_free (struct wset *w)
{
  free (w->id);
  free (w->path);
}

/* Is path (absolute) beneath a writable folder, by how it resolves? */
static bool
in_writable (const struct wset *w, const char *path, size_t *which)
{
  bool inside;
  int fd = ar_sbpaths_walk (w->id, w->n, path, &inside, which);
  if (fd >= 0)
    close (fd);
  return inside;
}

/* ---- checks of what was given ---- */

static int
fd_path (int fd, char *out, size_t cap)
{
  char p[64];
  snprintf (p, sizeof p, "/proc/self/fd/%d", fd);
  ssize_t n = readlink (p, out, cap - 1);
  if (n < 0)
    return -1;
  out[n] = '\0';
  return 0;
}

bool
ar_sbpaths_is_bind (const struct ar_agent_opts *o, const char *path)
{
  if (strcmp (path, o->workspace) == 0 || (o->out && strcmp (path, o->out) == 0))
    return true; /* (a read-only workspace is a bind too) */
  for (size_t i = 0; i < o->n_binds; i++)
    if (strcmp (o->binds[i].path, path) == 0)
      return true;
  return false;
}

static bool
bound_readonly (const struct ar_agent_opts *o, const char *path)
{
  for (size_t i = 0; i < o->n_binds; i++)
    if (strcmp (o->binds[i].path, path) == 0)
      return !o->binds[i].writable;
  return false;
}

/* The writability of the deepest bind holding path. */
static bool
enclosing_writable (const struct ar_agent_opts *o, const char *path)
{
  size_t best = 0;
  bool wr = false;
  const char *fixed[] = { o->workspace, o->out };
  for (size_t i = 0; i < 2; i++)
    if (fixed[i] && ar_path_under (path, fixed[i]) && strlen (fixed[i]) >= best)
      best = strlen (fixed[i]), wr = i == 1 || !o->workspace_ro;
  for (size_t i = 0; i < o->n_binds; i++)
    if (ar_path_under (path, o->binds[i].path) && strlen (o->binds[i].path) >= best)
      best = strlen (o->binds[i].path), wr = o->binds[i].writable;
  return wr;
}

bool
ar_sbpaths_in_writable (const struct ar_agent_opts *o, const char *path)
{
  cleanup_free char *parent = xstrdup (path);
  char *slash = strrchr (parent, '/');
  if (!slash || slash == parent)
    return false;
  *slash = '\0';
  return enclosing_writable (o, parent);
}

static void
add_bind_of (struct ar_agent_opts *o, const char *path, bool writable)
{
  o->binds = xrealloc (o->binds, (o->n_binds + 1) * sizeof *o->binds);
  o->binds[o->n_binds++] = (struct ar_agent_bind){ .path = xstrdup (path), .writable = writable };
}

/* Bind every folder between the writable folder at root and path's parent
 * onto itself: a mount point cannot be renamed, so the next run finds the
 * mask where it was. */
static int
pin_between (struct ar_agent_opts *o, const char *root, const char *path, ar_error **err)
{
  if (!ar_path_under (path, root))
    return ar_err (err, 0,
                   "%s: reached through the writable folder %s by another path; cannot pin the "
                   "folders above it (name it beneath %s)",
                   path, root, root);
  if (!path[strlen (root)])
    return 0;
  cleanup_free char *p = xstrdup (path);
  for (char *s = p + strlen (root) + 1; (s = strchr (s, '/')); s++)
    {
      *s = '\0';
      if (!ar_sbpaths_is_bind (o, p))
        add_bind_of (o, p, enclosing_writable (o, p));
      *s = '/';
    }
  return 0;
}

/* The credential masks below a home the sandbox can write (the workspace
 * is the home, with --allow-home; --home DIR): a mask on .config/gh stops
 * a rename of gh (a mount point), not of .config, which would move the
 * secret out from under the mask for the next run. The folders above each
 * one that exists are pinned; one reached through a symlink, where it
 * really is (the mask follows the symlink too). */
static int
pin_cred_masks (struct ar_sandbox *sb, const struct wset *w, ar_error **err)
{
  struct ar_agent_opts *o = &sb->prof;
  for (size_t h = 0; h < o->n_cred_homes; h++)
    for (size_t i = 0; ar_agent_cred_paths[i]; i++)
      {
        const char *c = ar_agent_cred_paths[i];
        char real[PATH_MAX];
        size_t which;
        if (!strchr (c, '/'))
          continue;
        cleanup_free char *p = xasprintf ("%s/%s", o->cred_homes[h], c);
        struct stat st;
        /* most are missing: one lstat says so, where realpath would
         * readlink each folder on the way first */
        if (lstat (p, &st) == 0 && realpath (p, real) && in_writable (w, real, &which)
            && pin_between (o, w->path[which], real, err) < 0)
          return -1;
      }
  if (!o->home_src)
    return 0;
  /* --home DIR, bound at the home: its own folders, never through a symlink */
  for (size_t i = 0; ar_agent_cred_paths[i]; i++)
    {
      const char *c = ar_agent_cred_paths[i];
      struct stat st;
      cleanup_free char *rel = xstrdup (c);
      for (char *s = strchr (rel, '/'); s; s = strchr (s + 1, '/'))
        {
          *s = '\0';
          cleanup_free char *src = xasprintf ("%s/%s", o->home_src, rel);
          cleanup_free char *dst = xasprintf ("%s/%s", o->home, rel);
          cleanup_free char *whole = xasprintf ("%s/%s", o->home_src, c);
          if (lstat (src, &st) < 0 || !S_ISDIR (st.st_mode) || lstat (whole, &st) < 0)
            break;
          if (!ar_sbpaths_is_bind (o, dst))
            {
              o->binds = xrealloc (o->binds, (o->n_binds + 1) * sizeof *o->binds);
              o->binds[o->n_binds++] = (struct ar_agent_bind){ .path = ar_steal_ptr (dst),
                                                               .src = ar_steal_ptr (src),
                                                               .writable = true };
            }
          *s = '/';
        }
    }
  return 0;
}

static int check_links (const char *path, const struct stat *st, ar_error **err);

static int
check_note (struct ar_sandbox *sb, const struct wset *w, const struct ar_sb_note *nt, ar_error **err)
{
  bool inside;
  size_t which = 0;
  int fd = ar_sbpaths_walk (w->id, w->n, nt->path, &inside, &which);
  if (fd < 0 && errno == ELOOP && inside)
    return ar_err (err, 0,
                   "%s %s: a symlink (or \"..\") inside the writable folder %s, which an earlier run could "
                   "have planted, so it is not followed; name the real path",
                   nt->opt, nt->path, w->path[which]);
  if (fd < 0 && nt->kind == AR_NOTE_MASK && inside)
    return ar_err (err, errno,
                   "%s %s: missing inside the writable folder %s (renamed by an earlier run?); "
                   "a mask there fails closed: restore it, or drop the mask",
                   nt->opt, nt->path, w->path[which]);
  if (fd < 0)
    return 0; /* outside: the option itself said what it found */
  /* a file kept read-only or hidden that has a second name in a writable
   * folder (a hard link an earlier run made) is written or read through it */
  struct stat st;
  bool held = inside && (nt->kind == AR_NOTE_MASK || nt->kind == AR_NOTE_RO) && fstat (fd, &st) == 0;
  if (held && S_ISDIR (st.st_mode))
    {
      /* the files in a folder kept so, the same */
      char dir[PATH_MAX];
      int r = fd_path (fd, dir, sizeof dir) < 0 ? ar_err (err, errno, "%s", nt->path) : check_links (dir, &st, err);
      if (r < 0)
        {
          close (fd);
          return ar_err_prefix (err, "%s %s", nt->opt, nt->path);
        }
    }
  if (held && S_ISREG (st.st_mode) && st.st_nlink > 1)
    {
      close (fd);
      return ar_err (err, 0,
                     "%s %s: a file with %lu names (hard links) in the writable folder %s: the sandbox could %s it "
                     "through another one; remove the other names",
                     nt->opt, nt->path, (unsigned long) st.st_nlink, w->path[which],
                     nt->kind == AR_NOTE_MASK ? "read" : "write");
    }
  char real[PATH_MAX];
  int r = fd_path (fd, real, sizeof real);
  close (fd);
  /* a rename of a folder above would take a read-only one along, and a
   * new one made in its place would be the command's */
  if (r == 0 && inside && (nt->kind == AR_NOTE_MASK || nt->kind == AR_NOTE_RO))
    return pin_between (&sb->prof, w->path[which], real, err);
  return 0;
}

/* ---- protected names ---- */

static bool
lifted (const struct ar_sandbox *sb, const char *path)
{
  for (size_t i = 0; i < sb->n_allow_write; i++)
    if (ar_path_under (path, sb->allow_write[i]))
      return true;
  return false;
}

/* A file system without flock (NFS without its lock daemon, some FUSE
 * ones): no run can hold there, so none waits for another either. */
static bool
no_flock (int e)
{
  return e == ENOLCK || e == EOPNOTSUPP || e == ENOSYS || e == EINVAL;
}

/* Keep a shared flock on path (as lstat'd in st) for the run. 0: held, or
 * nothing to hold (not a file nor a folder; one we may not open is
 * nobody's placeholder); 1: it went meanwhile (another run's cleanup). A
 * lock held for long is not a cleanup's (those take it without waiting and
 * let go at once): refused, it would let one go the moment it liked.
 * keep: a placeholder (ours, another run's), which a cleanup may remove:
 * its fd is kept for the run; any other name is the person's, which no
 * cleanup removes: checked, then let go (each fd kept is one more the
 * container's init inherits, under the sandbox's own RLIMIT_NOFILE).
 * fd >= 0: the placeholder just made as base in the folder dfd (st is its
 * fstat), looked up again there; else path is opened. */
static int
hold (struct ar_sandbox *sb, const char *path, int dfd, const char *base, const struct stat *st, int fd, bool keep,
      ar_error **err)
{
  struct stat now, fst;
  bool made = fd >= 0;
  if (sb->bundle_only || (!S_ISREG (st->st_mode) && !S_ISDIR (st->st_mode)))
    return fd >= 0 ? close (fd), 0 : 0;
  if (fd < 0)
    fd = open (path,
               O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (S_ISDIR (st->st_mode) ? O_DIRECTORY : 0));
  if (fd < 0)
    return errno == ENOENT ? 1 : 0;
  int r, tries = 0;
  while ((r = flock (fd, LOCK_SH | LOCK_NB)) < 0 && (errno == EWOULDBLOCK || errno == EINTR) && tries++ < 200)
    usleep (5000);
  if (r < 0)
    {
      int e = errno;
      close (fd);
      if (no_flock (e))
        return 0;
      return ar_err (err, e, "protected name %s: another process holds a lock on it", path);
    }
  if ((made ? (fst = *st, 0) : fstat (fd, &fst)) < 0
      || (made ? fstatat (dfd, base, &now, AT_SYMLINK_NOFOLLOW) : lstat (path, &now)) < 0 || now.st_dev != fst.st_dev
      || now.st_ino != fst.st_ino || fst.st_dev != st->st_dev || fst.st_ino != st->st_ino)
    {
      close (fd);
      return 1;
    }
  if (!keep)
    return close (fd), 0;
  sb->held = xrealloc (sb->held, (sb->n_held + 1) * sizeof *sb->held);
  sb->held[sb->n_held++] = fd;
  return 0;
}

/* A placeholder's mark: this modification time, which no file of the
 * person's has unless they set it so. Another run that finds one (made
 * by a run still going, or by one killed before its janitor existed)
 * holds it and removes it when it is the last one out. */
static const struct timespec placeholder_mtime = { 0, 424242424 };

/* size: what a file placeholder holds (empty, but for one git must read) */
static bool
marked (const struct stat *st, off_t size)
{
  return st->st_mtim.tv_sec == placeholder_mtime.tv_sec && st->st_mtim.tv_nsec == placeholder_mtime.tv_nsec
         && (S_ISDIR (st->st_mode) || (S_ISREG (st->st_mode) && st->st_size == size));
}

static int
mark (int fd)
{
  const struct timespec t[2] = { { 0, UTIME_OMIT }, placeholder_mtime };
  return futimens (fd, t);
}

static void
add_placed (struct ar_sandbox *sb, const char *path, const struct stat *st)
{
  for (size_t i = 0; i < sb->n_placed; i++)
    if (sb->placed[i].dev == st->st_dev && sb->placed[i].ino == st->st_ino)
      return;
  sb->placed = xrealloc (sb->placed, (sb->n_placed + 1) * sizeof *sb->placed);
  sb->placed[sb->n_placed++] = (struct ar_sb_placed){ xstrdup (path), st->st_dev, st->st_ino, st->st_size,
                                                      S_ISDIR (st->st_mode) };
}

/* The folder that holds path, as an O_PATH fd (c's: the caller does not
 * close it), and *base its last component (within path). Placeholders are made and removed only at
 * resolved paths (realpath'd writable folders, each step below checked): a
 * symlink on the way now is one made since, by the agent of another run on
 * the same folder that swapped a folder for it, to have us (root, or the
 * person) make or remove a file where it chose. So no step may be one, and
 * what is done is done by name in that fd, never by the whole path again.
 * The protected names come a folder at a time: the fd of the last folder
 * is kept in c and used again for the next name in it (what it holds is
 * the folder found without a symlink then: one swapped since is not
 * followed either). -1 with errno (ELOOP: a symlink on the way). */
static int
open_parent (struct ar_sb_dirfd *c, const char *path, const char **base)
{
  const char *slash = strrchr (path, '/');
  if (!slash || !slash[1])
    {
      errno = EINVAL;
      return -1;
    }
  *base = slash + 1;
  int n = slash == path ? 1 : (int) (slash - path);
  if (c->dir && (int) strlen (c->dir) == n && strncmp (c->dir, path, (size_t) n) == 0)
    return c->fd;
  ar_sb_dirfd_close (c);
  cleanup_free char *dir = xasprintf ("%.*s", n, path);
  int fd = ar_openat2 (AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0, RESOLVE_NO_SYMLINKS);
  if (fd >= 0)
    {
      c->dir = ar_steal_ptr (dir);
      c->fd = fd;
    }
  return fd;
}

void
ar_sb_dirfd_close (struct ar_sb_dirfd *c)
{
  if (c->dir)
    close (c->fd);
  free (c->dir);
  c->dir = NULL;
}

/* fd still is what base names in dfd. */
static bool
named (int dfd, const char *base, int fd)
{
  struct stat a, b;
  return fstatat (dfd, base, &a, AT_SYMLINK_NOFOLLOW) == 0 && fstat (fd, &b) == 0 && a.st_dev == b.st_dev
         && a.st_ino == b.st_ino;
}

/* A placeholder folder's time moved when the placeholders in it were
 * made: marked again, so that another run knows it for one too. */
static void
remark_folders (struct ar_sandbox *sb)
{
  for (size_t i = 0; i < sb->n_placed; i++)
    {
      struct stat st;
      if (!sb->placed[i].dir)
        continue;
      const char *base;
      int dfd = open_parent (&sb->placing, sb->placed[i].path, &base);
      /* (most are as made: nothing is made in a placeholder folder) */
      if (dfd < 0 || (fstatat (dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && marked (&st, 0)))
        continue;
      cleanup_close int fd = openat (dfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0 && fstat (fd, &st) == 0 && st.st_dev == sb->placed[i].dev && st.st_ino == sb->placed[i].ino)
        mark (fd);
    }
}

/* Write a new placeholder's text (NULL: none) and its mark. */
static int
fill_and_mark (int fd, const char *text)
{
  if (text && ar_write_all (fd, text, strlen (text)) < 0)
    return -1;
  return mark (fd);
}

/* A placeholder gets its text and its mark before its name appears:
 * another run that finds it at that moment knows it for one, and holds
 * it, never takes it for the person's own (which it would not hold, and
 * our cleanup would remove it from under that run's bind, leaving the name
 * free to the agent there). A file is made unnamed (O_TMPFILE), then
 * linked at base (with AT_EMPTY_PATH, which needs CAP_DAC_READ_SEARCH,
 * dropped by the fsid switch, before Linux 6.10 let the file's opener do
 * it; through /proc there); a folder is made under
 * a name of its own, then renamed to base without replacing anything.
 * Where the file system offers neither, it is made at base and marked
 * right after. An fd of it, or -1 with errno (EEXIST: base exists). */
static int
make_file (int dfd, const char *base, const char *text)
{
  int e, fd = openat (dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (fd >= 0)
    {
      char proc[48];
      snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
      if (fill_and_mark (fd, text) == 0
          && (linkat (fd, "", dfd, base, AT_EMPTY_PATH) == 0
              || (errno == ENOENT && linkat (AT_FDCWD, proc, dfd, base, AT_SYMLINK_FOLLOW) == 0)))
        return fd;
      e = errno;
      close (fd);
      errno = e;
      if (e != ENOENT) /* no /proc mounted: made in place below */
        return -1;
    }
  else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
    return -1;
  fd = openat (dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0 && fill_and_mark (fd, text) < 0)
    {
      e = errno;
      if (named (dfd, base, fd))
        unlinkat (dfd, base, 0);
      close (fd);
      errno = e;
      return -1;
    }
  return fd;
}

static int
make_dir (int dfd, const char *base)
{
  static unsigned made;
  char tmp[64];
  snprintf (tmp, sizeof tmp, ".agentrun-placeholder-%d-%u", (int) getpid (), made++);
  if (mkdirat (dfd, tmp, 0755) == 0)
    {
      int fd = openat (dfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0 && mark (fd) == 0 && renameat2 (dfd, tmp, dfd, base, RENAME_NOREPLACE) == 0)
        return fd;
      int e = errno;
      if (fd >= 0)
        close (fd);
      unlinkat (dfd, tmp, AT_REMOVEDIR);
      errno = e;
      if (e != EINVAL) /* EINVAL: no RENAME_NOREPLACE here, made in place below */
        return -1;
    }
  else if (errno != EEXIST)
    return -1;
  int fd = mkdirat (dfd, base, 0755) == 0 ? openat (dfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
  if (fd >= 0 && mark (fd) < 0)
    {
      int e = errno;
      close (fd);
      errno = e;
      return -1;
    }
  return fd;
}

/* The placeholder for path made (with the fsid switched by the caller):
 * its fd, or -1 with errno; *dfd and *base where it was made. */
static int
place_make (struct ar_sandbox *sb, const char *path, bool dir, const char *text, int *dfd, const char **base)
{
  *dfd = open_parent (&sb->placing, path, base);
  return *dfd < 0 ? -1 : dir ? make_dir (*dfd, *base) : make_file (*dfd, *base, text);
}

/* What place returns for the outcome of place_make (fd, or -1 and e). */
static int
place_finish (struct ar_sandbox *sb, const char *path, int dfd, const char *base, int fd, int e, ar_error **err)
{
  struct stat st;
  if (fd < 0 && e == EEXIST)
    return 2;
  /* not ours to create: not the command's either (it runs as these ids) */
  if (fd < 0 && (e == EACCES || e == EPERM || e == EROFS))
    {
      ar_debug ("protected name %s: no placeholder: %s", path, strerror (e));
      return 1;
    }
  if (fd < 0 && (e == ELOOP || e == ENOTDIR || e == EXDEV))
    return ar_err (err, e,
                   "protected name %s: a symlink on the way to it, where the folders were checked just before "
                   "(swapped by another run's agent?); no placeholder made",
                   path);
  if (fd < 0)
    return ar_err (err, e, "protected name %s: make the read-only placeholder", path);
  if (fstat (fd, &st) < 0)
    {
      e = errno;
      close (fd);
      return ar_err (err, e, "protected name %s", path);
    }
  add_placed (sb, path, &st);
  /* ours, just made: no other run holds it yet, nor removes it (not its own) */
  int r = hold (sb, path, dfd, base, &st, fd, true, err);
  return r < 0 ? -1 : r == 1 ? 2 : 0;
}

/* 0: made (and held), 1: none made (left out, or not ours to create),
 * 2: it appeared meanwhile (another run made it), -1: error. text: what a
 * file placeholder holds (NULL: empty). */
static int
place (struct ar_sandbox *sb, const char *path, bool dir, const char *text, ar_error **err)
{
  struct ar_fsid fs;
  if (sb->bundle_only)
    {
      sb->n_unplaced++;
      return 1;
    }
  ar_fault_point ("sandbox-before-place");
  /* made with the command's own ids: where it could not make the name
   * itself no placeholder is needed; and in the folder reached without a
   * symlink (open_parent), so never where another run's agent points */
  ar_fsid_enter (&fs, sb->prof.uid, sb->prof.gid);
  const char *base;
  int dfd, fd = place_make (sb, path, dir, text, &dfd, &base);
  int e = errno;
  ar_fsid_leave (&fs);
  return place_finish (sb, path, dfd, base, fd, e, err);
}

/* A file below a read-only protected folder (or the file itself) with a
 * second name, a hard link an earlier run could make while it was not
 * protected (a repository it made): written through that name, which may
 * lie in a writable folder, it changes what the host runs. dfd: the folder
 * at path; *budget: the entries looked at, at most (beyond: refused). */
static int
check_links_below (int dfd, const char *path, int depth, int *budget, ar_error **err)
{
  DIR *d = fdopendir (dfd);
  if (!d)
    {
      int e = errno;
      close (dfd);
      return ar_err (err, e, "protected folder %s: read it", path);
    }
  int r = 0;
  errno = 0;
  for (struct dirent *e; r == 0 && (e = readdir (d)); errno = 0)
    {
      const char *n = e->d_name;
      struct stat st;
      if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])))
        continue;
      if (--*budget < 0 || depth > 16)
        {
          r = ar_err (err, 0,
                      "protected folder %s: too many entries (or too deep) to check for hard links; lift it "
                      "with --allow-write %s",
                      path, path);
          break;
        }
      if (fstatat (dirfd (d), n, &st, AT_SYMLINK_NOFOLLOW) < 0)
        r = ar_err (err, errno, "protected folder %s: %s", path, n);
      else if (S_ISREG (st.st_mode) && st.st_nlink > 1)
        r = ar_err (err, 0,
                    "%s/%s: a file the host runs or reads with %lu names (hard links): written through another "
                    "one, in a writable folder, it would change; remove the other names",
                    path, n, (unsigned long) st.st_nlink);
      else if (S_ISDIR (st.st_mode))
        {
          int sub = openat (dirfd (d), n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          cleanup_free char *subpath = xasprintf ("%s/%s", path, n);
          r = sub < 0 ? ar_err (err, errno, "protected folder %s", subpath)
                      : check_links_below (sub, subpath, depth + 1, budget, err);
        }
    }
  if (r == 0 && errno)
    r = ar_err (err, errno, "protected folder %s: read it", path);
  closedir (d);
  return r;
}

static int
check_links (const char *path, const struct stat *st, ar_error **err)
{
  if (S_ISREG (st->st_mode) && st->st_nlink > 1)
    return ar_err (err, 0,
                   "%s: a file the host runs or reads with %lu names (hard links): written through another one, "
                   "in a writable folder, it would change; remove the other names",
                   path, (unsigned long) st->st_nlink);
  if (!S_ISDIR (st->st_mode))
    return 0;
  int budget = 4096, dfd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    return ar_err (err, errno, "protected folder %s", path);
  return check_links_below (dfd, path, 0, &budget, err);
}

/* path as it is: a folder or file made read-only (or pinned), a missing
 * one made as a placeholder first. A symlink cannot be held: refused.
 * Another run on the same folder may make or remove a placeholder at the
 * same time: what changed under us is looked at again. */
static int
protect_text (struct ar_sandbox *sb, const char *path, bool dir, bool writable, const char *text, ar_error **err)
{
  if (lifted (sb, path) || ar_sbpaths_is_bind (&sb->prof, path))
    return 0;
  for (int tries = 0; tries < 8; tries++)
    {
      struct stat st;
      int r;
      if (lstat (path, &st) < 0)
        {
          if (errno != ENOENT)
            return ar_err (err, errno, "protected name %s", path);
          if ((r = place (sb, path, dir, text, err)) == 2)
            continue;
          if (r != 0)
            return r < 0 ? -1 : 0;
        }
      else if (S_ISLNK (st.st_mode))
        return ar_err (err, 0,
                       "%s: a symlink in a writable folder, which the host's tools would follow and the "
                       "sandbox cannot keep read-only; remove it, or lift it with --allow-write %s",
                       path, path);
      else if (!writable && check_links (path, &st, err) < 0)
        return -1;
      else if ((r = hold (sb, path, -1, NULL, &st, -1, marked (&st, text ? (off_t) strlen (text) : 0), err)) != 0)
        {
          if (r < 0)
            return -1;
          continue;
        }
      else if (marked (&st, text ? (off_t) strlen (text) : 0) && !sb->bundle_only)
        add_placed (sb, path, &st); /* another run's: the last one out removes it */
      add_bind_of (&sb->prof, path, writable);
      return 0;
    }
  return ar_err (err, 0, "protected name %s: made and removed again and again by others while this run starts", path);
}

static int
protect (struct ar_sandbox *sb, const char *path, bool dir, bool writable, ar_error **err)
{
  return protect_text (sb, path, dir, writable, NULL, err);
}

/* --allow-write names path or something beneath it. */
static bool
lifted_below (const struct ar_sandbox *sb, const char *path)
{
  for (size_t i = 0; i < sb->n_allow_write; i++)
    if (ar_path_under (sb->allow_write[i], path))
      return true;
  return false;
}

/* Does a folder above dir hold a .git (dir lies in a repository's tree)? */
static bool
inside_repository (const char *dir)
{
  cleanup_free char *p = xstrdup (dir);
  for (char *slash; (slash = strrchr (p, '/'));)
    {
      struct stat st;
      *slash = '\0';
      cleanup_free char *git = xasprintf ("%s/.git", p);
      if (lstat (git, &st) == 0)
        return true;
    }
  return false;
}

/* VS Code's workspace files at the top of root (NAME.code-workspace: the
 * settings and tasks, with those run when the folder opens, of a workspace
 * the person opens by that file), held read-only where they exist. */
static int
protect_code_workspaces (struct ar_sandbox *sb, const char *root, ar_error **err)
{
  DIR *d = opendir (root);
  if (!d)
    return 0;
  int r = 0;
  for (struct dirent *e; r == 0 && (e = readdir (d));)
    {
      size_t n = strlen (e->d_name), sfx = strlen (".code-workspace");
      if (n <= sfx || strcmp (e->d_name + n - sfx, ".code-workspace"))
        continue;
      cleanup_free char *path = xasprintf ("%s/%s", root, e->d_name);
      r = protect (sb, path, false, false, err);
    }
  closedir (d);
  return r;
}

/* The protected names right in root that are missing, made in one go:
 * the fsid switched once for them all, not twice each (each switch is a
 * new set of credentials). Each is then what place makes of it, bound as
 * protect_text binds it; one that fails here, or came meanwhile, is left
 * to protect_folder's own pass, which tells why or holds it. */
static int
place_missing (struct ar_sandbox *sb, const char *root, ar_error **err)
{
  size_t want[ARRAY_SIZE (protected_names)], n = 0;
  char *paths[ARRAY_SIZE (protected_names)];
  int fds[ARRAY_SIZE (protected_names)], dfd = -1, r = 0;
  const char *base = NULL;
  struct stat st;
  if (sb->bundle_only)
    return 0;
  for (size_t i = 0; i < ARRAY_SIZE (protected_names); i++)
    {
      const char *name = protected_names[i].name;
      if (strchr (name, '/') || protected_names[i].present || is_scratch_name (name))
        continue;
      cleanup_free char *path = xasprintf ("%s/%s", root, name);
      if (lifted (sb, path) || ar_sbpaths_is_bind (&sb->prof, path) || lstat (path, &st) == 0 || errno != ENOENT)
        continue;
      want[n] = i;
      paths[n++] = ar_steal_ptr (path);
    }
  if (n == 0)
    return 0;
  ar_fault_point ("sandbox-before-place");
  struct ar_fsid fs;
  ar_fsid_enter (&fs, sb->prof.uid, sb->prof.gid);
  for (size_t k = 0; k < n; k++)
    fds[k] = place_make (sb, paths[k], placed_dir (sb, want[k]), NULL, &dfd, &base);
  ar_fsid_leave (&fs);
  for (size_t k = 0; k < n; k++)
    {
      if (fds[k] >= 0)
        {
          int p = r < 0 ? (close (fds[k]), -1)
                        : place_finish (sb, paths[k], dfd, strrchr (paths[k], '/') + 1, fds[k], 0, err);
          if (p < 0)
            r = -1;
          else if (p == 0)
            add_bind_of (&sb->prof, paths[k], false);
        }
      free (paths[k]);
    }
  return r;
}

static int
protect_folder (struct ar_sandbox *sb, const char *root, ar_error **err)
{
  cleanup_free char *whole = NULL; /* a missing parent made read-only as a whole */
  if (protect_code_workspaces (sb, root, err) < 0 || place_missing (sb, root, err) < 0)
    return -1;
  for (size_t i = 0; i < ARRAY_SIZE (protected_names); i++)
    {
      const char *name = protected_names[i].name, *slash = strchr (name, '/');
      cleanup_free char *path = xasprintf ("%s/%s", root, name);
      struct stat pst;
      if (protected_names[i].present && lstat (path, &pst) < 0 && errno == ENOENT)
        continue;
      if (slash)
        {
          cleanup_free char *parent = xasprintf ("%s/%.*s", root, (int) (slash - name), name);
          struct stat st;
          bool git = strncmp (name, ".git/", 5) == 0;
          if (lifted (sb, parent) || lifted (sb, path) || (whole && strcmp (whole, parent) == 0))
            continue;
          bool there = lstat (parent, &st) == 0;
          if (!there && errno == ENOENT && git && inside_repository (root))
            {
              /* the folder is part of a repository above it, whose git the
               * person runs there: a .git made here would take its place
               * (its config, fsmonitor, hooks). One read-only empty folder
               * (git looks past it, to the repository above) */
              if (protect (sb, parent, true, false, err) < 0)
                return -1;
              free (whole);
              whole = ar_steal_ptr (parent);
              continue;
            }
          if (!there && errno == ENOENT && git)
            {
              /* no repository yet: `git init` inside must work; said after the run */
              if (strcmp (root, sb->prof.workspace) == 0 && !sb->new_git)
                sb->new_git = xstrdup (parent);
              continue;
            }
          if (!there && errno == ENOENT && !lifted_below (sb, parent))
            {
              /* no .claude: one read-only empty file (a folder, for the
               * run's agent: held_by_folder) holds every name beneath it,
               * where a pinned one with a placeholder for each would make
               * six (a new inode each: what placeholders cost) */
              cleanup_free char *top = xasprintf ("%.*s", (int) (slash - name), name);
              if (protect (sb, parent, held_by_folder (sb, top), false, err) < 0)
                return -1;
              free (whole);
              whole = ar_steal_ptr (parent);
              continue;
            }
          if (there && !S_ISDIR (st.st_mode))
            {
              /* a worktree's or submodule's .git file names where git reads
               * config and hooks: read-only, what it names is not ours */
              if (protect (sb, parent, false, false, err) < 0)
                return -1;
              continue;
            }
          if (there && marked (&st, 0))
            {
              /* another run's placeholder for the whole folder: held as that
               * run holds it, read-only and whole. A placeholder made in it
               * would move its time, its mark, and a run starting then would
               * take it for the person's own folder */
              if (protect (sb, parent, true, false, err) < 0)
                return -1;
              free (whole);
              whole = ar_steal_ptr (parent);
              continue;
            }
          /* the parent pinned (a rename of it would free its children) */
          if (protect (sb, parent, true, true, err) < 0)
            return -1;
        }
      size_t before = sb->prof.n_binds;
      struct stat sst;
      if (protect (sb, path, placed_dir (sb, i), false, err) < 0)
        return -1;
      /* the bind just added holds a folder (a file there stays read-only) */
      if (is_scratch_name (name) && sb->prof.n_binds > before && lstat (path, &sst) == 0 && S_ISDIR (sst.st_mode))
        sb->prof.binds[sb->prof.n_binds - 1].scratch = true;
    }
  return 0;
}

/* ---- repositories below the root: submodules, nested ones ---- */

static bool
is_dir_nofollow (const char *path)
{
  struct stat st;
  return lstat (path, &st) == 0 && S_ISDIR (st.st_mode);
}

/* The walk of one writable folder's repositories: what is left of the git
 * folders' budget, and the git folders protected so far (relative to the
 * root), which the trust store keeps for the next runs. */
struct gitwalk {
  const struct wset *w;
  const char *root;
  int budget;
  char **found;
  size_t n_found;
  bool report; /* after the run: a git folder not found before is said, not protected */
};

/* Already protected in this walk? Else recorded as protected now. */
static bool
seen (struct gitwalk *g, const char *path)
{
  const char *rel = path + strlen (g->root) + 1;
  for (size_t i = 0; i < g->n_found; i++)
    if (strcmp (g->found[i], rel) == 0)
      return true;
  g->found = xrealloc (g->found, (g->n_found + 1) * sizeof *g->found);
  g->found[g->n_found++] = xstrdup (rel);
  return false;
}

static int protect_gitdir (struct ar_sandbox *sb, struct gitwalk *g, const char *gitdir, int depth, ar_error **err);

/* What else of a git folder git obeys: commondir, which moves where git
 * reads the config and hooks from to the folder it names, whatever git
 * folder holds it (missing: a placeholder naming the git folder itself,
 * ".", as an empty one would stop git); config.worktree (read when the
 * config turns extensions.worktreeConfig on, which the agent cannot: the
 * config is read-only; a placeholder then), and worktrees/, whose NAME/
 * commondir tells a linked worktree elsewhere on the host where its config
 * and hooks are (read-only when there; `git worktree add` inside fails). */
static int
protect_git_extras (struct ar_sandbox *sb, const char *gitdir, ar_error **err)
{
  cleanup_free char *config = xasprintf ("%s/config", gitdir);
  cleanup_free char *commondir = xasprintf ("%s/commondir", gitdir);
  cleanup_free char *wtconfig = xasprintf ("%s/config.worktree", gitdir);
  cleanup_free char *worktrees = xasprintf ("%s/worktrees", gitdir);
  cleanup_free char *text = NULL;
  size_t len = 0;
  struct stat st;
  if (protect_text (sb, commondir, false, false, ".\n", err) < 0)
    return -1;
  cleanup_close int fd = open (config, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  bool wanted = fd >= 0 && ar_read_all (fd, 1u << 20, &text, &len) == 0 && strcasestr (text, "worktreeconfig");
  if ((wanted || lstat (wtconfig, &st) == 0) && protect (sb, wtconfig, false, false, err) < 0)
    return -1;
  if (lstat (worktrees, &st) == 0 && protect (sb, worktrees, S_ISDIR (st.st_mode), false, err) < 0)
    return -1;
  return 0;
}

/* dir/modules: each entry a submodule's git folder (one with a HEAD), or a
 * folder of a submodule name with a slash in it. Each one pinned. */
static int
protect_modules (struct ar_sandbox *sb, struct gitwalk *g, const char *dir, int depth, ar_error **err)
{
  if (depth >= MODULES_DEPTH || lifted (sb, dir))
    return 0;
  if (protect (sb, dir, true, true, err) < 0)
    return -1;
  DIR *d = opendir (dir);
  if (!d)
    return 0;
  int r = 0;
  for (struct dirent *e; r == 0 && (e = readdir (d));)
    {
      if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
        continue;
      cleanup_free char *sub = xasprintf ("%s/%s", dir, e->d_name);
      cleanup_free char *head = xasprintf ("%s/HEAD", sub);
      struct stat st;
      bool gitdir = lstat (head, &st) == 0;
      if (!is_dir_nofollow (sub) || (gitdir && seen (g, sub)))
        continue;
      if (--g->budget < 0)
        {
          ar_debug ("submodules: more than %d git folders, %s and the rest not protected", MODULES_MAX, sub);
          break;
        }
      r = gitdir ? protect_gitdir (sb, g, sub, depth + 1, err) : protect_modules (sb, g, sub, depth + 1, err);
    }
  closedir (d);
  return r;
}

/* A git folder (not the root's own, which protected_names holds): pinned,
 * its config and hooks read-only, its submodules' the same. */
static int
protect_gitdir (struct ar_sandbox *sb, struct gitwalk *g, const char *gitdir, int depth, ar_error **err)
{
  cleanup_free char *config = xasprintf ("%s/config", gitdir);
  cleanup_free char *hooks = xasprintf ("%s/hooks", gitdir);
  cleanup_free char *modules = xasprintf ("%s/modules", gitdir);
  if (lifted (sb, gitdir))
    return 0;
  seen (g, gitdir);
  if (protect (sb, gitdir, true, true, err) < 0 || protect (sb, config, false, false, err) < 0
      || protect (sb, hooks, true, false, err) < 0 || protect_git_extras (sb, gitdir, err) < 0)
    return -1;
  return is_dir_nofollow (modules) ? protect_modules (sb, g, modules, depth, err) : 0;
}

/* ---- what a git config names: the hooks folder, included files ---- */

/* One value of a git config line at *p (after "="): quotes joined, escapes
 * taken, a comment or the end of the line ends it, outer blanks dropped. */
static char *
git_value (const char **p)
{
  size_t cap = strlen (*p) + 1, n = 0, keep = 0;
  char *v = xmalloc0 (cap);
  bool quoted = false;
  const char *s = *p;
  while (*s == ' ' || *s == '\t')
    s++;
  for (; *s && *s != '\n'; s++)
    {
      if (!quoted && (*s == '#' || *s == ';'))
        break;
      if (*s == '"')
        {
          quoted = !quoted;
          keep = n;
          continue;
        }
      if (*s == '\\' && s[1])
        {
          s++;
          if (*s == '\n')
            continue; /* a continued line */
          v[n++] = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s == 'b' ? '\b' : *s;
          keep = n;
          continue;
        }
      v[n++] = *s;
      if (quoted || (*s != ' ' && *s != '\t'))
        keep = n;
    }
  while (*s && *s != '\n')
    s++;
  *p = s;
  v[keep] = '\0';
  return v;
}

/* Each core.hooksPath and each include.path and includeIf.*.path of the
 * git config file, as written, added to vals (kind 'h' or 'i' first): git
 * reads those from where the config says, and a config of the person's may
 * name a folder or file in a writable folder. A missing or unreadable file
 * names nothing. A symlink is followed: the configs the sandbox could
 * change were refused as symlinks before (a dotfile manager's are fine). */
static void
git_config_paths (const char *file, char ***vals, size_t *n_vals)
{
  /* read as the invoking user (a symlink planted in a home workspace must
   * not make root read what that user may not) */
  uid_t uid;
  gid_t gid;
  struct ar_fsid fs;
  ar_sbpaths_invoker (&uid, &gid, NULL);
  ar_fsid_enter (&fs, uid, gid);
  int ofd = open (file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  ar_fsid_leave (&fs);
  cleanup_close int fd = ofd;
  cleanup_free char *text = NULL;
  size_t len;
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || ar_read_all (fd, 1u << 20, &text, &len) < 0)
    return;
  char section[16] = "";
  bool sub = false; /* the section has a subsection: [includeIf "..."] */
  for (const char *p = text; *p; p += *p != '\0')
    {
      while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
      if (*p == '[')
        {
          size_t n = 0;
          for (p++; *p && *p != ']' && *p != ' ' && *p != '\t' && *p != '.' && *p != '\n'; p++)
            if (n + 1 < sizeof section)
              section[n++] = (char) (*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
          section[n] = '\0';
          sub = *p && *p != ']';
          while (*p && *p != ']' && *p != '\n')
            p++;
          if (*p == ']')
            p++;
          while (*p == ' ' || *p == '\t')
            p++;
        }
      if (!*p || *p == '\n' || *p == '#' || *p == ';')
        {
          while (*p && *p != '\n')
            p++;
          continue;
        }
      char key[16];
      size_t n = 0;
      for (; (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-'; p++)
        if (n + 1 < sizeof key)
          key[n++] = (char) (*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
      key[n] = '\0';
      while (*p == ' ' || *p == '\t')
        p++;
      if (*p != '=')
        {
          while (*p && *p != '\n')
            p++;
          continue;
        }
      p++;
      cleanup_free char *v = git_value (&p);
      char kind = 0;
      if (strcmp (section, "core") == 0 && !sub && strcmp (key, "hookspath") == 0)
        kind = 'h';
      else if (((strcmp (section, "include") == 0 && !sub) || (strcmp (section, "includeif") == 0 && sub))
               && strcmp (key, "path") == 0)
        kind = 'i';
      if (*v && kind)
        {
          *vals = xrealloc (*vals, (*n_vals + 1) * sizeof **vals);
          (*vals)[(*n_vals)++] = xasprintf ("%c%s", kind, v);
        }
    }
}

/* A path as git takes it: "~/" from the home, relative from base; NULL
 * when git would not find it (another user's "~user/"). */
static char *
git_path (const char *v, const char *base, const char *home)
{
  if (v[0] == '~' && v[1] == '/')
    return home ? xasprintf ("%s/%s", home, v + 2) : NULL;
  if (v[0] == '~')
    return NULL;
  return v[0] == '/' ? xstrdup (v) : xasprintf ("%s/%s", base, v);
}

/* What a config names git reads from (the hooks folder, dir; an included
 * file): when it lies in a writable folder, held read-only like .git/hooks
 * (a placeholder when missing), with the folders down to it pinned so that
 * no rename swaps it. what: the key, for messages. */
static int
protect_named (struct ar_sandbox *sb, const struct wset *w, const char *what, const char *given, bool dir, ar_error **err)
{
  /* the path as git walks it: no empty nor "." step, and ".." taken back
   * over a real folder only (over a symlink, or a missing one, it is left
   * to the walk: out of a writable folder, or refused) */
  cleanup_free char *buf = xstrdup (given), *path = xmalloc0 (strlen (given) + 2);
  bool dots = false;
  for (char *rest = buf, *c; *(c = next_component (&rest));)
    if (strcmp (c, "..") == 0)
      {
        char *slash = strrchr (path, '/');
        if (!slash || !is_dir_nofollow (path))
          dots = true;
        else
          *slash = '\0';
      }
    else if (strcmp (c, "."))
      strcat (strcat (path, "/"), c);
  size_t which = 0;
  if (!*path || !in_writable (w, dots ? given : path, &which))
    return 0;
  const char *root = w->path[which];
  if (dots || !ar_path_under (path, root) || !path[strlen (root)])
    return ar_err (err, 0,
                   "%s %s: reaches the writable folder %s by another path (a symlink, \"..\", or the folder "
                   "itself), so it cannot be held read-only; name it beneath %s",
                   what, given, root, root);
  for (char *s = path + strlen (root) + 1;; s++)
    {
      s = strchr (s, '/');
      if (s)
        *s = '\0';
      if (protect (sb, path, s ? true : dir, s != NULL, err) < 0)
        return -1;
      if (!s)
        return 0;
      *s = '/';
    }
}

/* The hooks folders and the included files the configs git reads for the
 * repository at worktree (git folder gitdir) name: the system's, the
 * invoking user's and the repository's own, and what they include (up to
 * 64 files). Every hooksPath is held, not only the last: an includeIf
 * decides which one git takes, and holding one it does not is harmless. */
static int
protect_config_paths (struct ar_sandbox *sb, const struct wset *w, const char *worktree, const char *gitdir,
                      ar_error **err)
{
  uid_t uid;
  gid_t gid;
  cleanup_free char *home = NULL;
  ar_sbpaths_invoker (&uid, &gid, &home);
  char **files = xmalloc0 (5 * sizeof *files);
  size_t n_files = 0;
  if (home)
    {
      files[n_files++] = xasprintf ("%s/.config/git/config", home);
      files[n_files++] = xasprintf ("%s/.gitconfig", home);
    }
  files[n_files++] = xstrdup ("/etc/gitconfig");
  files[n_files++] = xasprintf ("%s/config", gitdir);
  files[n_files++] = xasprintf ("%s/config.worktree", gitdir);
  int r = 0;
  for (size_t f = 0; f < n_files; f++)
    {
      char **vals = NULL;
      size_t n_vals = 0;
      git_config_paths (files[f], &vals, &n_vals);
      cleanup_free char *base = xstrdup (files[f]);
      *strrchr (base, '/') = '\0';
      for (size_t i = 0; i < n_vals; i++)
        {
          bool hooks = vals[i][0] == 'h';
          cleanup_free char *path = git_path (vals[i] + 1, hooks ? worktree : *base ? base : "/", home);
          if (r == 0 && path)
            r = protect_named (sb, w, hooks ? "core.hooksPath" : "include.path", path, hooks, err);
          if (r == 0 && path && !hooks && n_files < 64)
            {
              files = xrealloc (files, (n_files + 1) * sizeof *files);
              files[n_files++] = ar_steal_ptr (path);
            }
          free (vals[i]);
        }
      free (vals);
    }
  for (size_t f = 0; f < n_files; f++)
    free (files[f]);
  free (files);
  return r;
}

/* The git folder a gitfile (a worktree's, a submodule's, one made with
 * --separate-git-dir: "gitdir: PATH") names, when it lies in a writable
 * folder: git reads its config and hooks there, so it is protected like a
 * nested one, the folders down to it pinned. (Under .git/modules the walk
 * of modules holds it already; the rest is outside every writable folder.) */
static int
protect_gitfile_target (struct ar_sandbox *sb, struct gitwalk *g, const char *gitfile, ar_error **err)
{
  cleanup_close int fd = open (gitfile, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  cleanup_free char *text = NULL, *dir = xstrdup (gitfile);
  size_t len, which;
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || ar_read_all (fd, 4096, &text, &len) < 0
      || strncmp (text, "gitdir: ", 8))
    return 0;
  text[strcspn (text, "\r\n")] = '\0';
  *strrchr (dir, '/') = '\0';
  cleanup_free char *target = text[8] == '/' ? xstrdup (text + 8) : xasprintf ("%s/%s", dir, text + 8);
  char real[PATH_MAX];
  if (!realpath (target, real) || !in_writable (g->w, real, &which))
    return 0;
  if (!ar_path_under (real, g->root) || !real[strlen (g->root)] || seen (g, real) || --g->budget < 0)
    return 0;
  cleanup_free char *p = xstrdup (real);
  for (char *s = p + strlen (g->root) + 1; (s = strchr (s, '/')); s++)
    {
      *s = '\0';
      int r = protect (sb, p, true, true, err);
      *s = '/';
      if (r < 0)
        return -1;
    }
  return is_dir_nofollow (real) ? protect_gitdir (sb, g, real, 0, err) : 0;
}

/* A repository at root/rel (rel not empty): the folders from the root down
 * to it pinned, so that it cannot be swapped for another by renames. */
static int
protect_nested (struct ar_sandbox *sb, struct gitwalk *g, const char *rel, ar_error **err)
{
  const char *root = g->root;
  cleanup_free char *p = xasprintf ("%s/%s", root, rel);
  cleanup_free char *git = xasprintf ("%s/.git", p);
  struct stat st;
  if (lstat (git, &st) < 0 || lifted (sb, git) || seen (g, git))
    return 0;
  if (g->report)
    {
      ar_warn ("sandbox: the run created %s: its config and hooks were written by the command; review them before "
               "running git there on the host (a git-aware prompt or an editor runs it for you)",
               git);
      return 0;
    }
  if (--g->budget < 0)
    {
      ar_debug ("nested repositories: more than %d git folders, %s and the rest not protected", MODULES_MAX, git);
      return 0;
    }
  for (char *s = p + strlen (root) + 1;; s++)
    {
      s = strchr (s, '/');
      if (s)
        *s = '\0';
      int r = protect (sb, p, true, true, err);
      if (!s || r < 0)
        {
          if (r < 0)
            return -1;
          break;
        }
      *s = '/';
    }
  if (S_ISDIR (st.st_mode))
    return protect_gitdir (sb, g, git, 0, err) < 0 ? -1 : protect_config_paths (sb, g->w, p, git, err);
  /* a gitfile names where git reads config and hooks: read-only, and what it
   * names protected; a symlink, which git follows too, cannot be held: refused */
  if (!S_ISREG (st.st_mode) && !S_ISLNK (st.st_mode))
    return 0;
  return protect (sb, git, false, false, err) < 0 ? -1 : protect_gitfile_target (sb, g, git, err);
}

/* Breadth first, folders at most NESTED_DEPTH below the root and
 * NESTED_MAX_DIRS of them looked at, never through a symlink nor into a
 * .git: one fstatat per folder (its .git), one read per folder above the
 * deepest level. */
/* root/rel is a placeholder folder (this run's or another's): empty, and
 * read-only in every run that binds it, so no repository is made there. */
static bool
placeholder_dir (const struct ar_sandbox *sb, const char *root, const char *rel)
{
  size_t n = strlen (root);
  for (size_t i = 0; i < sb->n_placed; i++)
    if (sb->placed[i].dir && strncmp (sb->placed[i].path, root, n) == 0 && sb->placed[i].path[n] == '/'
        && strcmp (sb->placed[i].path + n + 1, rel) == 0)
      return true;
  return false;
}

static int
walk_nested (struct ar_sandbox *sb, struct gitwalk *g, ar_error **err)
{
  const char *root = g->root;
  cleanup_close int rfd = open (root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (rfd < 0)
    return 0;
  char **queue = xmalloc0 (sizeof *queue);
  int *depth = xmalloc0 (sizeof *depth);
  size_t head = 0, tail = 1, cap = 1, looked = 0;
  queue[0] = xstrdup (".");
  int r = 0;
  for (; head < tail && r == 0 && looked < NESTED_MAX_DIRS; head++)
    {
      int dfd = openat (rfd, queue[head], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      DIR *d = dfd >= 0 ? fdopendir (dfd) : NULL;
      if (!d)
        {
          if (dfd >= 0)
            close (dfd);
          continue;
        }
      for (struct dirent *e; r == 0 && (e = readdir (d));)
        {
          const char *n = e->d_name;
          struct stat st;
          if ((n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]))) || strcmp (n, ".git") == 0)
            continue;
          if (e->d_type != DT_DIR
              && (e->d_type != DT_UNKNOWN || fstatat (dfd, n, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (st.st_mode)))
            continue;
          if (++looked > NESTED_MAX_DIRS)
            {
              ar_debug ("nested repositories: more than %d folders under %s, the rest not looked at", NESTED_MAX_DIRS,
                        root);
              break;
            }
          cleanup_free char *rel = strcmp (queue[head], ".") ? xasprintf ("%s/%s", queue[head], n) : xstrdup (n);
          if (placeholder_dir (sb, root, rel))
            continue;
          cleanup_free char *git = xasprintf ("%s/.git", n);
          if (fstatat (dfd, git, &st, AT_SYMLINK_NOFOLLOW) == 0)
            r = protect_nested (sb, g, rel, err);
          if (r == 0 && depth[head] + 1 < NESTED_DEPTH)
            {
              if (tail == cap)
                {
                  cap *= 2;
                  queue = xrealloc (queue, cap * sizeof *queue);
                  depth = xrealloc (depth, cap * sizeof *depth);
                }
              depth[tail] = depth[head] + 1;
              queue[tail++] = ar_steal_ptr (rel);
            }
        }
      closedir (d);
    }
  for (size_t i = 0; i < tail; i++)
    free (queue[i]);
  free (queue);
  free (depth);
  return r;
}

/* A git folder recorded by an earlier run (rel: below g->root), protected
 * again when it is still there: the folders down to it pinned, a
 * repository's .git as protect_nested does, a submodule's as the walk of
 * modules does. */
static int
protect_recorded (struct ar_sandbox *sb, struct gitwalk *g, const char *rel, ar_error **err)
{
  cleanup_free char *path = xasprintf ("%s/%s", g->root, rel);
  size_t n = strlen (rel);
  struct stat st;
  if (lstat (path, &st) < 0 || strstr (rel, "..") || rel[0] == '/')
    return 0;
  if (n > 5 && strcmp (rel + n - 5, "/.git") == 0)
    {
      cleanup_free char *repo = xasprintf ("%.*s", (int) (n - 5), rel);
      return protect_nested (sb, g, repo, err);
    }
  if (!S_ISDIR (st.st_mode) || seen (g, path) || --g->budget < 0)
    return 0;
  for (char *s = path + strlen (g->root) + 1; (s = strchr (s, '/')); s++)
    {
      *s = '\0';
      int r = protect (sb, path, true, true, err);
      *s = '/';
      if (r < 0)
        return -1;
    }
  return protect_gitdir (sb, g, path, 0, err);
}

/* The trust store's record of the git folders below root: a run can make
 * folders (or fake submodules) enough that the walk's budgets end before
 * one it used to find, so every one protected once is protected first,
 * before the walk. NULL key: no store out of the sandbox's reach. */
static char *
record_key (const struct wset *w, const char *root, char **store)
{
  uid_t uid;
  gid_t gid;
  size_t which;
  cleanup_free char *home = NULL;
  ar_sbpaths_invoker (&uid, &gid, &home);
  *store = ar_trust_store_dir (home);
  if (!*store || in_writable (w, *store, &which))
    {
      ar_debug ("repositories below %s: no trust store out of the sandbox's reach to remember them in", root);
      free (*store);
      return *store = NULL;
    }
  return xasprintf ("git folders below %s", root);
}

static int
protect_repositories (struct ar_sandbox *sb, const struct wset *w, const char *root, ar_error **err)
{
  struct gitwalk g = { .w = w, .root = root, .budget = MODULES_MAX };
  cleanup_free char *modules = xasprintf ("%s/.git/modules", root);
  cleanup_free char *git = xasprintf ("%s/.git", root);
  cleanup_free char *store = NULL, *text = NULL, *now = NULL;
  cleanup_free char *key = record_key (w, root, &store);
  size_t len = 0;
  uid_t uid;
  gid_t gid;
  struct ar_fsid fs;
  int r = -1;
  ar_sbpaths_invoker (&uid, &gid, NULL);
  /* (a .git held read-only as a whole, a placeholder, holds nothing to protect) */
  if (is_dir_nofollow (git) && !lifted (sb, git) && !bound_readonly (&sb->prof, git)
      && (protect_git_extras (sb, git, err) < 0 || protect_config_paths (sb, w, root, git, err) < 0))
    return -1;
  ar_fsid_enter (&fs, uid, gid);
  if (key && ar_trust_read (store, key, &text, &len) < 0)
    text = NULL;
  ar_fsid_leave (&fs);
  for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : line + strlen (line))
    {
      if ((nl = strchr (line, '\n')))
        *nl = '\0';
      if (*line && protect_recorded (sb, &g, line, err) < 0)
        goto out;
      if (nl)
        *nl = '\n';
    }
  struct stat gst;
  if ((lstat (git, &gst) == 0 && S_ISREG (gst.st_mode) && !lifted (sb, git)
       && protect_gitfile_target (sb, &g, git, err) < 0)
      || (is_dir_nofollow (modules) && !lifted (sb, git) && protect_modules (sb, &g, modules, 0, err) < 0)
      || walk_nested (sb, &g, err) < 0)
    goto out;
  r = 0;
  /* kept to tell a new one after the run */
  sb->git_roots = xrealloc (sb->git_roots, (sb->n_git_roots + 1) * sizeof *sb->git_roots);
  sb->git_roots[sb->n_git_roots++] = xstrdup (root);
  for (size_t i = 0; i < g.n_found; i++)
    {
      sb->git_known = xrealloc (sb->git_known, (sb->n_git_known + 1) * sizeof *sb->git_known);
      sb->git_known[sb->n_git_known++] = xasprintf ("%s/%s", root, g.found[i]);
    }
  if (!key)
    goto out;
  /* what changed is written: those still there, then the new ones */
  size_t cap = 1;
  for (size_t i = 0; i < g.n_found; i++)
    cap += strlen (g.found[i]) + 1;
  now = xmalloc0 (cap);
  for (size_t i = 0; i < g.n_found; i++)
    strcat (strcat (now, g.found[i]), "\n");
  /* this run is protected either way: a store it cannot write (a full or
   * read-only home) costs the next runs the record, said, not this run */
  ar_error *werr = NULL;
  if (((!text && g.n_found) || (text && strcmp (text, now)))
      && ar_trust_approve (store, key, now, strlen (now), uid, gid, &werr) < 0)
    {
      ar_warn ("sandbox: the repositories below %s are not remembered for the next runs: %s", root,
               werr ? werr->msg : "?");
      ar_error_free (werr);
    }
out:
  for (size_t i = 0; i < g.n_found; i++)
    free (g.found[i]);
  free (g.found);
  return r;
}

static int
protect_policies (struct ar_sandbox *sb, const struct wset *w, ar_error **err)
{
  uid_t uid;
  gid_t gid;
  cleanup_free char *home = NULL;
  for (size_t i = 0; i < sb->n_policies; i++)
    {
      struct ar_sb_policy *p = &sb->policies[i];
      size_t which;
      if (!in_writable (w, p->path, &which))
        continue;
      if (!home)
        ar_sbpaths_invoker (&uid, &gid, &home);
      cleanup_free char *store = ar_trust_store_dir (home);
      if (!store)
        return ar_err (err, 0, "policy file %s: no trust store (the invoking user has no home)", p->path);
      size_t sw;
      if (in_writable (w, store, &sw))
        return ar_err (err, 0,
                       "trust store %s lies in the writable folder %s: the sandbox could approve its own "
                       "policy; set XDG_CONFIG_HOME outside it",
                       store, w->path[sw]);
      if (ar_trust_check (store, p->path, p->text, p->len, uid, gid, err) < 0)
        return -1;
      if (protect (sb, p->path, false, false, err) < 0)
        return -1;
    }
  /* what --ask `always` writes is the person's: not the command's to edit */
  char real[PATH_MAX];
  size_t which;
  if (sb->save_profile && realpath (sb->save_profile, real) && in_writable (w, real, &which)
      && protect (sb, real, false, false, err) < 0)
    return -1;
  return 0;
}

/* ---- the audit log ---- */

int
ar_sbpaths_open_audit (struct ar_sandbox *sb, ar_error **err)
{
  struct ar_agent_opts *o = &sb->prof;
  if (!o->audit || sb->audit_fd >= 0)
    return 0;
  cleanup_free char *dir = xstrdup (o->audit);
  char *base = strrchr (dir, '/');
  *base++ = '\0';
  bool inside;
  size_t which;
  cleanup_close int dfd = ar_sbpaths_walk (NULL, 0, *dir ? dir : "/", &inside, &which);
  if (dfd < 0)
    return ar_err (err, errno, "--audit %s: its folder", o->audit);
  uid_t uid;
  gid_t gid;
  struct ar_fsid fs;
  struct stat st;
  ar_sbpaths_invoker (&uid, &gid, NULL);
  ar_fsid_enter (&fs, uid, gid);
  int fd = ar_openat2 (dfd, base, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0640,
                       RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH);
  int e = errno;
  ar_fsid_leave (&fs);
  if (fd < 0)
    return ar_err (err, e, "--audit %s: open as uid %u without following symlinks", o->audit, (unsigned) uid);
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      return ar_err (err, 0, "--audit %s: not a regular file", o->audit);
    }
  sb->audit_fd = fd;
  free (o->audit_fd_ref);
  o->audit_fd_ref = xasprintf ("%d:%d", (int) getpid (), fd);
  return 0;
}

int
ar_sbpaths_prepare (struct ar_sandbox *sb, ar_error **err)
{
  struct ar_agent_opts *o = &sb->prof;
  struct wset w;
  int r = -1;
  size_t which;
  wset_build (o, &w);
  /* the folders as they are now: pins and placeholders are added to binds */
  char **roots = xmalloc0 ((w.n + 1) * sizeof *roots);
  for (size_t i = 0; i < w.n; i++)
    roots[i] = xstrdup (w.path[i]);
  for (size_t i = 0; i < sb->n_notes; i++)
    if (check_note (sb, &w, &sb->notes[i], err) < 0)
      goto out;
  if (protect_policies (sb, &w, err) < 0 || pin_cred_masks (sb, &w, err) < 0)
    goto out;
  struct stat st;
  for (size_t i = 0; roots[i]; i++)
    if (stat (roots[i], &st) == 0 && S_ISDIR (st.st_mode)
        && (protect_folder (sb, roots[i], err) < 0 || protect_repositories (sb, &w, roots[i], err) < 0))
      goto out;
  remark_folders (sb);
  if (sb->n_unplaced)
    ar_warn ("%zu protected names (.bashrc, .envrc, .vscode, ...) do not exist in the writable folders, and this "
             "bundle cannot hold them read-only (agentrun sandbox makes placeholders for its run)",
             sb->n_unplaced);
  if (o->audit && in_writable (&w, o->audit, &which))
    {
      ar_err (err, 0,
              "--audit %s: inside the writable folder %s, where the sandbox could replace it (a "
              "symlink) before the next run; put the log outside every folder the sandbox writes",
              o->audit, w.path[which]);
      goto out;
    }
  r = 0;
out:
  ar_sb_dirfd_close (&sb->placing);
  for (size_t i = 0; roots[i]; i++)
    free (roots[i]);
  free (roots);
  wset_free (&w);
  return r;
}

int
ar_sbpaths_repin (struct ar_sandbox *sb, const char *path, ar_error **err)
{
  char real[PATH_MAX];
  uid_t uid;
  gid_t gid;
  cleanup_free char *home = NULL, *store = NULL, *text = NULL;
  size_t len;
  if (!realpath (path, real))
    return ar_err (err, errno, "%s", path);
  for (size_t i = 0; i < sb->n_policies; i++)
    if (strcmp (sb->policies[i].path, real) == 0)
      {
        struct ar_fsid fs;
        ar_sbpaths_invoker (&uid, &gid, &home);
        /* read as the person, as it was written: what goes into their
         * trust store is never a file root alone may read */
        ar_fsid_enter (&fs, uid, gid);
        cleanup_close int fd = open (real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        int r = fd < 0 || ar_read_all (fd, 1u << 20, &text, &len) < 0 ? -1 : 0;
        int e = errno;
        ar_fsid_leave (&fs);
        if (!(store = ar_trust_store_dir (home)))
          return ar_err (err, 0, "%s: no trust store", real);
        if (r < 0)
          return ar_err (err, e, "read %s", real);
        return ar_trust_approve (store, real, text, len, uid, gid, err);
      }
  return 0;
}

int
ar_sbpaths_git_ignore (struct ar_sandbox *sb, int bundle_fd, const char *bundle, ar_error **err)
{
  struct ar_agent_opts *o = &sb->prof;
  struct stat st;
  cleanup_free char *git = xasprintf ("%s/.git", o->workspace);
  cleanup_free char *dst = xasprintf ("%s/info/exclude", git);
  cleanup_free char *info = xasprintf ("%s/info", git);
  if (lstat (git, &st) < 0 || !S_ISDIR (st.st_mode) || lifted (sb, dst) || lstat (info, &st) < 0 || !S_ISDIR (st.st_mode))
    return 0;
  /* the repository's own excludes first, then our names */
  cleanup_free char *text = NULL;
  size_t len = 0;
  /* not blocking: an earlier run may have left a FIFO there (under a
   * renamed info/), which would hold this start for good */
  cleanup_close int in = open (dst, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (in >= 0 && (fstat (in, &st) < 0 || !S_ISREG (st.st_mode)))
    return ar_err (err, 0, "%s: not a regular file (left by an earlier run?); remove it", dst);
  if (in >= 0 && ar_read_all (in, 1u << 20, &text, &len) < 0)
    return ar_err (err, errno, "read %s", dst);
  if (in < 0 && errno != ENOENT)
    return ar_err (err, errno, "open %s", dst);
  int placed = in < 0 ? place (sb, dst, false, NULL, err) : 0;
  ar_sb_dirfd_close (&sb->placing);
  if (placed != 0)
    return placed < 0 ? -1 : 0;
  size_t cap = len + 128;
  for (size_t i = 0; i < ARRAY_SIZE (protected_names); i++)
    cap += strlen (protected_names[i].name) + 2;
  for (size_t i = 0; i < sb->n_placed; i++)
    cap += strlen (sb->placed[i].path) + 2;
  text = xrealloc (text, cap);
  len += (size_t) snprintf (text + len, cap - len, "%s# agentrun sandbox: names held read-only\n",
                            len && text[len - 1] != '\n' ? "\n" : "");
  for (size_t i = 0; i < ARRAY_SIZE (protected_names); i++)
    if (strncmp (protected_names[i].name, ".git/", 5))
      len += (size_t) snprintf (text + len, cap - len, "/%s\n", protected_names[i].name);
  /* a folder held whole by a file of ours (.claude): git lists a file, not
   * an empty folder; a real one's untracked files stay listed */
  for (size_t i = 0; i < sb->n_placed; i++)
    {
      const char *base = strrchr (sb->placed[i].path, '/');
      size_t n = (size_t) (base - sb->placed[i].path);
      if (!sb->placed[i].dir && n == strlen (o->workspace) && !strncmp (sb->placed[i].path, o->workspace, n)
          && held_whole (base + 1))
        len += (size_t) snprintf (text + len, cap - len, "/%s\n", base + 1);
    }
  cleanup_close int fd = openat (bundle_fd, "git-exclude", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 || write (fd, text, len) != (ssize_t) len || fchmod (fd, 0644) < 0)
    return ar_err (err, errno, "create %s/git-exclude", bundle);
  /* info/ pinned: a rename of it would take the held file along, and a
   * new info/ made in its place would hold the command's own excludes */
  if (pin_between (o, git, dst, err) < 0)
    return -1;
  o->extra_src = xrealloc (o->extra_src, (o->n_extra + 1) * sizeof *o->extra_src);
  o->extra_dst = xrealloc (o->extra_dst, (o->n_extra + 1) * sizeof *o->extra_dst);
  o->extra_src[o->n_extra] = xasprintf ("%s/git-exclude", bundle);
  o->extra_dst[o->n_extra++] = ar_steal_ptr (dst);
  return 0;
}

/* Is base in dfd still the placeholder p as we made it (the name still is
 * that inode, which is untouched), and bound by no other run (an exclusive
 * flock)? Then fd holds that lock until it is removed. The inode's mark is
 * looked at last, right before the unlinkat. A child of ours forked while we held ours
 * (the janitor, the relay before its exec) shares our lock until it closes
 * its copy, at once: a little wait (*waits, shared by all), then it is
 * another run's. */
static int
still_ours (const struct ar_sb_placed *p, int dfd, const char *base, int *waits)
{
  struct stat st;
  int fd = openat (dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (p->dir ? O_DIRECTORY : 0));
  if (fd < 0)
    return -1;
  int r;
  while ((r = flock (fd, LOCK_EX | LOCK_NB)) < 0 && (errno == EWOULDBLOCK || errno == EINTR) && (*waits)-- > 0)
    usleep (4000);
  if (r < 0 && no_flock (errno))
    r = 0;
  /* a file as made, untouched; a folder's time changes with what is made
   * in it (our own placeholders too), and rmdir takes only an empty one */
  if (r < 0 || fstatat (dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != p->dev || st.st_ino != p->ino
      || fstat (fd, &st) < 0 || st.st_dev != p->dev || st.st_ino != p->ino || (!p->dir && !marked (&st, p->size)))
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* Remove the placeholder p if it still is one, by name in its folder
 * reached without a symlink. The person may have saved a file of theirs
 * there meanwhile, by a rename over the name (an editor's atomic save) or
 * by writing into it: the name is checked to be the inode we opened, and
 * that inode still marked and as large as made, right before unlinkat.
 * What remains is the kernel's: it has no unlink-if-this-inode, so a
 * rename over the name, or a write into the placeholder, that lands
 * between those checks and the unlinkat (a few microseconds) is lost. */
static void
remove_placed (const struct ar_sb_placed *p, struct ar_sb_dirfd *c, int *waits)
{
  const char *base;
  int dfd = open_parent (c, p->path, &base);
  cleanup_close int fd = dfd < 0 ? -1 : still_ours (p, dfd, base, waits);
  if (fd < 0)
    return;
  if (unlinkat (dfd, base, p->dir ? AT_REMOVEDIR : 0) < 0 && !(p->dir && (errno == ENOTEMPTY || errno == EEXIST)))
    ar_warn ("sandbox cleanup: remove the placeholder %s: %s", p->path, strerror (errno));
}

/* The repositories the run made below each writable folder, said (those
 * the walk finds within its budgets). */
static void
report_new_repositories (struct ar_sandbox *sb)
{
  for (size_t r = 0; r < sb->n_git_roots && !sb->bundle_only; r++)
    {
      struct gitwalk g = { .root = sb->git_roots[r], .budget = MODULES_MAX, .report = true };
      size_t n = strlen (g.root);
      for (size_t i = 0; i < sb->n_git_known; i++)
        if (strncmp (sb->git_known[i], g.root, n) == 0 && sb->git_known[i][n] == '/')
          seen (&g, sb->git_known[i]);
      walk_nested (sb, &g, NULL);
      for (size_t i = 0; i < g.n_found; i++)
        free (g.found[i]);
      free (g.found);
    }
  /* said once */
  for (size_t r = 0; r < sb->n_git_roots; r++)
    free (sb->git_roots[r]);
  sb->n_git_roots = 0;
}

void
ar_sbpaths_cleanup (struct ar_sandbox *sb)
{
  report_new_repositories (sb);
  /* ours let go first: a lock of ours would keep us from removing too */
  for (size_t i = 0; i < sb->n_held; i++)
    close (sb->held[i]);
  sb->n_held = 0;
  int waits = 50;
  struct ar_fsid fs;
  struct ar_sb_dirfd dir = { NULL, -1 };
  ar_sb_dirfd_close (&sb->placing);
  /* removed with the ids they were made with (place) */
  ar_fsid_enter (&fs, sb->prof.uid, sb->prof.gid);
  for (size_t i = sb->n_placed; i-- > 0;)
    {
      remove_placed (&sb->placed[i], &dir, &waits);
      free (sb->placed[i].path);
    }
  ar_sb_dirfd_close (&dir);
  ar_fsid_leave (&fs);
  free (sb->placed);
  sb->placed = NULL;
  sb->n_placed = 0;
  struct stat st;
  if (sb->new_git && !sb->bundle_only && lstat (sb->new_git, &st) == 0)
    ar_warn ("sandbox: the run created %s: its config and hooks were written by the command; review them "
             "before running git there on the host",
             sb->new_git);
  free (sb->new_git);
  sb->new_git = NULL;
}
