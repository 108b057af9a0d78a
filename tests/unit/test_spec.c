/* Unit tests of common/, spec/ and the sandbox's option parsers: sizes,
 * CPUs, --allow endpoints, wildcards and their match, host names and ports,
 * the bounded file reader, the JSON writer, the state reader, the RFC 3339
 * formatter and the JSON string escaper. */
#include "config.h"
#include "tap.h"
#include "agent.h"
#include "clock.h"
#include "error.h"
#include "hostname.h"
#include "json.h"
#include "jsongen.h"
#include "spec.h"
#include "spec_state.h"
#include "strio.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static void
size_ok (const char *arg, long long want)
{
  ar_error *err = NULL;
  int64_t v = -1;
  int r = ar_agent_parse_size (arg, &v, &err);
  ok (r == 0 && v == want, "size %s = %lld", arg, want);
  if (r < 0)
    diag ("%s", err->msg);
  ar_error_free (err);
}

static void
size_bad (const char *arg, const char *what)
{
  ar_error *err = NULL;
  int64_t v = -1;
  int r = ar_agent_parse_size (arg, &v, &err);
  ok (r < 0 && err && strstr (err->msg, "--memory") && strstr (err->msg, what) && v == -1, "size \"%s\" refused (%s)",
      arg, what);
  ar_error_free (err);
}

static void
test_sizes (void)
{
  size_ok ("4194304", 4194304);
  size_ok ("512m", 512LL << 20);
  size_ok ("512M", 512LL << 20);
  size_ok ("2g", 2LL << 30);
  size_ok ("2GB", 2LL << 30);
  size_ok ("4096k", 4096LL << 10);
  size_ok ("8388607g", 8388607LL << 30);
  size_bad ("", "not a size");
  size_bad ("-1m", "not a size");
  size_bad ("0", "not a size");
  size_bad ("12x", "unknown suffix");
  size_ok ("2t", 2LL << 40);
  size_ok ("1GiB", 1LL << 30);
  size_bad ("+1m", "not a size");
  size_bad (" 1m", "not a size");
  size_bad ("1m!", "not a size");
  size_bad ("1mm", "not a size");
  size_bad ("8589934592g", "not a size"); /* overflows int64 */
  size_bad ("4095k", "too small");
  size_bad ("99999999999999999999", "not a size");

  ar_error *err = NULL;
  int64_t v = 0;
  is_int (ar_agent_parse_size_for ("--tmp-size", "1k", 1024, &v, &err), 0, "size_for: min is inclusive");
  is_int (v, 1024, "size_for: 1k is 1024 bytes");
  ok (ar_agent_parse_size_for ("--tmp-size", "1023", 1024, &v, &err) < 0 && strstr (err->msg, "--tmp-size 1023"),
      "size_for names its option and argument");
  ar_error_free (err);
}

static void
cpus_is (const char *arg, long long want)
{
  ar_error *err = NULL;
  int64_t q = -1;
  int r = ar_agent_parse_cpus (arg, &q, &err);
  if (want < 0)
    ok (r < 0 && err && strstr (err->msg, "--cpus") && q == -1, "cpus \"%s\" refused", arg);
  else
    ok (r == 0 && q == want, "cpus %s = quota %lld", arg, want);
  ar_error_free (err);
}

static void
test_cpus (void)
{
  cpus_is ("1", 100000);
  cpus_is ("1.5", 150000);
  cpus_is ("0.01", 1000);
  cpus_is ("1024", 102400000);
  cpus_is ("0.333333", 33333);
  cpus_is ("0", -1);
  cpus_is ("0.001", -1);
  cpus_is ("1025", -1);
  cpus_is ("-1", -1);
  cpus_is ("", -1);
  cpus_is ("1x", -1);
  cpus_is ("nan", -1);
  cpus_is ("inf", -1);
}

