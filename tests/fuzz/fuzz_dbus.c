/* libFuzzer target: the D-Bus message parser (runtime/cgroups/dbus_wire.c), which
 * reads whatever the system bus sends. Checks: no crash or over-read (the
 * input is copied to a buffer of its exact size, so ASan sees one byte
 * past it); a parsed message has a valid signature and a body inside the
 * buffer; every body value can be walked or is refused cleanly; the error
 * line is one printable line; and a string written by the marshaller
 * reads back the same. Seeds: tests/fuzz/dbus-seeds.py. */
#include "config.h"
#include "dbus_wire.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The reads agentrun's systemd client makes on a reply or signal. */
static void
read_like_client (const struct ar_dbus_msg *m)
{
  struct ar_dbus_rd r;
  const char *s, *inner;
  uint32_t u;
  ar_dbus_rd_init (&r, m);
  if (ar_dbus_get_u32 (&r, &u, NULL) == 0 && ar_dbus_get_str (&r, &s, NULL) == 0)
    (void) ar_dbus_get_str (&r, &s, NULL);
  ar_dbus_rd_init (&r, m);
  if (ar_dbus_get_sig (&r, &inner, NULL) == 0 && strcmp (inner, "s") == 0)
    (void) ar_dbus_get_str (&r, &s, NULL);
}

static void
check_parsed (const uint8_t *buf, size_t size, const struct ar_dbus_msg *m)
{
  if (!ar_dbus_sig_valid (m->sig) || m->body < buf || m->body + m->body_len != buf + size)
    abort ();
  /* parse walked the body already: walking it again must succeed. */
  struct ar_dbus_rd r;
  ar_dbus_rd_init (&r, m);
  if (ar_dbus_skip_body (&r, m->sig, NULL) < 0)
    abort ();
  if (*m->sig)
    {
      ar_dbus_rd_init (&r, m);
      if (ar_dbus_skip (&r, m->sig, NULL) < 0 || r.pos > r.len)
        abort ();
    }
  read_like_client (m);
  char *text = ar_dbus_error_text (m);
  for (const char *c = text; *c; c++)
    if ((unsigned char) *c < 0x20)
      abort ();
  free (text);
}

/* Whatever string the input holds, written and read back, is the same. */
static void
round_trip (const uint8_t *data, size_t size)
{
  char str[256];
  size_t n = 0;
  for (size_t i = 0; i < size && n + 1 < sizeof str; i++)
    if (data[i])
      str[n++] = (char) data[i];
  str[n] = '\0';
  struct ar_dbus_buf body = { 0 }, msg = { 0 };
  ar_dbus_put_u32 (&body, (uint32_t) size);
  ar_dbus_put_str (&body, str);
  ar_dbus_build_call (&msg, 1, "org.example", "/a", "org.example.I", "M", "us", &body);
  struct ar_dbus_msg m;
  struct ar_dbus_rd r;
  const char *back;
  uint32_t u;
  if (ar_dbus_parse (msg.data, msg.len, &m, NULL) < 0)
    abort ();
  ar_dbus_rd_init (&r, &m);
  if (ar_dbus_get_u32 (&r, &u, NULL) < 0 || u != size || ar_dbus_get_str (&r, &back, NULL) < 0
      || strcmp (back, str) != 0 || r.pos != r.len)
    abort ();
  ar_dbus_buf_free (&body);
  ar_dbus_buf_free (&msg);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  uint8_t *buf = xmalloc0 (size);
  memcpy (buf, data, size);
  size_t total;
  if (size >= AR_DBUS_FIXED_HDR && ar_dbus_msg_size (buf, &total, NULL) == 0 && total > AR_DBUS_MAX_MSG)
    abort ();
  struct ar_dbus_msg m;
  ar_error *err = NULL;
  if (ar_dbus_parse (buf, size, &m, &err) == 0)
    check_parsed (buf, size, &m);
  else if (!err || !err->msg || strchr (err->msg, '\n'))
    abort ();
  ar_error_free (err);
  free (buf);
  if (size < 300)
    round_trip (data, size);
  return 0;
}
