/* Shared by the spec/ parser files; not an interface for other folders. */
#ifndef AR_PARSE_INTERNAL_H
#define AR_PARSE_INTERNAL_H

#include <stdint.h>
#include "json.h"
#include "model.h"

/* Typed wrappers over ar_json_int/uint for the model's field widths. */
static inline int
get_u32 (struct ar_jctx *c, yajl_val o, const char *k, bool req, uint32_t *out, bool *has)
{
  uint64_t v;
  bool h = false;
  if (ar_json_uint (c, o, k, req, UINT32_MAX, &v, &h) < 0)
    return -1;
  if (h)
    *out = (uint32_t) v;
  if (has)
    *has = h;
  return 0;
}

static inline int
get_u64 (struct ar_jctx *c, yajl_val o, const char *k, bool req, uint64_t *out, bool *has)
{
  return ar_json_uint (c, o, k, req, UINT64_MAX, out, has);
}

static inline int
get_u16 (struct ar_jctx *c, yajl_val o, const char *k, uint16_t *out, bool *has)
{
  uint64_t v;
  bool h = false;
  if (ar_json_uint (c, o, k, false, UINT16_MAX, &v, &h) < 0)
    return -1;
  if (h)
    *out = (uint16_t) v;
  *has = h;
  return 0;
}

static inline int
get_i64 (struct ar_jctx *c, yajl_val o, const char *k, bool req, int64_t *out, bool *has)
{
  return ar_json_int (c, o, k, req, INT64_MIN, INT64_MAX, out, has);
}

static inline int
get_int (struct ar_jctx *c, yajl_val o, const char *k, int64_t min, int64_t max, int *out, bool *has)
{
  int64_t v;
  bool h = false;
  if (ar_json_int (c, o, k, false, min, max, &v, &h) < 0)
    return -1;
  if (h)
    *out = (int) v;
  if (has)
    *has = h;
  return 0;
}

int ar_parse_idmap (struct ar_jctx *c, yajl_val o, void *out);
int ar_parse_process_obj (struct ar_jctx *c, yajl_val o, void *out);
int ar_parse_linux (struct ar_jctx *c, yajl_val o, void *out);
int ar_parse_resources (struct ar_jctx *c, yajl_val o, void *out);

void ar_process_clear (struct ar_process *p);
void ar_linux_free (struct ar_linux *l);
void ar_resources_free (struct ar_resources *r);

/* Cross-field checks (validate.c), after parsing. */
int ar_spec_validate (struct ar_jctx *c, const struct ar_spec *s);
int ar_process_validate (struct ar_jctx *c, const struct ar_process *p, const char *prefix);

#endif
