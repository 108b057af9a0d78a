/* JSON text to a tree of yajl nodes, made in one arena (see json.h). yajl's
 * own tree builder takes a malloc for every node and string and a realloc
 * for every member it adds to an object or array: most of the time a
 * config.json takes to read. Here yajl's parser calls back into a builder
 * that carves nodes, strings and member arrays out of a few large blocks,
 * freed together. The nodes are yajl's own struct, so yajl's accessors
 * (YAJL_IS_*, YAJL_GET_*) and ours read them as before. */
#include "config.h"
#include "json.h"
#include "spec.h"
#include "util.h"

#include <errno.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#define STR_(x) #x
#define STR(x) STR_ (x)

struct block {
  struct block *next;
  size_t used, cap;
  alignas (max_align_t) char data[];
};

struct builder {
  struct block *first, *cur;
  bool have_root;
  /* the members of every open object and array, innermost last; key NULL
   * in an array */
  yajl_val *vals;
  const char **keys;
  size_t n, cap;
  /* per open level: where its members start, and its node */
  size_t base[AR_SPEC_MAX_DEPTH + 1];
  yajl_val open[AR_SPEC_MAX_DEPTH + 1];
  int depth;
  const char *key; /* the key read for the next value */
  const char *why; /* our own refusal, when a callback stops the parse */
};

static struct block *
block_new (size_t cap)
{
  struct block *b = xrealloc (NULL, sizeof *b + cap); /* not zeroed: every node is set as made */
  b->next = NULL;
  b->used = 0;
  b->cap = cap;
  return b;
}

static void *
carve (struct builder *B, size_t size)
{
  size = (size + alignof (max_align_t) - 1) & ~(alignof (max_align_t) - 1);
  if (B->cur->cap - B->cur->used < size)
    {
      size_t cap = B->cur->cap * 2 > size ? B->cur->cap * 2 : size;
      struct block *b = block_new (cap);
      B->cur->next = b;
      B->cur = b;
    }
  void *p = B->cur->data + B->cur->used;
  B->cur->used += size;
  return p;
}

static char *
carve_str (struct builder *B, const unsigned char *s, size_t len)
{
  char *p = carve (B, len + 1);
  memcpy (p, s, len);
  p[len] = '\0';
  return p;
}

/* A node of type t. The document's first is its root, in the place kept
 * for it at the first block's start (a string's text may be carved before
 * its node), from which ar_json_tree_free finds every block. */
static yajl_val
node (struct builder *B, yajl_type t)
{
  yajl_val v = B->have_root ? carve (B, sizeof *v) : (yajl_val) (void *) B->first->data;
  B->have_root = true;
  memset (v, 0, sizeof *v);
  v->type = t;
  return v;
}

/* v is the next value of the open object or array (none open: the root). */
static int
add (struct builder *B, yajl_val v)
{
  if (B->depth == 0)
    return 1;
  if (B->n == B->cap)
    {
      B->cap = B->cap ? B->cap * 2 : 256;
      B->vals = xrealloc (B->vals, B->cap * sizeof *B->vals);
      B->keys = xrealloc (B->keys, B->cap * sizeof *B->keys);
    }
  B->vals[B->n] = v;
  B->keys[B->n++] = B->key;
  B->key = NULL;
  return 1;
}

static int
on_null (void *ctx)
{
  return add (ctx, node (ctx, yajl_t_null));
}

static int
on_bool (void *ctx, int b)
{
  return add (ctx, node (ctx, b ? yajl_t_true : yajl_t_false));
}

/* An integer in yajl's sense, in range. yajl hands over JSON number text
 * only, so a fraction or an exponent is what stops strtoll short. */
static bool
integer_of (const char *s, long long *out)
{
  char *end;
  errno = 0;
  *out = strtoll (s, &end, 10);
  return errno == 0 && *end == '\0';
}

static int
on_number (void *ctx, const char *s, size_t len)
{
  struct builder *B = ctx;
  yajl_val v = node (B, yajl_t_number);
  v->u.number.r = carve_str (B, (const unsigned char *) s, len);
  if (integer_of (v->u.number.r, &v->u.number.i))
    v->u.number.flags |= YAJL_NUMBER_INT_VALID;
  char *end;
  errno = 0;
  v->u.number.d = strtod (v->u.number.r, &end);
  if (errno == 0 && *end == '\0')
    v->u.number.flags |= YAJL_NUMBER_DOUBLE_VALID;
  return add (B, v);
}

