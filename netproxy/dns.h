/* The DNS stub's packet logic. Pure: no I/O, no allocation, any input is
 * safe (fuzzed by tests/fuzz/fuzz_dns.c). Allowed names get an A record
 * with their loopback address, AAAA and other types of allowed names an
 * empty NOERROR answer, every other name NXDOMAIN. */
#ifndef NP_DNS_H
#define NP_DNS_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Return 1 and fill *addr when name (lower case, no trailing dot) is allowed. */
typedef int (*dns_lookup_fn) (void *ctx, const char *name, struct in_addr *addr);

struct dns_query_info {
  char name[256]; /* the question's name, "" when unparsable */
  uint16_t qtype;
  int rcode; /* what we answered: 0 NOERROR, 1 FORMERR, 3 NXDOMAIN, 4 NOTIMP */
};

/* Build the answer to the query q in out. Returns its length, or -1 when
 * the packet deserves no answer at all (too short to carry an id, or a
 * response rather than a query). info may be NULL. */
ssize_t dns_answer (const uint8_t *q, size_t qlen, uint8_t *out, size_t outcap, dns_lookup_fn lookup, void *ctx,
                    struct dns_query_info *info);

const char *dns_type_name (uint16_t qtype, char buf[8]);

#endif
