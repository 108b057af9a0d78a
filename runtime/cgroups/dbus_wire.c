/* The D-Bus wire format: see dbus_wire.h. Reading is written for hostile
 * input: the invariant r->pos <= r->len holds after every step, and every
 * length is compared against what is left before it is used. */
#include "config.h"
#include "dbus_wire.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 64 /* the specification's limit on total nesting */
#define MAX_ARRAY_DEPTH 32
#define MAX_ARRAY_LEN (64u << 20)

/* ---- writing ---- */

void
ar_dbus_buf_free (struct ar_dbus_buf *b)
{
  free (b->data);
  *b = (struct ar_dbus_buf){ 0 };
}

static void
put_bytes (struct ar_dbus_buf *b, const void *p, size_t n)
{
  if (n == 0)
    return;
  if (b->len + n > b->cap)
    {
      b->cap = (b->len + n) * 2 + 64;
      b->data = xrealloc (b->data, b->cap);
    }
  memcpy (b->data + b->len, p, n);
  b->len += n;
}

void
ar_dbus_put_align (struct ar_dbus_buf *b, size_t n)
{
  static const unsigned char zero[8];
  put_bytes (b, zero, (n - b->len % n) % n);
}

static void
ar_dbus_put_u8 (struct ar_dbus_buf *b, uint8_t v)
{
  put_bytes (b, &v, 1);
}

void
ar_dbus_put_u32 (struct ar_dbus_buf *b, uint32_t v)
{
  unsigned char le[4] = { v, v >> 8, v >> 16, v >> 24 };
  ar_dbus_put_align (b, 4);
  put_bytes (b, le, 4);
}

void
ar_dbus_put_u64 (struct ar_dbus_buf *b, uint64_t v)
{
  unsigned char le[8];
  for (int i = 0; i < 8; i++)
    le[i] = v >> (8 * i);
  ar_dbus_put_align (b, 8);
  put_bytes (b, le, 8);
}

void
ar_dbus_put_bool (struct ar_dbus_buf *b, bool v)
{
  ar_dbus_put_u32 (b, v ? 1 : 0);
}

void
ar_dbus_put_str (struct ar_dbus_buf *b, const char *s)
{
  size_t n = strlen (s);
  ar_dbus_put_u32 (b, (uint32_t) n);
  put_bytes (b, s, n + 1);
}

void
ar_dbus_put_sig (struct ar_dbus_buf *b, const char *s)
{
  size_t n = strlen (s);
  ar_dbus_put_u8 (b, (uint8_t) n);
  put_bytes (b, s, n + 1);
}

struct ar_dbus_arr
ar_dbus_array_open (struct ar_dbus_buf *b, size_t elem_align)
{
  struct ar_dbus_arr a;
  ar_dbus_put_u32 (b, 0);
  a.len_at = b->len - 4;
  ar_dbus_put_align (b, elem_align);
  a.start = b->len;
  return a;
}

void
ar_dbus_array_close (struct ar_dbus_buf *b, struct ar_dbus_arr a)
{
  uint32_t n = (uint32_t) (b->len - a.start);
  unsigned char le[4] = { n, n >> 8, n >> 16, n >> 24 };
  memcpy (b->data + a.len_at, le, 4);
}

static void
put_field (struct ar_dbus_buf *b, uint8_t code, const char *type, const char *value)
{
  ar_dbus_put_align (b, 8);
  ar_dbus_put_u8 (b, code);
  ar_dbus_put_sig (b, type);
  if (type[0] == 'g')
    ar_dbus_put_sig (b, value);
  else
    ar_dbus_put_str (b, value);
}

void
ar_dbus_build_call (struct ar_dbus_buf *out, uint32_t serial, const char *dest, const char *path, const char *iface,
                    const char *member, const char *sig, const struct ar_dbus_buf *body)
{
  out->len = 0;
  ar_dbus_put_u8 (out, 'l');
  ar_dbus_put_u8 (out, AR_DBUS_CALL);
  ar_dbus_put_u8 (out, 0);
  ar_dbus_put_u8 (out, 1);
  ar_dbus_put_u32 (out, body ? (uint32_t) body->len : 0);
  ar_dbus_put_u32 (out, serial);
  struct ar_dbus_arr a = ar_dbus_array_open (out, 8);
  put_field (out, 1, "o", path);
  if (iface)
    put_field (out, 2, "s", iface);
  put_field (out, 3, "s", member);
  if (dest)
    put_field (out, 6, "s", dest);
  if (body && body->len)
    put_field (out, 8, "g", sig);
  ar_dbus_array_close (out, a);
  ar_dbus_put_align (out, 8);
  if (body && body->len)
    put_bytes (out, body->data, body->len);
}

