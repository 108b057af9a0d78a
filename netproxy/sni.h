/* Find the server_name of a TLS ClientHello. Pure: no I/O, no allocation,
 * safe on any input (it is fuzzed: tests/fuzz/fuzz_sni.c). */
#ifndef NP_SNI_H
#define NP_SNI_H

#include <stddef.h>
#include <stdint.h>

enum sni_result {
  SNI_FOUND = 1, /* name holds the host name */
  SNI_NEED_MORE = 0, /* a valid prefix: read more bytes and call again */
  SNI_NOT_TLS = -1, /* not a TLS handshake record */
  SNI_NO_NAME = -2, /* a ClientHello without server_name */
  SNI_BAD = -3, /* malformed, too large, or a name we do not accept */
};

/* The largest ClientHello we wait for; beyond it the connection is refused. */
#define SNI_MAX_HELLO 16384

int sni_parse (const uint8_t *buf, size_t len, char *name, size_t namecap);

#endif
