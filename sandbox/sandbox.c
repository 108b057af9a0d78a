/* The sandbox options, the host lookups and the agent bundle: see
 * sandbox.h. The run itself (relay, container, signals, cleanup) is in
 * run.c, so that this file stays about the profile. */
#include "config.h"
#include "sandbox.h"
#include "budgets.h"
#include "pathname.h"
#include "places.h"
#include "sbpaths.h"
#include "selfexe.h"
#include "landlock.h"
#include "fault.h"
#include "log.h"
#include "profile.h"
#include "probes.h"
#include "rootless.h"
#include "spec.h"
#include "unixconn.h"
#include "strio.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

const struct ar_opt ar_sandbox_opts[AR_SB_N_OPTS + 1] = {
  { "workspace", 'w', true, AR_SB_WORKSPACE },
  { "out", 'o', true, AR_SB_OUT },
  { "ro", 0, true, AR_SB_RO },
  { "rw", 0, true, AR_SB_RW },
  { "mask", 0, true, AR_SB_MASK },
  { "allow", 'a', true, AR_SB_ALLOW },
  { "no-network", 0, false, AR_SB_NO_NETWORK },
  { "audit", 0, true, AR_SB_AUDIT },
  { "env", 'e', true, AR_SB_ENV },
  { "memory", 'm', true, AR_SB_MEMORY },
  { "pids", 0, true, AR_SB_PIDS },
  { "cpus", 0, true, AR_SB_CPUS },
  { "bundle", 'b', true, AR_SB_BUNDLE },
  { "unix-socket", 0, true, AR_SB_UNIX_SOCKET },
  { "allow-home", 0, false, AR_SB_ALLOW_HOME },
  { "allow-system-path", 0, false, AR_SB_ALLOW_SYSTEM_PATH },
  { "tmp-size", 0, true, AR_SB_TMP_SIZE },
  { "home-size", 0, true, AR_SB_HOME_SIZE },
  { "nofile", 0, true, AR_SB_NOFILE },
  { "max-sockets", 0, true, AR_SB_MAX_SOCKETS },
  { "net-max-conns", 0, true, AR_SB_NET_MAX_CONNS },
  { "net-idle-timeout", 0, true, AR_SB_NET_IDLE_TIMEOUT },
  { "shm-size", 0, true, AR_SB_SHM_SIZE },
  { "allow-sysv-ipc", 0, false, AR_SB_ALLOW_SYSV_IPC },
  { "inotify", 0, true, AR_SB_INOTIFY },
  { "allow-write", 0, true, AR_SB_ALLOW_WRITE },
  { "user", 'u', true, AR_SB_USER },
  { "home", 0, true, AR_SB_HOME },
  { "agent", 0, true, AR_SB_AGENT },
  { "quiet", 'q', false, AR_SB_QUIET },
  { "connect-proxy", 0, false, AR_SB_CONNECT_PROXY },
  { NULL, 0, false, 0 },
};

const char
    ar_sandbox_opts_help[] = "  -w, --workspace DIR   read-write at its own path, the working directory (default: .)\n"
                             "  -o, --out DIR         another read-write folder\n"
                             "  --ro PATH, --rw PATH  bind a host path read-only / read-write at its own path\n"
                             "  --mask PATH           hide PATH (credential folders are always hidden)\n"
                             "  -a, --allow NAME[:PORT][=HOST:PORT]  an endpoint the sandbox may reach (port 443)\n"
                             "  --no-network          no endpoint at all, whatever --allow says\n"
                             "  --audit FILE          one JSON line per connection and refused lookup\n"
                             "  -e, --env NAME[=VALUE]  pass a variable (NAME alone: the caller's value)\n"
                             "  -m, --memory SIZE     memory limit, tmpfs and socket buffers included (k, m, g;\n"
                             "                        default: half the RAM, at most 16g, where a cgroup can be\n"
                             "                        made; unlimited or 0: none)\n"
                             "  --pids N              process limit (default 4096): RLIMIT_NPROC in the sandbox's\n"
                             "                        user namespace\n"
                             "  --cpus N              CPU limit (e.g. 1.5); --memory and --cpus need a cgroup:\n"
                             "                        rootless without a writable one they are refused\n"
                             "  -b, --bundle DIR      write the bundle there and exit, without running\n"
                             "  --unix-socket PATH    bind one host Unix socket in at its own path (e.g.\n"
                             "                        $SSH_AUTH_SOCK), the only pathname socket connect(2)\n"
                             "                        may reach; whoever connects gets what it serves\n"
                             "  --allow-home          let the workspace, --out or a --rw be (or hold) your home\n"
                             "                        or lie in a hidden folder of it (~/.config, ~/.cache)\n"
                             "  --allow-system-path   let the workspace, --out or a --rw be a system folder\n"
                             "                        (/etc, /usr, /tmp, /home, ...); /proc, /sys, /dev: never\n"
                             "  --tmp-size SIZE       size of the /tmp tmpfs (default: 1g, or RAM/8 if less)\n"
                             "  --home-size SIZE      size of the home tmpfs (same default)\n"
                             "  --shm-size SIZE       SysV shared memory in all (default 256m)\n"
                             "  --allow-sysv-ipc      where no limit can be set (a plain user without room for\n"
                             "                        two user namespaces): let shmget, msgget, semget work,\n"
                             "                        unbounded (refused there by default)\n"
                             "  --inotify N[:WATCHES] inotify instances (and watches) of the sandbox in all\n"
                             "                        (default 64:8192, at most a quarter and an eighth of\n"
                             "                        its user's, so its user's own tools keep theirs)\n"
                             "  --nofile N            open files per process (default: 1024, less when --pids\n"
                             "                        times it would pass half of fs.file-max)\n"
                             "  --max-sockets N       TCP and UDP sockets of the sandbox alive at once (default:\n"
                             "                        what keeps their buffers within a quarter of the host's\n"
                             "                        tcp_mem, at least 128; unlimited: no cap)\n"
                             "  --net-max-conns N     connections through the relay at once (default 1024)\n"
                             "  --net-idle-timeout S  cut a relayed connection idle for S seconds (default 900;\n"
                             "                        0: never)\n"
                             "  --allow-write PATH    leave a protected name of a writable folder (.git/config,\n"
                             "                        .bashrc, .vscode, ...: see agentrun-sandbox(1)) writable\n"
                             "  -u, --user UID[:GID]  root only: run as this unprivileged uid (never 0; default:\n"
                             "                        the sudo caller, else nobody; through sudo: only the\n"
                             "                        caller's ids or nobody's)\n"
                             "  -q, --quiet           no note at start, no line per blocked name\n";

/* System folders of the host an agent needs to run programs. */
static const char *const sys_dirs[] = {
  "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", NULL,
};

/* Variables kept from the caller (besides PATH, HOME, USER, SHELL set below). */
static const char *const env_keep[] = { "TERM", "LANG", NULL };

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

void
ar_sandbox_init (struct ar_sandbox *sb)
{
  memset (sb, 0, sizeof *sb);
  sb->relay_pid = -1;
  sb->stdout_fd = -1;
  sb->stdin_fd = -1;
  sb->audit_fd = -1;
  sb->prof.pids = AR_AGENT_DEFAULT_PIDS;
  sb->net_max_conns = AR_SB_DEFAULT_NET_MAX_CONNS;
  sb->net_idle_timeout = AR_SB_DEFAULT_NET_IDLE_TIMEOUT;
}

static void
strv_free (char **v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (v[i]);
  free (v);
}

static void
strv_add (char ***v, size_t *n, const char *s)
{
  *v = xrealloc (*v, (*n + 2) * sizeof **v);
  (*v)[(*n)++] = xstrdup (s);
  (*v)[*n] = NULL;
}

