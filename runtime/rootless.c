/* Rootless: detection, the state root, id maps for a user without
 * privileges (own id directly, subordinate ranges through the setuid
 * newuidmap/newgidmap of shadow's uidmap package) and the reasons a user
 * namespace can be refused. */
#include "config.h"
#include "rootless.h"
#include "kfile.h"
#include "util.h"

#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* Does /proc/self/uid_map send our uid 0 to the parent's uid 0? True in the
 * initial user namespace ("0 0 4294967295"); false in podman's, where our
 * root is the invoking user. */
static bool
read_root_is_host_root (void)
{
  cleanup_fclose FILE *f = fopen ("/proc/self/uid_map", "re");
  unsigned long long in, out, count;
  if (!f)
    return false; /* no /proc: do not assume privileges */
  while (fscanf (f, "%llu %llu %llu", &in, &out, &count) == 3)
    if (in == 0 && count > 0)
      return out == 0;
  return false;
}

/* Asked several times a start (a sandbox run read the file seven times);
 * the answer is kept for this process: it joins no other user namespace
 * before asking again, and a child (another pid) reads it anew. */
static bool
root_is_host_root (void)
{
  static pid_t asked_by;
  static bool answer;
  pid_t me = getpid ();
  if (asked_by != me)
    {
      answer = read_root_is_host_root ();
      asked_by = me;
    }
  return answer;
}

bool
ar_rootless_detect (const char *mode)
{
  if (mode && strcmp (mode, "true") == 0)
    return true;
  if (mode && strcmp (mode, "false") == 0)
    return false;
  return geteuid () != 0 || !root_is_host_root ();
}

const char *
ar_rootless_default_root (bool rootless, char *buf, size_t n, char *why, size_t why_n)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  struct stat st;
  if (!rootless)
    return "/run/agentrun";
  /* Never /run: it is the host root's, and a shared /tmp folder could be
   * made by another user before us. */
  if (!xdg || !*xdg)
    snprintf (why, why_n, "XDG_RUNTIME_DIR is not set");
  else if (stat (xdg, &st) < 0)
    snprintf (why, why_n, "XDG_RUNTIME_DIR=%s: %s", xdg, strerror (errno));
  else if (!S_ISDIR (st.st_mode))
    snprintf (why, why_n, "XDG_RUNTIME_DIR=%s is not a folder", xdg);
  else if (access (xdg, W_OK | X_OK) < 0)
    snprintf (why, why_n, "XDG_RUNTIME_DIR=%s is not writable (%s)", xdg, strerror (errno));
  else
    {
      snprintf (buf, n, "%s/agentrun", xdg);
      return buf;
    }
  return NULL;
}

static bool
have_cap (cap_value_t c)
{
  cap_flag_value_t v = CAP_CLEAR;
  cap_t caps = cap_get_proc ();
  if (!caps)
    return false;
  if (cap_get_flag (caps, c, CAP_EFFECTIVE, &v) < 0)
    v = CAP_CLEAR;
  cap_free (caps);
  return v == CAP_SET;
}

/* The one map the kernel lets an unprivileged process write for itself. */
static bool
own_single (const struct ar_idmap *m, size_t n, uint32_t own)
{
  return n == 1 && m[0].size == 1 && m[0].host_id == own;
}

