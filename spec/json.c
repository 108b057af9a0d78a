/* yajl tree helpers with JSON-path tracking (see json.h). */
#include "config.h"
#include "json.h"
#include "spec.h"
#include "util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

void
ar_jctx_init (struct ar_jctx *c, const char *label, ar_error **err)
{
  c->label = label ? label : "config.json";
  c->err = err;
  c->len = 0;
  c->path[0] = '\0';
}

/* Append n bytes, truncating (with "...") rather than overflowing: a long
 * path in a message is still useful, a crash is not. Without printf: a
 * config.json takes a step down for every member read. */
static void
path_append (struct ar_jctx *c, const char *s, size_t n)
{
  size_t room = sizeof c->path - c->len;
  if (n >= room)
    {
      memcpy (c->path + c->len, s, room - 1);
      memcpy (c->path + sizeof c->path - 4, "...", 4);
      c->len = sizeof c->path - 1;
      return;
    }
  memcpy (c->path + c->len, s, n);
  c->len += n;
  c->path[c->len] = '\0';
}

size_t
ar_jpath_key (struct ar_jctx *c, const char *key)
{
  size_t old = c->len;
  if (c->len)
    path_append (c, ".", 1);
  path_append (c, key, strlen (key));
  return old;
}

size_t
ar_jpath_index (struct ar_jctx *c, size_t i)
{
  size_t old = c->len;
  char num[24], *p = num + sizeof num;
  *--p = ']';
  do
    *--p = (char) ('0' + i % 10);
  while ((i /= 10));
  *--p = '[';
  path_append (c, p, (size_t) (num + sizeof num - p));
  return old;
}

void
ar_jpath_pop (struct ar_jctx *c, size_t old)
{
  c->len = old;
  c->path[old] = '\0';
}

void
ar_jpath_set (struct ar_jctx *c, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (c->path, sizeof c->path, fmt, ap);
  va_end (ap);
  c->len = n < 0 ? 0 : (size_t) n >= sizeof c->path ? sizeof c->path - 1 : (size_t) n;
  c->path[c->len] = '\0';
}

static int
jerr_v (struct ar_jctx *c, const char *fmt, va_list ap)
{
  char *msg;
  if (vasprintf (&msg, fmt, ap) < 0)
    abort ();
  ar_err (c->err, 0, "%s: %s: %s", c->label, c->len ? c->path : ".", msg);
  free (msg);
  return -1;
}

int
ar_jerr (struct ar_jctx *c, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  jerr_v (c, fmt, ap);
  va_end (ap);
  return -1;
}

int
ar_jerr_at (struct ar_jctx *c, const char *key, const char *fmt, ...)
{
  va_list ap;
  size_t old = ar_jpath_key (c, key);
  va_start (ap, fmt);
  jerr_v (c, fmt, ap);
  va_end (ap);
  ar_jpath_pop (c, old);
  return -1;
}

const char *
ar_json_type_name (yajl_val v)
{
  if (!v)
    return "nothing";
  switch (v->type)
    {
    case yajl_t_string: return "a string";
    case yajl_t_number: return "a number";
    case yajl_t_object: return "an object";
    case yajl_t_array: return "an array";
    case yajl_t_true:
    case yajl_t_false: return "a boolean";
    case yajl_t_null: return "null";
    default: return "an unknown value";
    }
}

static const char *
want_name (yajl_type t)
{
  switch (t)
    {
    case yajl_t_string: return "a string";
    case yajl_t_number: return "a number";
    case yajl_t_object: return "an object";
    case yajl_t_array: return "an array";
    default: return "a boolean";
    }
}

static bool
type_matches (yajl_val v, yajl_type t)
{
  if (t == yajl_t_true)
    return v->type == yajl_t_true || v->type == yajl_t_false;
  return v->type == t;
}

int
ar_json_member (struct ar_jctx *c, yajl_val obj, const char *key, yajl_type type, yajl_val *out)
{
  yajl_val found = NULL;
  *out = NULL;
  for (size_t i = 0; i < obj->u.object.len; i++)
    {
      if (strcmp (obj->u.object.keys[i], key) != 0)
        continue;
      /* yajl keeps the first of duplicate keys, Go the last: refuse the ambiguity. */
      if (found)
        return ar_jerr_at (c, key, "duplicate key");
      found = obj->u.object.values[i];
    }
  if (!found || found->type == yajl_t_null)
    return 0;
  if (!type_matches (found, type))
    return ar_jerr_at (c, key, "expected %s, got %s", want_name (type), ar_json_type_name (found));
  *out = found;
  return 1;
}