void
ar_sandbox_free (struct ar_sandbox *sb)
{
  ar_agent_opts_free (&sb->prof);
  strv_free (sb->env_args, sb->n_env_args);
  strv_free (sb->link_name, sb->n_links);
  strv_free (sb->link_target, sb->n_links);
  free (sb->bundle_out);
  free (sb->save_profile);
  free (sb->probe_src);
  free (sb->id);
  free (sb->tmpdir);
  ar_sbpaths_cleanup (sb);
  for (size_t i = 0; i < sb->n_notes; i++)
    free (sb->notes[i].opt), free (sb->notes[i].path);
  free (sb->notes);
  for (size_t i = 0; i < sb->n_policies; i++)
    free (sb->policies[i].path), free (sb->policies[i].text);
  free (sb->policies);
  for (size_t i = 0; i < sb->n_placed; i++)
    free (sb->placed[i].path);
  free (sb->placed);
  free (sb->held);
  strv_free (sb->allow_write, sb->n_allow_write);
  free (sb->new_git);
  strv_free (sb->git_roots, sb->n_git_roots);
  strv_free (sb->git_known, sb->n_git_known);
  if (sb->audit_fd >= 0)
    close (sb->audit_fd);
  free (sb->state_root);
  free (sb->home_arg);
  strv_free (sb->state, sb->n_state);
  strv_free (sb->state_of, sb->n_state_of);
  strv_free (sb->folders, sb->n_folders);
  strv_free (sb->pass_env, sb->n_pass_env);
  memset (sb, 0, sizeof *sb);
  sb->relay_pid = -1;
  sb->stdout_fd = sb->stdin_fd = sb->audit_fd = -1;
}

/* An existing host path, with symlinks resolved: binds land where the
 * kernel would have gone, and the mount points we create are real folders. */
static int
host_path (const char *opt, const char *arg, char **out, ar_error **err)
{
  char buf[PATH_MAX];
  if (!realpath (arg, buf))
    return ar_err (err, errno, "%s %s: the bind source cannot be used", opt, arg);
  *out = xstrdup (buf);
  return 0;
}

static int
add_bind (struct ar_sandbox *sb, const char *opt, const char *arg, bool writable, ar_error **err)
{
  char *p;
  if (host_path (opt, arg, &p, err) < 0)
    return -1;
  ar_sbpaths_note (sb, opt, arg, writable ? AR_NOTE_BIND : AR_NOTE_RO);
  if (strcmp (p, "/") == 0)
    {
      free (p);
      return ar_err (err, 0, "%s /: binding the whole host is what the sandbox is there to prevent", opt);
    }
  struct ar_agent_opts *o = &sb->prof;
  o->binds = xrealloc (o->binds, (o->n_binds + 1) * sizeof *o->binds);
  o->binds[o->n_binds++] = (struct ar_agent_bind){ .path = p, .writable = writable };
  return 0;
}

/* --unix-socket: a read-only bind of one socket, and the only pathname
 * socket connect(2) may reach (run.agentrun.unixconn). It hands over
 * whatever the socket's server grants. */
static int
add_socket (struct ar_sandbox *sb, const char *arg, ar_error **err)
{
  struct stat st;
  if (stat (arg, &st) < 0)
    return ar_err (err, errno, "--unix-socket %s", arg);
  if (!S_ISSOCK (st.st_mode))
    return ar_err (err, 0, "--unix-socket %s: not a Unix socket", arg);
  if (add_bind (sb, "--unix-socket", arg, false, err) < 0)
    return -1;
  sb->prof.binds[sb->prof.n_binds - 1].socket = true;
  return 0;
}

static int
set_dir (const char *opt, const char *arg, char **slot, ar_error **err)
{
  char *p;
  struct stat st;
  if (host_path (opt, arg, &p, err) < 0)
    return -1;
  if (stat (p, &st) < 0 || !S_ISDIR (st.st_mode) || strcmp (p, "/") == 0)
    {
      ar_err (err, S_ISDIR (st.st_mode) ? 0 : ENOTDIR, "%s %s: needs a folder other than /", opt, p);
      free (p);
      return -1;
    }
  free (*slot);
  *slot = p;
  return 0;
}

/* --user UID[:GID]: only root can map another uid, and never uid or gid 0;
 * GID defaults to the uid's passwd group, else the uid. */
static int
parse_user (struct ar_sandbox *sb, const char *arg, ar_error **err)
{
  unsigned long long u, gv;
  cleanup_free char *uid = xstrdup (arg);
  char *colon = strchr (uid, ':');
  if (colon)
    *colon++ = '\0';
  if (getuid () != 0)
    return ar_err (err, EPERM, "--user %s: only root can choose the uid the command runs as", arg);
  if (ar_opt_uint ("--user", uid, 0xfffffffeULL, &u, err) < 0
      || (colon && ar_opt_uint ("--user", colon, 0xfffffffeULL, &gv, err) < 0))
    return -1;
  if (!colon)
    {
      struct passwd *pw = getpwuid ((uid_t) u);
      gv = pw ? pw->pw_gid : u;
    }
  if (u == 0 || gv == 0)
    return ar_err (err, 0, "--user %s: the command never runs as uid or gid 0", arg);
  sb->has_user = true;
  sb->user_uid = (uid_t) u;
  sb->user_gid = (gid_t) gv;
  return 0;
}

/* --inotify INSTANCES[:WATCHES]: without WATCHES, the default's */
static int
parse_inotify (struct ar_agent_opts *o, const char *arg, ar_error **err)
{
  unsigned long long n, w = 0;
  cleanup_free char *copy = xstrdup (arg);
  char *colon = strchr (copy, ':');
  if (colon)
    *colon = '\0';
  if (ar_opt_uint ("--inotify", copy, 1 << 20, &n, err) < 0
      || (colon && ar_opt_uint ("--inotify", colon + 1, 1 << 30, &w, err) < 0))
    return -1;
  if (n == 0 || (colon && w == 0))
    return ar_err (err, 0, "--inotify %s: needs at least one instance and one watch", arg);
  o->inotify_instances = (long long) n;
  o->inotify_watches = (long long) w;
  return 0;
}

