/* The one JSON writer: yajl_gen with its first failure kept, so that the
 * emitters stay flat (no status checked after each call) and the text is
 * refused at the end when any call failed (a string that is not UTF-8, a key
 * where a value belongs, a map left open). */
#ifndef AR_JSONGEN_H
#define AR_JSONGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "error.h"

struct ar_gen {
  yajl_gen g;
  yajl_gen_status status; /* the first failure, yajl_gen_status_ok while none */
  bool pretty;
  int depth; /* maps and arrays open */
};

/* INDENT NULL: compact text; else pretty, indented by INDENT ("\t", "  ").
 * Aborts on allocation failure. */
void ar_gen_init (struct ar_gen *G, const char *indent);
/* The text as a NUL-terminated string (*out, caller frees; *len without the
 * NUL, if not NULL), with a final newline when pretty; or -1 naming WHAT and
 * the first failure. Frees the generator either way. */
int ar_gen_done (struct ar_gen *G, const char *what, char **out, size_t *len, ar_error **err);
/* The same for a document whose every string is known to be there: yajl
 * checks no UTF-8 here, so the writer fails only on a key where a value
 * belongs, a map left open or too deep a nesting, a bug of the emitter and
 * never of its input: that is printed, naming WHAT, and aborts. */
char *ar_gen_text (struct ar_gen *G, const char *what);

void ar_gen_str (struct ar_gen *G, const char *s);
void ar_gen_strn (struct ar_gen *G, const char *s, size_t n);
void ar_gen_int (struct ar_gen *G, long long v);
/* A number given as its decimal text (a uint64 above INT64_MAX stays exact). */
void ar_gen_u64 (struct ar_gen *G, unsigned long long v);
void ar_gen_bool (struct ar_gen *G, bool v);
void ar_gen_map_open (struct ar_gen *G);
void ar_gen_map_close (struct ar_gen *G);
void ar_gen_array_open (struct ar_gen *G);
void ar_gen_array_close (struct ar_gen *G);
/* A parsed value written again, whole. */
void ar_gen_tree (struct ar_gen *G, yajl_val v);
/* A value given as JSON text of n bytes, written whole. Compact: copied
 * as it is, without the white space between its tokens, never parsed here
 * (for a text that is valid by construction, such as one built into the
 * binary, in a document its reader parses anyway); pretty: parsed and
 * written again, so that a text that is not JSON fails the document. */
void ar_gen_json (struct ar_gen *G, const char *text, size_t n);
/* The JSON text in[0..n) without the white space between its tokens, in
 * out (n bytes at least); its length. Strings are copied byte for byte. */
size_t ar_json_squeeze (char *out, const char *in, size_t n);

void ar_gen_key_str (struct ar_gen *G, const char *key, const char *value);
void ar_gen_key_int (struct ar_gen *G, const char *key, long long value);
void ar_gen_key_bool (struct ar_gen *G, const char *key, bool value);
/* "key": [ v[0], ... ] for a NULL-terminated v. */
void ar_gen_key_strv (struct ar_gen *G, const char *key, const char *const *v);

#endif