/* As ar_json_member, but absence is an error ("missing required field"). */
static int
ar_json_required (struct ar_jctx *c, yajl_val obj, const char *key, yajl_type type, yajl_val *out)
{
  int r = ar_json_member (c, obj, key, type, out);
  if (r == 0)
    return ar_jerr_at (c, key, "missing required field");
  return r < 0 ? -1 : 1;
}

static int
lookup (struct ar_jctx *c, yajl_val obj, const char *key, bool required, yajl_type t, yajl_val *v)
{
  return required ? ar_json_required (c, obj, key, t, v) : ar_json_member (c, obj, key, t, v);
}

int
ar_json_str (struct ar_jctx *c, yajl_val obj, const char *key, bool required, char **out)
{
  yajl_val v;
  int r = lookup (c, obj, key, required, yajl_t_string, &v);
  if (r > 0)
    *out = xstrdup (v->u.string);
  return r < 0 ? -1 : 0;
}

int
ar_json_bool (struct ar_jctx *c, yajl_val obj, const char *key, bool required, bool *out, bool *has)
{
  yajl_val v;
  int r = lookup (c, obj, key, required, yajl_t_true, &v);
  if (r > 0)
    *out = v->type == yajl_t_true;
  if (has)
    *has = r > 0;
  return r < 0 ? -1 : 0;
}

/* A JSON integer: optional '-', digits, nothing else (no fraction or exponent). */
static bool
integer_text (const char *s)
{
  if (*s == '-')
    s++;
  if (!*s)
    return false;
  for (; *s; s++)
    if (*s < '0' || *s > '9')
      return false;
  return true;
}

static int
ar_json_node_int (struct ar_jctx *c, yajl_val v, int64_t min, int64_t max, int64_t *out)
{
  const char *s = v->u.number.r;
  char *end;
  if (!integer_text (s))
    return ar_jerr (c, "%s is not an integer", s);
  errno = 0;
  long long n = strtoll (s, &end, 10);
  if (errno || *end || n < min || n > max)
    return ar_jerr (c, "%s is out of range [%" PRId64 ", %" PRId64 "]", s, min, max);
  *out = n;
  return 0;
}

int
ar_json_node_uint (struct ar_jctx *c, yajl_val v, uint64_t max, uint64_t *out)
{
  const char *s = v->u.number.r;
  char *end;
  if (!integer_text (s))
    return ar_jerr (c, "%s is not an integer", s);
  if (*s == '-')
    return ar_jerr (c, "%s is negative", s);
  errno = 0;
  unsigned long long n = strtoull (s, &end, 10);
  if (errno || *end || n > max)
    return ar_jerr (c, "%s is out of range [0, %" PRIu64 "]", s, max);
  *out = n;
  return 0;
}

int
ar_json_int (struct ar_jctx *c, yajl_val obj, const char *key, bool required, int64_t min, int64_t max, int64_t *out,
             bool *has)
{
  yajl_val v;
  int r = lookup (c, obj, key, required, yajl_t_number, &v);
  if (has)
    *has = r > 0;
  if (r <= 0)
    return r;
  size_t old = ar_jpath_key (c, key);
  r = ar_json_node_int (c, v, min, max, out);
  ar_jpath_pop (c, old);
  return r;
}

int
ar_json_uint (struct ar_jctx *c, yajl_val obj, const char *key, bool required, uint64_t max, uint64_t *out, bool *has)
{
  yajl_val v;
  int r = lookup (c, obj, key, required, yajl_t_number, &v);
  if (has)
    *has = r > 0;
  if (r <= 0)
    return r;
  size_t old = ar_jpath_key (c, key);
  r = ar_json_node_uint (c, v, max, out);
  ar_jpath_pop (c, old);
  return r;
}

int
ar_json_strv (struct ar_jctx *c, yajl_val obj, const char *key, bool required, char ***out, size_t *n)
{
  yajl_val v;
  int r = lookup (c, obj, key, required, yajl_t_array, &v);
  if (r <= 0)
    return r;
  size_t len = v->u.array.len;
  char **a = xmalloc0 ((len + 1) * sizeof *a);
  size_t old = ar_jpath_key (c, key);
  for (size_t i = 0; i < len; i++)
    {
      yajl_val e = v->u.array.values[i];
      if (!YAJL_IS_STRING (e))
        {
          ar_jpath_index (c, i);
          ar_jerr (c, "expected a string, got %s", ar_json_type_name (e));
          ar_jpath_pop (c, old);
          ar_strv_free (a, i);
          return -1;
        }
      a[i] = xstrdup (e->u.string);
    }
  ar_jpath_pop (c, old);
  *out = a;
  *n = len;
  return 0;
}

