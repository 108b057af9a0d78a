/* Capabilities: the five sets via libcap. */
#include "config.h"
#include "caps.h"
#include "log.h"
#include "util.h"

#include <sys/capability.h>
#include <sys/prctl.h>

static int
cap_lookup (const char *name, cap_value_t *out, ar_error **err)
{
  if (cap_from_name (name, out) < 0 || *out < 0 || (unsigned) *out >= (unsigned) cap_max_bits ())
    return ar_err (err, 0, "config.json: process.capabilities: unknown capability \"%s\"", name);
  return 0;
}

static int
check_list (char **names, size_t n, ar_error **err)
{
  cap_value_t v;
  for (size_t i = 0; i < n; i++)
    if (cap_lookup (names[i], &v, err) < 0)
      return -1;
  return 0;
}

int
ar_caps_check (const struct ar_caps *c, ar_error **err)
{
  if (!c)
    return 0;
  if (check_list (c->bounding, c->n_bounding, err) < 0 || check_list (c->effective, c->n_effective, err) < 0
      || check_list (c->inheritable, c->n_inheritable, err) < 0 || check_list (c->permitted, c->n_permitted, err) < 0
      || check_list (c->ambient, c->n_ambient, err) < 0)
    return -1;
  return 0;
}

static bool
listed (char **names, size_t n, cap_value_t cap)
{
  cap_value_t v;
  for (size_t i = 0; i < n; i++)
    if (cap_from_name (names[i], &v) == 0 && v == cap)
      return true;
  return false;
}

int
ar_caps_drop_bounding (const struct ar_caps *c, ar_error **err)
{
  unsigned max = cap_max_bits ();
  for (unsigned cap = 0; cap < max; cap++)
    {
      if (c && listed (c->bounding, c->n_bounding, (cap_value_t) cap))
        continue;
      if (prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
        return ar_err (err, errno, "drop capability %s from the bounding set", cap_to_name ((cap_value_t) cap));
    }
  return 0;
}

static int
set_flags (cap_t caps, cap_flag_t flag, char **names, size_t n, ar_error **err)
{
  for (size_t i = 0; i < n; i++)
    {
      cap_value_t v;
      if (cap_lookup (names[i], &v, err) < 0)
        return -1;
      if (cap_set_flag (caps, flag, 1, &v, CAP_SET) < 0)
        return ar_err (err, errno, "capability %s", names[i]);
    }
  return 0;
}

int
ar_caps_apply (const struct ar_caps *c, ar_error **err)
{
  cap_t caps = cap_init ();
  int r = -1;

  if (!caps)
    return ar_err (err, errno, "capabilities: cap_init");
  if (c
      && (set_flags (caps, CAP_EFFECTIVE, c->effective, c->n_effective, err) < 0
          || set_flags (caps, CAP_PERMITTED, c->permitted, c->n_permitted, err) < 0
          || set_flags (caps, CAP_INHERITABLE, c->inheritable, c->n_inheritable, err) < 0))
    goto out;
  if (cap_set_proc (caps) < 0)
    {
      ar_err (err, errno, "set process capabilities");
      goto out;
    }
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    {
      ar_err (err, errno, "clear ambient capabilities");
      goto out;
    }
  for (size_t i = 0; c && i < c->n_ambient; i++)
    {
      cap_value_t v;
      if (cap_lookup (c->ambient[i], &v, err) < 0)
        goto out;
      /* The kernel requires the cap in permitted and inheritable. runc's
       * default config lists ambient caps without inheritable ones and runc
       * then leaves them out: do the same (it grants less, never more). */
      if (!listed (c->inheritable, c->n_inheritable, v) || !listed (c->permitted, c->n_permitted, v))
        continue;
      if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, (unsigned long) v, 0, 0) < 0)
        {
          ar_err (err, errno, "raise ambient capability %s (it must be permitted and inheritable too)", c->ambient[i]);
          goto out;
        }
    }
  r = 0;
out:
  cap_free (caps);
  return r;
}

int
ar_caps_raise_effective (ar_error **err)
{
  cap_t caps = cap_get_proc ();
  int r = 0;
  if (!caps || cap_fill (caps, CAP_EFFECTIVE, CAP_PERMITTED) < 0 || cap_set_proc (caps) < 0)
    r = ar_err (err, errno, "raise the permitted capabilities to effective");
  if (caps)
    cap_free (caps);
  return r;
}
