/* The agent profile generator: see agent.h. The confinement written here is
 * the product: every mount, mask and limit below is there on purpose, and
 * the runtime applies each one or fails. */
#include "config.h"
#include "agent.h"
#include "generate.h"
#include "hostname.h"
#include "model.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

/* Under every home: keys, tokens and logins of the usual tools, and the
 * shell and REPL histories (people paste secrets into them). */
const char *const ar_agent_cred_paths[] = {
  ".ssh", ".aws", ".gnupg", ".kube", ".config/gcloud", ".azure", ".docker", ".netrc",
  ".git-credentials", ".config/git/credentials", ".config/gh", ".config/hub", ".npmrc", ".yarnrc.yml", ".pypirc",
  ".cargo/credentials", ".cargo/credentials.toml", ".terraform.d/credentials.tfrc.json", ".vault-token",
  ".config/containers/auth.json", ".local/share/keyrings", ".pgpass",
  ".bash_history", ".zsh_history", ".python_history", ".node_repl_history", ".psql_history", ".mysql_history",
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
    return ar_err (err, 0, "--allow %s: \"%s\" is not a host name (letters, digits, '-', '_', '.') nor *.DOMAIN", arg,
                   s);
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
  char *end;
  errno = 0;
  unsigned long long v = strtoull (arg, &end, 10);
  int shift = 0;
  if (errno || end == arg || arg[0] == '-')
    return ar_err (err, 0, "%s %s: not a size (e.g. 512m, 2g)", opt, arg);
  switch (tolower ((unsigned char) *end))
    {
    case 'k': shift = 10; end++; break;
    case 'm': shift = 20; end++; break;
    case 'g': shift = 30; end++; break;
    case '\0': break;
    default: return ar_err (err, 0, "%s %s: unknown suffix (k, m or g)", opt, arg);
    }
  if (*end == 'b' || *end == 'B')
    end++;
  if (*end || v == 0 || v > (unsigned long long) (INT64_MAX >> shift))
    return ar_err (err, 0, "%s %s: not a size (e.g. 512m, 2g)", opt, arg);
  if ((int64_t) (v << shift) < min)
    return ar_err (err, 0, "%s %s: below %lldk, too small to use", opt, arg, (long long) (min >> 10));
  *out = (int64_t) (v << shift);
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
        continue;   /* routed when a name below it is looked up */
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
    free (o->binds[i].path);
  free (o->binds);
#define FREE_V(v, n) do { for (size_t i_ = 0; i_ < (n); i_++) free ((v)[i_]); free (v); } while (0)
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
  free (o->relay_dir);
  free (o->ask_socket);
  free (o->audit);
  free (o->audit_fd_ref);
  free (o->home);
  free (o->home_src);
  free (o->user);
  free (o->seccomp_json);
  free (o->bundle);
  memset (o, 0, sizeof *o);
}

/* ---- generation ---- */

/* yajl_gen with the first failure remembered, so the emitters stay flat. */
struct gen {
  yajl_gen g;
  int bad;
};

static void
g_str (struct gen *G, const char *s)
{
  if (yajl_gen_string (G->g, (const unsigned char *) s, strlen (s)) != yajl_gen_status_ok)
    G->bad = 1;
}
static void
g_int (struct gen *G, long long v)
{
  if (yajl_gen_integer (G->g, v) != yajl_gen_status_ok)
    G->bad = 1;
}
static void
g_bool (struct gen *G, bool v)
{
  if (yajl_gen_bool (G->g, v) != yajl_gen_status_ok)
    G->bad = 1;
}
static void
g_open (struct gen *G, bool map)
{
  if ((map ? yajl_gen_map_open (G->g) : yajl_gen_array_open (G->g)) != yajl_gen_status_ok)
    G->bad = 1;
}
static void
g_close (struct gen *G, bool map)
{
  if ((map ? yajl_gen_map_close (G->g) : yajl_gen_array_close (G->g)) != yajl_gen_status_ok)
    G->bad = 1;
}
static void
g_kstr (struct gen *G, const char *k, const char *v)
{
  g_str (G, k);
  g_str (G, v);
}
static void
g_kint (struct gen *G, const char *k, long long v)
{
  g_str (G, k);
  g_int (G, v);
}
static void
g_strv (struct gen *G, const char *k, const char *const *v, size_t n)
{
  g_str (G, k);
  g_open (G, false);
  for (size_t i = 0; i < n; i++)
    g_str (G, v[i]);
  g_close (G, false);
}