static void
ep_is (const char *arg, const char *name, int port, const char *up)
{
  ar_error *err = NULL;
  struct ar_agent_endpoint ep;
  int r = ar_agent_parse_endpoint (arg, &ep, &err);
  if (!name)
    {
      ok (r < 0 && err && strncmp (err->msg, "--allow ", 8) == 0, "--allow %s refused", arg);
      if (err)
        diag ("%s", err->msg);
      ar_error_free (err);
      return;
    }
  bool same = r == 0 && strcmp (ep.name, name) == 0 && ep.port == port
              && (up ? ep.upstream && strcmp (ep.upstream, up) == 0 : !ep.upstream);
  ok (same, "--allow %s = %s port %d upstream %s", arg, name, port, up ? up : "(none)");
  if (r == 0)
    {
      free (ep.name);
      free (ep.upstream);
    }
  ar_error_free (err);
}

static void
test_endpoints (void)
{
  ep_is ("api.example.com", "api.example.com", 443, NULL);
  ep_is ("API.Example.COM:8443", "api.example.com", 8443, NULL);
  ep_is ("pypi.org:443=10.0.0.1:3128", "pypi.org", 443, "10.0.0.1:3128");
  ep_is ("h=[::1]:8080", "h", 443, "[::1]:8080");
  ep_is ("h:1", "h", 1, NULL);
  ep_is ("h:65535", "h", 65535, NULL);
  ep_is ("h:0", NULL, 0, NULL);
  ep_is ("h:65536", NULL, 0, NULL);
  ep_is ("h:", NULL, 0, NULL);
  ep_is ("h:44x", NULL, 0, NULL);
  ep_is ("", NULL, 0, NULL);
  ep_is (".h", NULL, 0, NULL);
  ep_is ("-h", NULL, 0, NULL);
  ep_is ("a..b", NULL, 0, NULL);
  ep_is ("a_b.example", "a_b.example", 443, NULL);
  ep_is ("h:+443", NULL, 0, NULL);
  ep_is ("a/b", NULL, 0, NULL);
  ep_is ("h=up", NULL, 0, NULL);
  ep_is ("h=:80", NULL, 0, NULL);
  ep_is ("h=up:0", NULL, 0, NULL);
  ep_is ("h=u/p:80", NULL, 0, NULL);
  ep_is ("h=u p:80", NULL, 0, NULL);
  /* --allow '*.DOMAIN[:PORT]': any name below DOMAIN, to the name looked up */
  ep_is ("*.Example.com", "*.example.com", 443, NULL);
  ep_is ("*.example.com:8443", "*.example.com", 8443, NULL);
  ep_is ("*.example.com=10.0.0.1:443", NULL, 0, NULL);
  ep_is ("*", NULL, 0, NULL);
  ep_is ("*.", NULL, 0, NULL);
  ep_is ("a.*.example.com", NULL, 0, NULL);
  ep_is ("*example.com", NULL, 0, NULL);
}

/* The one name match (deniedDomains against --allow, the netproxy's denies
 * and routes): a wildcard covers the names below its domain, never the
 * domain itself. */
static void
test_name_match (void)
{
  ok (ar_host_name_match ("api.example.com", "API.Example.com"), "a name matches itself, case aside");
  ok (!ar_host_name_match ("api.example.com", "x.api.example.com"), "a plain name does not match below it");
  ok (ar_host_name_match ("*.example.com", "a.example.com"), "a wildcard matches a name below");
  ok (ar_host_name_match ("*.example.com", "a.b.Example.COM"), "and one further below");
  ok (!ar_host_name_match ("*.example.com", "example.com"), "a wildcard does not match its domain");
  ok (!ar_host_name_match ("*.example.com", "badexample.com"), "a wildcard matches at a dot only");
}