char *
ar_find_in_path (const char *name)
{
  const char *path = getenv ("PATH");
  cleanup_free char *copy = xstrdup (path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  char *save = NULL;
  for (char *d = strtok_r (copy, ":", &save); d; d = strtok_r (NULL, ":", &save))
    {
      if (d[0] != '/')
        continue;
      char *p = xasprintf ("%s/%s", d, name);
      if (access (p, X_OK) == 0)
        return p;
      free (p);
    }
  return NULL;
}

struct subrange {
  unsigned long long start, count;
};

/* The ranges /etc/sub{u,g}id grants the user (by name or by uid). */
static int
read_subids (const char *file, const char *user, uid_t uid, struct subrange **out, size_t *n, ar_error **err)
{
  cleanup_fclose FILE *f = fopen (file, "re");
  char line[512], uidstr[16];
  *out = NULL;
  *n = 0;
  if (!f)
    return ar_err (err, errno, "open %s (it grants the subordinate ids newuidmap/newgidmap need)", file);
  snprintf (uidstr, sizeof uidstr, "%u", (unsigned) uid);
  while (fgets (line, sizeof line, f))
    {
      char *c1 = strchr (line, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      if (!c2)
        continue;
      *c1 = '\0';
      if (strcmp (line, uidstr) != 0 && (!user || strcmp (line, user) != 0))
        continue;
      *out = xrealloc (*out, (*n + 1) * sizeof **out);
      (*out)[*n].start = strtoull (c1 + 1, NULL, 10);
      (*out)[*n].count = strtoull (c2 + 1, NULL, 10);
      (*n)++;
    }
  return 0;
}

/* Is [h, h+size) covered by the granted ranges (possibly several)? */
static bool
covered (const struct subrange *r, size_t n, unsigned long long h, unsigned long long size)
{
  while (size > 0)
    {
      size_t i;
      for (i = 0; i < n; i++)
        if (h >= r[i].start && h - r[i].start < r[i].count)
          break;
      if (i == n)
        return false;
      unsigned long long left = r[i].count - (h - r[i].start);
      if (left >= size)
        return true;
      h += left;
      size -= left;
    }
  return true;
}

static int
check_one (bool gid, const struct ar_idmap *m, size_t n, ar_error **err)
{
  const char *what = gid ? "gidMappings" : "uidMappings", *file = gid ? "/etc/subgid" : "/etc/subuid";
  const char *helper = gid ? "newgidmap" : "newuidmap";
  uint32_t own = gid ? getegid () : geteuid ();
  if (own_single (m, n, own) || have_cap (gid ? CAP_SETGID : CAP_SETUID))
    return 0;
  cleanup_free char *path = ar_find_in_path (helper);
  if (!path)
    return ar_err (err, 0,
                   "linux.%s maps more than your own %s %u: that needs %s, which is not on PATH "
                   "(Debian: apt install uidmap), or map only your own id",
                   what, gid ? "gid" : "uid", own, helper);
  struct passwd *pw = getpwuid (geteuid ());
  const char *user = pw ? pw->pw_name : NULL;
  cleanup_free struct subrange *r = NULL;
  size_t nr = 0;
  if (read_subids (file, user, geteuid (), &r, &nr, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    {
      if (m[i].size == 1 && m[i].host_id == own)
        continue; /* newuidmap allows one's own id alone */
      if (covered (r, nr, m[i].host_id, m[i].size))
        continue;
      if (!nr)
        return ar_err (err, 0,
                       "linux.%s: host %s %u-%llu are not yours: %s has no entry for %s (uid %u); an admin "
                       "can add one (usermod --add-sub%cids), or map only your own id %u",
                       what, gid ? "gids" : "uids", m[i].host_id, (unsigned long long) m[i].host_id + m[i].size - 1,
                       file, user ? user : "?", (unsigned) geteuid (), gid ? 'g' : 'u', own);
      return ar_err (err, 0, "linux.%s: host %s %u-%llu are not yours: %s grants %s %llu-%llu%s (and your own id %u)",
                     what, gid ? "gids" : "uids", m[i].host_id, (unsigned long long) m[i].host_id + m[i].size - 1, file,
                     user ? user : "?", r[0].start, r[0].start + r[0].count - 1, nr > 1 ? " and more" : "", own);
    }
  return 0;
}

int
ar_rootless_check_idmaps (const struct ar_linux *lnx, ar_error **err)
{
  if (!lnx->n_uid_mappings || !lnx->n_gid_mappings)
    return ar_err (err, 0, "linux.uidMappings/gidMappings: a new user namespace needs both");
  if (check_one (false, lnx->uid_mappings, lnx->n_uid_mappings, err) < 0)
    return -1;
  return check_one (true, lnx->gid_mappings, lnx->n_gid_mappings, err);
}

/* newuidmap PID inside outside count...: the setuid helper checks the
 * ranges against /etc/subuid itself; its own message goes to our stderr. */
static int
run_helper (const char *name, pid_t pid, const struct ar_idmap *m, size_t n, ar_error **err)
{
  cleanup_free char *path = ar_find_in_path (name);
  if (!path)
    return ar_err (err, 0, "%s is not on PATH (Debian: apt install uidmap)", name);
  char **argv = xmalloc0 ((3 * n + 3) * sizeof *argv);
  size_t k = 0;
  argv[k++] = xstrdup (name);
  argv[k++] = xasprintf ("%d", (int) pid);
  for (size_t i = 0; i < n; i++)
    {
      argv[k++] = xasprintf ("%u", m[i].container_id);
      argv[k++] = xasprintf ("%u", m[i].host_id);
      argv[k++] = xasprintf ("%u", m[i].size);
    }
  pid_t c = fork ();
  if (c == 0)
    {
      execv (path, argv);
      _exit (127);
    }
  int e = errno, ws = 0;
  for (size_t i = 0; i < k; i++)
    free (argv[i]);
  free (argv);
  if (c < 0)
    return ar_err (err, e, "fork for %s", name);
  while (waitpid (c, &ws, 0) < 0)
    if (errno != EINTR)
      return ar_err (err, errno, "wait for %s", name);
  if (!WIFEXITED (ws) || WEXITSTATUS (ws) != 0)
    return ar_err (err, 0, "%s: %s for pid %d failed (%s %d): are the ranges granted in /etc/sub%cid?",
                   name[3] == 'u' ? "linux.uidMappings" : "linux.gidMappings", path, (int) pid,
                   WIFEXITED (ws) ? "exit status" : "signal", WIFEXITED (ws) ? WEXITSTATUS (ws) : WTERMSIG (ws),
                   name[3] == 'u' ? 'u' : 'g');
  return 0;
}

int
ar_rootless_write_idmaps (pid_t pid, const struct ar_linux *lnx, ar_error **err)
{
  bool setuid_ok = have_cap (CAP_SETUID), setgid_ok = have_cap (CAP_SETGID);
  if (own_single (lnx->uid_mappings, lnx->n_uid_mappings, geteuid ()) || setuid_ok)
    {
      if (ar_kfile_write_idmap (pid, "uid_map", lnx->uid_mappings, lnx->n_uid_mappings, err) < 0)
        return -1;
    }
  else if (run_helper ("newuidmap", pid, lnx->uid_mappings, lnx->n_uid_mappings, err) < 0)
    return -1;
  if (!own_single (lnx->gid_mappings, lnx->n_gid_mappings, getegid ()) && !setgid_ok)
    return run_helper ("newgidmap", pid, lnx->gid_mappings, lnx->n_gid_mappings, err);
  /* Without CAP_SETGID over the parent namespace the kernel takes a gid
   * map only once setgroups is denied: else dropping a group by setgroups
   * could lift a "deny" that group carries on a file. */
  if (!setgid_ok && ar_kfile_write_proc (pid, "setgroups", "deny", err) < 0)
    return -1;
  return ar_kfile_write_idmap (pid, "gid_map", lnx->gid_mappings, lnx->n_gid_mappings, err);
}

static long
read_sysctl (const char *path)
{
  cleanup_fclose FILE *f = fopen (path, "re");
  long v;
  if (!f || fscanf (f, "%ld", &v) != 1)
    return -1;
  return v;
}

const char *
ar_rootless_userns_hint (int errnum)
{
  static char buf[256];
  long v;
  if (errnum == ENOSPC || errnum == EUSERS)
    {
      v = read_sysctl ("/proc/sys/user/max_user_namespaces");
      if (v == 0)
        return "user namespaces are disabled: /proc/sys/user/max_user_namespaces is 0";
      snprintf (buf, sizeof buf,
                "the limit of user namespaces (/proc/sys/user/max_user_namespaces = %ld) "
                "or of their nesting (32 levels) is reached",
                v);
      return buf;
    }
  if (errnum != EPERM && errnum != EACCES)
    return "";
  if (read_sysctl ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
    return "AppArmor restricts unprivileged user namespaces (/proc/sys/kernel/apparmor_restrict_unprivileged_userns "
           "is 1): load agentrun's profile with: apparmor_parser -r " AR_APPARMOR_PROFILE;
  if (read_sysctl ("/proc/sys/kernel/unprivileged_userns_clone") == 0)
    return "unprivileged user namespaces are disabled: /proc/sys/kernel/unprivileged_userns_clone is 0";
  if (read_sysctl ("/proc/sys/user/max_user_namespaces") == 0)
    return "user namespaces are disabled: /proc/sys/user/max_user_namespaces is 0";
  return "the kernel refuses new user namespaces in a chroot and where a seccomp filter or LSM forbids them";
}