/* C strings would end at a NUL a "\u0000" escape made */
static const char *
text (struct builder *B, const unsigned char *s, size_t len)
{
  if (memchr (s, '\0', len))
    {
      B->why = "a string holds a \\u0000 escape (a NUL)";
      return NULL;
    }
  return carve_str (B, s, len);
}

static int
on_string (void *ctx, const unsigned char *s, size_t len)
{
  struct builder *B = ctx;
  const char *t = text (B, s, len);
  if (!t)
    return 0;
  yajl_val v = node (B, yajl_t_string);
  v->u.string = (char *) t;
  return add (B, v);
}

static int
on_key (void *ctx, const unsigned char *s, size_t len)
{
  struct builder *B = ctx;
  return (B->key = text (B, s, len)) != NULL;
}

static int
open_level (struct builder *B, yajl_type t)
{
  if (B->depth == AR_SPEC_MAX_DEPTH)
    {
      B->why = "nesting deeper than " STR (AR_SPEC_MAX_DEPTH) " levels";
      return 0;
    }
  yajl_val v = node (B, t);
  add (B, v);
  B->depth++;
  B->base[B->depth] = B->n;
  B->open[B->depth] = v;
  return 1;
}

static int
on_map_open (void *ctx)
{
  return open_level (ctx, yajl_t_object);
}

static int
on_array_open (void *ctx)
{
  return open_level (ctx, yajl_t_array);
}

/* The level's members, counted at last, copied to arrays of their size. */
static int
close_level (void *ctx)
{
  struct builder *B = ctx;
  yajl_val v = B->open[B->depth];
  size_t base = B->base[B->depth], n = B->n - base;
  yajl_val *vals = n ? carve (B, n * sizeof *vals) : NULL;
  if (n)
    memcpy (vals, B->vals + base, n * sizeof *vals);
  if (v->type == yajl_t_object)
    {
      const char **keys = n ? carve (B, n * sizeof *keys) : NULL;
      if (n)
        memcpy (keys, B->keys + base, n * sizeof *keys);
      v->u.object.keys = keys;
      v->u.object.values = vals;
      v->u.object.len = n;
    }
  else
    {
      v->u.array.values = vals;
      v->u.array.len = n;
    }
  B->n = base;
  B->depth--;
  return 1;
}

static const yajl_callbacks callbacks = {
  .yajl_null = on_null,
  .yajl_boolean = on_bool,
  .yajl_number = on_number,
  .yajl_string = on_string,
  .yajl_start_map = on_map_open,
  .yajl_map_key = on_key,
  .yajl_end_map = close_level,
  .yajl_start_array = on_array_open,
  .yajl_end_array = close_level,
};

static void
blocks_free (struct block *b)
{
  while (b)
    {
      struct block *next = b->next;
      free (b);
      b = next;
    }
}

/* yajl's message, its first line (the rest points at the text) */
static void
yajl_message (yajl_handle h, const char *buf, size_t len, char *ebuf, size_t elen)
{
  unsigned char *m = yajl_get_error (h, 1, (const unsigned char *) buf, len);
  snprintf (ebuf, elen, "%s", m ? (char *) m : "parse error");
  if (m)
    yajl_free_error (h, m);
  char *nl = strchr (ebuf, '\n');
  if (nl)
    *nl = '\0';
}

yajl_val
ar_json_tree (const char *buf, size_t len, char *ebuf, size_t elen)
{
  /* nodes and strings take about three times the text: one block, mostly */
  struct builder B = { .first = block_new (3 * len + 1024) };
  B.cur = B.first;
  carve (&B, sizeof (struct yajl_val_s)); /* the root's place */
  yajl_handle h = yajl_alloc (&callbacks, NULL, &B);
  yajl_config (h, yajl_allow_comments, 1);
  yajl_status st = yajl_parse (h, (const unsigned char *) buf, len);
  if (st == yajl_status_ok)
    st = yajl_complete_parse (h);
  if (st != yajl_status_ok || !B.have_root)
    {
      if (B.why)
        snprintf (ebuf, elen, "%s", B.why);
      else
        yajl_message (h, buf, len, ebuf, elen);
      blocks_free (B.first);
      B.first = NULL;
    }
  yajl_free (h);
  free (B.vals);
  free (B.keys);
  return B.first ? (yajl_val) (void *) B.first->data : NULL;
}

void
ar_json_tree_free (yajl_val root)
{
  if (!root)
    return;
  blocks_free ((struct block *) (void *) ((char *) root - offsetof (struct block, data)));
}