static void
test_host_names (void)
{
  static const char *const good[] = { "a",          "a-b.example_1.com", "a_b.example", "xn--bcher-kva.example",
                                      "a.example.", "1.2.3.4",           "a-.example" };
  static const char *const bad[] = {
    "",    ".",   ".x",  "-a.example",    "a.-b.example",       "a..b.example", "a.example..",
    "a/b", "a b", "a:b", "*.example.com", "caf\xc3\xa9.example"
  };
  for (size_t i = 0; i < ARRAY_SIZE (good); i++)
    ok (ar_host_name_ok (good[i], false), "host name '%s' accepted", good[i]);
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    ok (!ar_host_name_ok (bad[i], false), "host name '%s' refused", bad[i]);
  ok (ar_host_name_ok ("*.example.com", true), "a wildcard with wildcard_ok");
  ok (!ar_host_name_ok ("*.", true) && !ar_host_name_ok ("*..x", true) && !ar_host_name_ok ("*.-x", true)
          && !ar_host_name_ok ("*.*.x", true) && !ar_host_name_ok ("a.*.x", true),
      "a wildcard needs a good base and stands first only");
  char longname[300];
  memset (longname, 'a', 254);
  longname[254] = '\0';
  ok (!ar_host_name_ok (longname, false), "254 bytes is too long");
  longname[253] = '\0';
  ok (ar_host_name_ok (longname, false), "253 bytes is fine");
  ok (ar_host_name_match ("API.example.com", "api.EXAMPLE.com"), "match is case-insensitive");
  ok (ar_host_name_match ("*.example.com", "a.b.example.com"), "wildcard matches names below");
  ok (!ar_host_name_match ("*.example.com", "example.com"), "wildcard does not match its base");
  ok (!ar_host_name_match ("*.example.com", "badexample.com"), "wildcard matches at a dot only");
}

static void
test_ports (void)
{
  is_int (ar_parse_port ("1"), 1, "port 1");
  is_int (ar_parse_port ("443"), 443, "port 443");
  is_int (ar_parse_port ("65535"), 65535, "port 65535");
  static const char *const bad[] = { "",     "0",    "65536", "65539", "99999999999", "-1",
                                     "+443", " 443", "443 ",  "44x",   "0x1bb" };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    is_int (ar_parse_port (bad[i]), -1, "port '%s' refused", bad[i]);
}

/* The bounded reader: a file of MAX bytes is read, one byte more is not;
 * only a regular file (or a pipe when asked) is read at all. */
static void
test_read_regular (void)
{
  char dir[] = "/tmp/agentrun-unit.XXXXXX";
  if (!mkdtemp (dir))
    {
      ok (false, "mkdtemp: %s", strerror (errno));
      return;
    }
  cleanup_free char *path = xasprintf ("%s/f", dir);
  FILE *f = fopen (path, "we");
  fputs ("0123456789", f);
  fclose (f);
  char *buf = NULL;
  size_t len = 0;
  ar_error *err = NULL;
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  ok (ar_read_regular (fd, path, 10, false, &buf, &len, &err) == 0 && len == 10 && strcmp (buf, "0123456789") == 0,
      "a file of exactly the limit is read whole");
  close (fd);
  free (buf);
  buf = NULL;
  fd = open (path, O_RDONLY | O_CLOEXEC);
  int r = ar_read_regular (fd, "the file", 9, false, &buf, &len, &err);
  ok (r < 0 && err && strcmp (err->msg, "the file is 10 bytes, larger than the 9 byte limit") == 0 && !buf,
      "one byte past the limit is refused, named (%s)", err ? err->msg : "no error");
  close (fd);
  ar_error_free (err);
  err = NULL;
  fd = open (dir, O_RDONLY | O_CLOEXEC | O_DIRECTORY);
  r = ar_read_regular (fd, dir, 1 << 20, true, &buf, &len, &err);
  ok (r < 0 && err && strstr (err->msg, "is not a regular file"), "a directory is not read (%s)",
      err ? err->msg : "no error");
  close (fd);
  ar_error_free (err);
  err = NULL;
  int p[2];
  if (pipe2 (p, O_CLOEXEC) == 0)
    {
      ok (ar_read_regular (p[0], "the pipe", 1 << 20, false, &buf, &len, &err) < 0 && err
              && strcmp (err->msg, "the pipe is not a regular file") == 0,
          "a pipe is refused unless asked for");
      ar_error_free (err);
      err = NULL;
      ok (write (p[1], "abc", 3) == 3, "write the pipe");
      close (p[1]);
      ok (ar_read_regular (p[0], "the pipe", 3, true, &buf, &len, &err) == 0 && len == 3 && strcmp (buf, "abc") == 0,
          "a pipe is read to its end when asked for");
      free (buf);
      buf = NULL;
      close (p[0]);
    }
  if (pipe2 (p, O_CLOEXEC) == 0)
    {
      ok (write (p[1], "abcd", 4) == 4, "write the pipe");
      close (p[1]);
      r = ar_read_regular (p[0], "the pipe", 3, true, &buf, &len, &err);
      ok (r < 0 && err && strcmp (err->msg, "the pipe grew past the 3 byte limit") == 0 && !buf,
          "a pipe that holds more than the limit is refused (%s)", err ? err->msg : "no error");
      ar_error_free (err);
      err = NULL;
      close (p[0]);
    }
  unlink (path);
  rmdir (dir);
}