int
ar_json_kv (struct ar_jctx *c, yajl_val obj, const char *key, struct ar_kv **out, size_t *n)
{
  yajl_val v;
  int r = ar_json_member (c, obj, key, yajl_t_object, &v);
  if (r <= 0)
    return r;
  size_t len = v->u.object.len;
  struct ar_kv *kv = xmalloc0 (len * sizeof *kv);
  size_t old = ar_jpath_key (c, key);
  for (size_t i = 0; i < len; i++)
    {
      yajl_val e = v->u.object.values[i];
      const char *k = v->u.object.keys[i];
      bool dup = false;
      for (size_t j = 0; j < i && !dup; j++)
        dup = strcmp (kv[j].key, k) == 0;
      if (dup || !YAJL_IS_STRING (e))
        {
          if (dup)
            ar_jerr_at (c, k, "duplicate key");
          else
            ar_jerr_at (c, k, "expected a string, got %s", ar_json_type_name (e));
          ar_jpath_pop (c, old);
          ar_kv_free (kv, i);
          return -1;
        }
      kv[i].key = xstrdup (k);
      kv[i].value = xstrdup (e->u.string);
    }
  ar_jpath_pop (c, old);
  *out = kv;
  *n = len;
  return 0;
}

int
ar_json_objarray (struct ar_jctx *c, yajl_val obj, const char *key, bool required, size_t elem_size, ar_json_elem_fn fn,
                  void **out, size_t *n)
{
  yajl_val v;
  int r = lookup (c, obj, key, required, yajl_t_array, &v);
  if (r <= 0)
    return r;
  size_t len = v->u.array.len;
  char *a = xmalloc0 (len * elem_size);
  size_t old = ar_jpath_key (c, key);
  *out = a;
  *n = 0;
  for (size_t i = 0; i < len; i++)
    {
      yajl_val e = v->u.array.values[i];
      size_t old2 = ar_jpath_index (c, i);
      *n = i + 1;
      if (!YAJL_IS_OBJECT (e))
        r = ar_jerr (c, "expected an object, got %s", ar_json_type_name (e));
      else
        r = fn (c, e, a + i * elem_size);
      ar_jpath_pop (c, old2);
      if (r < 0)
        {
          ar_jpath_pop (c, old);
          return -1;
        }
    }
  ar_jpath_pop (c, old);
  return 0;
}

int
ar_json_object (struct ar_jctx *c, yajl_val obj, const char *key, bool required, ar_json_elem_fn fn, void *out)
{
  yajl_val v;
  int r = lookup (c, obj, key, required, yajl_t_object, &v);
  if (r <= 0)
    return r;
  size_t old = ar_jpath_key (c, key);
  r = fn (c, v, out);
  ar_jpath_pop (c, old);
  return r < 0 ? -1 : 0;
}

int
ar_json_object_alloc (struct ar_jctx *c, yajl_val obj, const char *key, bool required, size_t elem_size,
                      ar_json_elem_fn fn, void **out)
{
  yajl_val v;
  int r = lookup (c, obj, key, required, yajl_t_object, &v);
  if (r <= 0)
    return r;
  *out = xmalloc0 (elem_size);
  size_t old = ar_jpath_key (c, key);
  r = fn (c, v, *out);
  ar_jpath_pop (c, old);
  return r < 0 ? -1 : 0;
}

void
ar_strv_free (char **v, size_t n)
{
  if (!v)
    return;
  for (size_t i = 0; i < n; i++)
    free (v[i]);
  free (v);
}

void
ar_kv_free (struct ar_kv *kv, size_t n)
{
  if (!kv)
    return;
  for (size_t i = 0; i < n; i++)
    {
      free (kv[i].key);
      free (kv[i].value);
    }
  free (kv);
}

int
ar_json_parse (const char *buf, size_t len, const char *label, yajl_val *out, ar_error **err)
{
  char errbuf[512] = "";
  if (len > AR_SPEC_MAX_FILE_SIZE)
    return ar_err (err, 0, "%s: file is %zu bytes, larger than the %d byte limit", label, len, AR_SPEC_MAX_FILE_SIZE);
  const char *nul = memchr (buf, '\0', len);
  if (nul)
    return ar_err (err, 0, "%s: NUL byte at offset %zu", label, (size_t) (nul - buf));
  yajl_val root = ar_json_tree (buf, len, errbuf, sizeof errbuf);
  if (!root)
    return ar_err (err, 0, "%s: invalid JSON: %s", label, errbuf);
  if (!YAJL_IS_OBJECT (root))
    {
      ar_err (err, 0, "%s: .: expected an object, got %s", label, ar_json_type_name (root));
      ar_json_tree_free (root);
      return -1;
    }
  *out = root;
  return 0;
}
