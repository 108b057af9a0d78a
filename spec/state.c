#include "config.h"
#include "spec_state.h"
#include "jsongen.h"
#include "json.h"
#include "spec.h"
#include "util.h"

#include <yajl/yajl_tree.h>

char *
ar_state_str (yajl_val root, const char *key)
{
  const char *p[] = { key, NULL };
  yajl_val v = yajl_tree_get (root, p, yajl_t_string);
  return v ? xstrdup (YAJL_GET_STRING (v)) : NULL;
}

int
ar_state_parse_tree (const char *buf, size_t len, const char *what, struct ar_state *out, yajl_val *tree, ar_error **err)
{
  yajl_val root;
  memset (out, 0, sizeof *out);
  if (tree)
    *tree = NULL;
  /* Same bounds as config.json: depth, size, NULs. */
  if (ar_json_parse (buf, len, what, &root, err) < 0)
    return -1;
  out->oci_version = ar_state_str (root, "ociVersion");
  out->id = ar_state_str (root, "id");
  out->status = ar_state_str (root, "status");
  out->bundle = ar_state_str (root, "bundle");
  const char *pid_path[] = { "pid", NULL };
  yajl_val pid = yajl_tree_get (root, pid_path, yajl_t_number);
  if (pid && (!YAJL_IS_INTEGER (pid) || YAJL_GET_INTEGER (pid) < 0 || YAJL_GET_INTEGER (pid) > INT32_MAX))
    {
      ar_json_tree_free (root);
      ar_state_clear (out);
      return ar_err (err, 0, "%s: pid: not a valid process id", what);
    }
  out->pid = pid ? (pid_t) YAJL_GET_INTEGER (pid) : 0;
  const char *ann_path[] = { "annotations", NULL };
  yajl_val ann = yajl_tree_get (root, ann_path, yajl_t_object);
  if (ann)
    {
      size_t n = YAJL_GET_OBJECT (ann)->len;
      out->annotations = xmalloc0 (n * sizeof *out->annotations);
      for (size_t i = 0; i < n; i++)
        {
          yajl_val v = YAJL_GET_OBJECT (ann)->values[i];
          if (!YAJL_IS_STRING (v))
            continue;
          out->annotations[out->n_annotations].key = xstrdup (YAJL_GET_OBJECT (ann)->keys[i]);
          out->annotations[out->n_annotations].value = xstrdup (YAJL_GET_STRING (v));
          out->n_annotations++;
        }
    }
  if (!out->id)
    {
      ar_json_tree_free (root);
      ar_state_clear (out);
      return ar_err (err, 0, "%s: id: missing", what);
    }
  if (tree)
    *tree = root;
  else
    ar_json_tree_free (root);
  return 0;
}

int
ar_state_parse (const char *buf, size_t len, struct ar_state *out, ar_error **err)
{
  return ar_state_parse_tree (buf, len, "state", out, NULL, err);
}

char *
ar_state_to_json (const struct ar_state *st)
{
  struct ar_gen G, *g = &G;
  ar_gen_init (g, NULL);
  ar_gen_map_open (g);
  ar_gen_str (g, "ociVersion");
  ar_gen_str (g, st->oci_version ? st->oci_version : AR_SPEC_VERSION);
  ar_gen_str (g, "id");
  ar_gen_str (g, st->id ? st->id : "");
  ar_gen_str (g, "status");
  ar_gen_str (g, st->status ? st->status : "creating");
  if (st->pid > 0)
    {
      ar_gen_str (g, "pid");
      ar_gen_int (g, st->pid);
    }
  ar_gen_str (g, "bundle");
  ar_gen_str (g, st->bundle ? st->bundle : "");
  if (st->n_annotations)
    {
      ar_gen_str (g, "annotations");
      ar_gen_map_open (g);
      for (size_t i = 0; i < st->n_annotations; i++)
        {
          ar_gen_str (g, st->annotations[i].key);
          ar_gen_str (g, st->annotations[i].value);
        }
      ar_gen_map_close (g);
    }
  ar_gen_map_close (g);
  return ar_gen_text (g, "state");
}

void
ar_state_clear (struct ar_state *st)
{
  free (st->oci_version);
  free (st->id);
  free (st->status);
  free (st->bundle);
  ar_kv_free (st->annotations, st->n_annotations);
  memset (st, 0, sizeof *st);
}