/* The JSON writer: text when every call went well, and the first failure
 * (not the last, not none) when one did not. */
static void
test_json_writer (void)
{
  struct ar_gen G;
  char *text = NULL;
  size_t len = 0;
  ar_error *err = NULL;
  ar_gen_init (&G, NULL);
  ar_gen_map_open (&G);
  ar_gen_key_str (&G, "a", "x\"y");
  ar_gen_key_int (&G, "n", -3);
  ar_gen_str (&G, "big");
  ar_gen_u64 (&G, 18446744073709551615ull);
  ar_gen_key_strv (&G, "v", (const char *const[]){ "p", "q", NULL });
  ar_gen_map_close (&G);
  ok (ar_gen_done (&G, "doc", &text, &len, &err) == 0 && text
          && strcmp (text, "{\"a\":\"x\\\"y\",\"n\":-3,\"big\":18446744073709551615,\"v\":[\"p\",\"q\"]}") == 0
          && len == strlen (text),
      "the writer writes compact JSON, a uint64 exact (%s)", text ? text : "none");
  free (text);

  ar_gen_init (&G, "\t");
  ar_gen_map_open (&G);
  ar_gen_key_bool (&G, "b", true);
  ar_gen_map_close (&G);
  ok (ar_gen_done (&G, "doc", &text, &len, &err) == 0 && strcmp (text, "{\n\t\"b\": true\n}\n") == 0,
      "pretty text is indented as asked and ends with a newline");
  free (text);

  char tree_in[] = "{\"k\":[1,2.5,\"s\",true,false,null,{\"m\":18446744073709551615}]}";
  char ebuf[64];
  yajl_val v = ar_json_tree (tree_in, strlen (tree_in), ebuf, sizeof ebuf);
  ar_gen_init (&G, NULL);
  ar_gen_tree (&G, v);
  ar_json_tree_free (v);
  ok (ar_gen_done (&G, "doc", &text, &len, &err) == 0 && strcmp (text, tree_in) == 0,
      "a parsed value is written again as it was (%s)", text ? text : "none");
  free (text);

  /* a JSON text written whole: compact without the space between tokens
   * (a string's own spaces, escaped quote and backslash kept), after a key
   * and before more members; pretty parsed, so a bad text fails */
  const char raw[] = "{ \"a\" : \"x y\\\" \\\\ z\" ,\n\t\"b\":[1, 2.5e3 , true]\r\n}";
  char flat[sizeof raw];
  size_t flen = ar_json_squeeze (flat, raw, sizeof raw - 1);
  ok (flen == strlen ("{\"a\":\"x y\\\" \\\\ z\",\"b\":[1,2.5e3,true]}")
          && memcmp (flat, "{\"a\":\"x y\\\" \\\\ z\",\"b\":[1,2.5e3,true]}", flen) == 0,
      "squeezed JSON text keeps its strings byte for byte (%.*s)", (int) flen, flat);
  ar_gen_init (&G, NULL);
  ar_gen_map_open (&G);
  ar_gen_str (&G, "k");
  ar_gen_json (&G, raw, sizeof raw - 1);
  ar_gen_key_int (&G, "n", 1);
  ar_gen_map_close (&G);
  int r = ar_gen_done (&G, "doc", &text, &len, &err);
  ok (r == 0 && strcmp (text, "{\"k\":{\"a\":\"x y\\\" \\\\ z\",\"b\":[1,2.5e3,true]},\"n\":1}") == 0,
      "a JSON text is written whole as a member's value (%s)", text ? text : "none");
  free (text);
  ar_gen_init (&G, "  ");
  ar_gen_json (&G, raw, sizeof raw - 1);
  r = ar_gen_done (&G, "doc", &text, &len, &err);
  ok (r == 0 && strstr (text, "\n  \"b\": [\n    1,"), "pretty, a JSON text is indented like the rest (%s)",
      text ? text : "none");
  free (text);
  ar_gen_init (&G, "  ");
  ar_gen_json (&G, "{\"a\":", 5);
  r = ar_gen_done (&G, "doc", &text, &len, &err);
  ok (r < 0 && err && strstr (err->msg, "does not parse") && !text,
      "pretty, a text that is not JSON fails the document (%s)", err ? err->msg : "no error");
  ar_error_freep (&err);
  ar_gen_init (&G, NULL);
  ar_gen_json (&G, " \n", 2);
  r = ar_gen_done (&G, "doc", &text, &len, &err);
  ok (r < 0 && err && !text, "compact, an empty text fails the document");
  ar_error_freep (&err);

  /* a key that is not a string, then more calls: the first failure is the one named */
  ar_gen_init (&G, NULL);
  ar_gen_map_open (&G);
  ar_gen_int (&G, 1);
  ar_gen_map_close (&G);
  ar_gen_map_close (&G);
  ar_gen_str (&G, "more");
  text = (char *) "unset";
  r = ar_gen_done (&G, "doc", &text, &len, &err);
  ok (r < 0 && !text && err && strcmp (err->msg, "doc: JSON writer: a key that is not a string") == 0,
      "the first failure is kept and named (%s)", err ? err->msg : "no error");
  ar_error_free (err);
  err = NULL;

  ar_gen_init (&G, NULL);
  ar_gen_array_open (&G);
  ar_gen_str (&G, "x");
  r = ar_gen_done (&G, "doc", &text, &len, &err);
  ok (r < 0 && !text && err && strstr (err->msg, "left open"), "an array left open is refused (%s)",
      err ? err->msg : "no error");
  ar_error_free (err);
  err = NULL;

  ar_gen_init (&G, NULL);
  ar_gen_str (&G, "one");
  ar_gen_str (&G, "two");
  r = ar_gen_done (&G, "doc", &text, &len, &err);
  ok (r < 0 && err && strstr (err->msg, "after the document ended"), "a second value at the top is refused (%s)",
      err ? err->msg : "no error");
  ar_error_free (err);
}

