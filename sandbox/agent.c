/* The agent profile generator: see agent.h. The confinement written here is
 * the product: every mount, mask and limit below is there on purpose, and
 * the runtime applies each one or fails. */
#include "config.h"
#include "agent.h"
#include "generate.h"
#include "hostname.h"
#include "size.h"
#include "json.h"
#include "jsongen.h"
#include "model.h"
#include "pathname.h"
#include "unixconn.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yajl/yajl_tree.h>

/* Under every home: keys, tokens and logins of the usual tools, and the
 * shell and REPL histories (people paste secrets into them). */
const char *const ar_agent_cred_paths[] = {
  ".ssh",
  ".aws",
  ".gnupg",
  ".kube",
  ".config/gcloud",
  ".azure",
  ".docker",
  ".netrc",
  ".git-credentials",
  ".config/git/credentials",
  ".config/gh",
  ".config/hub",
  ".npmrc",
  ".yarnrc.yml",
  ".pypirc",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".terraform.d/credentials.tfrc.json",
  ".vault-token",
  ".config/containers/auth.json",
  ".local/share/keyrings",
  ".pgpass",
  ".bash_history",
  ".zsh_history",
  ".python_history",
  ".node_repl_history",
  ".psql_history",
  ".mysql_history",
  NULL,
};

const char *const ar_agent_sys_masks[] = {
  "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", NULL,
};

/* Kernel interfaces an agent has no business reading: the default
 * profile's (spec/generate.c, one list for both) and these. */
static const char *const proc_masks[] = { "/proc/interrupts", NULL };

/* ---- option values ---- */

int
ar_agent_parse_endpoint (const char *arg, struct ar_agent_endpoint *ep, ar_error **err)
{
  cleanup_free char *s = xstrdup (arg);
  char *up = strchr (s, '=');
  memset (ep, 0, sizeof *ep);
  ep->port = AR_AGENT_DEFAULT_PORT;
  if (up)
    *up++ = '\0';
  char *colon = strchr (s, ':');
  if (colon)
    {
      *colon = '\0';
      if ((ep->port = ar_parse_port (colon + 1)) < 0)
        return ar_err (err, 0, "--allow %s: \"%s\" is not a port (1-65535)", arg, colon + 1);
    }
  for (char *p = s; *p; p++)
    *p = (char) tolower ((unsigned char) *p);
  bool wild = strncmp (s, "*.", 2) == 0;
  if (!ar_host_name_ok (s, true))
    return ar_err (err, 0, "--allow %s: \"%s\" is not a host name (letters, digits, '-', '_', '.') nor *.DOMAIN", arg, s);
  if (wild && up)
    return ar_err (err, 0, "--allow %s: a wildcard goes to the name looked up, it takes no =HOST:PORT", arg);
  if (up)
    {
      /* HOST:PORT with HOST a name, an IPv4 address or [IPv6] */
      char *c = strrchr (up, ':');
      if (!c || c == up || ar_parse_port (c + 1) < 0)
        return ar_err (err, 0, "--allow %s: upstream \"%s\" is not HOST:PORT", arg, up);
      for (char *q = up; q < c; q++)
        if (!isalnum ((unsigned char) *q) && !strchr ("-.:[]", *q))
          return ar_err (err, 0, "--allow %s: upstream \"%s\" is not HOST:PORT", arg, up);
      ep->upstream = xstrdup (up);
    }
  ep->name = xstrdup (s);
  return 0;
}

int
ar_agent_parse_size (const char *arg, int64_t *out, ar_error **err)
{
  return ar_agent_parse_size_for ("--memory", arg, 4 * 1024 * 1024, out, err);
}

int
ar_agent_parse_size_for (const char *opt, const char *arg, int64_t min, int64_t *out, ar_error **err)
{
  int64_t v;
  switch (ar_parse_size (arg, &v))
    {
    case AR_SIZE_OK: break;
    case AR_SIZE_SUFFIX: return ar_err (err, 0, "%s %s: unknown suffix (k, m, g or t)", opt, arg);
    default: return ar_err (err, 0, "%s %s: not a size (e.g. 512m, 2g)", opt, arg);
    }
  if (v == 0)
    return ar_err (err, 0, "%s %s: not a size (e.g. 512m, 2g)", opt, arg);
  if (v < min)
    return ar_err (err, 0, "%s %s: below %lldk, too small to use", opt, arg, (long long) (min >> 10));
  *out = v;
  return 0;
}

int
ar_agent_parse_cpus (const char *arg, int64_t *quota, ar_error **err)
{
  char *end;
  errno = 0;
  double v = strtod (arg, &end);
  if (errno || end == arg || *end || !(v >= 0.01) || v > 1024)
    return ar_err (err, 0, "--cpus %s: not a number of CPUs between 0.01 and 1024", arg);
  *quota = (int64_t) (v * AR_AGENT_CPU_PERIOD + 0.5);
  return 0;
}

