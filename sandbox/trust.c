/* The trust store of policy files: see trust.h. */
#include "config.h"
#include "trust.h"
#include "log.h"
#include "sbpaths.h"
#include "sha256.h"
#include "strio.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *
ar_trust_store_dir (const char *home)
{
  const char *xdg = getenv ("XDG_CONFIG_HOME");
  if (xdg && xdg[0] == '/')
    return xasprintf ("%s/agentrun/trust", xdg);
  return home && home[0] == '/' ? xasprintf ("%s/.config/agentrun/trust", home) : NULL;
}

/* The entry's name: the hex SHA-256 of the path. */
static char *
ar_trust_entry (const char *store, const char *path, const char *suffix)
{
  unsigned char h[AR_SHA256_LEN];
  char hex[2 * AR_SHA256_LEN + 1];
  ar_sha256 (path, strlen (path), h);
  ar_hex (h, sizeof h, hex);
  return xasprintf ("%s/%s%s", store, hex, suffix);
}

/* mkdir -p of the store, each folder 0700 (the caller is the user already). */
static int
mkdirs (const char *dir, ar_error **err)
{
  cleanup_free char *p = xstrdup (dir);
  for (char *s = p + 1;; s++)
    {
      char c = *s;
      if (c != '/' && c != '\0')
        continue;
      *s = '\0';
      if (mkdir (p, 0700) < 0 && errno != EEXIST)
        return ar_err (err, errno, "trust store: create %s", p);
      *s = c;
      if (!c)
        return 0;
    }
}

static int
write_file (const char *path, const char *text, size_t len, ar_error **err)
{
  cleanup_free char *tmp = xasprintf ("%s.XXXXXX", path);
  int fd = mkostemp (tmp, O_CLOEXEC);
  if (fd < 0)
    return ar_err (err, errno, "trust store: create %s", tmp);
  bool ok = fchmod (fd, 0600) == 0;
  for (size_t done = 0; ok && done < len;)
    {
      ssize_t w = write (fd, text + done, len - done);
      if (w < 0 && errno == EINTR)
        continue;
      ok = w > 0;
      done += ok ? (size_t) w : 0;
    }
  ok = ok && fsync (fd) == 0;
  int e = errno;
  close (fd);
  if (!ok || rename (tmp, path) < 0)
    {
      e = ok ? errno : e;
      unlink (tmp);
      return ar_err (err, e, "trust store: write %s", path);
    }
  return 0;
}

int
ar_trust_read (const char *store, const char *path, char **text, size_t *len)
{
  cleanup_free char *entry = ar_trust_entry (store, path, "");
  cleanup_close int fd = open (entry, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  *text = NULL;
  *len = 0;
  if (fd < 0)
    return -1;
  return ar_read_all (fd, 16u << 20, text, len);
}

int
ar_trust_approve (const char *store, const char *path, const char *text, size_t len, uid_t uid, gid_t gid, ar_error **err)
{
  struct ar_fsid fs;
  cleanup_free char *entry = ar_trust_entry (store, path, "");
  cleanup_free char *name = ar_trust_entry (store, path, ".path");
  cleanup_free char *line = xasprintf ("%s\n", path);
  ar_fsid_enter (&fs, uid, gid);
  int r = mkdirs (store, err) < 0 || write_file (entry, text, len, err) < 0
                  || write_file (name, line, strlen (line), err) < 0
              ? -1
              : 0;
  ar_fsid_leave (&fs);
  return r;
}

int
ar_trust_check (const char *store, const char *path, const char *text, size_t len, uid_t uid, gid_t gid, ar_error **err)
{
  char *old;
  size_t olen;
  struct ar_fsid fs;
  ar_fsid_enter (&fs, uid, gid);
  int r = ar_trust_read (store, path, &old, &olen);
  int e = errno;
  ar_fsid_leave (&fs);
  if (r < 0 && e != ENOENT)
    return ar_err (err, e, "trust store: read the entry of %s", path);
  if (r < 0)
    {
      ar_log (AR_LOG_INFO,
              "policy file %s lies in a folder the sandbox can write: its content is trusted on "
              "this first use and pinned (%s)",
              path, store);
      return ar_trust_approve (store, path, text, len, uid, gid, err);
    }
  bool same = olen == len && memcmp (old, text, len) == 0;
  free (old);
  if (!same)
    return ar_err (err, 0,
                   "policy file %s changed since it was trusted (a sandbox can write where it lies, so a "
                   "run may have rewritten it); review and approve the change with: agentrun trust %s",
                   path, path);
  return 0;
}
