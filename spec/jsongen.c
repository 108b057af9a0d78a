/* The JSON writer (jsongen.h). */
#include "config.h"
#include "jsongen.h"
#include "json.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>

void
ar_gen_init (struct ar_gen *G, const char *indent)
{
  G->status = yajl_gen_status_ok;
  G->pretty = indent != NULL;
  G->depth = 0;
  G->g = yajl_gen_alloc (NULL);
  if (!G->g)
    abort ();
  if (indent)
    {
      yajl_gen_config (G->g, yajl_gen_beautify, 1);
      yajl_gen_config (G->g, yajl_gen_indent_string, indent);
    }
}

/* Drop the generator without its text. */
static void
ar_gen_free (struct ar_gen *G)
{
  if (G->g)
    yajl_gen_free (G->g);
  G->g = NULL;
}

/* a status of our own, beyond yajl's: ar_gen_json's text did not parse */
#define AR_GEN_BAD_TEXT ((yajl_gen_status) 1000)

static const char *
status_name (yajl_gen_status s)
{
  if (s == AR_GEN_BAD_TEXT)
    return "a JSON text that does not parse";
  switch (s)
    {
    case yajl_gen_keys_must_be_strings: return "a key that is not a string";
    case yajl_max_depth_exceeded: return "nested too deep";
    case yajl_gen_in_error_state: return "written on after an error";
    case yajl_gen_generation_complete: return "a value after the document ended";
    case yajl_gen_invalid_number: return "an invalid number";
    case yajl_gen_no_buf: return "no buffer";
    case yajl_gen_invalid_string: return "a string that is not UTF-8";
    default: return "an unknown yajl error";
    }
}

int
ar_gen_done (struct ar_gen *G, const char *what, char **out, size_t *len, ar_error **err)
{
  const unsigned char *buf;
  size_t n;
  *out = NULL;
  if (G->status == yajl_gen_status_ok)
    G->status = yajl_gen_get_buf (G->g, &buf, &n);
  if (G->status != yajl_gen_status_ok || G->depth != 0)
    {
      int r = ar_err (err, 0, "%s: JSON writer: %s", what,
                      G->status != yajl_gen_status_ok ? status_name (G->status) : "a map or an array left open");
      ar_gen_free (G);
      return r;
    }
  char *text = xmalloc0 (n + 2);
  memcpy (text, buf, n);
  if (G->pretty && n && text[n - 1] != '\n')
    text[n++] = '\n';
  ar_gen_free (G);
  *out = text;
  if (len)
    *len = n;
  return 0;
}

char *
ar_gen_text (struct ar_gen *G, const char *what)
{
  char *out;
  ar_error *err = NULL;
  if (ar_gen_done (G, what, &out, NULL, &err) < 0)
    {
      fprintf (stderr, "agentrun: %s\n", err->msg);
      abort ();
    }
  return out;
}

static void
keep (struct ar_gen *G, yajl_gen_status s)
{
  if (G->status == yajl_gen_status_ok)
    G->status = s;
}

void
ar_gen_strn (struct ar_gen *G, const char *s, size_t n)
{
  keep (G, yajl_gen_string (G->g, (const unsigned char *) s, n));
}

void
ar_gen_str (struct ar_gen *G, const char *s)
{
  ar_gen_strn (G, s, strlen (s));
}

void
ar_gen_int (struct ar_gen *G, long long v)
{
  keep (G, yajl_gen_integer (G->g, v));
}

static void
ar_gen_number (struct ar_gen *G, const char *s, size_t n)
{
  keep (G, yajl_gen_number (G->g, s, n));
}

void
ar_gen_u64 (struct ar_gen *G, unsigned long long v)
{
  char b[24];
  int n = snprintf (b, sizeof b, "%llu", v);
  ar_gen_number (G, b, (size_t) n);
}

void
ar_gen_bool (struct ar_gen *G, bool v)
{
  keep (G, yajl_gen_bool (G->g, v));
}