int
ar_agent_assign_addrs (struct ar_agent_opts *o, ar_error **err)
{
  int next = 2;
  for (size_t i = 0; i < o->n_allow; i++)
    {
      struct ar_agent_endpoint *e = &o->allow[i];
      e->addr[0] = '\0';
      for (size_t j = 0; j < i; j++)
        if (strcmp (o->allow[j].name, e->name) == 0 && o->allow[j].port == e->port)
          return ar_err (err, 0, "--allow %s:%d given twice", e->name, e->port);
      if (ar_agent_wildcard (e))
        continue; /* routed when a name below it is looked up */
      for (size_t j = 0; j < i; j++)
        if (strcmp (o->allow[j].name, e->name) == 0)
          memcpy (e->addr, o->allow[j].addr, sizeof e->addr);
      if (e->addr[0])
        continue;
      if (next > AR_AGENT_MAX_ENDPOINTS + 1)
        return ar_err (err, 0, "--allow: more than %d names", AR_AGENT_MAX_ENDPOINTS);
      snprintf (e->addr, sizeof e->addr, "127.77.0.%d", next++);
    }
  return 0;
}

char *
ar_agent_hosts_text (const struct ar_agent_opts *o)
{
  size_t cap = 128, len;
  for (size_t i = 0; i < o->n_allow; i++)
    cap += strlen (o->allow[i].name) + 20;
  char *s = xmalloc0 (cap);
  len = (size_t) snprintf (s, cap, "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost\n");
  for (size_t i = 0; i < o->n_allow; i++)
    {
      bool dup = false;
      for (size_t j = 0; j < i; j++)
        dup |= strcmp (o->allow[j].name, o->allow[i].name) == 0;
      if (!dup && !o->no_network && !ar_agent_wildcard (&o->allow[i]))
        len += (size_t) snprintf (s + len, cap - len, "%s\t%s\n", o->allow[i].addr, o->allow[i].name);
    }
  return s;
}

char *
ar_agent_resolv_text (const struct ar_agent_opts *o)
{
  /* The netproxy's DNS stub answers allowed names and refuses the rest at
   * once; with --ask it holds a lookup while a person decides, so the
   * resolver must wait as long as the question may take. */
  return xasprintf ("nameserver %s\noptions attempts:1 timeout:%d\n", AR_AGENT_DNS_ADDR, o && o->ask_person ? 30 : 2);
}

void
ar_agent_opts_free (struct ar_agent_opts *o)
{
  if (!o)
    return;
  free (o->workspace);
  free (o->out);
  for (size_t i = 0; i < o->n_binds; i++)
    free (o->binds[i].path), free (o->binds[i].src);
  free (o->binds);
#define FREE_V(v, n)                                                                                                   \
  do                                                                                                                   \
    {                                                                                                                  \
      for (size_t i_ = 0; i_ < (n); i_++)                                                                              \
        free ((v)[i_]);                                                                                                \
      free (v);                                                                                                        \
    }                                                                                                                  \
  while (0)
  FREE_V (o->masks, o->n_masks);
  FREE_V (o->sys_dirs, o->n_sys_dirs);
  FREE_V (o->args, o->n_args);
  FREE_V (o->env, o->n_env);
  FREE_V (o->cred_homes, o->n_cred_homes);
  FREE_V (o->deny, o->n_deny);
  FREE_V (o->extra_src, o->n_extra);
  FREE_V (o->extra_dst, o->n_extra);
#undef FREE_V
  for (size_t i = 0; i < o->n_allow; i++)
    {
      free (o->allow[i].name);
      free (o->allow[i].upstream);
    }
  free (o->allow);
  free (o->netproxy);
  free (o->netproxy_user);
  free (o->relay_dir);
  free (o->ask_socket);
  free (o->audit);
  free (o->audit_fd_ref);
  free (o->home);
  free (o->home_src);
  free (o->user);
  free (o->shell);
  free (o->seccomp_json);
  free (o->bundle);
  memset (o, 0, sizeof *o);
}

/* ---- generation ---- */

static void
g_strv (struct ar_gen *G, const char *k, const char *const *v, size_t n)
{
  ar_gen_str (G, k);
  ar_gen_array_open (G);
  for (size_t i = 0; i < n; i++)
    ar_gen_str (G, v[i]);
  ar_gen_array_close (G);
}

/* Where the sandbox's IPC namespace can have no limits (a plain user
 * without room for the nested user namespace: its sysctls are then the
 * host root's, budgets.c), unless the person lifts it on purpose,
 * making a SysV object is refused: the profile's allow rules lose those
 * names (and the old ipc multiplexer) and one rule answers ENOSPC, what
 * the kernel says when a namespace's limit is reached, which programs
 * handle (PostgreSQL, X11's MIT-SHM fall back or say so). The calls on an
 * object (shmat, msgsnd, semop, *ctl) stay: none can exist. */
static const char *const sysv_make[] = { "shmget", "msgget", "semget" };