/* The tree every JSON text is read into: what yajl's own builder gave
 * (node types, numbers' text and flags, members in order, duplicates
 * kept for the walker to refuse), in blocks that grow past the first,
 * with the refusals of a hostile text named. */
static void
test_json_tree (void)
{
  static const char doc[] = "{\"a\":[1,-2,2.5,9223372036854775807,9223372036854775808,\"s\\u00e9\",true,false,null,"
                            "{},[]],/* a comment */\"a\":{\"k\":\"v\"}}";
  char ebuf[128] = "";
  yajl_val t = ar_json_tree (doc, strlen (doc), ebuf, sizeof ebuf);
  ok (t && YAJL_IS_OBJECT (t) && t->u.object.len == 2 && strcmp (t->u.object.keys[0], "a") == 0
          && strcmp (t->u.object.keys[1], "a") == 0,
      "an object keeps its members in order, a duplicate key too (%s)", ebuf);
  yajl_val a = t && t->u.object.len == 2 ? t->u.object.values[0] : NULL;
  ok (a && YAJL_IS_ARRAY (a) && a->u.array.len == 11, "an array keeps every value");
  if (a && YAJL_IS_ARRAY (a) && a->u.array.len == 11)
    {
      yajl_val *v = a->u.array.values;
      ok (YAJL_IS_INTEGER (v[0]) && YAJL_GET_INTEGER (v[0]) == 1 && YAJL_IS_INTEGER (v[1])
              && YAJL_GET_INTEGER (v[1]) == -2,
          "integers are integers");
      ok (YAJL_IS_NUMBER (v[2]) && !YAJL_IS_INTEGER (v[2]) && YAJL_IS_DOUBLE (v[2]) && YAJL_GET_DOUBLE (v[2]) == 2.5
              && strcmp (v[2]->u.number.r, "2.5") == 0,
          "a fraction is a double, its text kept");
      ok (YAJL_IS_INTEGER (v[3]) && YAJL_GET_INTEGER (v[3]) == INT64_MAX && !YAJL_IS_INTEGER (v[4])
              && strcmp (v[4]->u.number.r, "9223372036854775808") == 0,
          "an integer past int64 is no integer, its text exact");
      ok (YAJL_IS_STRING (v[5]) && strcmp (v[5]->u.string, "s\xc3\xa9") == 0, "escapes are decoded");
      ok (YAJL_IS_TRUE (v[6]) && YAJL_IS_FALSE (v[7]) && YAJL_IS_NULL (v[8]), "true, false and null");
      ok (YAJL_IS_OBJECT (v[9]) && v[9]->u.object.len == 0 && YAJL_IS_ARRAY (v[10]) && v[10]->u.array.len == 0,
          "empty object and array");
    }
  ar_json_tree_free (t);

  /* a root that is no container: its node is still the tree's handle */
  t = ar_json_tree ("\"top\"", 5, ebuf, sizeof ebuf);
  ok (t && YAJL_IS_STRING (t) && strcmp (t->u.string, "top") == 0, "a string at the top is the root");
  ar_json_tree_free (t);
  t = ar_json_tree ("-7", 2, ebuf, sizeof ebuf);
  ok (t && YAJL_IS_INTEGER (t) && YAJL_GET_INTEGER (t) == -7, "a number at the top is the root");
  ar_json_tree_free (t);

  /* far more nodes than the text's size foretells: many blocks */
  size_t n = 20000;
  char *big = xmalloc0 (3 * n + 2);
  big[0] = '[';
  for (size_t i = 0; i < n; i++)
    memcpy (big + 1 + 3 * i, i + 1 < n ? "[]," : "[]]", 3);
  t = ar_json_tree (big, strlen (big), ebuf, sizeof ebuf);
  ok (t && YAJL_IS_ARRAY (t) && t->u.array.len == n && YAJL_IS_ARRAY (t->u.array.values[n - 1]),
      "a text of many small values grows past its first block");
  ar_json_tree_free (t);
  free (big);

  char deep[2 * 70 + 1];
  for (int levels = 64; levels <= 65; levels++)
    {
      memset (deep, '[', (size_t) levels);
      memset (deep + levels, ']', (size_t) levels);
      t = ar_json_tree (deep, 2 * (size_t) levels, ebuf, sizeof ebuf);
      if (levels == 64)
        ok (t != NULL, "64 levels are read");
      else
        ok (!t && strcmp (ebuf, "nesting deeper than 64 levels") == 0, "65 levels are refused (%s)", ebuf);
      ar_json_tree_free (t);
    }
  static const struct {
    const char *text, *why;
  } bad[] = {
    { "{\"a\":\"x\\u0000y\"}", "a string holds a \\u0000 escape (a NUL)" },
    { "{\"a\\u0000\":1}", "a string holds a \\u0000 escape (a NUL)" },
    { "{\"a\":", NULL },
    { "{} {}", NULL },
    { "", NULL },
    { "{\"a\":\"\xff\"}", NULL },
  };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    {
      ebuf[0] = '\0';
      t = ar_json_tree (bad[i].text, strlen (bad[i].text), ebuf, sizeof ebuf);
      ok (!t && *ebuf && !strchr (ebuf, '\n') && (!bad[i].why || strcmp (ebuf, bad[i].why) == 0),
          "'%s' refused in one line (%s)", bad[i].text, ebuf);
      ar_json_tree_free (t);
    }
}

