/* libFuzzer target: the config.json, process.json and state.json parsers.
 * Checks: no crash, no leak, no undefined behaviour; a failure always comes
 * with an error message that names the file, and a success with none. */
#include "config.h"
#include "spec.h"
#include "spec_state.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
check (int r, ar_error **err, const char *label)
{
  if ((r < 0) != (*err != NULL))
    abort ();
  if (*err && label && strncmp ((*err)->msg, label, strlen (label)) != 0)
    abort ();
  ar_error_freep (err);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  ar_error *err = NULL;
  struct ar_spec *spec = NULL;
  struct ar_process *proc = NULL;
  struct ar_state st;
  const char *buf = (const char *) data;

  check (ar_spec_parse (buf, size, "config.json", &spec, &err), &err, "config.json: ");
  ar_spec_free (spec);
  check (ar_process_parse (buf, size, "process.json", &proc, &err), &err, "process.json: ");
  ar_process_free (proc);
  check (ar_state_parse (buf, size, &st, &err), &err, NULL);
  ar_state_clear (&st);
  return 0;
}