static bool
sysv_refused (const struct ar_agent_opts *o, const char *name)
{
  if (o->ipc_limits || o->allow_sysv_ipc)
    return false;
  for (size_t i = 0; i < ARRAY_SIZE (sysv_make); i++)
    if (strcmp (name, sysv_make[i]) == 0)
      return true;
  return strcmp (name, "ipc") == 0;
}

/* The profile's linux.seccomp object, with the SysV rule where it applies
 * (sc: the profile parsed); else as it is (sc NULL: it is never parsed
 * here, only by the runtime that reads the whole document). */
static void
g_seccomp (struct ar_gen *G, const struct ar_agent_opts *o, yajl_val sc)
{
  bool refuse = !o->ipc_limits && !o->allow_sysv_ipc;
  if (!sc)
    {
      ar_gen_json (G, o->seccomp_json, o->seccomp_len);
      return;
    }
  ar_gen_map_open (G);
  for (size_t i = 0; i < sc->u.object.len; i++)
    {
      const char *key = sc->u.object.keys[i];
      yajl_val v = sc->u.object.values[i];
      ar_gen_str (G, key);
      if (!refuse || strcmp (key, "syscalls") != 0 || !YAJL_IS_ARRAY (v))
        {
          ar_gen_tree (G, v);
          continue;
        }
      ar_gen_array_open (G);
      for (size_t r = 0; r < v->u.array.len; r++)
        {
          yajl_val rule = v->u.array.values[r];
          if (!YAJL_IS_OBJECT (rule))
            {
              ar_gen_tree (G, rule);
              continue;
            }
          ar_gen_map_open (G);
          for (size_t k = 0; k < rule->u.object.len; k++)
            {
              yajl_val rv = rule->u.object.values[k];
              ar_gen_str (G, rule->u.object.keys[k]);
              if (strcmp (rule->u.object.keys[k], "names") != 0 || !YAJL_IS_ARRAY (rv))
                {
                  ar_gen_tree (G, rv);
                  continue;
                }
              ar_gen_array_open (G);
              for (size_t n = 0; n < rv->u.array.len; n++)
                if (!YAJL_IS_STRING (rv->u.array.values[n]) || !sysv_refused (o, YAJL_GET_STRING (rv->u.array.values[n])))
                  ar_gen_tree (G, rv->u.array.values[n]);
              ar_gen_array_close (G);
            }
          ar_gen_map_close (G);
        }
      ar_gen_map_open (G);
      g_strv (G, "names", sysv_make, ARRAY_SIZE (sysv_make));
      ar_gen_key_str (G, "action", "SCMP_ACT_ERRNO");
      ar_gen_key_int (G, "errnoRet", ENOSPC);
      ar_gen_map_close (G);
      ar_gen_array_close (G);
    }
  ar_gen_map_close (G);
}

static void
g_mount (struct ar_gen *G, const char *dst, const char *type, const char *src, const char *const *opts)
{
  size_t n = 0;
  while (opts[n])
    n++;
  ar_gen_map_open (G);
  ar_gen_key_str (G, "destination", dst);
  ar_gen_key_str (G, "type", type);
  ar_gen_key_str (G, "source", src);
  g_strv (G, "options", opts, n);
  ar_gen_map_close (G);
}

static void
g_bind (struct ar_gen *G, const char *dst, const char *src, bool writable)
{
  /* rro: read-only all the way down (mount_setattr AT_RECURSIVE), so a
   * submount under a read-only folder cannot stay writable. rnodev and
   * rnosuid likewise: no device node opens and no set-id bit counts under
   * any host folder, submounts included, so the only devices the agent can
   * open are the few the runtime binds into /dev (the rest of /dev is made
   * in the user namespace, nodev by the kernel). That is what a device
   * cgroup would allow, and the sandbox need not join one (run.c). */
  static const char *const ro[] = { "rbind", "ro", "rro", "nosuid", "nodev", "rnosuid", "rnodev", NULL };
  static const char *const rw[] = { "rbind", "rw", "nosuid", "nodev", "rnosuid", "rnodev", NULL };
  g_mount (G, dst, "bind", src, writable ? rw : ro);
}

