/* See size.h. */
#include "config.h"
#include "size.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

static int
multiple_shift (char c)
{
  switch (tolower ((unsigned char) c))
    {
    case 'k': return 10;
    case 'm': return 20;
    case 'g': return 30;
    case 't': return 40;
    default: return -1;
    }
}

enum ar_size_status
ar_parse_size (const char *s, int64_t *out)
{
  /* strtoull would take a sign and leading blanks */
  if (!isdigit ((unsigned char) s[0]))
    return AR_SIZE_BAD;
  char *end;
  errno = 0;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno)
    return AR_SIZE_BAD;
  int shift = *end ? multiple_shift (*end) : 0;
  if (shift > 0)
    {
      end++;
      if (tolower ((unsigned char) *end) == 'i')
        end++;
    }
  else if (shift < 0)
    {
      if (tolower ((unsigned char) *end) != 'b')
        return isalpha ((unsigned char) *end) ? AR_SIZE_SUFFIX : AR_SIZE_BAD;
      shift = 0;
    }
  if (tolower ((unsigned char) *end) == 'b')
    end++;
  if (*end || v > (unsigned long long) (INT64_MAX >> shift))
    return AR_SIZE_BAD;
  *out = (int64_t) (v << shift);
  return AR_SIZE_OK;
}
