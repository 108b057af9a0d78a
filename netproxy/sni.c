#include "config.h"
#include "sni.h"

#include <string.h>

/* A bounded reader: every get fails (returns -1) past the end, so the
 * parser below never indexes out of range. */
struct rd {
  const uint8_t *p;
  size_t len, off;
};

static int
get (struct rd *r, size_t n, const uint8_t **out)
{
  if (n > r->len - r->off)
    return -1;
  *out = r->p + r->off;
  r->off += n;
  return 0;
}

static int
get_u (struct rd *r, size_t n, size_t *v)
{
  const uint8_t *p;
  if (get (r, n, &p) < 0)
    return -1;
  *v = 0;
  for (size_t i = 0; i < n; i++)
    *v = (*v << 8) | p[i];
  return 0;
}

/* Skip a vector whose length prefix is lenbytes wide. */
static int
skip_vec (struct rd *r, size_t lenbytes)
{
  size_t n;
  const uint8_t *p;
  return get_u (r, lenbytes, &n) < 0 || get (r, n, &p) < 0 ? -1 : 0;
}

static int
copy_name (const uint8_t *p, size_t n, char *name, size_t cap)
{
  if (n == 0 || n >= cap || n > 253)
    return SNI_BAD;
  for (size_t i = 0; i < n; i++)
    {
      uint8_t c = p[i];
      int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
               || c == '_';
      if (!ok)
        return SNI_BAD;
    }
  memcpy (name, p, n);
  name[n] = '\0';
  return SNI_FOUND;
}

static int
parse_sni_ext (struct rd *r, char *name, size_t cap)
{
  size_t list, type, n;
  const uint8_t *p;
  if (get_u (r, 2, &list) < 0 || list > r->len - r->off)
    return SNI_BAD;
  /* One name, and nothing else in the list or after it: a server that
   * picks another entry than we checked would serve another host. */
  struct rd l = { r->p + r->off, list, 0 };
  if (r->off + list != r->len || get_u (&l, 1, &type) < 0 || get_u (&l, 2, &n) < 0 || get (&l, n, &p) < 0
      || l.off != l.len)
    return SNI_BAD;
  return type == 0 ? copy_name (p, n, name, cap) : SNI_BAD;
}

/* body: a complete ClientHello body (after the 4-byte handshake header). */
static int
parse_hello (const uint8_t *body, size_t len, char *name, size_t cap)
{
  struct rd r = { body, len, 0 };
  const uint8_t *p;
  size_t ext_len;
  if (get (&r, 2 + 32, &p) < 0 || skip_vec (&r, 1) < 0 /* version, random, session id */
      || skip_vec (&r, 2) < 0 || skip_vec (&r, 1) < 0) /* cipher suites, compression */
    return SNI_BAD;
  if (r.off == r.len)
    return SNI_NO_NAME; /* no extensions at all */
  if (get_u (&r, 2, &ext_len) < 0 || ext_len > r.len - r.off)
    return SNI_BAD;
  struct rd e = { r.p + r.off, ext_len, 0 };
  int found = SNI_NO_NAME;
  while (e.off < e.len)
    {
      size_t type, n;
      if (get_u (&e, 2, &type) < 0 || get_u (&e, 2, &n) < 0 || get (&e, n, &p) < 0)
        return SNI_BAD;
      if (type == 0 && found != SNI_NO_NAME)
        return SNI_BAD; /* a second server_name extension */
      if (type == 0)
        {
          struct rd s = { p, n, 0 };
          if ((found = parse_sni_ext (&s, name, cap)) != SNI_FOUND)
            return found;
        }
    }
  return found;
}

int
sni_parse (const uint8_t *buf, size_t len, char *name, size_t namecap)
{
  /* The hello may span several records: gather their fragments in hs. */
  uint8_t hs[SNI_MAX_HELLO + 4];
  size_t hlen = 0, off = 0;

  if (namecap)
    name[0] = '\0';
  if (len >= 1 && buf[0] != 0x16)
    return SNI_NOT_TLS;
  if (len >= 2 && buf[1] != 0x03)
    return SNI_NOT_TLS;
  for (;;)
    {
      if (hlen >= 1 && hs[0] != 0x01)
        return SNI_BAD; /* a handshake, but not a ClientHello */
      if (hlen >= 4)
        {
          size_t mlen = ((size_t) hs[1] << 16) | ((size_t) hs[2] << 8) | hs[3];
          if (mlen > SNI_MAX_HELLO)
            return SNI_BAD;
          if (hlen >= 4 + mlen)
            return parse_hello (hs + 4, mlen, name, namecap);
        }
      if (off >= len)
        return SNI_NEED_MORE;
      if (buf[off] != 0x16 || (len - off >= 2 && buf[off + 1] != 0x03))
        return SNI_BAD;
      if (len - off < 5)
        return SNI_NEED_MORE;
      size_t rlen = ((size_t) buf[off + 3] << 8) | buf[off + 4];
      if (rlen == 0 || rlen > 16384 + 256)
        return SNI_BAD;
      size_t avail = len - off - 5 < rlen ? len - off - 5 : rlen;
      if (avail > sizeof hs - hlen)
        return SNI_BAD;
      memcpy (hs + hlen, buf + off + 5, avail);
      hlen += avail;
      off = avail < rlen ? len : off + 5 + rlen;
    }
}