/* The one state reader: the OCI fields, the caller's own keys from the
 * tree, and the same refusals for either document. */
static void
test_state_reader (void)
{
  static const char doc[] = "{\"ociVersion\":\"1.2.0\",\"id\":\"c1\",\"pid\":42,\"bundle\":\"/b\","
                            "\"annotations\":{\"k\":\"v\",\"n\":1},\"rootfs\":\"/b/rootfs\"}";
  struct ar_state st;
  yajl_val tree = NULL;
  ar_error *err = NULL;
  ok (ar_state_parse_tree (doc, strlen (doc), "state.json", &st, &tree, &err) == 0 && strcmp (st.id, "c1") == 0
          && st.pid == 42 && strcmp (st.bundle, "/b") == 0 && st.n_annotations == 1
          && strcmp (st.annotations[0].value, "v") == 0,
      "a state document is read");
  cleanup_free char *rootfs = tree ? ar_state_str (tree, "rootfs") : NULL;
  is_str (rootfs, "/b/rootfs", "the caller reads its own keys from the tree");
  if (tree)
    ar_json_tree_free (tree);
  ar_state_clear (&st);
  static const struct {
    const char *doc, *want;
  } bad[] = {
    { "{\"id\":\"c\",\"pid\":-1}", "state.json: pid: not a valid process id" },
    { "{\"id\":\"c\",\"pid\":1.5}", "state.json: pid: not a valid process id" },
    { "{\"pid\":1}", "state.json: id: missing" },
    { "[1]", "state.json: .: expected an object, got an array" },
    { "{\"id\":", "state.json: invalid JSON" },
    { "{\"id\":\"a\\u0000b\"}", "state.json" },
  };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    {
      tree = (yajl_val) 1;
      int r = ar_state_parse_tree (bad[i].doc, strlen (bad[i].doc), "state.json", &st, &tree, &err);
      ok (r < 0 && !tree && !st.id && err && strncmp (err->msg, bad[i].want, strlen (bad[i].want)) == 0,
          "state '%s' refused (%s)", bad[i].doc, err ? err->msg : "no error");
      ar_error_free (err);
      err = NULL;
    }
  char deep[400];
  memset (deep, '[', sizeof deep - 1);
  deep[sizeof deep - 1] = '\0';
  ok (ar_state_parse (deep, strlen (deep), &st, &err) < 0 && err, "a state nested too deep is refused before yajl");
  ar_error_free (err);
}

