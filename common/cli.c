#include "config.h"
#include "cli.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

bool ar_opt_list_only;

void
ar_opt_print (FILE *f, const struct ar_opt *opts)
{
  for (; opts->name; opts++)
    fprintf (f, "%s\t%c\t%s\n", opts->name, opts->short_name ? opts->short_name : '-', opts->has_arg ? "arg" : "flag");
}

static const struct ar_opt *
find_long (const struct ar_opt *opts, const char *name, size_t len)
{
  for (; opts->name; opts++)
    if (strlen (opts->name) == len && strncmp (opts->name, name, len) == 0)
      return opts;
  return NULL;
}

static const struct ar_opt *
find_short (const struct ar_opt *opts, char c)
{
  for (; opts->name; opts++)
    if (opts->short_name && opts->short_name == c)
      return opts;
  return NULL;
}

int
ar_opt_next (struct ar_optparser *p, const char **arg, ar_error **err)
{
  const struct ar_opt *o;
  const char *a, *eq;

  *arg = NULL;
  if (ar_opt_list_only)
    {
      ar_opt_print (stdout, p->opts);
      exit (fflush (stdout) == 0 ? 0 : 1);
    }
  if (p->i >= p->argc)
    return 0;
  a = p->argv[p->i];
  if (a[0] != '-' || a[1] == '\0')
    return 0;
  if (strcmp (a, "--") == 0)
    {
      p->i++;
      return 0;
    }
  const char *name = a + 1 + (a[1] == '-');
  eq = strchr (name, '=');
  size_t len = eq ? (size_t) (eq - name) : strlen (name);
  o = find_long (p->opts, name, len);
  if (!o && a[1] != '-' && len == 1)
    o = find_short (p->opts, name[0]);
  if (!o && a[1] != '-' && len > 1 && find_short (p->opts, name[0]) && !find_short (p->opts, name[0])->has_arg)
    {
      /* Grouped short flags (-dt) are not supported; say so precisely. */
      return ar_err (err, 0, "unknown option %s", a);
    }
  if (!o)
    return ar_err (err, 0, "unknown option %s", a);
  p->i++;
  if (o->has_arg)
    {
      if (eq)
        *arg = eq + 1;
      else if (p->i < p->argc)
        *arg = p->argv[p->i++];
      else
        return ar_err (err, 0, "option --%s needs a value", o->name);
    }
  else if (eq)
    {
      /* urfave/cli accepts --flag=true|false for booleans. */
      if (strcmp (eq + 1, "true") == 0)
        *arg = "true";
      else if (strcmp (eq + 1, "false") == 0)
        *arg = "false";
      else
        return ar_err (err, 0, "option --%s takes no value", o->name);
    }
  return o->id;
}

int
ar_opt_uint (const char *opt, const char *arg, unsigned long long max, unsigned long long *out, ar_error **err)
{
  char *end;
  if (!arg || !*arg || *arg == '-')
    return ar_err (err, 0, "%s: \"%s\" is not a non-negative integer", opt, arg ? arg : "");
  errno = 0;
  unsigned long long v = strtoull (arg, &end, 10);
  if (errno || *end || v > max)
    return ar_err (err, 0, "%s: \"%s\" is not an integer in [0, %llu]", opt, arg, max);
  *out = v;
  return 0;
}