/* Re-emit a parsed JSON value (the seccomp profile) into the document. */
static void
g_tree (struct gen *G, yajl_val v)
{
  if (YAJL_IS_OBJECT (v))
    {
      g_open (G, true);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          g_str (G, v->u.object.keys[i]);
          g_tree (G, v->u.object.values[i]);
        }
      g_close (G, true);
    }
  else if (YAJL_IS_ARRAY (v))
    {
      g_open (G, false);
      for (size_t i = 0; i < v->u.array.len; i++)
        g_tree (G, v->u.array.values[i]);
      g_close (G, false);
    }
  else if (YAJL_IS_STRING (v))
    g_str (G, v->u.string);
  else if (YAJL_IS_NUMBER (v))
    {
      /* the number's own text: uint64 masks above INT64_MAX stay exact */
      if (yajl_gen_number (G->g, v->u.number.r, strlen (v->u.number.r)) != yajl_gen_status_ok)
        G->bad = 1;
    }
  else if (YAJL_IS_TRUE (v) || YAJL_IS_FALSE (v))
    g_bool (G, YAJL_IS_TRUE (v));
  else if (yajl_gen_null (G->g) != yajl_gen_status_ok)
    G->bad = 1;
}

/* Run by a plain user, the sandbox's IPC namespace has no limits (its
 * sysctls are the host root's), so unless the person lifts it on purpose,
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

/* The profile's linux.seccomp object, with the SysV rule where it applies. */
static void
g_seccomp (struct gen *G, const struct ar_agent_opts *o, yajl_val sc)
{
  bool refuse = !o->ipc_limits && !o->allow_sysv_ipc;
  g_open (G, true);
  for (size_t i = 0; i < sc->u.object.len; i++)
    {
      const char *key = sc->u.object.keys[i];
      yajl_val v = sc->u.object.values[i];
      g_str (G, key);
      if (!refuse || strcmp (key, "syscalls") != 0 || !YAJL_IS_ARRAY (v))
        {
          g_tree (G, v);
          continue;
        }
      g_open (G, false);
      for (size_t r = 0; r < v->u.array.len; r++)
        {
          yajl_val rule = v->u.array.values[r];
          if (!YAJL_IS_OBJECT (rule))
            {
              g_tree (G, rule);
              continue;
            }
          g_open (G, true);
          for (size_t k = 0; k < rule->u.object.len; k++)
            {
              yajl_val rv = rule->u.object.values[k];
              g_str (G, rule->u.object.keys[k]);
              if (strcmp (rule->u.object.keys[k], "names") != 0 || !YAJL_IS_ARRAY (rv))
                {
                  g_tree (G, rv);
                  continue;
                }
              g_open (G, false);
              for (size_t n = 0; n < rv->u.array.len; n++)
                if (!YAJL_IS_STRING (rv->u.array.values[n]) || !sysv_refused (o, YAJL_GET_STRING (rv->u.array.values[n])))
                  g_tree (G, rv->u.array.values[n]);
              g_close (G, false);
            }
          g_close (G, true);
        }
      g_open (G, true);
      g_strv (G, "names", sysv_make, ARRAY_SIZE (sysv_make));
      g_kstr (G, "action", "SCMP_ACT_ERRNO");
      g_kint (G, "errnoRet", ENOSPC);
      g_close (G, true);
      g_close (G, false);
    }
  g_close (G, true);
}

static void
g_mount (struct gen *G, const char *dst, const char *type, const char *src, const char *const *opts)
{
  size_t n = 0;
  while (opts[n])
    n++;
  g_open (G, true);
  g_kstr (G, "destination", dst);
  g_kstr (G, "type", type);
  g_kstr (G, "source", src);
  g_strv (G, "options", opts, n);
  g_close (G, true);
}