static void
rfc_is (long long sec, long nsec, int digits, const char *want)
{
  struct timespec ts = { .tv_sec = sec, .tv_nsec = nsec };
  char buf[AR_RFC3339_LEN];
  ar_rfc3339 (&ts, digits, buf);
  is_str (buf, want, "rfc3339 %lld.%09ld with %d digits", sec, nsec, digits);
}

static void
test_rfc3339 (void)
{
  rfc_is (0, 0, 0, "1970-01-01T00:00:00Z");
  rfc_is (0, 0, 9, "1970-01-01T00:00:00.000000000Z");
  rfc_is (951782400, 0, 0, "2000-02-29T00:00:00Z"); /* leap day, century divisible by 400 */
  rfc_is (4107542400LL, 0, 0, "2100-03-01T00:00:00Z"); /* 2100 is no leap year */
  rfc_is (1798728300, 123456789, 9, "2026-12-31T14:45:00.123456789Z");
  rfc_is (1798728300, 123456789, 3, "2026-12-31T14:45:00.123Z");
  rfc_is (1798728300, 999999999, 1, "2026-12-31T14:45:00.9Z"); /* truncated, never rounded up a second */
  rfc_is (2147483647, 0, 0, "2038-01-19T03:14:07Z");
  rfc_is (253402300799LL, 0, 0, "9999-12-31T23:59:59Z");
  char buf[AR_RFC3339_LEN];
  ar_rfc3339_now_buf (9, buf);
  ok (strlen (buf) == 30 && buf[4] == '-' && buf[10] == 'T' && buf[19] == '.' && buf[29] == 'Z',
      "rfc3339 now has the layout of the spec (%s)", buf);
}

static void
test_hex (void)
{
  char out[2 * 5 + 1];
  memset (out, 'x', sizeof out);
  ar_hex ("\x00\x0f\xa5\xf0\xff", 5, out);
  ok (strcmp (out, "000fa5f0ff") == 0, "hex: two lowercase digits a byte, high nibble first, NUL-ended (%s)", out);
  ar_hex ("", 0, out);
  ok (out[0] == '\0', "hex: no bytes, an empty string");
}

static void
esc_is (const char *in, const char *want, const char *what)
{
  char buf[256];
  size_t n = ar_json_escape (buf, sizeof buf, in);
  ok (strcmp (buf, want) == 0 && n == strlen (want), "json escape: %s", what);
  if (strcmp (buf, want))
    diag ("got \"%s\", want \"%s\"", buf, want);
}