/* ---- signatures ---- */

static bool
is_basic (char c)
{
  return c && strchr ("ybnqiuxtdhsog", c) != NULL;
}

/* The end of the single complete type at s, or NULL when it is not one.
 * in_array: a dict entry is allowed here. */
static const char *
type_end (const char *s, int arrays, int structs, bool in_array)
{
  if (is_basic (*s) || *s == 'v')
    return s + 1;
  if (*s == 'a')
    return arrays < MAX_ARRAY_DEPTH ? type_end (s + 1, arrays + 1, structs, true) : NULL;
  if (*s == '(' && structs < MAX_ARRAY_DEPTH && s[1] != ')')
    {
      for (s++; s && *s != ')';)
        s = type_end (s, arrays, structs + 1, false);
      return s ? s + 1 : NULL;
    }
  if (*s == '{' && in_array && structs < MAX_ARRAY_DEPTH && is_basic (s[1]))
    {
      s = type_end (s + 2, arrays, structs + 1, false);
      return s && *s == '}' ? s + 1 : NULL;
    }
  return NULL;
}

bool
ar_dbus_sig_valid (const char *sig)
{
  if (strlen (sig) > 255)
    return false;
  while (sig && *sig)
    sig = type_end (sig, 0, 0, false);
  return sig != NULL;
}

static bool
single_type (const char *sig)
{
  const char *e = type_end (sig, 0, 0, false);
  return e && !*e;
}

static size_t
align_of (char c)
{
  switch (c)
    {
    case 'n':
    case 'q': return 2;
    case 'b':
    case 'i':
    case 'u':
    case 'h':
    case 's':
    case 'o':
    case 'a': return 4;
    case 'x':
    case 't':
    case 'd':
    case '(':
    case '{': return 8;
    default: return 1;
    }
}

/* ---- reading ---- */

static int
truncated (ar_error **err)
{
  return ar_err (err, 0, "D-Bus message is truncated or malformed");
}

static int
rd_need (struct ar_dbus_rd *r, size_t n, ar_error **err)
{
  return n > r->len - r->pos ? truncated (err) : 0;
}

static int
rd_align (struct ar_dbus_rd *r, size_t n, ar_error **err)
{
  size_t pad = (n - r->pos % n) % n;
  if (rd_need (r, pad, err) < 0)
    return -1;
  r->pos += pad;
  return 0;
}

static uint32_t
load_u32 (const unsigned char *p, bool big)
{
  if (big)
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
  return (uint32_t) p[3] << 24 | (uint32_t) p[2] << 16 | (uint32_t) p[1] << 8 | p[0];
}

void
ar_dbus_rd_init (struct ar_dbus_rd *r, const struct ar_dbus_msg *m)
{
  *r = (struct ar_dbus_rd){ .p = m->body, .len = m->body_len, .big = m->big_endian };
}

int
ar_dbus_get_u32 (struct ar_dbus_rd *r, uint32_t *v, ar_error **err)
{
  if (rd_align (r, 4, err) < 0 || rd_need (r, 4, err) < 0)
    return -1;
  *v = load_u32 (r->p + r->pos, r->big);
  r->pos += 4;
  return 0;
}

/* n bytes then a NUL, none inside. */
static int
get_chars (struct ar_dbus_rd *r, size_t n, const char **s, ar_error **err)
{
  if (n >= r->len - r->pos)
    return truncated (err);
  const char *p = (const char *) r->p + r->pos;
  if (p[n] != '\0' || memchr (p, '\0', n))
    return ar_err (err, 0, "D-Bus message has a string that is not NUL-terminated");
  r->pos += n + 1;
  *s = p;
  return 0;
}

int
ar_dbus_get_str (struct ar_dbus_rd *r, const char **s, ar_error **err)
{
  uint32_t n;
  if (ar_dbus_get_u32 (r, &n, err) < 0)
    return -1;
  return get_chars (r, n, s, err);
}

int
ar_dbus_get_sig (struct ar_dbus_rd *r, const char **s, ar_error **err)
{
  if (rd_need (r, 1, err) < 0)
    return -1;
  size_t n = r->p[r->pos++];
  if (get_chars (r, n, s, err) < 0)
    return -1;
  if (!ar_dbus_sig_valid (*s))
    return ar_err (err, 0, "D-Bus message has an invalid signature");
  return 0;
}

static int skip_one (struct ar_dbus_rd *r, const char **sig, ar_error **err);