static void
g_bind (struct gen *G, const char *dst, const char *src, bool writable)
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
g_process (struct gen *G, const struct ar_agent_opts *o)
{
  g_str (G, "process");
  g_open (G, true);
  g_str (G, "terminal");
  g_bool (G, o->terminal);
  g_str (G, "user");
  g_open (G, true);
  g_kint (G, "uid", o->uid);
  g_kint (G, "gid", o->gid);
  g_close (G, true);
  g_strv (G, "args", (const char *const *) o->args, o->n_args);
  g_strv (G, "env", (const char *const *) o->env, o->n_env);
  g_kstr (G, "cwd", o->workspace);
  /* no capability in any set: the agent is an ordinary user in its namespace */
  static const char *const sets[] = { "bounding", "effective", "inheritable", "permitted", "ambient" };
  g_str (G, "capabilities");
  g_open (G, true);
  for (size_t i = 0; i < ARRAY_SIZE (sets); i++)
    g_strv (G, sets[i], NULL, 0);
  g_close (G, true);
  /* no core files (they would land in the workspace with the agent's memory) */
  const struct { const char *type; long long soft, hard; } rl[] = {
    { "RLIMIT_NOFILE", o->nofile, o->nofile }, { "RLIMIT_CORE", 0, 0 },
  };
  g_str (G, "rlimits");
  g_open (G, false);
  for (size_t i = 0; i < ARRAY_SIZE (rl); i++)
    {
      g_open (G, true);
      g_kstr (G, "type", rl[i].type);
      g_kint (G, "soft", rl[i].soft);
      g_kint (G, "hard", rl[i].hard);
      g_close (G, true);
    }
  /* Rootless without a cgroup, the pids cap is RLIMIT_NPROC: counted per
   * uid in the sandbox's own user namespace, so it caps the agent's
   * processes, and no capability of that namespace lifts it. */
  if (o->pids_rlimit)
    {
      g_open (G, true);
      g_kstr (G, "type", "RLIMIT_NPROC");
      g_kint (G, "soft", o->pids);
      g_kint (G, "hard", o->pids);
      g_close (G, true);
    }
  g_close (G, false);
  g_str (G, "noNewPrivileges");
  g_bool (G, true);
  g_close (G, true);
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

static void
g_user_binds (struct gen *G, const struct ar_agent_opts *o)
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
          g_bind (G, o->binds[i].path, o->binds[i].path, o->binds[i].writable);
      if (path_depth (o->workspace) == d)
        g_bind (G, o->workspace, o->workspace, !o->workspace_ro);
      if (o->out && path_depth (o->out) == d)
        g_bind (G, o->out, o->out, true);
    }
}

static void
g_mounts (struct gen *G, const struct ar_agent_opts *o)
{
  char uidopt[32], gidopt[32], tmpsz[48], tmpino[48], homesz[48], homeino[48];
  snprintf (uidopt, sizeof uidopt, "uid=%u", (unsigned) o->uid);
  snprintf (gidopt, sizeof gidopt, "gid=%u", (unsigned) o->gid);
  /* tmpfs pages are not reclaimed under pressure: every tmpfs has a size,
   * and inodes (kernel memory the size does not count) one per 4 KiB */
  snprintf (tmpsz, sizeof tmpsz, "size=%lld", (long long) o->tmp_size);
  snprintf (tmpino, sizeof tmpino, "nr_inodes=%lld", (long long) (o->tmp_size / 4096 + 64));
  snprintf (homesz, sizeof homesz, "size=%lld", (long long) o->home_size);
  snprintf (homeino, sizeof homeino, "nr_inodes=%lld", (long long) (o->home_size / 4096 + 64));
  g_str (G, "mounts");
  g_open (G, false);
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
  g_close (G, false);
}

static void
g_hooks (struct gen *G, const struct ar_agent_opts *o)
{
  if (o->no_network || (o->n_allow == 0 && !o->ask_socket))
    return;
  g_str (G, "hooks");
  g_open (G, true);
  g_str (G, "createRuntime");
  g_open (G, false);
  g_open (G, true);
  g_kstr (G, "path", o->netproxy);
  g_str (G, "args");
  g_open (G, false);
  g_str (G, "agentrun-netproxy");
  for (size_t i = 0; i < o->n_allow; i++)
    {
      const struct ar_agent_endpoint *e = &o->allow[i];
      cleanup_free char *r = xasprintf ("%s:%d=%s=%s/%s:%d.sock", e->name, e->port,
                                        ar_agent_wildcard (e) ? "connect" : e->addr, o->relay_dir, e->name, e->port);
      g_str (G, "--route");
      g_str (G, r);
    }
  for (size_t i = 0; i < o->n_deny; i++)
    {
      g_str (G, "--deny");
      g_str (G, o->deny[i]);
    }
  if (o->connect_proxy)
    g_str (G, "--connect-proxy");
  if (o->audit_fd_ref)
    {
      g_str (G, "--audit-fd");
      g_str (G, o->audit_fd_ref);
    }
  else if (o->audit)
    {
      g_str (G, "--audit");
      g_str (G, o->audit);
    }
  if (o->ask_socket)
    {
      g_str (G, "--ask");
      g_str (G, o->ask_socket);
    }
  g_close (G, false);
  g_kint (G, "timeout", 30);
  g_close (G, true);
  g_close (G, false);
  g_close (G, true);
}

