/* Unit tests of the sandbox's option layers: a --profile file merged under
 * the command line, and --settings files (Claude Code's and srt's layouts)
 * mapped onto the options. Only files in a private temporary folder. */
#include "config.h"
#include "tap.h"
#include "error.h"
#include "profile.h"
#include "sandbox.h"
#include "settings.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static const char *
write_file (const char *name, const char *text)
{
  static char path[512];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen (path, "we");
  if (!f || fputs (text, f) < 0 || fclose (f) != 0)
    {
      printf ("Bail out! cannot write %s\n", path);
      exit (1);
    }
  return path;
}

static bool
has_mask (const struct ar_agent_opts *o, const char *path)
{
  for (size_t i = 0; i < o->n_masks; i++)
    if (strcmp (o->masks[i], path) == 0)
      return true;
  return false;
}

static void
test_profile_merge (void)
{
  struct ar_sandbox sb;
  ar_error *err = NULL;
  char want[512];
  ar_sandbox_init (&sb);
  const char *p = write_file ("profile.json",
                              "{\"workspace\": \".\", \"memory\": \"1g\", \"pids\": 100, \"cpus\": 1.5,"
                              " \"allow\": [\"a.example\"], \"mask\": [\"/etc/secret\"], \"no_network\": false}");
  int r = ar_profile_load (&sb, p, &err);
  is_int (r, 0, "profile loads");
  if (r < 0)
    diag ("%s", err->msg);
  is_str (sb.prof.workspace, dir, "a relative workspace is taken from the profile's folder");
  is_int (sb.prof.memory, 1LL << 30, "profile memory");
  is_int (sb.prof.pids, 100, "profile pids");
  is_int (sb.prof.cpu_quota, 150000, "profile cpus");
  ok (ar_sandbox_opt (&sb, AR_SB_MEMORY, "2g", &err) == 0 && sb.prof.memory == 2LL << 30,
      "a single-valued option on the command line replaces the profile's");
  ok (ar_sandbox_opt (&sb, AR_SB_ALLOW, "b.example:8443", &err) == 0 && sb.prof.n_allow == 2
          && strcmp (sb.prof.allow[0].name, "a.example") == 0 && strcmp (sb.prof.allow[1].name, "b.example") == 0
          && sb.prof.allow[1].port == 8443,
      "a list option adds to the profile's, after it");
  ok (ar_sandbox_opt (&sb, AR_SB_MASK, "/etc/other", &err) == 0 && sb.prof.n_masks == 2
          && has_mask (&sb.prof, "/etc/secret") && has_mask (&sb.prof, "/etc/other"),
      "--mask adds to the profile's");
  ar_sandbox_free (&sb);
  ar_error_free (err);
  err = NULL;

  ar_sandbox_init (&sb);
  p = write_file ("typo.json", "{\"alow\": [\"x.example\"]}");
  ok (ar_profile_load (&sb, p, &err) < 0 && err && strstr (err->msg, p) && strstr (err->msg, "alow"),
      "an unknown profile key is refused, naming the file and the key");
  if (err)
    diag ("%s", err->msg);
  ar_error_free (err);
  err = NULL;
  ar_sandbox_free (&sb);

  ar_sandbox_init (&sb);
  p = write_file ("type.json", "{\"pids\": \"many\"}");
  ok (ar_profile_load (&sb, p, &err) < 0 && err && strstr (err->msg, "pids"), "a wrong type is refused");
  ar_error_free (err);
  err = NULL;
  ar_sandbox_free (&sb);

  ar_sandbox_init (&sb);
  p = write_file ("net.json", "{\"no_network\": true}");
  ok (ar_profile_load (&sb, p, &err) == 0 && sb.prof.no_network, "profile no_network turns the network off");
  snprintf (want, sizeof want, "%s/absent.json", dir);
  ok (ar_profile_load (&sb, want, &err) < 0 && err && strstr (err->msg, "absent.json"),
      "a missing profile is an error naming it");
  ar_error_free (err);
  ar_sandbox_free (&sb);
}

static void
test_settings (void)
{
  struct ar_sandbox sb;
  ar_error *err = NULL;
  char sub[512], text[2048];
  snprintf (sub, sizeof sub, "%s/sub", dir);
  mkdir (sub, 0700);

  ar_sandbox_init (&sb);
  ar_sandbox_opt (&sb, AR_SB_ALLOW, "z.example", &err);
  snprintf (text, sizeof text,
            "{\"sandbox\": {\"network\": {\"allowedDomains\": [\"x.example\", \"y.example\"],"
            " \"deniedDomains\": [\"y.example\", \"z.example\"]},"
            " \"filesystem\": {\"denyRead\": [\"/etc/shadow\"], \"allowWrite\": [\"%s\"]}}}",
            sub);
  const char *p = write_file ("claude.json", text);
  int r = ar_settings_load (&sb, p, &err);
  is_int (r, 0, "Claude Code settings load");
  if (r < 0)
    diag ("%s", err->msg);
  ok (sb.prof.n_allow == 1 && strcmp (sb.prof.allow[0].name, "x.example") == 0 && sb.prof.allow[0].port == 443,
      "allowedDomains become --allow NAME:443, and a deny wins (also over the command line)");
  ok (has_mask (&sb.prof, "/etc/shadow"), "denyRead becomes --mask");
  ok (sb.prof.n_binds == 1 && sb.prof.binds[0].writable && strcmp (sb.prof.binds[0].path, sub) == 0,
      "allowWrite becomes --rw");
  ar_sandbox_free (&sb);
  ar_error_free (err);
  err = NULL;

  ar_sandbox_init (&sb);
  p = write_file ("srt.json", "{\"network\": {\"allowedDomains\": [\"pypi.org\"]},"
                              " \"filesystem\": {\"denyRead\": [\"//etc/ssh\"]}}");
  r = ar_settings_load (&sb, p, &err);
  ok (r == 0 && sb.prof.n_allow == 1 && strcmp (sb.prof.allow[0].name, "pypi.org") == 0 && has_mask (&sb.prof, "/etc/ssh"),
      "srt's layout maps the same, \"//x\" is /x");
  if (r < 0)
    diag ("%s", err->msg);
  ar_sandbox_free (&sb);
  ar_error_free (err);
  err = NULL;

  ar_sandbox_init (&sb);
  p = write_file ("bad.json", "{\"sandbox\": [1]}");
  ok (ar_settings_load (&sb, p, &err) < 0 && err && strstr (err->msg, "bad.json"),
      "a settings file of the wrong shape is an error naming it");
  if (err)
    diag ("%s", err->msg);
  ar_sandbox_free (&sb);
  ar_error_free (err);
}

int
main (void)
{
  snprintf (dir, sizeof dir, "%s/agentrun-unit.XXXXXX", getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
  if (!mkdtemp (dir))
    {
      printf ("Bail out! mkdtemp\n");
      return 1;
    }
  test_profile_merge ();
  test_settings ();
  char cmd[512];
  snprintf (cmd, sizeof cmd, "rm -rf -- '%s'", dir);
  if (system (cmd) != 0)
    diag ("could not remove %s", dir);
  return done_testing ();
}
