/* SHA-256: see sha256.h. */
#include "config.h"
#include "sha256.h"

#include <stdint.h>
#include <string.h>

static const uint32_t K[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
sha256_block (uint32_t h[8], const unsigned char *p)
{
  uint32_t w[64], a, b, c, d, e, f, g, k, t1, t2;
  int i;

  for (i = 0; i < 16; i++)
    w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16 | (uint32_t) p[4 * i + 2] << 8 | p[4 * i + 3];
  for (; i < 64; i++)
    {
      uint32_t s0 = ROR (w[i - 15], 7) ^ ROR (w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = ROR (w[i - 2], 17) ^ ROR (w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
  a = h[0];
  b = h[1];
  c = h[2];
  d = h[3];
  e = h[4];
  f = h[5];
  g = h[6];
  k = h[7];
  for (i = 0; i < 64; i++)
    {
      t1 = k + (ROR (e, 6) ^ ROR (e, 11) ^ ROR (e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
      t2 = (ROR (a, 2) ^ ROR (a, 13) ^ ROR (a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      k = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += k;
}

#if defined(__x86_64__) && defined(__has_include)
#if __has_include(<sys/platform/x86.h>) && __has_include(<immintrin.h>)
#define HAVE_SHA_NI 1
#endif
#endif

#ifdef HAVE_SHA_NI
#include <immintrin.h>
#include <sys/platform/x86.h>

/* The same 64 rounds with SHA-NI: the state is kept as two vectors, ABEF
 * and CDGH (the layout sha256rnds2 works on); each step takes four words
 * of the schedule, the first 16 loaded big-endian, the rest made by
 * sha256msg1/msg2 from the four vectors before (kept in a ring of four). */
__attribute__ ((target ("sha,sse4.1"))) static void
sha256_block_ni (uint32_t h[8], const unsigned char *p)
{
  const __m128i bswap = _mm_set_epi64x (0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  __m128i abcd = _mm_loadu_si128 ((const __m128i *) h);
  __m128i efgh = _mm_loadu_si128 ((const __m128i *) (h + 4));
  __m128i badc = _mm_shuffle_epi32 (abcd, 0xB1);
  __m128i hgfe = _mm_shuffle_epi32 (efgh, 0x1B);
  __m128i abef = _mm_alignr_epi8 (badc, hgfe, 8);
  __m128i cdgh = _mm_blend_epi16 (hgfe, badc, 0xF0);
  const __m128i abef0 = abef, cdgh0 = cdgh;
  __m128i w[4];

  for (int r = 0; r < 16; r++)
    {
      __m128i m;
      if (r < 4)
        m = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (p + 16 * r)), bswap);
      else
        {
          /* W[r] = msg2 (msg1 (W[r-4], W[r-3]) + W[r-2..r-1] shifted one word, W[r-1]) */
          __m128i t = _mm_sha256msg1_epu32 (w[r & 3], w[(r + 1) & 3]);
          t = _mm_add_epi32 (t, _mm_alignr_epi8 (w[(r + 3) & 3], w[(r + 2) & 3], 4));
          m = _mm_sha256msg2_epu32 (t, w[(r + 3) & 3]);
        }
      w[r & 3] = m;
      __m128i wk = _mm_add_epi32 (m, _mm_loadu_si128 ((const __m128i *) (K + 4 * r)));
      cdgh = _mm_sha256rnds2_epu32 (cdgh, abef, wk); /* two rounds: the new ABEF */
      abef = _mm_sha256rnds2_epu32 (abef, cdgh, _mm_shuffle_epi32 (wk, 0x0E));
    }
  abef = _mm_add_epi32 (abef, abef0);
  cdgh = _mm_add_epi32 (cdgh, cdgh0);
  __m128i feba = _mm_shuffle_epi32 (abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32 (cdgh, 0xB1);
  _mm_storeu_si128 ((__m128i *) h, _mm_blend_epi16 (feba, dchg, 0xF0));
  _mm_storeu_si128 ((__m128i *) (h + 4), _mm_alignr_epi8 (dchg, feba, 8));
}
#endif

typedef void block_fn (uint32_t h[8], const unsigned char *p);

static block_fn *
pick_block (void)
{
#ifdef HAVE_SHA_NI
  if (CPU_FEATURE_ACTIVE (SHA) && CPU_FEATURE_ACTIVE (SSE4_1) && CPU_FEATURE_ACTIVE (SSSE3))
    return sha256_block_ni;
#endif
  return sha256_block;
}

void
ar_sha256 (const void *data, size_t len, unsigned char out[AR_SHA256_LEN])
{
  uint32_t h[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
  const unsigned char *p = data;
  unsigned char tail[128] = { 0 };
  size_t rest = len % 64, tail_len = rest < 56 ? 64 : 128, i;
  uint64_t bits = (uint64_t) len * 8;
  block_fn *block = pick_block ();

  for (i = 0; i + 64 <= len; i += 64)
    block (h, p + i);
  memcpy (tail, p + i, rest);
  tail[rest] = 0x80;
  for (i = 0; i < 8; i++)
    tail[tail_len - 1 - i] = (unsigned char) (bits >> (8 * i));
  for (i = 0; i < tail_len; i += 64)
    block (h, tail + i);
  for (i = 0; i < 8; i++)
    {
      out[4 * i] = (unsigned char) (h[i] >> 24);
      out[4 * i + 1] = (unsigned char) (h[i] >> 16);
      out[4 * i + 2] = (unsigned char) (h[i] >> 8);
      out[4 * i + 3] = (unsigned char) h[i];
    }
}