static void
g_masks (struct gen *G, const struct ar_agent_opts *o)
{
  g_str (G, "maskedPaths");
  g_open (G, false);
  for (size_t i = 0; ar_default_masked_paths[i]; i++)
    g_str (G, ar_default_masked_paths[i]);
  for (size_t i = 0; proc_masks[i]; i++)
    g_str (G, proc_masks[i]);
  for (size_t i = 0; ar_agent_sys_masks[i]; i++)
    g_str (G, ar_agent_sys_masks[i]);
  for (size_t h = 0; h < o->n_cred_homes; h++)
    for (size_t i = 0; ar_agent_cred_paths[i]; i++)
      {
        const char *home = o->cred_homes[h];
        cleanup_free char *p = xasprintf ("%s%s%s", home, home[strlen (home) - 1] == '/' ? "" : "/",
                                          ar_agent_cred_paths[i]);
        g_str (G, p);
      }
  for (size_t i = 0; i < o->n_masks; i++)
    g_str (G, o->masks[i]);
  g_close (G, false);
  size_t n = 0;
  while (ar_default_readonly_paths[n])
    n++;
  g_strv (G, "readonlyPaths", ar_default_readonly_paths, n);
}

static void
g_resources (struct gen *G, const struct ar_agent_opts *o)
{
  g_str (G, "resources");
  g_open (G, true);
  if (o->has_memory)
    {
      g_str (G, "memory");
      g_open (G, true);
      g_kint (G, "limit", o->memory);
      /* swap is memory and swap in all: the same figure, so no page of
       * the sandbox's (tmpfs ones included) goes to swap beyond the limit */
      if (o->memory_swap)
        g_kint (G, "swap", o->memory);
      /* cgroup v1 counts TCP buffers apart from the limit above, and only
       * once a limit of their own is set */
      if (o->kernel_tcp > 0)
        g_kint (G, "kernelTCP", o->kernel_tcp);
      g_close (G, true);
    }
  if (!o->pids_rlimit)
    {
      g_str (G, "pids");
      g_open (G, true);
      g_kint (G, "limit", o->pids);
      g_close (G, true);
    }
  if (o->has_cpus)
    {
      g_str (G, "cpu");
      g_open (G, true);
      g_kint (G, "quota", o->cpu_quota);
      g_kint (G, "period", AR_AGENT_CPU_PERIOD);
      g_close (G, true);
    }
  g_close (G, true);
}

/* Written by the container's init in the sandbox's own namespaces. The
 * user.* budgets are its user namespace's (ucounts: each is counted at every
 * level up to the host's, so these cap the sandbox's part of its user's);
 * namespaces of its own it may not make anyway (seccomp). Mount namespaces
 * a few: each detached mount of the runtime (masks, after this) takes one
 * while it is made. The TCP buffer sizes are its network namespace's: its
 * sockets are loopback ones, whose buffers still count against the
 * host-wide tcp_mem. */
