/* libFuzzer target: the TLS ClientHello SNI parser (netproxy/sni.c).
 * Link with libnetproxy.a. Checks: no crash, a verdict from the enum, a
 * found name is a NUL-terminated host name that fits, parsing is
 * deterministic, and a tiny name buffer is never overrun (ASan). */
#include "sni.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char name[256];
  int rc = sni_parse (data, size, name, sizeof name);
  if (rc == SNI_FOUND && (strlen (name) == 0 || strlen (name) > 253))
    abort ();
  if (rc < SNI_BAD || rc > SNI_FOUND)
    abort ();
  /* Deterministic: no hidden state, nothing read past the input. */
  if (rc == SNI_FOUND)
    {
      char again[256];
      if (sni_parse (data, size, again, sizeof again) != SNI_FOUND || strcmp (name, again) != 0)
        abort ();
    }
  char tiny[4];
  (void) sni_parse (data, size, tiny, sizeof tiny);
  return 0;
}