int
ar_sandbox_opt (struct ar_sandbox *sb, int id, const char *arg, ar_error **err)
{
  struct ar_agent_opts *o = &sb->prof;
  unsigned long long v;
  switch (id)
    {
    case AR_SB_WORKSPACE: return set_dir ("--workspace", arg, &o->workspace, err);
    case AR_SB_OUT: ar_sbpaths_note (sb, "--out", arg, AR_NOTE_BIND); return set_dir ("--out", arg, &o->out, err);
    case AR_SB_RO: return add_bind (sb, "--ro", arg, false, err);
    case AR_SB_RW: return add_bind (sb, "--rw", arg, true, err);
    case AR_SB_MASK:
      if (arg[0] != '/')
        return ar_err (err, 0, "--mask %s: needs an absolute path", arg);
      ar_sbpaths_note (sb, "--mask", arg, AR_NOTE_MASK);
      strv_add (&o->masks, &o->n_masks, arg);
      return 0;
    case AR_SB_ALLOW:
      o->allow = xrealloc (o->allow, (o->n_allow + 1) * sizeof *o->allow);
      if (ar_agent_parse_endpoint (arg, &o->allow[o->n_allow], err) < 0)
        return -1;
      /* the same NAME:PORT again: the later one says where it goes (the
       * command line over a preset: --allow api.example.com=127.0.0.1:8443) */
      for (size_t i = 0; i < o->n_allow; i++)
        if (strcmp (o->allow[i].name, o->allow[o->n_allow].name) == 0 && o->allow[i].port == o->allow[o->n_allow].port)
          {
            free (o->allow[i].upstream);
            o->allow[i].upstream = o->allow[o->n_allow].upstream;
            free (o->allow[o->n_allow].name);
            return 0;
          }
      o->n_allow++;
      return 0;
    case AR_SB_NO_NETWORK: o->no_network = true; return 0;
    case AR_SB_AUDIT:
      {
        /* the relay and the netproxy write it; relative paths would land in their cwd */
        char *abs = ar_path_absolute (arg);
        if (!abs || strlen (abs) >= PATH_MAX)
          {
            int e = abs ? ENAMETOOLONG : errno;
            free (abs);
            return ar_err (err, e, "--audit %s: cannot make the path absolute", arg);
          }
        free (o->audit);
        o->audit = abs;
        return 0;
      }
    case AR_SB_ENV:
      if (!arg[0] || arg[0] == '=')
        return ar_err (err, 0, "--env %s: needs NAME or NAME=VALUE", arg);
      strv_add (&sb->env_args, &sb->n_env_args, arg);
      return 0;
    case AR_SB_MEMORY:
      /* no limit at all, not even the default one */
      o->memory_unlimited = strcmp (arg, "unlimited") == 0 || strcmp (arg, "0") == 0;
      o->has_memory = !o->memory_unlimited;
      return o->memory_unlimited ? 0 : ar_agent_parse_size (arg, &o->memory, err);
    case AR_SB_PIDS:
      if (ar_opt_uint ("--pids", arg, 4194304, &v, err) < 0)
        return -1;
      if (v == 0)
        return ar_err (err, 0, "--pids 0: nothing could run");
      o->pids = (int64_t) v;
      return 0;
    case AR_SB_CPUS: o->has_cpus = true; return ar_agent_parse_cpus (arg, &o->cpu_quota, err);
    case AR_SB_UNIX_SOCKET: return add_socket (sb, arg, err);
    case AR_SB_ALLOW_HOME: sb->allow_home = true; return 0;
    case AR_SB_ALLOW_SYSTEM_PATH: sb->allow_system_path = true; return 0;
    case AR_SB_TMP_SIZE: return ar_agent_parse_size_for ("--tmp-size", arg, 1 << 20, &o->tmp_size, err);
    case AR_SB_HOME_SIZE: return ar_agent_parse_size_for ("--home-size", arg, 1 << 20, &o->home_size, err);
    case AR_SB_SHM_SIZE: return ar_agent_parse_size_for ("--shm-size", arg, 1 << 20, &o->shm_size, err);
    case AR_SB_ALLOW_SYSV_IPC: o->allow_sysv_ipc = true; return 0;
    case AR_SB_NOFILE:
      if (ar_opt_uint ("--nofile", arg, 1 << 20, &v, err) < 0)
        return -1;
      if (v < 16)
        return ar_err (err, 0, "--nofile %s: below 16, nothing would start", arg);
      o->nofile = (long long) v;
      return 0;
    case AR_SB_MAX_SOCKETS:
      o->max_sockets_unlimited = strcmp (arg, "unlimited") == 0;
      o->max_sockets = 0;
      if (o->max_sockets_unlimited)
        return 0;
      if (ar_opt_uint ("--max-sockets", arg, AR_SOCKCAP_MAX, &v, err) < 0)
        return -1;
      if (v == 0)
        return ar_err (err, 0, "--max-sockets 0: no socket could be made (unlimited: no cap)");
      o->max_sockets = (long long) v;
      return 0;
    case AR_SB_INOTIFY: return parse_inotify (o, arg, err);
    case AR_SB_NET_MAX_CONNS:
      if (ar_opt_uint ("--net-max-conns", arg, 1000000, &sb->net_max_conns, err) < 0)
        return -1;
      return sb->net_max_conns ? 0 : ar_err (err, 0, "--net-max-conns 0: no connection could be made");
    case AR_SB_NET_IDLE_TIMEOUT: return ar_opt_uint ("--net-idle-timeout", arg, 86400, &sb->net_idle_timeout, err);
    case AR_SB_ALLOW_WRITE:
      {
        char buf[PATH_MAX];
        cleanup_free char *abs = NULL;
        const char *p = realpath (arg, buf) ? buf : (abs = ar_path_absolute (arg)) ? abs : arg;
        strv_add (&sb->allow_write, &sb->n_allow_write, p);
        return 0;
      }
    case AR_SB_USER: return parse_user (sb, arg, err);
    case AR_SB_HOME:
      if (!arg[0])
        return ar_err (err, 0, "--home: needs a folder");
      free (sb->home_arg);
      sb->home_arg = xstrdup (arg);
      return 0;
    case AR_SB_AGENT: return ar_profile_load_preset (sb, arg, err);
    case AR_SB_CONNECT_PROXY: o->connect_proxy = true; return 0;
    case AR_SB_STATE:
      if (!arg[0] || arg[0] == '/' || strstr (arg, ".."))
        return ar_err (err, 0, "state %s: needs a path under the home (no '..')", arg);
      strv_add (&sb->state, &sb->n_state, arg);
      strv_add (&sb->state_of, &sb->n_state_of, sb->preset_name ? sb->preset_name : "profile");
      return 0;
    case AR_SB_FOLDERS:
      if (!ar_sbpaths_is_folder_name (arg))
        return ar_err (err, 0, "folders %s: not a protected folder's name (%s)", arg, ar_sbpaths_folder_names ());
      strv_add (&sb->folders, &sb->n_folders, arg);
      return 0;
    case AR_SB_QUIET: sb->quiet = true; return 0;
    case AR_SB_BUNDLE:
      free (sb->bundle_out);
      sb->bundle_out = xstrdup (arg);
      return 0;
    }
  return ar_err (err, 0, "unknown sandbox option %d", id);
}

void
ar_sandbox_set_args (struct ar_sandbox *sb, char **argv, int argc)
{
  strv_free (sb->prof.args, sb->prof.n_args);
  sb->prof.args = NULL;
  sb->prof.n_args = 0;
  for (int i = 0; i < argc; i++)
    strv_add (&sb->prof.args, &sb->prof.n_args, argv[i]);
}

/* ---- the host ---- */

/* --user through sudo: a sudoers line may grant agentrun alone, and that
 * must not become a way to run as any other user and reach their files. The
 * sudo caller may choose its own ids or nobody's, nothing else; a real root
 * (no SUDO_UID, or root's own sudo) may choose any uid but 0. */
static int
sudo_user_ok (uid_t uid, gid_t gid, ar_error **err)
{
  const char *su = getenv ("SUDO_UID"), *sg = getenv ("SUDO_GID");
  unsigned long long cu, cg;
  if (!su || ar_opt_uint ("SUDO_UID", su, 0xfffffffeULL, &cu, err) < 0)
    return su ? -1 : 0;
  if (cu == 0)
    return 0;
  if (!sg || ar_opt_uint ("SUDO_GID", sg, 0xfffffffeULL, &cg, err) < 0)
    return sg ? -1 : ar_err (err, 0, "--user: SUDO_UID is set but not SUDO_GID");
  if ((uid != cu && uid != 65534) || (gid != cg && gid != 65534))
    return ar_err (err, EPERM,
                   "--user %u:%u: through sudo the command runs as the sudo caller (%llu:%llu) or as nobody "
                   "(65534), never as another user",
                   (unsigned) uid, (unsigned) gid, cu, cg);
  return 0;
}

/* Who the agent runs as: the caller, or the sudo caller; never uid 0. Root
 * without SUDO_UID gets nobody (65534): the sandbox holds no root to drop. */