static void
g_sysctl (struct gen *G, const struct ar_agent_opts *o)
{
  static const char *const no_ns[] = { "cgroup", "ipc", "net", "pid", "time", "user", "uts" };
  char v[32];
  g_str (G, "sysctl");
  g_open (G, true);
  for (size_t i = 0; i < ARRAY_SIZE (no_ns); i++)
    {
      cleanup_free char *k = xasprintf ("user.max_%s_namespaces", no_ns[i]);
      g_kstr (G, k, "0");
    }
  g_kstr (G, "user.max_mnt_namespaces", "64");
  const struct { const char *key; long long v; } budgets[] = {
    { "user.max_inotify_instances", o->inotify_instances }, { "user.max_inotify_watches", o->inotify_watches },
    { "user.max_fanotify_groups", o->fanotify_groups }, { "user.max_fanotify_marks", o->fanotify_marks },
  };
  for (size_t i = 0; i < ARRAY_SIZE (budgets); i++)
    {
      if (budgets[i].v <= 0)   /* a kernel without that count (fanotify's came in 5.13) */
        continue;
      snprintf (v, sizeof v, "%lld", budgets[i].v);
      g_kstr (G, budgets[i].key, v);
    }
  g_kstr (G, "net.ipv4.tcp_rmem", AR_AGENT_TCP_RMEM);
  g_kstr (G, "net.ipv4.tcp_wmem", AR_AGENT_TCP_WMEM);
  if (o->ipc_limits)
    {
      /* SysV segments are unlimited in a new IPC namespace and outlive the
       * process that made them (shm_rmid_forced: not past the last detach) */
      snprintf (v, sizeof v, "%lld", (long long) o->shm_size);
      g_kstr (G, "kernel.shmmax", v);
      snprintf (v, sizeof v, "%lld", (long long) (o->shm_size / 4096));
      g_kstr (G, "kernel.shmall", v);
      g_kstr (G, "kernel.shmmni", "256");
      g_kstr (G, "kernel.shm_rmid_forced", "1");
      g_kstr (G, "kernel.msgmni", "256");
      g_kstr (G, "kernel.sem", "250 32000 32 128");
    }
  g_close (G, true);
}

static void
g_idmap (struct gen *G, const char *key, unsigned id)
{
  g_str (G, key);
  g_open (G, false);
  g_open (G, true);
  g_kint (G, "containerID", id);
  g_kint (G, "hostID", id);
  g_kint (G, "size", 1);
  g_close (G, true);
  g_close (G, false);
}

static void
g_linux (struct gen *G, const struct ar_agent_opts *o, yajl_val seccomp)
{
  static const char *const ns[] = { "pid", "ipc", "uts", "network", "mount", "cgroup", "user" };
  g_str (G, "linux");
  g_open (G, true);
  g_idmap (G, "uidMappings", o->uid);
  g_idmap (G, "gidMappings", o->gid);
  g_str (G, "namespaces");
  g_open (G, false);
  for (size_t i = 0; i < ARRAY_SIZE (ns); i++)
    {
      g_open (G, true);
      g_kstr (G, "type", ns[i]);
      g_close (G, true);
    }
  g_close (G, false);
  g_resources (G, o);
  g_sysctl (G, o);
  g_masks (G, o);
  g_kstr (G, "rootfsPropagation", "private");
  g_str (G, "seccomp");
  g_seccomp (G, o, seccomp);
  g_close (G, true);
}

/* The run.agentrun.landlock annotation (runtime/landlock.h): reads of what
 * is bound in, writes where the sandbox is meant to write. The mounts
 * already say the same; Landlock holds when a mount is made writable by
 * mistake. */
static char *
landlock_text (const struct ar_agent_opts *o)
{
  struct gen L = { .g = yajl_gen_alloc (NULL) };
  if (!L.g)
    abort ();
  g_open (&L, true);
  g_str (&L, "read");
  g_open (&L, false);
  for (size_t i = 0; i < o->n_sys_dirs; i++)
    g_str (&L, o->sys_dirs[i]);
  g_str (&L, "/proc");
  g_str (&L, "/etc/hosts");
  g_str (&L, "/etc/resolv.conf");
  for (size_t i = 0; i < o->n_binds; i++)
    if (!o->binds[i].writable)
      g_str (&L, o->binds[i].path);
  for (size_t i = 0; i < o->n_extra; i++)
    g_str (&L, o->extra_dst[i]);
  if (o->workspace_ro)
    g_str (&L, o->workspace);
  g_close (&L, false);
  g_str (&L, "write");
  g_open (&L, false);
  if (!o->workspace_ro)
    g_str (&L, o->workspace);
  if (o->out)
    g_str (&L, o->out);
  g_str (&L, "/tmp");
  g_str (&L, o->home);
  g_str (&L, "/dev");   /* /dev/null, the pty, /dev/shm: a tmpfs of the sandbox's own */
  for (size_t i = 0; i < o->n_binds; i++)
    if (o->binds[i].writable)
      g_str (&L, o->binds[i].path);
  g_close (&L, false);
  /* ABI 6: no abstract Unix socket made outside the sandbox can be reached */
  if (o->landlock_abi >= 6)
    g_strv (&L, "scope", (const char *const[]){ "abstract-unix-socket" }, 1);
  g_close (&L, true);
  const unsigned char *buf;
  size_t n;
  char *text = NULL;
  if (!L.bad && yajl_gen_get_buf (L.g, &buf, &n) == yajl_gen_status_ok)
    {
      text = xmalloc0 (n + 1);
      memcpy (text, buf, n);
    }
  yajl_gen_free (L.g);
  return text;
}

