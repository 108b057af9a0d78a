/* libFuzzer target: the linux.seccomp section, parsed and validated by
 * spec/ and compiled by runtime/seccomp.c (ar_seccomp_compile) into a BPF
 * program, which is never loaded. The input is the JSON value of
 * "linux.seccomp"; it is wrapped in the smallest config.json that passes
 * validation so that every byte the fuzzer changes lands in the section.
 * Checks: no crash, leak or undefined behaviour; a failure always carries a
 * message and a success a program the kernel would accept in size. */
#include "config.h"
#include "seccomp.h"
#include "spec.h"
#include "util.h"

#include <linux/filter.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const char head[] = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
                           "\"process\":{\"cwd\":\"/\",\"args\":[\"true\"],\"user\":{\"uid\":0,\"gid\":0}},"
                           "\"linux\":{\"namespaces\":[{\"type\":\"mount\"}],\"seccomp\":";
static const char tail[] = "}}";

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  ar_error *err = NULL;
  struct ar_spec *spec = NULL;
  struct ar_seccomp_prog *prog = NULL;
  size_t len = sizeof head - 1 + size + sizeof tail - 1;
  char *buf = xmalloc0 (len + 1);

  memcpy (buf, head, sizeof head - 1);
  memcpy (buf + sizeof head - 1, data, size);
  memcpy (buf + sizeof head - 1 + size, tail, sizeof tail - 1);

  int r = ar_spec_parse (buf, len, "config.json", &spec, &err);
  free (buf);
  if ((r < 0) != (err != NULL))
    abort ();
  ar_error_freep (&err);
  if (r < 0 || spec->linux_ == NULL || spec->linux_->seccomp == NULL)
    {
      ar_spec_free (spec);
      return 0;
    }

  r = ar_seccomp_compile (spec->linux_->seccomp, &prog, &err);
  if ((r < 0) != (err != NULL) || (r < 0 && (err->msg == NULL || err->msg[0] == '\0')))
    abort ();
  if (r == 0 && (prog == NULL || prog->len == 0 || prog->len > BPF_MAXINSNS))
    abort ();
  ar_error_freep (&err);
  ar_seccomp_prog_free (prog);
  ar_spec_free (spec);
  return 0;
}