static int
identity (struct ar_sandbox *sb, ar_error **err)
{
  struct ar_agent_opts *o = &sb->prof;
  o->uid = getuid ();
  o->gid = getgid ();
  if (sb->has_user)
    {
      o->uid = sb->user_uid;
      o->gid = sb->user_gid;
      return sudo_user_ok (o->uid, o->gid, err);
    }
  /* SUDO_* is believed only from a real root: a set-uid install must not
   * let a user name another uid */
  if (o->uid != 0)
    return 0;
  const char *su = getenv ("SUDO_UID"), *sg = getenv ("SUDO_GID");
  unsigned long long u, gv;
  o->uid = o->gid = 65534;
  sb->as_nobody = !su || !sg;
  if (!su || !sg)
    return 0;
  if (ar_opt_uint ("SUDO_UID", su, 0xfffffffeULL, &u, err) < 0
      || ar_opt_uint ("SUDO_GID", sg, 0xfffffffeULL, &gv, err) < 0)
    return -1;
  if (u != 0 && gv != 0)
    {
      o->uid = (uid_t) u;
      o->gid = (gid_t) gv;
    }
  else
    sb->as_nobody = true;
  return 0;
}

static bool
usable_home (const char *h)
{
  return h && h[0] == '/' && h[1] && strcmp (h, "/nonexistent") != 0 && strlen (h) < PATH_MAX;
}

static void
add_cred_home (struct ar_agent_opts *o, const char *h)
{
  if (!usable_home (h))
    return;
  for (size_t i = 0; i < o->n_cred_homes; i++)
    if (strcmp (o->cred_homes[i], h) == 0)
      return;
  strv_add (&o->cred_homes, &o->n_cred_homes, h);
}

/* The home path: $HOME when it is a folder owned by the agent's uid (so a
 * test or a wrapper can point it elsewhere; under sudo it is root's and
 * fails that test), else the passwd entry, else /home/USER. Credential
 * folders are masked under every home that could apply. */
static void
home_and_user (struct ar_agent_opts *o)
{
  struct passwd *pw = getpwuid (o->uid);
  const char *env_home = getenv ("HOME");
  struct stat st;
  free (o->user);
  o->user = xstrdup (pw ? pw->pw_name : "sandbox");
  const char *sh = pw && pw->pw_shell && pw->pw_shell[0] == '/' ? pw->pw_shell : "/bin/sh";
  if (strstr (sh, "nologin") || strcmp (sh, "/bin/false") == 0 || strcmp (sh, "/usr/bin/false") == 0)
    sh = "/bin/sh";
  free (o->shell);
  o->shell = xstrdup (sh);
  if (usable_home (env_home) && stat (env_home, &st) == 0 && S_ISDIR (st.st_mode) && st.st_uid == o->uid)
    o->home = xstrdup (env_home);
  else if (pw && usable_home (pw->pw_dir))
    o->home = xstrdup (pw->pw_dir);
  else
    o->home = xasprintf ("/home/%s", o->user);
  add_cred_home (o, o->home);
  if (pw)
    add_cred_home (o, pw->pw_dir);
  add_cred_home (o, env_home);
  add_cred_home (o, "/root");
}

static void
env_set (struct ar_agent_opts *o, const char *name, const char *value)
{
  size_t n = strlen (name);
  cleanup_free char *kv = xasprintf ("%s=%s", name, value);
  for (size_t i = 0; i < o->n_env; i++)
    if (strncmp (o->env[i], name, n) == 0 && o->env[i][n] == '=')
      {
        free (o->env[i]);
        o->env[i] = ar_steal_ptr (kv);
        return;
      }
  strv_add (&o->env, &o->n_env, kv);
}

/* A host folder the sandbox sees at the same path: under a system folder,
 * the workspace, --out, a bind, or a home that is bound in (--home). */
static bool
seen_inside (const struct ar_sandbox *sb, const char *dir)
{
  const struct ar_agent_opts *o = &sb->prof;
  struct stat st;
  /* under a --home, what is there is DIR's, not the real home's */
  cleanup_free char *in_home = o->home_src && ar_path_under (dir, o->home)
                                   ? xasprintf ("%s%s", o->home_src, dir + strlen (o->home))
                                   : NULL;
  if (dir[0] != '/' || stat (in_home ? in_home : dir, &st) < 0 || !S_ISDIR (st.st_mode))
    return false;
  if (in_home)
    return true;
  for (size_t i = 0; i < o->n_sys_dirs; i++)
    if (ar_path_under (dir, o->sys_dirs[i]))
      return true;
  for (size_t i = 0; i < sb->n_links; i++)
    if (ar_path_under (dir, sb->link_name[i]))
      return true;
  for (size_t i = 0; i < o->n_binds; i++)
    if (!o->binds[i].socket && ar_path_under (dir, o->binds[i].path))
      return true;
  return ar_path_under (dir, o->workspace) || (o->out && ar_path_under (dir, o->out))
         || (o->home_src && ar_path_under (dir, o->home));
}

/* The caller's PATH, less the folders the sandbox does not have (a
 * ~/.local/bin under the empty home): a user's own tools are found where
 * they are bound in, and a name is never looked up in a folder that is
 * not there. */
static char *
kept_path (const struct ar_sandbox *sb)
{
  const char *path = getenv ("PATH");
  if (!path || !*path)
    return xstrdup (DEFAULT_PATH);
  cleanup_free char *copy = xstrdup (path);
  char *out = xmalloc0 (strlen (path) + 1), *save = NULL;
  for (char *d = strtok_r (copy, ":", &save); d; d = strtok_r (NULL, ":", &save))
    if (seen_inside (sb, d))
      {
        if (*out)
          strcat (out, ":");
        strcat (out, d);
      }
  if (!*out)
    {
      free (out);
      return xstrdup (DEFAULT_PATH);
    }
  return out;
}

static void
build_env (struct ar_sandbox *sb)
{
  struct ar_agent_opts *o = &sb->prof;
  cleanup_free char *path = kept_path (sb);
  env_set (o, "PATH", path);
  env_set (o, "HOME", o->home);
  env_set (o, "USER", o->user);
  env_set (o, "SHELL", o->shell);
  for (size_t i = 0; env_keep[i]; i++)
    if (getenv (env_keep[i]))
      env_set (o, env_keep[i], getenv (env_keep[i]));
  if (o->terminal && !getenv ("TERM"))
    env_set (o, "TERM", "xterm");
  /* --connect-proxy: for the tools that prefer a proxy; names the sandbox
   * reaches itself (loopback) never go through it */
  static const char *const proxy_vars[] = { "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy" };
  for (size_t i = 0; o->connect_proxy && !o->no_network && i < ARRAY_SIZE (proxy_vars); i++)
    env_set (o, proxy_vars[i], AR_AGENT_PROXY_URL);
  if (o->connect_proxy && !o->no_network)
    {
      env_set (o, "NO_PROXY", "localhost,127.0.0.1,::1");
      env_set (o, "no_proxy", "localhost,127.0.0.1,::1");
    }
  for (size_t i = 0; i < sb->n_env_args; i++)
    {
      char *eq = strchr (sb->env_args[i], '=');
      if (eq)
        {
          cleanup_free char *name = strndup (sb->env_args[i], (size_t) (eq - sb->env_args[i]));
          env_set (o, name, eq + 1);
        }
      else if (getenv (sb->env_args[i]))
        {
          /* the caller's value (an API key, often) goes to the command at
           * exec, never into config.json */
          cleanup_free char *kv = xasprintf ("%s=%s", sb->env_args[i], getenv (sb->env_args[i]));
          strv_add (&sb->pass_env, &sb->n_pass_env, kv);
        }
      else
        ar_debug ("--env %s: not set in the caller's environment, left out", sb->env_args[i]);
    }
}

/* Through sudo, the paths the person chooses or owns (--home, the state
 * folder in their data folder, a --bundle folder) are made, opened and
 * written with their file-system ids, never root's: root would follow
 * their symlinks anywhere (a ~/.local planted to point at a folder of
 * root's) and make there what the person could not. Root without sudo is
 * its own invoker: nothing changes. */
static void
as_invoker (struct ar_fsid *fs)
{
  uid_t uid;
  gid_t gid;
  ar_sbpaths_invoker (&uid, &gid, NULL);
  ar_fsid_enter (fs, uid, gid);
}

