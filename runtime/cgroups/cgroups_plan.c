/* A plan of cgroup writes, for update: the writers run once in recording
 * mode (every check and every computed value done, nothing written), then
 * the plan is carried out in order, each file's value read just before it
 * is written; if one write fails, the ones done are undone in reverse, so a
 * refused update leaves the old limits in place. */
#include "config.h"
#include "cgroups_internal.h"
#include "log.h"
#include "util.h"

static struct ar_cg_plan *recording;

void
ar_cg_plan_record_into (struct ar_cg_plan *p)
{
  recording = p;
}

bool
ar_cg_plan_record (const char *dir, const char *file, const char *value)
{
  if (!recording)
    return false;
  struct ar_cg_plan *p = recording;
  p->w = xrealloc (p->w, (p->n + 1) * sizeof *p->w);
  p->w[p->n++] = (struct ar_cg_plan_write){ xstrdup (dir), xstrdup (file), xstrdup (value) };
  return true;
}

void
ar_cg_plan_clear (struct ar_cg_plan *p)
{
  for (size_t i = 0; i < p->n; i++)
    {
      free (p->w[i].dir);
      free (p->w[i].file);
      free (p->w[i].value);
    }
  free (p->w);
  p->w = NULL;
  p->n = 0;
}

/* Files whose writes name one key ("8:0 ...", "eth0 5") and change only
 * that key's line; the others are one value. */
static bool
keyed (const char *file, const char *value)
{
  const char *sp = strchr (value, ' ');
  if (strcmp (file, "net_prio.ifpriomap") == 0)
    return true;
  return sp && memchr (value, ':', sp - value);
}

/* What writes a key back to the kernel's default when it had no line. */
static char *
key_reset (const char *file, const char *key, size_t klen)
{
  if (strcmp (file, "io.max") == 0)
    return xasprintf ("%.*s rbps=max wbps=max riops=max wiops=max", (int) klen, key);
  if (strcmp (file, "io.weight") == 0 || strcmp (file, "io.bfq.weight") == 0)
    return xasprintf ("%.*s default", (int) klen, key);
  return xasprintf ("%.*s 0", (int) klen, key);
}

/* The value that puts back what the file holds now, or NULL when there is
 * nothing to put back (enabling a controller is not undone). */
static char *
undo_value (const struct ar_cg_plan_write *w)
{
  cleanup_free char *cur = NULL;
  if (strcmp (w->file, "cgroup.subtree_control") == 0 || ar_cg_read (w->dir, w->file, &cur, NULL) < 0)
    return NULL;
  if (keyed (w->file, w->value))
    {
      size_t klen = strcspn (w->value, " ");
      for (char *line = cur, *next; line && *line; line = next)
        {
          next = strchr (line, '\n');
          if (next)
            *next++ = '\0';
          if (strncmp (line, w->value, klen) == 0 && line[klen] == ' ')
            return xstrdup (line);
        }
      return key_reset (w->file, w->value, klen);
    }
  /* memory.oom_control reads "oom_kill_disable N\n...": N is the setting. */
  if (strncmp (cur, "oom_kill_disable ", 17) == 0)
    return xasprintf ("%.1s", cur + 17);
  /* io.weight reads "default N" then device lines: the first line is ours. */
  cur[strcspn (cur, "\n")] = '\0';
  return ar_steal_ptr (cur);
}

int
ar_cg_plan_run (const struct ar_cg_plan *p, ar_error **err)
{
  char **undo = xmalloc0 ((p->n + 1) * sizeof *undo);
  size_t done = 0;
  int ret = 0;
  for (; done < p->n; done++)
    {
      const struct ar_cg_plan_write *w = &p->w[done];
      undo[done] = undo_value (w);
      if (ar_cg_write (w->dir, w->file, w->value, err) < 0)
        {
          ret = -1;
          break;
        }
    }
  /* Reverse order walks back through states the kernel already accepted. */
  while (ret < 0 && done-- > 0)
    {
      cleanup_error ar_error *e = NULL;
      const struct ar_cg_plan_write *w = &p->w[done];
      if (undo[done] && ar_cg_write (w->dir, w->file, undo[done], &e) < 0)
        ar_warn ("update: could not put back %s/%s: %s", w->dir, w->file, e->msg);
    }
  for (size_t i = 0; i < p->n; i++)
    free (undo[i]);
  free (undo);
  return ret;
}
