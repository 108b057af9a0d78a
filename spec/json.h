/* yajl tree helpers that remember where they are in the document, so every
 * error names the file and the JSON path ("config.json: linux.seccomp.
 * syscalls[2].action: ..."). The walk is strict where the spec is: a present
 * field of the wrong type, a duplicate key, a number out of range are errors;
 * unknown keys are ignored and JSON null counts as absent (as Go decoders do). */
#ifndef AR_JSON_H
#define AR_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "error.h"
#include "model.h"

#define AR_JSON_PATH_MAX 512

struct ar_jctx {
  const char *label; /* file name for messages */
  ar_error **err;
  size_t len; /* current length of path */
  char path[AR_JSON_PATH_MAX]; /* "" at the document root */
};

void ar_jctx_init (struct ar_jctx *c, const char *label, ar_error **err);

/* Descend: append ".key" or "[i]"; returns the old length for ar_jpath_pop. */
size_t ar_jpath_key (struct ar_jctx *c, const char *key);
size_t ar_jpath_index (struct ar_jctx *c, size_t i);
void ar_jpath_pop (struct ar_jctx *c, size_t old);
/* Replace the whole path (checks on the model rebuild it from indexes). */
void ar_jpath_set (struct ar_jctx *c, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/* "<label>: <path>: <message>" (path "." for the root); always returns -1. */
int ar_jerr (struct ar_jctx *c, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* Same, for member `key` of the current object, without descending. */
int ar_jerr_at (struct ar_jctx *c, const char *key, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

/* JSON text (comments allowed, as yajl_tree_parse) to a tree of yajl's
 * nodes made in one arena (jsontree.c), nested at most AR_SPEC_MAX_DEPTH
 * levels, no string holding a NUL. NULL with a one-line reason in ebuf. */
yajl_val ar_json_tree (const char *buf, size_t len, char *ebuf, size_t elen);
/* Frees a whole tree of ar_json_tree (never yajl_tree_free: one arena). */
void ar_json_tree_free (yajl_val root);

/* ar_json_tree within the size limit; the root must be an object. */
int ar_json_parse (const char *buf, size_t len, const char *label, yajl_val *out, ar_error **err);

/* Member lookup: 1 found (*out set), 0 absent or null, -1 error (wrong type or
 * duplicate key). `type` is one of yajl_t_string, _number, _object, _array,
 * or yajl_t_true for a boolean. */
int ar_json_member (struct ar_jctx *c, yajl_val obj, const char *key, yajl_type type, yajl_val *out);

/* Typed getters. `required` makes absence an error; `has` (may be NULL) says
 * whether the value was present. Return 0 or -1. */
int ar_json_str (struct ar_jctx *c, yajl_val obj, const char *key, bool required, char **out);
int ar_json_bool (struct ar_jctx *c, yajl_val obj, const char *key, bool required, bool *out, bool *has);
int ar_json_int (struct ar_jctx *c, yajl_val obj, const char *key, bool required, int64_t min, int64_t max,
                 int64_t *out, bool *has);
int ar_json_uint (struct ar_jctx *c, yajl_val obj, const char *key, bool required, uint64_t max, uint64_t *out,
                  bool *has);
int ar_json_strv (struct ar_jctx *c, yajl_val obj, const char *key, bool required, char ***out, size_t *n);
/* An object whose values are all strings (annotations, sysctl, unified). */
int ar_json_kv (struct ar_jctx *c, yajl_val obj, const char *key, struct ar_kv **out, size_t *n);

/* Convert a number node (already known to be a number) with range checks,
 * from its text so that uint64 values above INT64_MAX are exact. The error
 * names the current path. */
int ar_json_node_uint (struct ar_jctx *c, yajl_val v, uint64_t max, uint64_t *out);

/* An array of objects: allocates n elements of elem_size (zeroed) and calls fn
 * on each with the path at "key[i]". On error *out and *n still hold what
 * was allocated (up to the failing element), so freeing the whole model
 * frees it: free functions must accept partly filled elements. */
typedef int (*ar_json_elem_fn) (struct ar_jctx *c, yajl_val elem, void *out);
int ar_json_objarray (struct ar_jctx *c, yajl_val obj, const char *key, bool required, size_t elem_size,
                      ar_json_elem_fn fn, void **out, size_t *n);
/* The object member `key` (if present) as a descended path; fn fills out. */
int ar_json_object (struct ar_jctx *c, yajl_val obj, const char *key, bool required, ar_json_elem_fn fn, void *out);
/* Same, but allocates *out (elem_size, zeroed) when the member is present. */
int ar_json_object_alloc (struct ar_jctx *c, yajl_val obj, const char *key, bool required, size_t elem_size,
                          ar_json_elem_fn fn, void **out);

const char *ar_json_type_name (yajl_val v);

void ar_strv_free (char **v, size_t n);
void ar_kv_free (struct ar_kv *kv, size_t n);

#endif
