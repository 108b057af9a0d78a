/* Host names and ports as the sandbox's --allow, the relay's and the
 * netproxy's routes read them: one check, so that a name the sandbox takes
 * is never one the relay refuses (or the other way round). */
#ifndef AR_HOSTNAME_H
#define AR_HOSTNAME_H

#include <stdbool.h>

/* A host name we accept: at most 253 bytes of letters, digits, '-', '_' and
 * '.', in labels that are not empty and do not start with '-' (one trailing
 * '.', the root, is fine); with wildcard_ok, also "*." before such a name.
 * Never '/', so it is safe in a path. */
bool ar_host_name_ok (const char *name, bool wildcard_ok);

/* Case-insensitive; "*.example.com" matches any name strictly below it. */
bool ar_host_name_match (const char *pattern, const char *host);

/* A port: decimal digits only, 1-65535. The port, or -1. */
int ar_parse_port (const char *s);

#endif