static void
ar_gen_null (struct ar_gen *G)
{
  keep (G, yajl_gen_null (G->g));
}

void
ar_gen_map_open (struct ar_gen *G)
{
  G->depth++;
  keep (G, yajl_gen_map_open (G->g));
}

void
ar_gen_map_close (struct ar_gen *G)
{
  G->depth--;
  keep (G, yajl_gen_map_close (G->g));
}

void
ar_gen_array_open (struct ar_gen *G)
{
  G->depth++;
  keep (G, yajl_gen_array_open (G->g));
}

void
ar_gen_array_close (struct ar_gen *G)
{
  G->depth--;
  keep (G, yajl_gen_array_close (G->g));
}

void
ar_gen_tree (struct ar_gen *G, yajl_val v)
{
  if (YAJL_IS_OBJECT (v))
    {
      ar_gen_map_open (G);
      for (size_t i = 0; i < v->u.object.len; i++)
        {
          ar_gen_str (G, v->u.object.keys[i]);
          ar_gen_tree (G, v->u.object.values[i]);
        }
      ar_gen_map_close (G);
    }
  else if (YAJL_IS_ARRAY (v))
    {
      ar_gen_array_open (G);
      for (size_t i = 0; i < v->u.array.len; i++)
        ar_gen_tree (G, v->u.array.values[i]);
      ar_gen_array_close (G);
    }
  else if (YAJL_IS_STRING (v))
    ar_gen_str (G, v->u.string);
  else if (YAJL_IS_NUMBER (v))
    ar_gen_number (G, v->u.number.r, strlen (v->u.number.r));
  else if (YAJL_IS_TRUE (v) || YAJL_IS_FALSE (v))
    ar_gen_bool (G, YAJL_IS_TRUE (v));
  else
    ar_gen_null (G);
}

size_t
ar_json_squeeze (char *out, const char *in, size_t n)
{
  size_t len = 0;
  bool in_string = false;
  for (size_t i = 0; i < n; i++)
    {
      char c = in[i];
      if (in_string)
        {
          out[len++] = c;
          if (c == '\\' && i + 1 < n)
            out[len++] = in[++i];
          else if (c == '"')
            in_string = false;
        }
      else if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        {
          out[len++] = c;
          in_string = c == '"';
        }
    }
  return len;
}

void
ar_gen_json (struct ar_gen *G, const char *text, size_t n)
{
  if (!G->pretty)
    {
      /* yajl writes a number's text as given, with the separator and the
       * state of a value: so is a whole value of valid JSON */
      char *flat = xmalloc0 (n + 1);
      size_t len = ar_json_squeeze (flat, text, n);
      if (len)
        ar_gen_number (G, flat, len);
      else
        keep (G, AR_GEN_BAD_TEXT);
      free (flat);
      return;
    }
  char ebuf[128];
  yajl_val v = ar_json_tree (text, n, ebuf, sizeof ebuf);
  if (!v)
    keep (G, AR_GEN_BAD_TEXT);
  else
    ar_gen_tree (G, v);
  ar_json_tree_free (v);
}

void
ar_gen_key_str (struct ar_gen *G, const char *key, const char *value)
{
  ar_gen_str (G, key);
  ar_gen_str (G, value);
}

void
ar_gen_key_int (struct ar_gen *G, const char *key, long long value)
{
  ar_gen_str (G, key);
  ar_gen_int (G, value);
}

void
ar_gen_key_bool (struct ar_gen *G, const char *key, bool value)
{
  ar_gen_str (G, key);
  ar_gen_bool (G, value);
}

void
ar_gen_key_strv (struct ar_gen *G, const char *key, const char *const *v)
{
  ar_gen_str (G, key);
  ar_gen_array_open (G);
  for (; *v; v++)
    ar_gen_str (G, *v);
  ar_gen_array_close (G);
}
