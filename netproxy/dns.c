#include "config.h"
#include "dns.h"

#include <stdio.h>
#include <string.h>

#define DNS_HDR 12
#define T_A 1
#define T_AAAA 28
#define T_ANY 255
#define C_IN 1

enum { RC_OK = 0, RC_FORMERR = 1, RC_NXDOMAIN = 3, RC_NOTIMP = 4 };

static uint16_t
rd16 (const uint8_t *p)
{
  return (uint16_t) (p[0] << 8 | p[1]);
}

static void
wr16 (uint8_t *p, uint16_t v)
{
  p[0] = (uint8_t) (v >> 8);
  p[1] = (uint8_t) v;
}

/* Read the question name at q[DNS_HDR...] into name (lower case, dotted).
 * Returns the offset just past it, or 0 if malformed. Compression pointers
 * are refused: a first question has nothing to point back to. Labels with
 * a dot or a byte outside [a-z0-9-_] make the name "unmatchable" (*bad),
 * never confusable with an allowed one. */
static size_t
read_qname (const uint8_t *q, size_t qlen, char name[256], int *bad)
{
  size_t off = DNS_HDR, n = 0;
  *bad = 0;
  for (;;)
    {
      if (off >= qlen)
        return 0;
      uint8_t l = q[off++];
      if (l == 0)
        break;
      if (l > 63 || l > qlen - off || n + l + 1 > 255)
        return 0;
      if (n)
        name[n++] = '.';
      for (uint8_t i = 0; i < l; i++)
        {
          uint8_t c = q[off + i];
          if (c >= 'A' && c <= 'Z')
            c = (uint8_t) (c + 32);
          if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
            {
              *bad = 1;
              c = '?';
            }
          name[n++] = (char) c;
        }
      off += l;
    }
  name[n] = '\0';
  return off;
}

static ssize_t
header_only (const uint8_t *q, uint8_t *out, size_t outcap, int rcode, struct dns_query_info *info)
{
  if (outcap < DNS_HDR)
    return -1;
  memset (out, 0, DNS_HDR);
  out[0] = q[0];
  out[1] = q[1];
  out[2] = (uint8_t) (0x80 | (q[2] & 0x79)); /* QR, opcode, RD kept */
  out[3] = (uint8_t) (0x80 | rcode); /* RA */
  if (info)
    info->rcode = rcode;
  return DNS_HDR;
}

ssize_t
dns_answer (const uint8_t *q, size_t qlen, uint8_t *out, size_t outcap, dns_lookup_fn lookup, void *ctx,
            struct dns_query_info *info)
{
  struct dns_query_info tmp;
  if (!info)
    info = &tmp;
  memset (info, 0, sizeof *info);
  if (qlen < DNS_HDR || (q[2] & 0x80))
    return -1; /* no id to answer, or a response: stay silent */
  if (((q[2] >> 3) & 0x0f) != 0)
    return header_only (q, out, outcap, RC_NOTIMP, info);
  if (rd16 (q + 4) != 1)
    return header_only (q, out, outcap, RC_FORMERR, info);
  int bad;
  size_t end = read_qname (q, qlen, info->name, &bad);
  if (end == 0 || qlen - end < 4)
    {
      info->name[0] = '\0';
      return header_only (q, out, outcap, RC_FORMERR, info);
    }
  info->qtype = rd16 (q + end);
  uint16_t qclass = rd16 (q + end + 2);
  end += 4;

  struct in_addr addr;
  int found = !bad && qclass == C_IN && info->name[0] && lookup (ctx, info->name, &addr);
  int with_a = found && (info->qtype == T_A || info->qtype == T_ANY);
  size_t need = end + (with_a ? 16 : 0);
  if (need > outcap)
    return header_only (q, out, outcap, RC_FORMERR, info);

  /* Header, the question copied verbatim (extra records dropped), answer. */
  memcpy (out, q, end);
  info->rcode = found ? RC_OK : RC_NXDOMAIN;
  out[2] = (uint8_t) (0x84 | (q[2] & 0x79)); /* QR, AA, opcode, RD */
  out[3] = (uint8_t) (0x80 | info->rcode);
  wr16 (out + 6, with_a ? 1 : 0);
  wr16 (out + 8, 0);
  wr16 (out + 10, 0);
  if (with_a)
    {
      uint8_t *a = out + end;
      wr16 (a, 0xc000 | DNS_HDR); /* pointer to the question's name */
      wr16 (a + 2, T_A);
      wr16 (a + 4, C_IN);
      wr16 (a + 6, 0);
      wr16 (a + 8, 60); /* TTL */
      wr16 (a + 10, 4);
      memcpy (a + 12, &addr.s_addr, 4);
    }
  return (ssize_t) need;
}

const char *
dns_type_name (uint16_t t, char buf[8])
{
  switch (t)
    {
    case 1: return "A";
    case 28: return "AAAA";
    case 5: return "CNAME";
    case 15: return "MX";
    case 16: return "TXT";
    case 33: return "SRV";
    case 65: return "HTTPS";
    case 12: return "PTR";
    case 255: return "ANY";
    default: snprintf (buf, 8, "%u", t); return buf;
    }
}