static int
skip_array (struct ar_dbus_rd *r, const char **sig, ar_error **err)
{
  uint32_t n;
  const char *elem = *sig + 1, *end_sig = type_end (elem, 0, 0, true);
  if (!end_sig || ar_dbus_get_u32 (r, &n, err) < 0 || rd_align (r, align_of (*elem), err) < 0)
    return end_sig ? -1 : truncated (err);
  if (n > MAX_ARRAY_LEN || rd_need (r, n, err) < 0)
    return truncated (err);
  size_t end = r->pos + n;
  while (r->pos < end)
    {
      const char *e = elem;
      if (skip_one (r, &e, err) < 0)
        return -1;
    }
  if (r->pos != end)
    return truncated (err);
  *sig = end_sig;
  return 0;
}

static int
skip_variant (struct ar_dbus_rd *r, ar_error **err)
{
  const char *inner;
  if (ar_dbus_get_sig (r, &inner, err) < 0)
    return -1;
  if (!single_type (inner))
    return ar_err (err, 0, "D-Bus variant does not hold a single complete type");
  return skip_one (r, &inner, err);
}

static int
skip_fixed (struct ar_dbus_rd *r, size_t n, ar_error **err)
{
  if (rd_align (r, n, err) < 0 || rd_need (r, n, err) < 0)
    return -1;
  r->pos += n;
  return 0;
}

/* Skip the value of the complete type at *sig and move *sig past it. */
static int
skip_one (struct ar_dbus_rd *r, const char **sig, ar_error **err)
{
  const char *s;
  char c = **sig;
  int ret;
  if (++r->depth > MAX_DEPTH)
    return ar_err (err, 0, "D-Bus message nests too deeply");
  if (c == 'y' || c == 'n' || c == 'q' || c == 'b' || c == 'i' || c == 'u' || c == 'h' || c == 'x' || c == 't' || c == 'd')
    ret = skip_fixed (r, align_of (c), err); /* size equals alignment */
  else if (c == 's' || c == 'o')
    ret = ar_dbus_get_str (r, &s, err);
  else if (c == 'g')
    ret = ar_dbus_get_sig (r, &s, err);
  else if (c == 'v')
    ret = skip_variant (r, err);
  else if (c == 'a')
    {
      ret = skip_array (r, sig, err);
      r->depth--;
      return ret;
    }
  else if (c == '(' || c == '{')
    {
      char close = c == '(' ? ')' : '}';
      ret = rd_align (r, 8, err);
      for ((*sig)++; ret == 0 && **sig && **sig != close;)
        ret = skip_one (r, sig, err);
      if (ret == 0 && **sig != close)
        ret = truncated (err);
    }
  else
    ret = ar_err (err, 0, "D-Bus message has an invalid signature");
  r->depth--;
  if (ret == 0)
    (*sig)++;
  return ret;
}

int
ar_dbus_skip (struct ar_dbus_rd *r, const char *sig, ar_error **err)
{
  if (!type_end (sig, 0, 0, false))
    return ar_err (err, 0, "D-Bus message has an invalid signature");
  return skip_one (r, &sig, err);
}

int
ar_dbus_skip_body (struct ar_dbus_rd *r, const char *sig, ar_error **err)
{
  if (!ar_dbus_sig_valid (sig))
    return ar_err (err, 0, "D-Bus message has an invalid signature");
  while (*sig)
    if (skip_one (r, &sig, err) < 0)
      return -1;
  if (r->pos != r->len)
    return ar_err (err, 0, "D-Bus message body is longer than its signature says");
  return 0;
}

/* ---- messages ---- */

int
ar_dbus_msg_size (const unsigned char *hdr, size_t *total, ar_error **err)
{
  if (hdr[0] != 'l' && hdr[0] != 'B')
    return ar_err (err, 0, "D-Bus message has an unknown byte order 0x%02x", hdr[0]);
  if (hdr[3] != 1)
    return ar_err (err, 0, "D-Bus message has protocol version %u, not 1", hdr[3]);
  bool big = hdr[0] == 'B';
  uint32_t body = load_u32 (hdr + 4, big), fields = load_u32 (hdr + 12, big);
  if (body > AR_DBUS_MAX_MSG || fields > AR_DBUS_MAX_MSG)
    return ar_err (err, 0, "D-Bus message is larger than %u bytes", AR_DBUS_MAX_MSG);
  size_t n = ((size_t) AR_DBUS_FIXED_HDR + fields + 7) / 8 * 8 + body;
  if (n > AR_DBUS_MAX_MSG)
    return ar_err (err, 0, "D-Bus message is larger than %u bytes", AR_DBUS_MAX_MSG);
  *total = n;
  return 0;
}