static void
test_json_escape (void)
{
  esc_is ("plain text", "plain text", "printable ASCII unchanged");
  esc_is ("a\"b\\c", "a\\\"b\\\\c", "quote and backslash");
  esc_is ("l1\nl2\t\r", "l1\\nl2\\u0009\\u000d", "controls");
  esc_is ("\x01\x1f", "\\u0001\\u001f", "lowest and highest control");
  esc_is ("del\x7f", "del\\u007f", "DEL is escaped");
  esc_is ("caf\xc3\xa9", "caf\xc3\xa9", "valid 2-byte UTF-8 kept as is");
  esc_is ("\xe2\x82\xac \xf0\x9f\x98\x80", "\xe2\x82\xac \xf0\x9f\x98\x80", "valid 3- and 4-byte UTF-8 kept");
  esc_is ("\xff", "\\u00ff", "a byte that never starts UTF-8 is escaped");
  esc_is ("a\xc3", "a\\u00c3", "a truncated sequence is escaped");
  esc_is ("\xc3(", "\\u00c3(", "a lead byte without continuation is escaped");
  esc_is ("\xc0\xaf", "\\u00c0\\u00af", "an overlong form is escaped");
  esc_is ("\xed\xa0\x80", "\\u00ed\\u00a0\\u0080", "a UTF-16 surrogate is escaped");
  esc_is ("\xf4\x90\x80\x80", "\\u00f4\\u0090\\u0080\\u0080", "past U+10FFFF is escaped");
  esc_is ("\x80", "\\u0080", "a lone continuation byte is escaped");

  char small[8];
  size_t n = ar_json_escape (small, sizeof small, "abcdefghij");
  ok (n < sizeof small && small[n] == '\0' && strncmp (small, "abcdefghij", n) == 0,
      "json escape cut short to fit, NUL-terminated (%zu bytes)", n);
  n = ar_json_escape (small, sizeof small, "\x01\x01\x01");
  ok (n % 6 == 0 && small[n] == '\0', "json escape cuts only between escapes (%zu bytes)", n);
  char big[6 * 4 + 1];
  n = ar_json_escape (big, sizeof big, "\xff\xff\xff\xff");
  is_int (n, 24, "json escape: 6 * strlen + 1 fits the worst case");
  n = ar_json_escape (big, sizeof big, "\xf0\x9f\x98\x80");
  is_int (n, 4, "json escape: a 4-byte character fits whole");
  is_int (ar_json_escape (small, 0, "x"), 0, "json escape with no room writes nothing");
}

/* linux.resources.devices[].access: read as a set, written back in the
 * one order, 'a' read toward confinement. */
static void
access_is (const char *allow, const char *acc, const char *want)
{
  char buf[256];
  snprintf (buf, sizeof buf, "{\"devices\": [{\"allow\": %s, \"type\": \"c\", \"access\": \"%s\"}]}", allow, acc);
  struct ar_resources *r = calloc (1, sizeof *r); /* ar_resources_free frees it */
  ar_error *err = NULL;
  int rc = ar_resources_parse (buf, strlen (buf), "test", r, &err);
  if (want)
    ok (rc == 0 && r->n_devices == 1 && strcmp (r->devices[0].access, want) == 0, "%s rule access \"%s\" is \"%s\"",
        *allow == 't' ? "allow" : "deny", acc, want);
  else
    ok (rc < 0 && err && strstr (err->msg, "devices[0].access") && strstr (err->msg, acc),
        "%s rule access \"%s\" refused", *allow == 't' ? "allow" : "deny", acc);
  if (rc < 0 && want)
    diag ("%s", err->msg);
  ar_error_free (err);
  ar_resources_free (r);
}

static void
test_device_access (void)
{
  access_is ("true", "rwm", "rwm");
  access_is ("true", "mwr", "rwm");
  access_is ("true", "mr", "rm");
  access_is ("true", "wwr", "rw");
  access_is ("false", "w", "w");
  access_is ("false", "rwa", "rwm"); /* runc's suite writes this */
  access_is ("false", "a", "rwm");
  access_is ("true", "rwa", "rw");
  access_is ("true", "a", NULL);
  access_is ("true", "rwx", NULL);
  access_is ("false", "R", NULL);
  access_is ("true", "r w", NULL);
}

int
main (void)
{
  test_sizes ();
  test_cpus ();
  test_endpoints ();
  test_name_match ();
  test_host_names ();
  test_ports ();
  test_read_regular ();
  test_json_writer ();
  test_json_tree ();
  test_state_reader ();
  test_rfc3339 ();
  test_json_escape ();
  test_hex ();
  test_device_access ();
  return done_testing ();
}