static void
g_process (struct ar_gen *G, const struct ar_agent_opts *o)
{
  ar_gen_str (G, "process");
  ar_gen_map_open (G);
  ar_gen_str (G, "terminal");
  ar_gen_bool (G, o->terminal);
  ar_gen_str (G, "user");
  ar_gen_map_open (G);
  ar_gen_key_int (G, "uid", o->uid);
  ar_gen_key_int (G, "gid", o->gid);
  ar_gen_map_close (G);
  g_strv (G, "args", (const char *const *) o->args, o->n_args);
  g_strv (G, "env", (const char *const *) o->env, o->n_env);
  ar_gen_key_str (G, "cwd", o->workspace);
  /* no capability in any set: the agent is an ordinary user in its namespace */
  static const char *const sets[] = { "bounding", "effective", "inheritable", "permitted", "ambient" };
  ar_gen_str (G, "capabilities");
  ar_gen_map_open (G);
  for (size_t i = 0; i < ARRAY_SIZE (sets); i++)
    g_strv (G, sets[i], NULL, 0);
  ar_gen_map_close (G);
  /* no core files (they would land in the workspace with the agent's memory) */
  const struct {
    const char *type;
    long long soft, hard;
  } rl[] = {
    { "RLIMIT_NOFILE", o->nofile, o->nofile },
    { "RLIMIT_CORE", 0, 0 },
  };
  ar_gen_str (G, "rlimits");
  ar_gen_array_open (G);
  for (size_t i = 0; i < ARRAY_SIZE (rl); i++)
    {
      ar_gen_map_open (G);
      ar_gen_key_str (G, "type", rl[i].type);
      ar_gen_key_int (G, "soft", rl[i].soft);
      ar_gen_key_int (G, "hard", rl[i].hard);
      ar_gen_map_close (G);
    }
  /* Rootless without a cgroup, the pids cap is RLIMIT_NPROC: counted per
   * uid in the sandbox's own user namespace, so it caps the agent's
   * processes, and no capability of that namespace lifts it. */
  if (o->pids_rlimit)
    {
      ar_gen_map_open (G);
      ar_gen_key_str (G, "type", "RLIMIT_NPROC");
      ar_gen_key_int (G, "soft", o->pids);
      ar_gen_key_int (G, "hard", o->pids);
      ar_gen_map_close (G);
    }
  ar_gen_array_close (G);
  ar_gen_str (G, "noNewPrivileges");
  ar_gen_bool (G, true);
  ar_gen_map_close (G);
}

/* Depth of a path in components: parents are mounted before their children. */
static size_t
path_depth (const char *p)
{
  size_t d = 0;
  for (; *p; p++)
    if (*p == '/' && p[1] && p[1] != '/')
      d++;
  return d;
}

/* A tmpfs over a held folder, filled with what the folder holds
 * (tmpcopyup copies the held bind's content, owners and modes kept): a
 * tool that writes its project folder at start (OpenCode's .opencode/)
 * works, and none of it reaches the host's folder, which stays pinned by
 * the bind beneath. Sized like /tmp: its pages are the sandbox's memory. */
static void
g_scratch (struct ar_gen *G, const struct ar_agent_opts *o, const char *path)
{
  char sz[48], ino[48], uidopt[32], gidopt[32];
  snprintf (sz, sizeof sz, "size=%lld", (long long) o->tmp_size);
  snprintf (ino, sizeof ino, "nr_inodes=%lld", (long long) (o->tmp_size / 4096 + 64));
  /* its top is the command's, as the home's (tmpcopyup copies what is below) */
  snprintf (uidopt, sizeof uidopt, "uid=%u", o->nested_userns ? 0U : (unsigned) o->uid);
  snprintf (gidopt, sizeof gidopt, "gid=%u", o->nested_userns ? 0U : (unsigned) o->gid);
  g_mount (G, path, "tmpfs", "tmpfs",
           (const char *const[]){ "nosuid", "nodev", "mode=755", sz, ino, uidopt, gidopt, "tmpcopyup", NULL });
}

static void
g_user_binds (struct ar_gen *G, const struct ar_agent_opts *o)
{
  size_t maxd = 0;
  for (size_t i = 0; i < o->n_binds; i++)
    if (path_depth (o->binds[i].path) > maxd)
      maxd = path_depth (o->binds[i].path);
  if (path_depth (o->workspace) > maxd)
    maxd = path_depth (o->workspace);
  if (o->out && path_depth (o->out) > maxd)
    maxd = path_depth (o->out);
  /* by depth, then in command-line order; the workspace and out come after a
   * --ro of the same depth, so `--ro ~ ` with a workspace below it still works */
  for (size_t d = 0; d <= maxd; d++)
    {
      for (size_t i = 0; i < o->n_binds; i++)
        if (path_depth (o->binds[i].path) == d)
          {
            g_bind (G, o->binds[i].path, o->binds[i].src ? o->binds[i].src : o->binds[i].path, o->binds[i].writable);
            if (o->binds[i].scratch)
              g_scratch (G, o, o->binds[i].path);
          }
      if (path_depth (o->workspace) == d)
        g_bind (G, o->workspace, o->workspace, !o->workspace_ro);
      if (o->out && path_depth (o->out) == d)
        g_bind (G, o->out, o->out, true);
    }
}