/* One header field: code, then a variant whose type the code dictates. */
static int
parse_field (struct ar_dbus_rd *r, struct ar_dbus_msg *m, ar_error **err)
{
  static const char *const types[] = { NULL, "o", "s", "s", "s", "u", "s", "s", "g", "u" };
  const char *sig, *str = NULL;
  if (rd_align (r, 8, err) < 0 || rd_need (r, 1, err) < 0)
    return -1;
  uint8_t code = r->p[r->pos++];
  if (ar_dbus_get_sig (r, &sig, err) < 0)
    return -1;
  if (!single_type (sig))
    return ar_err (err, 0, "D-Bus header field %u does not hold a single complete type", code);
  if (code == 0 || code >= ARRAY_SIZE (types))
    return ar_dbus_skip (r, sig, err); /* unknown fields are ignored */
  if (strcmp (sig, types[code]) != 0)
    return ar_err (err, 0, "D-Bus header field %u has type \"%s\", not \"%s\"", code, sig, types[code]);
  if (code == 5)
    return ar_dbus_get_u32 (r, &m->reply_serial, err);
  if (code == 9)
    return ar_dbus_skip (r, sig, err);
  if ((code == 8 ? ar_dbus_get_sig (r, &str, err) : ar_dbus_get_str (r, &str, err)) < 0)
    return -1;
  const char **slot[] = { NULL, &m->path, &m->iface, &m->member, &m->error_name, NULL, &m->dest, &m->sender, &m->sig };
  *slot[code] = str;
  return 0;
}

static int
check_required (const struct ar_dbus_msg *m, ar_error **err)
{
  bool ok = true;
  if (m->type == AR_DBUS_CALL)
    ok = m->path && m->member;
  else if (m->type == AR_DBUS_RETURN)
    ok = m->reply_serial != 0;
  else if (m->type == AR_DBUS_ERROR)
    ok = m->reply_serial != 0 && m->error_name;
  else if (m->type == AR_DBUS_SIGNAL)
    ok = m->path && m->iface && m->member;
  if (!ok)
    return ar_err (err, 0, "D-Bus message of type %d lacks a required header field", m->type);
  if (m->body_len && !*m->sig)
    return ar_err (err, 0, "D-Bus message has a body but no signature");
  return 0;
}

int
ar_dbus_parse (const unsigned char *buf, size_t len, struct ar_dbus_msg *m, ar_error **err)
{
  size_t total;
  *m = (struct ar_dbus_msg){ .sig = "" };
  if (len < AR_DBUS_FIXED_HDR)
    return truncated (err);
  if (ar_dbus_msg_size (buf, &total, err) < 0)
    return -1;
  if (total != len)
    return truncated (err);
  m->big_endian = buf[0] == 'B';
  m->type = buf[1];
  m->flags = buf[2];
  m->serial = load_u32 (buf + 8, m->big_endian);
  if (m->serial == 0)
    return ar_err (err, 0, "D-Bus message has serial 0");
  size_t fields_end = AR_DBUS_FIXED_HDR + (size_t) load_u32 (buf + 12, m->big_endian);
  struct ar_dbus_rd r = { .p = buf, .len = fields_end, .pos = AR_DBUS_FIXED_HDR, .big = m->big_endian };
  while (r.pos < r.len)
    if (parse_field (&r, m, err) < 0)
      return -1;
  size_t body_at = (fields_end + 7) / 8 * 8;
  m->body = buf + body_at;
  m->body_len = len - body_at;
  if (check_required (m, err) < 0)
    return -1;
  /* The whole body is walked once here, so what callers read later is
   * known to match the signature. */
  struct ar_dbus_rd b;
  ar_dbus_rd_init (&b, m);
  return ar_dbus_skip_body (&b, m->sig, err);
}

char *
ar_dbus_error_text (const struct ar_dbus_msg *m)
{
  const char *text = NULL;
  if (m->sig[0] == 's')
    {
      struct ar_dbus_rd r;
      ar_dbus_rd_init (&r, m);
      if (ar_dbus_get_str (&r, &text, NULL) < 0)
        text = NULL;
    }
  char *out = xasprintf ("%.120s%s%.200s", m->error_name ? m->error_name : "error", text ? ": " : "", text ? text : "");
  for (unsigned char *c = (unsigned char *) out; *c; c++)
    if (*c < 0x20 || *c == 0x7f)
      *c = '?';
  return out;
}