/* Give name in dfd ("" : dfd itself), just made by us, to uid:gid; never
 * through a symlink. Under the invoker's file-system ids root has no
 * CAP_CHOWN: for another uid than theirs (root without sudo giving to
 * nobody, --user) root's ids come back for this one call on what we made,
 * which is no more than the run as that uid gets. */
static int
give_made (int dfd, const char *name, uid_t uid, gid_t gid)
{
  int flags = *name ? AT_SYMLINK_NOFOLLOW : AT_EMPTY_PATH;
  struct stat st;
  if (geteuid () != 0)
    return 0;
  if (fstatat (dfd, name, &st, flags) < 0)
    return -1;
  if (st.st_uid == uid && st.st_gid == gid)
    return 0;
  uid_t fsuid = (uid_t) setfsuid ((uid_t) -1);
  gid_t fsgid = (gid_t) setfsgid ((gid_t) -1);
  setfsuid (0);
  setfsgid (0);
  int r = fchownat (dfd, name, uid, gid, flags);
  int e = errno;
  setfsgid (fsgid);
  setfsuid (fsuid);
  errno = e;
  return r;
}

/* A folder or a file (a name without a trailing '/') made for the agent when
 * missing: 0700 / 0600, its owner the agent's uid. name is taken in the
 * folder dfd, never through a symlink of its own; shown is what errors call
 * it. Made with the caller's file-system ids (as_invoker), then given to
 * the agent by its fd when the agent is another uid (give_made). */
static int
make_for_agent_at (const struct ar_agent_opts *o, int dfd, const char *name, const char *shown, bool dir, ar_error **err)
{
  struct stat st;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return 0;
  if (errno != ENOENT)
    return ar_err (err, errno, "stat %s", shown);
  cleanup_close int fd = -1;
  if (dir
      && (mkdirat (dfd, name, 0700) < 0 || (fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0))
    return ar_err (err, errno, "create %s", shown);
  if (!dir)
    {
      /* a JSON state file starts as an empty object: agents call an empty
       * file corrupt (Claude Code does) */
      size_t n = strlen (name);
      bool json = n > 5 && strcmp (name + n - 5, ".json") == 0;
      fd = openat (dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0 || (json && write (fd, "{}\n", 3) != 3))
        return ar_err (err, errno, "create %s", shown);
    }
  if (give_made (fd, "", o->uid, o->gid) < 0)
    return ar_err (err, errno, "chown %s to uid %u", shown, (unsigned) o->uid);
  return 0;
}

/* --home DIR: bound read-write at the home path, so what the agent keeps
 * there lasts; the credential masks apply inside it as in any home. */
static int
persistent_home (struct ar_sandbox *sb, ar_error **err)
{
  struct ar_agent_opts *o = &sb->prof;
  struct ar_fsid fs;
  if (!sb->home_arg)
    return 0;
  as_invoker (&fs);
  int r = make_for_agent_at (o, AT_FDCWD, sb->home_arg, sb->home_arg, true, err);
  ar_fsid_leave (&fs);
  if (r < 0)
    return ar_err_prefix (err, "--home");
  return set_dir ("--home", sb->home_arg, &o->home_src, err);
}

/* The folders of rel (each component followed by a '/'; what follows the
 * last '/' is left alone) walked down from the folder fd (taken), those
 * missing made 0700 and, when we are root, given to uid:gid (by the fd of
 * the folder just made); nofollow: no folder on the way may be a symlink.
 * Called with the invoker's file-system ids (as_invoker): through sudo a
 * symlink followed on the way leads only where the person could go and
 * make folders. shown names fd in errors. Returns an O_PATH fd of the last
 * folder. */
static int
walk_made (int fd, const char *shown, const char *rel, bool nofollow, uid_t uid, gid_t gid, ar_error **err)
{
  int flags = O_PATH | O_DIRECTORY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
  cleanup_free char *buf = xstrdup (rel);
  for (char *c = buf, *slash; (slash = strchr (c, '/')); c = slash + 1)
    {
      *slash = '\0';
      int next = *c ? openat (fd, c, flags) : fcntl (fd, F_DUPFD_CLOEXEC, 0);
      if (next < 0 && errno == ENOENT && mkdirat (fd, c, 0700) == 0 && (next = openat (fd, c, flags)) >= 0
          && give_made (next, "", uid, gid) < 0)
        {
          int ce = errno;
          close (next);
          next = -1;
          errno = ce;
        }
      int e = errno;
      close (fd);
      if (next < 0)
        return ar_err (err, e, "%s/%s%s", shown, buf,
                       nofollow && (e == ELOOP || e == ENOTDIR) ? ": not a folder (a symlink there is never followed)"
                                                                : "");
      fd = next;
      *slash = '/';
    }
  return fd;
}

static int
open_dir (const char *path, struct stat *st, ar_error **err)
{
  int fd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, st) < 0)
    {
      int e = errno;
      if (fd >= 0)
        close (fd);
      return ar_err (err, e, "%s", path);
    }
  return fd;
}

/* Where a preset's state lasts without --home: a folder of agentrun's own
 * per preset, DATA/agentrun/state/NAME, DATA being $XDG_DATA_HOME (else
 * the invoking user's ~/.local/share); never the person's real ~/.claude
 * or ~/.codex, whose hooks, MCP servers and notify commands the person's
 * own agent runs on the host. Caller frees; NULL when no home is known. */
static char *
data_dir (const char *home)
{
  const char *xdg = getenv ("XDG_DATA_HOME");
  if (xdg && xdg[0] == '/')
    return xstrdup (xdg);
  return home && home[0] == '/' ? xasprintf ("%s/.local/share", home) : NULL;
}

/* The folder base/rel of a state path rel lies in, opened (O_PATH), the
 * folders on the way made when missing (a fresh home has no ~/.config).
 * With --home, base is that folder, the agent's, written in earlier runs;
 * else it is the preset's state folder, made here for the invoking user:
 * the person's data folder (~/.local/share) as it resolves, and from
 * agentrun/ down no symlink, or one planted there would carry the creation
 * (and the agent's ownership) anywhere on the host. */
static int
open_state_parent (struct ar_sandbox *sb, const char *name, const char *rel, char **base, ar_error **err)
{
  struct ar_agent_opts *o = &sb->prof;
  struct stat st;
  int fd;
  if (o->home_src)
    {
      *base = xstrdup (o->home_src);
      if ((fd = open_dir (*base, &st, err)) < 0)
        return -1;
      return walk_made (fd, *base, rel, true, st.st_uid, st.st_gid, err);
    }
  uid_t uid;
  gid_t gid;
  cleanup_free char *home = NULL;
  ar_sbpaths_invoker (&uid, &gid, &home);
  cleanup_free char *data = data_dir (home);
  if (!data)
    return ar_err (err, 0, "the invoking user (uid %u) has no home for the state folder of %s; give --home DIR",
                   (unsigned) uid, name);
  *base = xasprintf ("%s/agentrun/state/%s", data, name);
  cleanup_free char *down = xasprintf ("%s/", data + 1);
  cleanup_free char *own = xasprintf ("agentrun/state/%s/%s", name, rel);
  if ((fd = open_dir ("/", &st, err)) < 0 || (fd = walk_made (fd, "", down, false, uid, gid, err)) < 0)
    return -1;
  return walk_made (fd, data, own, true, uid, gid, err);
}

/* The paths a preset keeps between runs (~/.claude, ~/.codex), made when
 * missing: with --home they are in that folder, which is bound whole; else
 * each is bound read-write from the preset's state folder at its path in
 * the home. */
