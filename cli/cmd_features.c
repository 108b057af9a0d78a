/* agentrun features: the runtime-spec features document, built from the
 * same tables the parser and validator use, and from libseccomp for what
 * this build can actually compile. */
#include "config.h"
#include "cli.h"
#include "commands.h"
#include "generate.h"
#include "log.h"
#include "names.h"
#include "spec.h"
#include "util.h"

#include <seccomp.h>
#include <stdio.h>

static void
gen_enabled (struct ar_gen *g, const char *key, bool on)
{
  ar_gen_str (g, key);
  ar_gen_map_open (g);
  ar_gen_key_bool (g, "enabled", on);
  ar_gen_map_close (g);
}

static void
gen_namespaces_caps (struct ar_gen *g)
{
  ar_gen_str (g, "namespaces");
  ar_gen_array_open (g);
  for (int t = 0; t < AR_NS_N; t++)
    ar_gen_str (g, ar_ns_type_name ((enum ar_ns_type) t));
  ar_gen_array_close (g);
  ar_gen_str (g, "capabilities");
  ar_gen_array_open (g);
  for (int cap = 0; cap <= ar_capability_last (); cap++)
    ar_gen_str (g, ar_capability_name (cap));
  ar_gen_array_close (g);
}

/* Filter flags this libseccomp can set: API level 2 brought TSYNC, 3 LOG,
 * 4 SPEC_ALLOW; WAIT_KILLABLE_RECV needs libseccomp 2.6. */
static void
gen_seccomp_flags (struct ar_gen *g)
{
  const unsigned api = seccomp_api_get ();
  const unsigned need[] = { 2, 3, 4, 0 };
  ar_gen_key_strv (g, "knownFlags", ar_seccomp_flags);
  ar_gen_str (g, "supportedFlags");
  ar_gen_array_open (g);
  for (size_t i = 0; ar_seccomp_flags[i] && i < ARRAY_SIZE (need); i++)
    if (need[i] && api >= need[i])
      ar_gen_str (g, ar_seccomp_flags[i]);
  ar_gen_array_close (g);
}

static void
gen_seccomp (struct ar_gen *g)
{
  ar_gen_str (g, "seccomp");
  ar_gen_map_open (g);
  ar_gen_key_bool (g, "enabled", true);
  ar_gen_key_strv (g, "actions", ar_seccomp_actions);
  ar_gen_key_strv (g, "operators", ar_seccomp_operators);
  ar_gen_str (g, "archs");
  ar_gen_array_open (g);
  for (size_t i = 0; ar_seccomp_archs[i]; i++)
    /* libseccomp names them without the prefix, in lower case. */
    {
      char name[32];
      size_t j = 0;
      for (const char *s = ar_seccomp_archs[i] + strlen ("SCMP_ARCH_"); *s && j + 1 < sizeof name; s++)
        name[j++] = (char) (*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
      name[j] = '\0';
      if (seccomp_arch_resolve_name (name) != 0)
        ar_gen_str (g, ar_seccomp_archs[i]);
    }
  ar_gen_array_close (g);
  gen_seccomp_flags (g);
  ar_gen_map_close (g);
}

static void
gen_linux (struct ar_gen *g)
{
  ar_gen_str (g, "linux");
  ar_gen_map_open (g);
  gen_namespaces_caps (g);
  ar_gen_str (g, "cgroup");
  ar_gen_map_open (g);
  ar_gen_key_bool (g, "v1", true);
  ar_gen_key_bool (g, "v2", true);
  ar_gen_key_bool (g, "systemd", true); /* a transient scope over D-Bus (cgroups_systemd.c) */
  ar_gen_key_bool (g, "systemdUser", false);
  ar_gen_key_bool (g, "rdma", false);
  ar_gen_map_close (g);
  gen_seccomp (g);
  /* supported (applied where the host runs them, lsm.c), as runtime-spec means it */
  gen_enabled (g, "apparmor", true);
  gen_enabled (g, "selinux", true);
  gen_enabled (g, "intelRdt", false);
  ar_gen_str (g, "mountExtensions");
  ar_gen_map_open (g);
  gen_enabled (g, "idmap", true);
  ar_gen_map_close (g);
  ar_gen_map_close (g);
}

int
cmd_features (struct ar_ctx *ctx, int argc, char **argv)
{
  static const struct ar_opt opts[] = { { "help", 'h', false, 1 }, { NULL, 0, false, 0 } };
  struct ar_optparser p = { .argc = argc, .argv = argv, .i = 1, .opts = opts };
  cleanup_error ar_error *err = NULL;
  const char *arg;
  int id = ar_opt_next (&p, &arg, &err);
  (void) ctx;
  if (id != 0 || p.i < argc)
    {
      fprintf (stderr, "usage: agentrun features\n");
      return id > 0 ? 0 : 1;
    }
  const struct scmp_version *v = seccomp_version ();
  cleanup_free char *libseccomp = xasprintf ("%u.%u.%u", v->major, v->minor, v->micro);
  struct ar_gen G, *g = &G;
  ar_gen_init (g, "\t");
  ar_gen_map_open (g);
  ar_gen_key_str (g, "ociVersionMin", "1.0.0");
  ar_gen_key_str (g, "ociVersionMax", AR_SPEC_VERSION);
  ar_gen_key_strv (g, "hooks", ar_hook_stage_names);
  ar_gen_key_strv (g, "mountOptions", ar_mount_options);
  gen_linux (g);
  ar_gen_str (g, "annotations");
  ar_gen_map_open (g);
  ar_gen_key_str (g, "io.github.seccomp.libseccomp.version", libseccomp);
  ar_gen_key_str (g, "org.agentrun.version", PACKAGE_VERSION);
  ar_gen_key_str (g, "org.agentrun.commit", GIT_COMMIT);
  ar_gen_map_close (g);
  ar_gen_map_close (g);
  cleanup_free char *text = NULL;
  if (ar_gen_done (g, "features", &text, NULL, &err) < 0)
    {
      ar_log_error (ar_steal_ptr (err));
      return 1;
    }
  fputs (text, stdout);
  return fflush (stdout) == 0 ? 0 : 1;
}
