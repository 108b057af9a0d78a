/* libFuzzer target: netproxy route parsing (netproxy/routes.c), both the
 * command-line forms (--route/--allow of agentrun-relay and
 * agentrun-netproxy) and the JSON routes file. The input is used as one
 * argument for each kind, then as the routes file for each kind (through a
 * memfd, since routes_load_json takes a path).
 * Checks: no crash, leak or undefined behaviour; a failure always carries a
 * message; every accepted route has a valid name and port, and a name that
 * is safe in a socket path. */
#include "config.h"
#include "routes.h"
#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
check_routes (const struct routes *rs, enum route_kind k)
{
  for (size_t i = 0; i < rs->n; i++)
    {
      const struct route *r = &rs->v[i];
      if (r->name == NULL || !ar_host_name_ok (r->name, true) || strchr (r->name, '/') != NULL)
        abort ();
      if (r->port < 1 || r->port > 65535)
        abort ();
      if (k == ROUTE_RELAY && !r->connect && (r->up_port < 1 || r->up_port > 65535))
        abort ();
    }
}

static void
one (int r, ar_error **err, struct routes *rs, enum route_kind k)
{
  if ((r < 0) != (*err != NULL) || (r < 0 && (*err)->msg == NULL))
    abort ();
  if (r == 0)
    check_routes (rs, k);
  ar_error_freep (err);
  routes_free (rs);
  memset (rs, 0, sizeof *rs);
}

static int
routes_file (const uint8_t *data, size_t size)
{
  static int fd = -1;
  if (fd < 0)
    {
      fd = memfd_create ("routes.json", MFD_CLOEXEC);
      if (fd < 0)
        abort ();
    }
  if (ftruncate (fd, 0) < 0 || (size > 0 && pwrite (fd, data, size, 0) != (ssize_t) size))
    abort ();
  return fd;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  ar_error *err = NULL;
  struct routes rs = { 0 };
  char *arg = xmalloc0 (size + 1);
  char path[64];
  enum route_kind kinds[] = { ROUTE_RELAY, ROUTE_NETPROXY };

  memcpy (arg, data, size);
  for (size_t i = 0; i < ARRAY_SIZE (kinds); i++)
    one (routes_add_arg (&rs, kinds[i], arg, &err), &err, &rs, kinds[i]);
  free (arg);

  snprintf (path, sizeof path, "/proc/self/fd/%d", routes_file (data, size));
  for (size_t i = 0; i < ARRAY_SIZE (kinds); i++)
    one (routes_load_json (&rs, kinds[i], path, &err), &err, &rs, kinds[i]);
  return 0;
}