static int
state_binds (struct ar_sandbox *sb, ar_error **err)
{
  struct ar_agent_opts *o = &sb->prof;
  for (size_t i = 0; i < sb->n_state; i++)
    {
      cleanup_free char *rel = xstrdup (sb->state[i]);
      cleanup_free char *base = NULL;
      size_t n = strlen (rel);
      bool dir = rel[n - 1] == '/';
      if (dir)
        rel[n - 1] = '\0';
      const char *leaf = strrchr (rel, '/') ? strrchr (rel, '/') + 1 : rel;
      struct stat st;
      struct ar_fsid fs;
      as_invoker (&fs);
      cleanup_close int dfd = open_state_parent (sb, sb->state_of[i], rel, &base, err);
      cleanup_free char *p = base ? xasprintf ("%s/%s", base, rel) : NULL;
      int r = dfd < 0 || make_for_agent_at (o, dfd, leaf, p, dir, err) < 0 ? -1 : 0;
      int e = r == 0 && !o->home_src && fstatat (dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 ? errno : 0;
      ar_fsid_leave (&fs);
      if (r < 0)
        return ar_err_prefix (err, "agent state");
      if (o->home_src)
        continue;
      /* bound by its name: what was just made or found, no symlink, and
       * no file with another name (a hard link to one of the host's) */
      if (e)
        return ar_err (err, e, "agent state: %s", p);
      if (dir ? !S_ISDIR (st.st_mode) : !S_ISREG (st.st_mode))
        return ar_err (err, 0, "agent state: %s: not a %s (a symlink there is never followed)", p,
                       dir ? "folder" : "file");
      if (!dir && st.st_nlink != 1)
        return ar_err (err, 0, "agent state: %s: a file with other names (hard links), not bound", p);
      o->binds = xrealloc (o->binds, (o->n_binds + 1) * sizeof *o->binds);
      o->binds[o->n_binds++] = (struct ar_agent_bind){ .path = xasprintf ("%s/%s", o->home, rel),
                                                       .src = ar_steal_ptr (p),
                                                       .writable = true };
    }
  return 0;
}

/* Real folders are bound; symlinks (merged /usr) are recreated as symlinks. */
static int
scan_sys_dirs (struct ar_sandbox *sb, ar_error **err)
{
  for (size_t i = 0; sys_dirs[i]; i++)
    {
      struct stat st;
      if (lstat (sys_dirs[i], &st) < 0)
        {
          if (errno == ENOENT)
            continue;
          return ar_err (err, errno, "system folder %s", sys_dirs[i]);
        }
      if (S_ISLNK (st.st_mode))
        {
          char t[PATH_MAX];
          ssize_t n = readlink (sys_dirs[i], t, sizeof t - 1);
          if (n < 0)
            return ar_err (err, errno, "readlink %s", sys_dirs[i]);
          t[n] = '\0';
          strv_add (&sb->link_name, &sb->n_links, sys_dirs[i]);
          sb->link_target = xrealloc (sb->link_target, (sb->n_links + 1) * sizeof *sb->link_target);
          sb->link_target[sb->n_links - 1] = xstrdup (t);
        }
      else if (S_ISDIR (st.st_mode))
        strv_add (&sb->prof.sys_dirs, &sb->prof.n_sys_dirs, sys_dirs[i]);
    }
  return 0;
}

/* The agent seccomp profile is built into the binary (make generates
 * sandbox/agent_profile.c from contrib/seccomp/agent.json, which is also
 * installed for other runtimes): the sandbox never depends on finding, or
 * being able to read, a data file at run time. */
static int
load_seccomp (struct ar_agent_opts *o, ar_error **err)
{
  if (ar_agent_seccomp_len == 0)
    return ar_err (err, ENOENT, "seccomp step: this build carries an empty agent seccomp profile");
  free (o->seccomp_json);
  o->seccomp_json = xmalloc0 (ar_agent_seccomp_len + 1);
  memcpy (o->seccomp_json, ar_agent_seccomp_json, ar_agent_seccomp_len);
  o->seccomp_len = ar_agent_seccomp_len;
  return 0;
}

char *
ar_sandbox_find_helper (const char *name, ar_error **err)
{
  cleanup_free char *self = ar_selfexe_path ();
  if (self)
    {
      char *slash = strrchr (self, '/');
      if (slash)
        {
          *slash = '\0';
          char *p = xasprintf ("%s/%s", self, name);
          if (access (p, X_OK) == 0)
            return p;
          free (p);
        }
    }
  char *p = ar_find_in_path (name);
  if (p)
    return p;
  ar_err (err, ENOENT, "%s not found next to agentrun nor in PATH", name);
  return NULL;
}

static int
read_sysctl (const char *path, long *v)
{
  char buf[32] = "";
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read (fd, buf, sizeof buf - 1) <= 0)
    return -1;
  *v = strtol (buf, NULL, 10);
  return 0;
}

/* True when this process runs under no AppArmor profile ("unconfined"). */
static bool
apparmor_unconfined (void)
{
  static const char *const paths[] = { "/proc/self/attr/apparmor/current", "/proc/self/attr/current", NULL };
  char buf[64] = "";
  for (const char *const *p = paths; *p; p++)
    {
      cleanup_close int fd = open (*p, O_RDONLY | O_CLOEXEC);
      if (fd >= 0 && read (fd, buf, sizeof buf - 1) > 0)
        return strcmp (buf, "unconfined\n") == 0 || strcmp (buf, "unconfined") == 0; /* else "NAME (MODE)" */
    }
  return true;
}

