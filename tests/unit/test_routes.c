/* Unit tests of netproxy/: routes from the command line of the relay and the
 * netproxy, the same host names as the sandbox's --allow, the audit JSON
 * strings. */
#include "config.h"
#include "tap.h"
#include "agent.h"
#include "audit.h"
#include "error.h"
#include "routes.h"
#include "strio.h"
#include "util.h"

#include <stdlib.h>

static struct route *
one (enum route_kind k, const char *arg, struct routes *rs)
{
  ar_error *err = NULL;
  memset (rs, 0, sizeof *rs);
  if (routes_add_arg (rs, k, arg, &err) < 0)
    {
      diag ("%s", err->msg);
      ar_error_free (err);
      return NULL;
    }
  return &rs->v[0];
}

static void
bad (enum route_kind k, const char *arg)
{
  struct routes rs;
  ar_error *err = NULL;
  memset (&rs, 0, sizeof rs);
  ok (routes_add_arg (&rs, k, arg, &err) < 0 && err && strstr (err->msg, "route"), "%s route '%s' refused",
      k == ROUTE_RELAY ? "relay" : "netproxy", arg);
  ar_error_free (err);
  routes_free (&rs);
}

static void
test_relay_routes (void)
{
  struct routes rs;
  struct route *r = one (ROUTE_RELAY, "api.example.com:443", &rs);
  ok (r && strcmp (r->name, "api.example.com") == 0 && r->port == 443 && strcmp (r->up_host, "api.example.com") == 0
          && r->up_port == 443 && !r->connect,
      "relay NAME:PORT goes to NAME:PORT");
  routes_free (&rs);
  r = one (ROUTE_RELAY, "pypi.org:443=10.0.0.1:3128", &rs);
  ok (r && strcmp (r->up_host, "10.0.0.1") == 0 && r->up_port == 3128, "relay =HOST:PORT names the upstream");
  routes_free (&rs);
  r = one (ROUTE_RELAY, "h:80=[::1]:8080", &rs);
  ok (r && strcmp (r->up_host, "::1") == 0 && r->up_port == 8080, "relay upstream [v6]:PORT loses its brackets");
  routes_free (&rs);
  r = one (ROUTE_RELAY, "*.example.com:443=connect", &rs);
  ok (r && r->connect && !r->up_host, "relay wildcard with =connect");
  routes_free (&rs);
  bad (ROUTE_RELAY, "*.example.com:443");
  bad (ROUTE_RELAY, "api.example.com");
  bad (ROUTE_RELAY, "api.example.com:0");
  bad (ROUTE_RELAY, "api.example.com:65536");
  bad (ROUTE_RELAY, ":443");
  bad (ROUTE_RELAY, "a/b:443");
  bad (ROUTE_RELAY, "a..b:443");
  bad (ROUTE_RELAY, "h:443=up");
}

static void
test_netproxy_routes (void)
{
  struct routes rs;
  struct route *r = one (ROUTE_NETPROXY, "api.example.com:443=127.77.0.2=/run/r/api.example.com:443.sock", &rs);
  ok (r && strcmp (r->addr, "127.77.0.2") == 0 && strcmp (r->sock, "/run/r/api.example.com:443.sock") == 0 && !r->connect,
      "netproxy NAME:PORT=ADDR=SOCKET");
  routes_free (&rs);
  r = one (ROUTE_NETPROXY, "*.example.com:443=connect=/run/r/s.sock", &rs);
  ok (r && r->connect && strcmp (r->addr, "") == 0, "netproxy wildcard goes through CONNECT");
  routes_free (&rs);
  bad (ROUTE_NETPROXY, "api.example.com:443=127.77.0.2");
  bad (ROUTE_NETPROXY, "api.example.com:443==/s.sock");
  bad (ROUTE_NETPROXY, "api.example.com:443=127.77.0.2=");
}

static void
test_names (void)
{
  /* The sandbox's --allow, the relay's and the netproxy's routes read the
   * same names: a name one takes, the others take. */
  static const char *const names[] = { "a_b.example",  "a..b.example",  "-a.example",     "a.example.",
                                       "a.-b.example", "*.example.com", "*..example.com", "Api.Example.com" };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    {
      struct ar_agent_endpoint ep;
      ar_error *err = NULL;
      bool sandbox = ar_agent_parse_endpoint (names[i], &ep, &err) == 0;
      if (sandbox)
        {
          free (ep.name);
          free (ep.upstream);
        }
      ar_error_free (err);
      err = NULL;
      struct routes rs = { 0 };
      cleanup_free char *relay_arg = xasprintf ("%s:443%s", names[i], names[i][0] == '*' ? "=connect" : "");
      bool relay = routes_add_arg (&rs, ROUTE_RELAY, relay_arg, &err) == 0;
      routes_free (&rs);
      ar_error_free (err);
      err = NULL;
      cleanup_free char *np_arg = xasprintf ("%s:443=127.77.0.2=/run/r/s.sock", names[i]);
      bool netproxy = routes_add_arg (&rs, ROUTE_NETPROXY, np_arg, &err) == 0;
      routes_free (&rs);
      ar_error_free (err);
      ok (sandbox == relay && relay == netproxy, "--allow, the relay and the netproxy agree on '%s' (%s %s %s)",
          names[i], sandbox ? "accepted" : "refused", relay ? "accepted" : "refused", netproxy ? "accepted" : "refused");
    }

  uint64_t ms = 1;
  ok (np_parse_seconds ("90", &ms) == 0 && ms == 90000, "seconds 90 -> 90000 ms");
  ok (np_parse_seconds ("86400", &ms) == 0 && ms == 86400000, "one day is the most");
  ok (np_parse_seconds ("86401", &ms) < 0 && np_parse_seconds ("-1", &ms) < 0 && np_parse_seconds ("1s", &ms) < 0
          && np_parse_seconds ("", &ms) < 0,
      "seconds out of range or not a number refused");
}

static void
test_audit_escape (void)
{
  static const char *const in[] = { "plain", "q\"b\\", "c\x01\n\x7f", "caf\xc3\xa9", "\xff\xc3(", "\xf0\x9f\x98\x80" };
  for (size_t i = 0; i < sizeof in / sizeof *in; i++)
    {
      char a[128], b[128];
      audit_json_str (a, sizeof a, in[i]);
      b[0] = '"';
      size_t n = 1 + ar_json_escape (b + 1, sizeof b - 2, in[i]);
      b[n++] = '"';
      b[n] = '\0';
      is_str (a, b, "audit and the runtime's log escape string %zu alike", i);
    }
  char small[8];
  audit_json_str (small, sizeof small, "abcdefghijkl");
  ok (strlen (small) < sizeof small && small[0] == '"' && small[strlen (small) - 1] == '"',
      "audit string cut short keeps both quotes (%s)", small);
}

int
main (void)
{
  test_relay_routes ();
  test_netproxy_routes ();
  test_names ();
  test_audit_escape ();
  return done_testing ();
}