static void
g_mounts (struct ar_gen *G, const struct ar_agent_opts *o)
{
  char uidopt[32], gidopt[32], tmpsz[48], tmpino[48], homesz[48], homeino[48];
  /* ids as the runtime's init reads them when it mounts: the agent's are
   * the root's of the outer user namespace when it has a nested one */
  snprintf (uidopt, sizeof uidopt, "uid=%u", o->nested_userns ? 0U : (unsigned) o->uid);
  snprintf (gidopt, sizeof gidopt, "gid=%u", o->nested_userns ? 0U : (unsigned) o->gid);
  /* tmpfs pages are not reclaimed under pressure: every tmpfs has a size,
   * and inodes (kernel memory the size does not count) one per 4 KiB */
  snprintf (tmpsz, sizeof tmpsz, "size=%lld", (long long) o->tmp_size);
  snprintf (tmpino, sizeof tmpino, "nr_inodes=%lld", (long long) (o->tmp_size / 4096 + 64));
  snprintf (homesz, sizeof homesz, "size=%lld", (long long) o->home_size);
  snprintf (homeino, sizeof homeino, "nr_inodes=%lld", (long long) (o->home_size / 4096 + 64));
  ar_gen_str (G, "mounts");
  ar_gen_array_open (G);
  for (size_t i = 0; i < o->n_sys_dirs; i++)
    g_bind (G, o->sys_dirs[i], o->sys_dirs[i], false);
  g_mount (G, "/proc", "proc", "proc", (const char *const[]){ "nosuid", "noexec", "nodev", NULL });
  /* /dev owned by the user: the runtime creates the device binds in it */
  g_mount (G, "/dev", "tmpfs", "tmpfs",
           (const char *const[]){ "nosuid", "strictatime", "mode=755", "size=65536k", uidopt, gidopt, NULL });
  g_mount (G, "/dev/pts", "devpts", "devpts",
           (const char *const[]){ "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", NULL });
  g_mount (G, "/dev/shm", "tmpfs", "shm",
           (const char *const[]){ "nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL });
  g_mount (G, "/dev/mqueue", "mqueue", "mqueue", (const char *const[]){ "nosuid", "noexec", "nodev", NULL });
  g_mount (G, "/tmp", "tmpfs", "tmpfs", (const char *const[]){ "nosuid", "nodev", "mode=1777", tmpsz, tmpino, NULL });
  if (o->home_src)
    g_bind (G, o->home, o->home_src, true);
  else
    g_mount (G, o->home, "tmpfs", "tmpfs",
             (const char *const[]){ "nosuid", "nodev", "mode=700", homesz, homeino, uidopt, gidopt, NULL });

  cleanup_free char *hosts = xasprintf ("%s/hosts", o->bundle);
  cleanup_free char *resolv = xasprintf ("%s/resolv.conf", o->bundle);
  g_bind (G, "/etc/hosts", hosts, false);
  g_bind (G, "/etc/resolv.conf", resolv, false);
  g_user_binds (G, o);
  for (size_t i = 0; i < o->n_extra; i++)
    g_bind (G, o->extra_dst[i], o->extra_src[i], false);
  ar_gen_array_close (G);
}

static void
g_hooks (struct ar_gen *G, const struct ar_agent_opts *o)
{
  if (o->no_network || (o->n_allow == 0 && !o->ask_socket))
    return;
  ar_gen_str (G, "hooks");
  ar_gen_map_open (G);
  ar_gen_str (G, "createRuntime");
  ar_gen_array_open (G);
  ar_gen_map_open (G);
  ar_gen_key_str (G, "path", o->netproxy);
  ar_gen_str (G, "args");
  ar_gen_array_open (G);
  ar_gen_str (G, "agentrun-netproxy");
  for (size_t i = 0; i < o->n_allow; i++)
    {
      const struct ar_agent_endpoint *e = &o->allow[i];
      cleanup_free char *r = xasprintf ("%s:%d=%s=%s/%s:%d.sock", e->name, e->port,
                                        ar_agent_wildcard (e) ? "connect" : e->addr, o->relay_dir, e->name, e->port);
      ar_gen_str (G, "--route");
      ar_gen_str (G, r);
    }
  for (size_t i = 0; i < o->n_deny; i++)
    {
      ar_gen_str (G, "--deny");
      ar_gen_str (G, o->deny[i]);
    }
  if (o->connect_proxy)
    ar_gen_str (G, "--connect-proxy");
  if (o->audit_fd_ref)
    {
      ar_gen_str (G, "--audit-fd");
      ar_gen_str (G, o->audit_fd_ref);
    }
  else if (o->audit)
    {
      ar_gen_str (G, "--audit");
      ar_gen_str (G, o->audit);
    }
  if (o->ask_socket)
    {
      ar_gen_str (G, "--ask");
      ar_gen_str (G, o->ask_socket);
    }
  if (o->netproxy_user)
    {
      ar_gen_str (G, "--user");
      ar_gen_str (G, o->netproxy_user);
    }
  ar_gen_array_close (G);
  ar_gen_key_int (G, "timeout", 30);
  ar_gen_map_close (G);
  ar_gen_array_close (G);
  ar_gen_map_close (G);
}

static void
g_masks (struct ar_gen *G, const struct ar_agent_opts *o)
{
  ar_gen_str (G, "maskedPaths");
  ar_gen_array_open (G);
  for (size_t i = 0; ar_default_masked_paths[i]; i++)
    ar_gen_str (G, ar_default_masked_paths[i]);
  for (size_t i = 0; proc_masks[i]; i++)
    ar_gen_str (G, proc_masks[i]);
  for (size_t i = 0; ar_agent_sys_masks[i]; i++)
    ar_gen_str (G, ar_agent_sys_masks[i]);
  for (size_t h = 0; h < o->n_cred_homes; h++)
    for (size_t i = 0; ar_agent_cred_paths[i]; i++)
      {
        const char *home = o->cred_homes[h];
        cleanup_free char *p = xasprintf ("%s%s%s", home, home[strlen (home) - 1] == '/' ? "" : "/",
                                          ar_agent_cred_paths[i]);
        ar_gen_str (G, p);
      }
  for (size_t i = 0; i < o->n_masks; i++)
    ar_gen_str (G, o->masks[i]);
  ar_gen_array_close (G);
  size_t n = 0;
  while (ar_default_readonly_paths[n])
    n++;
  g_strv (G, "readonlyPaths", ar_default_readonly_paths, n);
}

static void
g_resources (struct ar_gen *G, const struct ar_agent_opts *o)
{
  ar_gen_str (G, "resources");
  ar_gen_map_open (G);
  if (o->has_memory)
    {
      ar_gen_str (G, "memory");
      ar_gen_map_open (G);
      ar_gen_key_int (G, "limit", o->memory);
      /* swap is memory and swap in all: the same figure, so no page of
       * the sandbox's (tmpfs ones included) goes to swap beyond the limit */
      if (o->memory_swap)
        ar_gen_key_int (G, "swap", o->memory);
      /* cgroup v1 counts TCP buffers apart from the limit above, and only
       * once a limit of their own is set */
      if (o->kernel_tcp > 0)
        ar_gen_key_int (G, "kernelTCP", o->kernel_tcp);
      ar_gen_map_close (G);
    }
  if (!o->pids_rlimit)
    {
      ar_gen_str (G, "pids");
      ar_gen_map_open (G);
      ar_gen_key_int (G, "limit", o->pids);
      ar_gen_map_close (G);
    }
  if (o->has_cpus)
    {
      ar_gen_str (G, "cpu");
      ar_gen_map_open (G);
      ar_gen_key_int (G, "quota", o->cpu_quota);
      ar_gen_key_int (G, "period", AR_AGENT_CPU_PERIOD);
      ar_gen_map_close (G);
    }
  ar_gen_map_close (G);
}

/* Written by the container's init in the sandbox's own namespaces (the
 * user.* ones in the nested user namespace too, where there is one: the
 * runtime's process.h). The user.* budgets are its user namespace's
 * (ucounts: each is counted at every level up to the host's, so these cap
 * the sandbox's part of its user's); namespaces of its own it may not make
 * anyway (seccomp). Mount namespaces a few: each detached mount of the
 * runtime (masks, after this) takes one while it is made. The TCP buffer
 * sizes are its network namespace's: its sockets are loopback ones, whose
 * buffers still count against the host-wide tcp_mem. */
static void
g_sysctl (struct ar_gen *G, const struct ar_agent_opts *o)
{
  static const char *const no_ns[] = { "cgroup", "ipc", "net", "pid", "time", "user", "uts" };
  char v[32];
  ar_gen_str (G, "sysctl");
  ar_gen_map_open (G);
  for (size_t i = 0; i < ARRAY_SIZE (no_ns); i++)
    {
      cleanup_free char *k = xasprintf ("user.max_%s_namespaces", no_ns[i]);
      ar_gen_key_str (G, k, "0");
    }
  ar_gen_key_str (G, "user.max_mnt_namespaces", "64");
  const struct {
    const char *key;
    long long v;
  } budgets[] = {
    { "user.max_inotify_instances", o->inotify_instances },
    { "user.max_inotify_watches", o->inotify_watches },
    { "user.max_fanotify_groups", o->fanotify_groups },
    { "user.max_fanotify_marks", o->fanotify_marks },
  };
  for (size_t i = 0; i < ARRAY_SIZE (budgets); i++)
    {
      if (budgets[i].v <= 0) /* a kernel without that count (fanotify's came in 5.13) */
        continue;
      snprintf (v, sizeof v, "%lld", budgets[i].v);
      ar_gen_key_str (G, budgets[i].key, v);
    }
  ar_gen_key_str (G, "net.ipv4.tcp_rmem", AR_AGENT_TCP_RMEM);
  ar_gen_key_str (G, "net.ipv4.tcp_wmem", AR_AGENT_TCP_WMEM);
  if (o->ipc_limits)
    {
      /* SysV segments are unlimited in a new IPC namespace and outlive the
       * process that made them (shm_rmid_forced: not past the last detach) */
      snprintf (v, sizeof v, "%lld", (long long) o->shm_size);
      ar_gen_key_str (G, "kernel.shmmax", v);
      snprintf (v, sizeof v, "%lld", (long long) (o->shm_size / 4096));
      ar_gen_key_str (G, "kernel.shmall", v);
      ar_gen_key_str (G, "kernel.shmmni", "256");
      ar_gen_key_str (G, "kernel.shm_rmid_forced", "1");
      ar_gen_key_str (G, "kernel.msgmni", "256");
      ar_gen_key_str (G, "kernel.sem", "250 32000 32 128");
    }
  ar_gen_map_close (G);
}

/* The user's own id alone: as itself, or, with a nested user namespace,
 * as the root of the outer one (the nested one maps it back). */
static void
g_idmap (struct ar_gen *G, const char *key, unsigned id, bool nested)
{
  ar_gen_str (G, key);
  ar_gen_array_open (G);
  ar_gen_map_open (G);
  ar_gen_key_int (G, "containerID", nested ? 0 : id);
  ar_gen_key_int (G, "hostID", id);
  ar_gen_key_int (G, "size", 1);
  ar_gen_map_close (G);
  ar_gen_array_close (G);
}

static void
g_linux (struct ar_gen *G, const struct ar_agent_opts *o, yajl_val seccomp)
{
  static const char *const ns[] = { "pid", "ipc", "uts", "network", "mount", "cgroup", "user" };
  ar_gen_str (G, "linux");
  ar_gen_map_open (G);
  g_idmap (G, "uidMappings", o->uid, o->nested_userns);
  g_idmap (G, "gidMappings", o->gid, o->nested_userns);
  ar_gen_str (G, "namespaces");
  ar_gen_array_open (G);
  for (size_t i = 0; i < ARRAY_SIZE (ns); i++)
    {
      ar_gen_map_open (G);
      ar_gen_key_str (G, "type", ns[i]);
      ar_gen_map_close (G);
    }
  ar_gen_array_close (G);
  g_resources (G, o);
  g_sysctl (G, o);
  g_masks (G, o);
  ar_gen_key_str (G, "rootfsPropagation", "private");
  ar_gen_str (G, "seccomp");
  g_seccomp (G, o, seccomp);
  ar_gen_map_close (G);
}

/* path lies where a "write" rule of landlock_text reaches: a rule there
 * grants every right, to what is beneath too (across the mounts on it),
 * so a "read" rule of its own would add nothing. */
static bool
under_written (const struct ar_agent_opts *o, const char *path)
{
  if ((!o->workspace_ro && ar_path_under (path, o->workspace)) || (o->out && ar_path_under (path, o->out))
      || ar_path_under (path, "/tmp") || ar_path_under (path, o->home) || ar_path_under (path, "/dev"))
    return true;
  for (size_t i = 0; i < o->n_binds; i++)
    if (o->binds[i].writable && ar_path_under (path, o->binds[i].path))
      return true;
  return false;
}

/* The run.agentrun.landlock annotation (runtime/landlock.h): reads of what
 * is bound in, writes where the sandbox is meant to write. The mounts
 * already say the same; Landlock holds when a mount is made writable by
 * mistake. */
static char *
landlock_text (const struct ar_agent_opts *o)
{
  struct ar_gen L;
  ar_gen_init (&L, NULL);
  ar_gen_map_open (&L);
  ar_gen_str (&L, "read");
  ar_gen_array_open (&L);
  for (size_t i = 0; i < o->n_sys_dirs; i++)
    ar_gen_str (&L, o->sys_dirs[i]);
  ar_gen_str (&L, "/proc");
  ar_gen_str (&L, "/etc/hosts");
  ar_gen_str (&L, "/etc/resolv.conf");
  for (size_t i = 0; i < o->n_binds; i++)
    if (!o->binds[i].writable && !under_written (o, o->binds[i].path))
      ar_gen_str (&L, o->binds[i].path);
  for (size_t i = 0; i < o->n_extra; i++)
    if (!under_written (o, o->extra_dst[i]))
      ar_gen_str (&L, o->extra_dst[i]);
  if (o->workspace_ro)
    ar_gen_str (&L, o->workspace);
  ar_gen_array_close (&L);
  ar_gen_str (&L, "write");
  ar_gen_array_open (&L);
  if (!o->workspace_ro)
    ar_gen_str (&L, o->workspace);
  if (o->out)
    ar_gen_str (&L, o->out);
  ar_gen_str (&L, "/tmp");
  ar_gen_str (&L, o->home);
  ar_gen_str (&L, "/dev"); /* /dev/null, the pty, /dev/shm: a tmpfs of the sandbox's own */
  for (size_t i = 0; i < o->n_binds; i++)
    if (o->binds[i].writable)
      ar_gen_str (&L, o->binds[i].path);
  ar_gen_array_close (&L);
  /* ABI 6: no abstract Unix socket made outside the sandbox can be reached */
  if (o->landlock_abi >= 6)
    g_strv (&L, "scope", (const char *const[]){ "abstract-unix-socket" }, 1);
  ar_gen_map_close (&L);
  return ar_gen_text (&L, "run.agentrun.landlock");
}

/* The run.agentrun.unixconn annotation (runtime/unixconn.h): connect(2)
 * reaches the --unix-socket sockets and no other pathname socket, even one
 * inside a folder bound in. */
static char *
unix_connect_text (const struct ar_agent_opts *o)
{
  struct ar_gen U;
  ar_gen_init (&U, NULL);
  ar_gen_array_open (&U);
  for (size_t i = 0; i < o->n_binds; i++)
    if (o->binds[i].socket)
      ar_gen_str (&U, o->binds[i].path);
  ar_gen_array_close (&U);
  return ar_gen_text (&U, "run.agentrun.unixconn");
}

static void
g_annotations (struct ar_gen *G, const struct ar_agent_opts *o)
{
  cleanup_free char *ll = o->landlock_abi > 0 ? landlock_text (o) : NULL;
  cleanup_free char *uc = unix_connect_text (o);
  ar_gen_str (G, "annotations");
  ar_gen_map_open (G);
  if (ll)
    ar_gen_key_str (G, "run.agentrun.landlock", ll);
  /* every source here is a resolved path: a symlink met at mount time was
   * planted after the sandbox checked it */
  ar_gen_key_str (G, "run.agentrun.bind-nofollow", "true");
  ar_gen_key_str (G, "run.agentrun.unixconn", uc);
  if (o->max_sockets > 0)
    {
      char v[32];
      snprintf (v, sizeof v, "%lld", o->max_sockets);
      ar_gen_key_str (G, AR_SOCKCAP_ANNOTATION, v);
    }
  /* pid 1 is agentrun's own (runtime/pid1.h), not the agent's command */
  ar_gen_key_str (G, "run.agentrun.init", "true");
  if (o->nested_userns)
    {
      /* the agent and pid 1 run in a nested user namespace (the runtime's
       * namespaces.h), mapping its ids to the outer one's root */
      char ids[32];
      snprintf (ids, sizeof ids, "%u:%u", (unsigned) o->uid, (unsigned) o->gid);
      ar_gen_key_str (G, "run.agentrun.nested-userns", ids);
    }
  ar_gen_map_close (G);
}

static int
check_opts (const struct ar_agent_opts *o, ar_error **err)
{
  if (!o->bundle || o->bundle[0] != '/')
    return ar_err (err, 0, "agent profile: the bundle path must be absolute");
  if (!o->workspace || o->workspace[0] != '/')
    return ar_err (err, 0, "agent profile: the workspace path must be absolute");
  if (!o->home || o->home[0] != '/')
    return ar_err (err, 0, "agent profile: the home path must be absolute");
  if (o->n_args == 0)
    return ar_err (err, 0, "agent profile: no command to run");
  if (o->uid == 0 || o->gid == 0)
    return ar_err (err, 0, "agent profile: refusing to run the agent as uid or gid 0");
  if (o->pids <= 0)
    return ar_err (err, 0, "agent profile: --pids must be positive");
  if (o->tmp_size <= 0 || o->home_size <= 0 || o->nofile <= 0 || o->inotify_instances <= 0 || o->inotify_watches <= 0
      || (o->ipc_limits && o->shm_size < 4096) || (o->max_sockets <= 0 && !o->max_sockets_unlimited))
    return ar_err (err, 0,
                   "agent profile: a tmpfs size, the open-file limit, the socket cap or a user budget is not set");
  if (!o->no_network && (o->n_allow > 0 || o->ask_socket) && (!o->netproxy || !o->relay_dir))
    return ar_err (err, 0, "agent profile: --allow needs agentrun-netproxy and a relay folder");
  if (!o->seccomp_json)
    return ar_err (err, 0, "agent profile: no seccomp profile");
  return 0;
}

int
ar_agent_generate (const struct ar_agent_opts *o, char **json, size_t *len, ar_error **err)
{
  char ebuf[256] = "";
  if (check_opts (o, err) < 0)
    return -1;
  /* parsed only to be changed (the SysV rule) */
  bool sysv = !o->ipc_limits && !o->allow_sysv_ipc;
  yajl_val seccomp = sysv ? ar_json_tree (o->seccomp_json, o->seccomp_len, ebuf, sizeof ebuf) : NULL;
  if (sysv && (!seccomp || !YAJL_IS_OBJECT (seccomp)))
    {
      ar_json_tree_free (seccomp);
      return ar_err (err, 0, "agent seccomp profile: not a JSON object: %s", ebuf);
    }
  struct ar_gen G;
  ar_gen_init (&G, o->compact ? NULL : "    ");
  ar_gen_map_open (&G);
  ar_gen_key_str (&G, "ociVersion", AR_SPEC_VERSION);
  g_process (&G, o);
  ar_gen_str (&G, "root");
  ar_gen_map_open (&G);
  ar_gen_key_str (&G, "path", "rootfs");
  ar_gen_str (&G, "readonly");
  ar_gen_bool (&G, true);
  ar_gen_map_close (&G);
  ar_gen_key_str (&G, "hostname", "sandbox");
  g_mounts (&G, o);
  g_hooks (&G, o);
  g_linux (&G, o, seccomp);
  g_annotations (&G, o);
  ar_gen_map_close (&G);
  ar_json_tree_free (seccomp);
  return ar_gen_done (&G, "agent profile", json, len, err);
}