int
ar_sandbox_check_userns (ar_error **err)
{
  long v;
  if (read_sysctl ("/proc/sys/user/max_user_namespaces", &v) == 0 && v == 0)
    return ar_err (err, 0,
                   "user namespace step: user namespaces are disabled on this host "
                   "(user.max_user_namespaces = 0); allow them with: sysctl -w user.max_user_namespaces=15000");
  if (geteuid () == 0)
    return 0; /* the two policies below only restrict unprivileged callers */
  if (read_sysctl ("/proc/sys/kernel/unprivileged_userns_clone", &v) == 0 && v == 0)
    return ar_err (err, 0,
                   "user namespace step: unprivileged user namespaces are disabled "
                   "(kernel.unprivileged_userns_clone = 0); allow them with: sysctl -w "
                   "kernel.unprivileged_userns_clone=1, "
                   "or run agentrun through sudo");
  /* Under a profile (ours, loaded) the kernel asks that profile instead. */
  if ((read_sysctl ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", &v) == 0 && v == 1 && apparmor_unconfined ())
      || ar_fault_fails ("sandbox-apparmor-userns"))
    return ar_err (err, 0,
                   "user namespace step: AppArmor restricts unprivileged user namespaces "
                   "(kernel.apparmor_restrict_unprivileged_userns = 1) and agentrun runs without its "
                   "profile " AR_APPARMOR_PROFILE "; load it with: apparmor_parser -r " AR_APPARMOR_PROFILE
                   " (the package and make install put it there), or run agentrun through sudo");
  return 0;
}

/* Landlock is a second wall: where the kernel has it, the bundle asks for it
 * (and the container then fails closed if it cannot be applied); where it
 * does not, the mount layout alone confines, and we say so. */
static void
sandbox_landlock (struct ar_agent_opts *o)
{
  ar_error *lerr = NULL;
  int abi = ar_landlock_abi (&lerr);
  if (abi < 0)
    {
      ar_warn ("%s: the sandbox has the mount layout as its only filesystem wall", lerr->msg);
      ar_error_free (lerr);
      abi = 0;
    }
  o->landlock_abi = abi;
}

int
ar_sandbox_prepare (struct ar_sandbox *sb, ar_error **err)
{
  struct ar_agent_opts *o = &sb->prof;
  if (o->n_args == 0)
    return ar_err (err, 0, "no command given (agentrun sandbox [options] -- CMD [ARGS])");
  if (!o->workspace && set_dir ("workspace", ".", &o->workspace, err) < 0)
    return -1;
  if (identity (sb, err) < 0)
    return -1;
  home_and_user (o);
  if (persistent_home (sb, err) < 0 || state_binds (sb, err) < 0)
    return -1;
  if (ar_places_check (o, sb->allow_home, sb->allow_system_path, err) < 0 || ar_budgets_fill (o, err) < 0)
    return -1;
  /* a pty only for a person at a terminal: anything redirected stays as it is */
  if (!sb->no_terminal && sb->stdin_fd < 0 && sb->stdout_fd < 0 && sb->tty >= 0
      && (sb->tty > 0 || (isatty (STDIN_FILENO) && isatty (STDOUT_FILENO))))
    o->terminal = true;
  if (scan_sys_dirs (sb, err) < 0 || load_seccomp (o, err) < 0)
    return -1;
  build_env (sb);
  sandbox_landlock (o);
  /* `--ro WORKSPACE` means what it says: the workspace is not written */
  for (size_t i = 0; i < o->n_binds; i++)
    if (!o->binds[i].writable && strcmp (o->binds[i].path, o->workspace) == 0)
      o->workspace_ro = true;
  if (ar_profile_command_folders (sb, err) < 0)
    return -1;
  ar_debug ("sandbox: options checked");
  if (ar_sbpaths_prepare (sb, err) < 0 || ar_agent_assign_addrs (o, err) < 0)
    return -1;
  ar_debug ("sandbox: protected names held (%zu placeholders made or found)", sb->n_placed);
  if ((o->n_allow > 0 || sb->ask) && !o->no_network)
    {
      uid_t hu;
      gid_t hg;
      if (!(o->netproxy = ar_sandbox_find_helper ("agentrun-netproxy", err)))
        return ar_err_prefix (err, "network step");
      /* the server drops to the ids that own the relay's sockets */
      if (ar_sbpaths_helper_ids (&hu, &hg))
        o->netproxy_user = xasprintf ("%u:%u", (unsigned) hu, (unsigned) hg);
    }
  return 0;
}

/* ---- the bundle ---- */

/* Create path (absolute, inside the rootfs at rootfs_fd) as a folder, or as
 * an empty file when is_file, with every component owned by the agent: the
 * runtime, in the agent's user namespace, may only create mount points in
 * folders owned by an id mapped there. Never follows a symlink. */
/* The folder holding the last mount point made, open: the next one in the
 * same folder (the protected names: a dozen or more in the workspace) is
 * made from there instead of a walk from the root, three calls a level. */
struct mk_cursor {
  char *dir;
  int fd;
};

static void
mk_cursor_free (struct mk_cursor *cur)
{
  free (cur->dir);
  if (cur->fd >= 0)
    close (cur->fd);
}

static void
mk_cursor_set (struct mk_cursor *cur, const char *path, int dfd)
{
  size_t n = (size_t) (strrchr (path, '/') - path);
  if (n == 0 || (cur->dir && strlen (cur->dir) == n && strncmp (cur->dir, path, n) == 0))
    return;
  int fd = fcntl (dfd, F_DUPFD_CLOEXEC, 3);
  if (fd < 0)
    return; /* only a shortcut */
  mk_cursor_free (cur);
  cur->dir = xasprintf ("%.*s", (int) n, path);
  cur->fd = fd;
}

static int
mkpath_walk (int rootfs_fd, struct mk_cursor *cur, const char *path, bool is_file, uid_t uid, gid_t gid, ar_error **err)
{
  size_t n = cur->dir ? strlen (cur->dir) : 0;
  bool from_cur = n && strncmp (path, cur->dir, n) == 0 && path[n] == '/';
  cleanup_free char *copy = xstrdup (path + (from_cur ? n : 0));
  cleanup_close int dfd = fcntl (from_cur ? cur->fd : rootfs_fd, F_DUPFD_CLOEXEC, 3);
  char *save = NULL, *next;
  if (dfd < 0)
    return ar_err (err, errno, "dup rootfs fd");
  for (char *c = strtok_r (copy, "/", &save); c; c = next)
    {
      next = strtok_r (NULL, "/", &save);
      if (strcmp (c, ".") == 0 || strcmp (c, "..") == 0)
        return ar_err (err, 0, "mount point %s: \".\" or \"..\" in the path", path);
      if (!next)
        mk_cursor_set (cur, path, dfd);
      if (!next && is_file)
        {
          int fd = openat (dfd, c, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
          if (fd < 0)
            return errno == EEXIST ? 0 : ar_err (err, errno, "create mount point %s in the rootfs", path);
          int r = give_made (fd, "", uid, gid);
          close (fd);
          return r < 0 ? ar_err (err, errno, "chown mount point %s", path) : 0;
        }
      if (mkdirat (dfd, c, 0755) == 0)
        {
          if (give_made (dfd, c, uid, gid) < 0)
            return ar_err (err, errno, "chown mount point %s", path);
        }
      else if (errno != EEXIST)
        return ar_err (err, errno, "create mount point %s in the rootfs", path);
      int nfd = openat (dfd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (nfd < 0)
        {
          /* a symlink of ours (merged-/usr /bin): the bind goes where it points */
          if (errno == ELOOP || errno == ENOTDIR)
            return 0;
          return ar_err (err, errno, "open mount point %s in the rootfs", path);
        }
      close (dfd);
      dfd = nfd;
    }
  return 0;
}

/* path lies below the workspace or --out, whose binds are mounted before
 * anything below them (by depth): a mount point made for it in the rootfs
 * would be hidden by that bind; the mount goes onto the host's own name. */
static bool
below_own_bind (const struct ar_agent_opts *o, const char *path)
{
  return (strcmp (path, o->workspace) != 0 && ar_path_under (path, o->workspace))
         || (o->out && strcmp (path, o->out) != 0 && ar_path_under (path, o->out));
}

static bool
is_file_path (const char *p)
{
  struct stat st;
  return stat (p, &st) == 0 && !S_ISDIR (st.st_mode);
}

static int
make_rootfs (struct ar_sandbox *sb, int bundle_fd, ar_error **err)
{
  struct ar_agent_opts *o = &sb->prof;
  if (mkdirat (bundle_fd, "rootfs", 0755) < 0)
    return ar_err (err, errno, "create %s/rootfs", o->bundle);
  if (give_made (bundle_fd, "rootfs", o->uid, o->gid) < 0)
    return ar_err (err, errno, "chown %s/rootfs", o->bundle);
  cleanup_close int rfd = openat (bundle_fd, "rootfs", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (rfd < 0)
    return ar_err (err, errno, "open %s/rootfs", o->bundle);
  cleanup_free bool *file = xmalloc0 ((o->n_binds + o->n_extra + 1) * sizeof *file);
  cleanup_free bool *skip = xmalloc0 ((o->n_binds + o->n_extra + 1) * sizeof *skip);
  for (size_t i = 0; i < o->n_binds; i++)
    if (!(skip[i] = below_own_bind (o, o->binds[i].path)))
      file[i] = is_file_path (o->binds[i].src ? o->binds[i].src : o->binds[i].path);
  for (size_t i = 0; i < o->n_extra; i++)
    if (!(skip[o->n_binds + i] = below_own_bind (o, o->extra_dst[i])))
      file[o->n_binds + i] = is_file_path (o->extra_src[i]);
  /* the rootfs is the agent's folder: what is made in it is made with the
   * agent's file-system ids, the invoker's through sudo (nothing of root's
   * in their bundle) or another uid's (--user, nobody); taken once for it
   * all (each change of them is a new set of credentials), after the
   * sources were looked at with ours */
  struct ar_fsid fs;
  ar_fsid_enter (&fs, o->uid, o->gid);
  size_t made = 0;
  while (made < sb->n_links && symlinkat (sb->link_target[made], rfd, sb->link_name[made] + 1) == 0)
    made++;
  if (made < sb->n_links)
    {
      int e = errno;
      ar_fsid_leave (&fs);
      return ar_err (err, e, "symlink %s in the rootfs", sb->link_name[made]);
    }
  static const char *const fixed[] = { "/proc", "/dev", "/tmp", "/run", NULL };
  struct mk_cursor cur = { NULL, -1 };
  int r = -1;
  for (size_t i = 0; fixed[i]; i++)
    if (mkpath_walk (rfd, &cur, fixed[i], false, o->uid, o->gid, err) < 0)
      goto out;
  for (size_t i = 0; i < o->n_sys_dirs; i++)
    if (mkpath_walk (rfd, &cur, o->sys_dirs[i], false, o->uid, o->gid, err) < 0)
      goto out;
  if (mkpath_walk (rfd, &cur, o->home, false, o->uid, o->gid, err) < 0
      || mkpath_walk (rfd, &cur, o->workspace, false, o->uid, o->gid, err) < 0
      || (o->out && mkpath_walk (rfd, &cur, o->out, false, o->uid, o->gid, err) < 0))
    goto out;
  for (size_t i = 0; i < o->n_binds; i++)
    if (!skip[i] && mkpath_walk (rfd, &cur, o->binds[i].path, file[i], o->uid, o->gid, err) < 0)
      goto out;
  for (size_t i = 0; i < o->n_extra; i++)
    if (!skip[o->n_binds + i] && mkpath_walk (rfd, &cur, o->extra_dst[i], file[o->n_binds + i], o->uid, o->gid, err) < 0)
      goto out;
  r = 0;
out:
  ar_fsid_leave (&fs);
  mk_cursor_free (&cur);
  return r;
}

static int
write_new_file (int dfd, const char *dir, const char *name, const char *text, size_t len, mode_t mode, ar_error **err)
{
  cleanup_close int fd = openat (dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0)
    return ar_err (err, errno, "create %s/%s", dir, name);
  for (size_t done = 0; done < len;)
    {
      ssize_t w = write (fd, text + done, len - done);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return ar_err (err, errno, "write %s/%s", dir, name);
      done += (size_t) w;
    }
  if (fchmod (fd, mode) < 0) /* not subject to the umask */
    return ar_err (err, errno, "chmod %s/%s", dir, name);
  return 0;
}

/* check's probe runner: SRC copied to NAME in the bundle, read-only. */
static int
copy_probe (int bfd, const char *dir, const char *name, const char *src, ar_error **err)
{
  cleanup_close int in = open (src, O_RDONLY | O_CLOEXEC);
  cleanup_free char *buf = NULL;
  size_t len;
  if (in < 0 || ar_read_all (in, 256u << 20, &buf, &len) < 0)
    return ar_err (err, errno, "read the probe runner %s", src);
  return write_new_file (bfd, dir, name, buf, len, 0555, err);
}

/* /etc/machine-id names the host for good (D-Bus, journald, telemetry
 * keys): the sandbox gets a random one per run, bound over it. */
static int
machine_id (struct ar_agent_opts *o, int bfd, ar_error **err)
{
  struct stat st;
  uint8_t rnd[16];
  char text[2 * sizeof rnd + 2];
  if (stat ("/etc/machine-id", &st) < 0 || !S_ISREG (st.st_mode))
    return 0; /* nothing there to hide, and no mount point to bind onto */
  if (getrandom (rnd, sizeof rnd, 0) != (ssize_t) sizeof rnd)
    return ar_err (err, errno, "getrandom");
  ar_hex (rnd, sizeof rnd, text);
  strcat (text, "\n");
  if (write_new_file (bfd, o->bundle, "machine-id", text, strlen (text), 0444, err) < 0)
    return -1;
  o->extra_src = xrealloc (o->extra_src, (o->n_extra + 1) * sizeof *o->extra_src);
  o->extra_dst = xrealloc (o->extra_dst, (o->n_extra + 1) * sizeof *o->extra_dst);
  o->extra_src[o->n_extra] = xasprintf ("%s/machine-id", o->bundle);
  o->extra_dst[o->n_extra++] = xstrdup ("/etc/machine-id");
  return 0;
}

static int
open_bundle_dir (const char *dir, char **abs, ar_error **err)
{
  char buf[PATH_MAX];
  /* 0711: the runtime may walk to rootfs/ and the bind sources as the
   * agent's uid (its user namespace maps nothing else); nothing is listable */
  if (mkdir (dir, 0711) < 0 && errno != EEXIST)
    return ar_err (err, errno, "create bundle folder %s", dir);
  if (!realpath (dir, buf))
    return ar_err (err, errno, "bundle folder %s", dir);
  int fd = open (buf, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return ar_err (err, errno, "open bundle folder %s", buf);
  static const char *const ours[] = { "config.json", "rootfs", "hosts", "resolv.conf" };
  for (size_t i = 0; i < ARRAY_SIZE (ours); i++)
    if (faccessat (fd, ours[i], F_OK, AT_SYMLINK_NOFOLLOW) == 0)
      {
        close (fd);
        return ar_err (err, EEXIST, "bundle folder %s: %s", buf, ours[i]);
      }
  *abs = xstrdup (buf);
  return fd;
}

static int
write_bundle (struct ar_sandbox *sb, const char *dir, const char *relay_dir, ar_error **err)
{
  struct ar_agent_opts *o = &sb->prof;
  free (o->bundle);
  o->bundle = NULL;
  cleanup_close int bfd = open_bundle_dir (dir, &o->bundle, err);
  if (bfd < 0)
    return -1;
  free (o->relay_dir);
  o->relay_dir = relay_dir ? xstrdup (relay_dir) : NULL;
  if (sb->probe_src)
    {
      if (copy_probe (bfd, o->bundle, "probe", sb->probe_src, err) < 0)
        return -1;
      o->extra_src = xrealloc (o->extra_src, (o->n_extra + 1) * sizeof *o->extra_src);
      o->extra_dst = xrealloc (o->extra_dst, (o->n_extra + 1) * sizeof *o->extra_dst);
      o->extra_src[o->n_extra] = xasprintf ("%s/probe", o->bundle);
      o->extra_dst[o->n_extra++] = xstrdup (AR_PROBE_BIN);
    }
  if (ar_sbpaths_git_ignore (sb, bfd, o->bundle, err) < 0 || machine_id (o, bfd, err) < 0)
    return -1;
  cleanup_free char *json = NULL;
  size_t len;
  if (ar_agent_generate (o, &json, &len, err) < 0)
    return -1;
  /* our own output goes through the same parser and validator as any
   * config: a profile the runtime would refuse is caught here */
  struct ar_spec *spec = NULL;
  if (!sb->runtime_validates && ar_spec_parse (json, len, "agent config.json", &spec, err) < 0)
    return ar_err_prefix (err, "agent profile");
  ar_spec_free (spec);
  cleanup_free char *hosts = ar_agent_hosts_text (o);
  cleanup_free char *resolv = ar_agent_resolv_text (o);
  if (write_new_file (bfd, o->bundle, "hosts", hosts, strlen (hosts), 0644, err) < 0
      || write_new_file (bfd, o->bundle, "resolv.conf", resolv, strlen (resolv), 0644, err) < 0
      || make_rootfs (sb, bfd, err) < 0 || write_new_file (bfd, o->bundle, "config.json", json, len, 0600, err) < 0)
    return -1;
  return 0;
}

/* A bundle alone (--bundle DIR, spec --agent) goes where the person says:
 * through sudo it is made and written as them (as_invoker). A run's bundle
 * is in its private folder, ours. */
int
ar_sandbox_write_bundle (struct ar_sandbox *sb, const char *dir, const char *relay_dir, ar_error **err)
{
  struct ar_fsid fs = { .on = false };
  if (sb->bundle_only)
    as_invoker (&fs);
  int r = write_bundle (sb, dir, relay_dir, err);
  ar_fsid_leave (&fs);
  return r;
}
