/* Names in the container's /etc/passwd and /etc/group. The files belong to
 * the image, so they are untrusted input read by a privileged process: they
 * are opened through the container's root with openat2 RESOLVE_IN_ROOT (a
 * symlink to the host's /etc/shadow stays inside the rootfs), must be regular
 * files (a FIFO would block us), are bounded in size, and every number is
 * range-checked. */
#include "config.h"
#include "passwd.h"
#include "pathutil.h"
#include "strio.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DB_MAX_SIZE (8 * 1024 * 1024)

/* The whole file as a NUL-terminated string; *buf NULL when it is absent. */
static int
read_db (int root_fd, const char *path, char **buf, ar_error **err)
{
  *buf = NULL;
  cleanup_close int fd = ar_openat2 (root_fd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, AR_RESOLVE_ROOT_FLAGS);
  if (fd < 0)
    return errno == ENOENT ? 0 : ar_err (err, errno, "--user: open the container's %s", path);
  cleanup_free char *what = xasprintf ("the container's %s", path);
  if (ar_read_regular (fd, what, DB_MAX_SIZE, false, buf, NULL, err) < 0)
    return ar_err_prefix (err, "--user");
  return 0;
}

/* A decimal id below 2^32-1 (the kernel's "no id"); false otherwise. */
static bool
parse_id (const char *s, uint32_t *out)
{
  char *end;
  if (!*s || *s < '0' || *s > '9')
    return false;
  errno = 0;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno || *end || v >= UINT32_MAX)
    return false;
  *out = (uint32_t) v;
  return true;
}

/* Split one line at ':' into at most max fields (in place). */
static size_t
split (char *line, char **f, size_t max)
{
  size_t n = 0;
  for (char *p = line; n < max; p++)
    {
      f[n++] = p;
      p = strchr (p, ':');
      if (!p)
        break;
      *p = '\0';
    }
  return n;
}

/* Call fn on each line's fields; stops when fn returns non-zero. */
static int
each_line (char *db, size_t want, int (*fn) (char **f, void *arg), void *arg)
{
  char *save = NULL;
  for (char *line = strtok_r (db, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *f[8];
      if (line[0] == '#' || split (line, f, want) < want)
        continue;
      int r = fn (f, arg);
      if (r)
        return r;
    }
  return 0;
}

struct pw_query {
  const char *name;
  uint32_t uid, gid;
};

static int
pw_match (char **f, void *arg)
{
  struct pw_query *q = arg;
  return strcmp (f[0], q->name) == 0 && parse_id (f[2], &q->uid) && parse_id (f[3], &q->gid);
}

struct gr_query {
  const char *name;
  uint32_t gid;
  const char *member;
  uint32_t *gids;
  size_t n;
};

static int
gr_match (char **f, void *arg)
{
  struct gr_query *q = arg;
  return strcmp (f[0], q->name) == 0 && parse_id (f[2], &q->gid);
}

/* Groups whose member list names q->member: the user's additional gids. */
static int
gr_member (char **f, void *arg)
{
  struct gr_query *q = arg;
  uint32_t gid;
  char *save = NULL;
  if (!parse_id (f[2], &gid))
    return 0;
  for (char *m = strtok_r (f[3], ",", &save); m; m = strtok_r (NULL, ",", &save))
    if (strcmp (m, q->member) == 0 && q->n < 65536)
      {
        q->gids = xrealloc (q->gids, (q->n + 1) * sizeof *q->gids);
        q->gids[q->n++] = gid;
        break;
      }
  return 0;
}

static int
resolve_name (int root_fd, const char *name, struct ar_user *u, ar_error **err)
{
  cleanup_free char *db = NULL;
  struct pw_query q = { .name = name };
  if (read_db (root_fd, "/etc/passwd", &db, err) < 0)
    return -1;
  if (!db || each_line (db, 7, pw_match, &q) <= 0)
    return ar_err (err, 0, "--user: no user \"%s\" in the container's /etc/passwd", name);
  u->uid = q.uid;
  u->gid = q.gid;
  free (db);
  db = NULL;
  if (read_db (root_fd, "/etc/group", &db, err) < 0)
    return -1;
  struct gr_query g = { .member = name };
  if (db)
    each_line (db, 4, gr_member, &g);
  u->additional_gids = g.gids;
  u->n_additional_gids = g.n;
  return 0;
}

static int
resolve_group (int root_fd, const char *name, uint32_t *gid, ar_error **err)
{
  cleanup_free char *db = NULL;
  struct gr_query q = { .name = name };
  if (read_db (root_fd, "/etc/group", &db, err) < 0)
    return -1;
  if (!db || each_line (db, 4, gr_match, &q) <= 0)
    return ar_err (err, 0, "--user: no group \"%s\" in the container's /etc/group", name);
  *gid = q.gid;
  return 0;
}

int
ar_passwd_resolve (int root_fd, const char *spec, struct ar_user *u, ar_error **err)
{
  cleanup_free char *user = xstrdup (spec);
  char *group = strchr (user, ':');
  if (group)
    *group++ = '\0';
  if (!*user || (group && !*group))
    return ar_err (err, 0, "--user \"%s\": expected USER[:GROUP] (names or numbers)", spec);
  u->gid = 0;
  u->additional_gids = NULL;
  u->n_additional_gids = 0;
  if (!parse_id (user, &u->uid) && resolve_name (root_fd, user, u, err) < 0)
    return -1;
  if (group && !parse_id (group, &u->gid) && resolve_group (root_fd, group, &u->gid, err) < 0)
    return -1;
  return 0;
}
