/* libFuzzer target: the DNS stub's packet parser (netproxy/dns.c).
 * Link with libnetproxy.a. Checks: no crash, and an answer never claims
 * more bytes than the buffer it was given. */
#include "dns.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int
lookup (void *ctx, const char *name, struct in_addr *addr)
{
  (void) ctx;
  if (strcasecmp (name, "api.example.com") != 0)
    return 0;
  addr->s_addr = htonl (0x7f4d0002); /* 127.77.0.2 */
  return 1;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  uint8_t out[512];
  struct dns_query_info info;
  /* Both a roomy buffer and the smallest sensible one. */
  ssize_t n = dns_answer (data, size, out, sizeof out, lookup, NULL, &info);
  if (n > (ssize_t) sizeof out || strlen (info.name) > 255)
    abort ();
  n = dns_answer (data, size, out, 12, lookup, NULL, NULL);
  if (n > 12)
    abort ();
  return 0;
}
