#include "config.h"
#include "routes.h"
#include "hostname.h"
#include "strio.h"
#include "json.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <strings.h>

int
route_split_hostport (const char *s, char **host, int *port)
{
  const char *colon = strrchr (s, ':');
  if (!colon || colon == s)
    return -1;
  *port = ar_parse_port (colon + 1);
  if (*port < 0)
    return -1;
  const char *h = s;
  size_t len = (size_t) (colon - s);
  if (h[0] == '[' && len >= 2 && h[len - 1] == ']')
    {
      h++;
      len -= 2;
    }
  *host = strndup (h, len);
  if (!*host)
    abort ();
  return 0;
}

static struct route *
route_new (struct routes *rs)
{
  rs->v = xrealloc (rs->v, (rs->n + 1) * sizeof *rs->v);
  struct route *r = &rs->v[rs->n++];
  memset (r, 0, sizeof *r);
  return r;
}

/* Defaults and checks common to both sources. */
static int
route_finish (struct route *r, enum route_kind k, const char *what, ar_error **err)
{
  bool wild = strncmp (r->name, "*.", 2) == 0;
  if (!ar_host_name_ok (r->name, true))
    return ar_err (err, 0, "route %s: bad host name '%s'", what, r->name);
  if (k == ROUTE_RELAY)
    {
      if (wild && !r->connect)
        return ar_err (err, 0, "route %s: a wildcard needs '=connect'", what);
      if (!r->up_host && !r->connect)
        r->up_host = xstrdup (r->name);
      if (!r->up_port)
        r->up_port = r->port;
    }
  else
    {
      if (!r->sock || !*r->sock)
        return ar_err (err, 0, "route %s: no relay socket", what);
      if (!wild && (!r->addr || !*r->addr))
        return ar_err (err, 0, "route %s: no listen address", what);
      r->connect = r->connect || wild;
    }
  return 0;
}

int
routes_add_arg (struct routes *rs, enum route_kind k, const char *arg, ar_error **err)
{
  cleanup_free char *copy = xstrdup (arg);
  char *rest = strchr (copy, '=');
  if (rest)
    *rest++ = '\0';
  struct route *r = route_new (rs);
  if (route_split_hostport (copy, &r->name, &r->port) < 0)
    return ar_err (err, 0, "route '%s': expected NAME:PORT", arg);
  if (k == ROUTE_RELAY && rest)
    {
      if (strcmp (rest, "connect") == 0)
        r->connect = true;
      else if (route_split_hostport (rest, &r->up_host, &r->up_port) < 0)
        return ar_err (err, 0, "route '%s': expected upstream HOST:PORT", arg);
    }
  else if (k == ROUTE_NETPROXY)
    {
      char *sock = rest ? strchr (rest, '=') : NULL;
      if (!sock)
        return ar_err (err, 0, "route '%s': expected NAME:PORT=ADDR=SOCKET", arg);
      *sock++ = '\0';
      r->addr = xstrdup (strcmp (rest, "connect") == 0 ? "" : rest);
      r->sock = xstrdup (sock);
    }
  return route_finish (r, k, arg, err);
}

static const char *
jstr (yajl_val o, const char *key)
{
  const char *path[] = { key, NULL };
  yajl_val v = yajl_tree_get (o, path, yajl_t_string);
  return v ? YAJL_GET_STRING (v) : NULL;
}

static int
route_from_json (struct routes *rs, enum route_kind k, yajl_val o, size_t i, ar_error **err)
{
  const char *pport[] = { "port", NULL }, *pconn[] = { "connect", NULL };
  yajl_val port = yajl_tree_get (o, pport, yajl_t_number);
  const char *name = jstr (o, "name"), *up = jstr (o, "upstream");
  char what[32];
  snprintf (what, sizeof what, "routes[%zu]", i);
  if (!YAJL_IS_OBJECT (o) || !name || !port || !YAJL_IS_INTEGER (port))
    return ar_err (err, 0, "%s: needs \"name\" and an integer \"port\"", what);
  struct route *r = route_new (rs);
  r->name = xstrdup (name);
  r->port = YAJL_GET_INTEGER (port) >= 1 && YAJL_GET_INTEGER (port) <= 65535 ? (int) YAJL_GET_INTEGER (port) : 0;
  if (!r->port)
    return ar_err (err, 0, "%s: port out of range", what);
  r->connect = YAJL_IS_TRUE (yajl_tree_get (o, pconn, yajl_t_true));
  if (up && route_split_hostport (up, &r->up_host, &r->up_port) < 0)
    return ar_err (err, 0, "%s: bad \"upstream\" '%s'", what, up);
  r->addr = xstrdup (jstr (o, "address"));
  r->sock = xstrdup (jstr (o, "socket"));
  return route_finish (r, k, what, err);
}

int
routes_load_json (struct routes *rs, enum route_kind k, const char *path, ar_error **err)
{
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return ar_err (err, errno, "open %s", path);
  return routes_load_json_fd (rs, k, fd, path, true, err);
}

int
routes_load_json_fd (struct routes *rs, enum route_kind k, int fd, const char *path, bool fifo_ok, ar_error **err)
{
  cleanup_free char *buf = NULL;
  size_t len;
  if (ar_read_regular (fd, path, ROUTES_MAX_FILE_SIZE, fifo_ok, &buf, &len, err) < 0)
    return -1;
  char ebuf[256] = "";
  yajl_val root = ar_json_tree (buf, len, ebuf, sizeof ebuf);
  if (!root)
    return ar_err (err, 0, "%s: invalid JSON: %s", path, ebuf);
  const char *proutes[] = { "routes", NULL };
  yajl_val arr = YAJL_IS_ARRAY (root) ? root : yajl_tree_get (root, proutes, yajl_t_array);
  int ret = 0;
  if (!arr)
    ret = ar_err (err, 0, "%s: expected {\"routes\": [...]}", path);
  for (size_t i = 0; arr && ret == 0 && i < YAJL_GET_ARRAY (arr)->len; i++)
    ret = route_from_json (rs, k, YAJL_GET_ARRAY (arr)->values[i], i, err);
  ar_json_tree_free (root);
  if (ret < 0)
    ar_err_prefix (err, "%s", path);
  return ret;
}

int
np_parse_seconds (const char *s, uint64_t *ms)
{
  char *end;
  errno = 0;
  long v = strtol (s, &end, 10);
  if (errno || end == s || *end || v < 0 || v > 86400)
    return -1;
  *ms = (uint64_t) v * 1000;
  return 0;
}

void
routes_free (struct routes *rs)
{
  for (size_t i = 0; i < rs->n; i++)
    {
      free (rs->v[i].name);
      free (rs->v[i].up_host);
      free (rs->v[i].addr);
      free (rs->v[i].sock);
    }
  free (rs->v);
  rs->v = NULL;
  rs->n = 0;
}