/* The run.agentrun.unix-connect annotation (runtime/unixconn.h): connect(2)
 * reaches the --unix-socket sockets and no other pathname socket, even one
 * inside a folder bound in. */
static char *
unix_connect_text (const struct ar_agent_opts *o)
{
  struct gen U = { .g = yajl_gen_alloc (NULL) };
  if (!U.g)
    abort ();
  g_open (&U, false);
  for (size_t i = 0; i < o->n_binds; i++)
    if (o->binds[i].socket)
      g_str (&U, o->binds[i].path);
  g_close (&U, false);
  const unsigned char *buf;
  size_t n;
  char *text = NULL;
  if (!U.bad && yajl_gen_get_buf (U.g, &buf, &n) == yajl_gen_status_ok)
    {
      text = xmalloc0 (n + 1);
      memcpy (text, buf, n);
    }
  yajl_gen_free (U.g);
  return text;
}

static void
g_annotations (struct gen *G, const struct ar_agent_opts *o)
{
  cleanup_free char *ll = o->landlock_abi > 0 ? landlock_text (o) : NULL;
  cleanup_free char *uc = unix_connect_text (o);
  if ((o->landlock_abi > 0 && !ll) || !uc)
    {
      G->bad = 1;
      return;
    }
  g_str (G, "annotations");
  g_open (G, true);
  if (ll)
    g_kstr (G, "run.agentrun.landlock", ll);
  /* every source here is a resolved path: a symlink met at mount time was
   * planted after the sandbox checked it */
  g_kstr (G, "run.agentrun.bind-nofollow", "true");
  g_kstr (G, "run.agentrun.unix-connect", uc);
  /* pid 1 is agentrun's own (runtime/pid1.h), not the agent's command */
  g_kstr (G, "run.agentrun.init", "true");
  g_close (G, true);
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
  if (o->tmp_size <= 0 || o->home_size <= 0 || o->nofile <= 0 || o->inotify_instances <= 0
      || o->inotify_watches <= 0 || (o->ipc_limits && o->shm_size < 4096))
    return ar_err (err, 0, "agent profile: a tmpfs size, the open-file limit or a user budget is not set");
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
  cleanup_free char *sc = xmalloc0 (o->seccomp_len + 1);
  memcpy (sc, o->seccomp_json, o->seccomp_len);
  yajl_val seccomp = yajl_tree_parse (sc, ebuf, sizeof ebuf);
  if (!seccomp || !YAJL_IS_OBJECT (seccomp))
    {
      if (seccomp)
        yajl_tree_free (seccomp);
      return ar_err (err, 0, "agent seccomp profile: not a JSON object: %s", ebuf);
    }
  struct gen G = { .g = yajl_gen_alloc (NULL) };
  if (!G.g)
    abort ();
  yajl_gen_config (G.g, yajl_gen_beautify, o->compact ? 0 : 1);
  g_open (&G, true);
  g_kstr (&G, "ociVersion", AR_SPEC_VERSION);
  g_process (&G, o);
  g_str (&G, "root");
  g_open (&G, true);
  g_kstr (&G, "path", "rootfs");
  g_str (&G, "readonly");
  g_bool (&G, true);
  g_close (&G, true);
  g_kstr (&G, "hostname", "sandbox");
  g_mounts (&G, o);
  g_hooks (&G, o);
  g_linux (&G, o, seccomp);
  g_annotations (&G, o);
  g_close (&G, true);
  yajl_tree_free (seccomp);
  const unsigned char *buf;
  size_t n;
  if (G.bad || yajl_gen_get_buf (G.g, &buf, &n) != yajl_gen_status_ok)
    {
      yajl_gen_free (G.g);
      return ar_err (err, 0, "agent profile: JSON generation failed");
    }
  *json = xmalloc0 (n + 1);
  memcpy (*json, buf, n);
  *len = n;
  yajl_gen_free (G.g);
  return 0;
}
