/* Unit tests of the sandbox's option layers: a --profile file merged under
 * the command line, the agent presets (profiles shipped in contrib/presets),
 * and --settings files (Claude Code's and srt's layouts) mapped onto the
 * options. Only files in a private temporary folder. */
#include "config.h"
#include "tap.h"
#include "error.h"
#include "pathname.h"
#include "profile.h"
#include "sandbox.h"
#include "settings.h"
#include "util.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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

static const struct ar_agent_bind *
find_bind (const struct ar_agent_opts *o, const char *path)
{
  for (size_t i = 0; i < o->n_binds; i++)
    if (strcmp (o->binds[i].path, path) == 0)
      return &o->binds[i];
  return NULL;
}

/* A folder under dir (made if missing); returns its absolute path. */
static const char *
sub_dir (const char *name, char *buf, size_t len)
{
  snprintf (buf, len, "%s/%s", dir, name);
  mkdir (buf, 0700);
  return buf;
}

/* Load text as a profile or settings file, expecting failure; true when the
 * error names each of the given words. */
static bool
refused (int (*load) (struct ar_sandbox *, const char *, ar_error **), struct ar_sandbox *sb, const char *name,
         const char *text, const char *w1, const char *w2)
{
  ar_error *err = NULL;
  const char *p = write_file (name, text);
  bool r = load (sb, p, &err) < 0 && err && strstr (err->msg, name) && (!w1 || strstr (err->msg, w1))
           && (!w2 || strstr (err->msg, w2));
  if (err)
    diag ("%s", err->msg);
  ar_error_free (err);
  return r;
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

/* The rest of agentrun-profile(5)'s rules: single values replaced, lists
 * added to, no_network only turned on, budgets keyed, the flags that widen
 * binds absent, every key given once. */
static void
test_profile_rules (void)
{
  struct ar_sandbox sb;
  ar_error *err = NULL;
  char ws[512], out[512], ws2[512], cache[512], text[2048];
  sub_dir ("ws", ws, sizeof ws);
  sub_dir ("out", out, sizeof out);
  sub_dir ("ws2", ws2, sizeof ws2);
  sub_dir ("cache", cache, sizeof cache);

  ar_sandbox_init (&sb);
  snprintf (text, sizeof text,
            "{\"workspace\": \"ws\", \"out\": \"out\", \"rw\": [\"cache\"], \"audit\": \"a.jsonl\","
            " \"pids\": 100, \"cpus\": 2, \"env\": [\"LANG\", \"CI=1\"],"
            " \"tmp_size\": \"64m\", \"home_size\": \"128m\", \"shm_size\": \"32m\", \"nofile\": 512,"
            " \"net_max_conns\": 10, \"net_idle_timeout\": 0, \"allow\": [\"api.example.com\"]}");
  const char *p = write_file ("rules.json", text);
  int r = ar_profile_load (&sb, p, &err);
  is_int (r, 0, "a profile with every budget key loads");
  if (r < 0)
    diag ("%s", err->msg);
  char want[600];
  is_str (sb.prof.workspace, ws, "profile workspace, from the profile's folder");
  is_str (sb.prof.out, out, "profile out, from the profile's folder");
  const struct ar_agent_bind *b = find_bind (&sb.prof, cache);
  ok (b && b->writable, "profile rw, from the profile's folder, read-write");
  snprintf (want, sizeof want, "%s/a.jsonl", dir);
  is_str (sb.prof.audit, want, "profile audit, from the profile's folder");
  is_int (sb.prof.tmp_size, 64LL << 20, "tmp_size is --tmp-size");
  is_int (sb.prof.home_size, 128LL << 20, "home_size is --home-size");
  is_int (sb.prof.shm_size, 32LL << 20, "shm_size is --shm-size");
  is_int (sb.prof.nofile, 512, "nofile is --nofile");
  is_int (sb.net_max_conns, 10, "net_max_conns is --net-max-conns");
  is_int (sb.net_idle_timeout, 0, "net_idle_timeout 0 (never) is taken");
  is_int (sb.n_env_args, 2, "env holds the profile's two entries");

  ok (ar_sandbox_opt (&sb, AR_SB_WORKSPACE, ws2, &err) == 0 && strcmp (sb.prof.workspace, ws2) == 0,
      "--workspace replaces the profile's");
  ok (ar_sandbox_opt (&sb, AR_SB_OUT, ws, &err) == 0 && strcmp (sb.prof.out, ws) == 0, "--out replaces the profile's");
  ok (ar_sandbox_opt (&sb, AR_SB_AUDIT, "/var/tmp/other.jsonl", &err) == 0
          && strcmp (sb.prof.audit, "/var/tmp/other.jsonl") == 0,
      "--audit replaces the profile's");
  ok (ar_sandbox_opt (&sb, AR_SB_PIDS, "256", &err) == 0 && sb.prof.pids == 256, "--pids replaces the profile's");
  ok (ar_sandbox_opt (&sb, AR_SB_CPUS, "0.5", &err) == 0 && sb.prof.cpu_quota == 50000,
      "--cpus replaces the profile's");
  ok (ar_sandbox_opt (&sb, AR_SB_ENV, "TERM", &err) == 0 && sb.n_env_args == 3, "--env adds to the profile's");
  ok (ar_sandbox_opt (&sb, AR_SB_RO, ws, &err) == 0 && find_bind (&sb.prof, cache) && find_bind (&sb.prof, ws)
          && !find_bind (&sb.prof, ws)->writable,
      "--ro adds to the profile's binds");
  ok (ar_sandbox_opt (&sb, AR_SB_ALLOW, "api.example.com=127.0.0.1:8443", &err) == 0 && sb.prof.n_allow == 1
          && sb.prof.allow[0].upstream && strcmp (sb.prof.allow[0].upstream, "127.0.0.1:8443") == 0,
      "the same NAME:PORT again says where it goes, not a second endpoint");
  ar_sandbox_free (&sb);
  ar_error_free (err);
  err = NULL;

  /* no_network can only be turned on: false in a file is no off switch */
  ar_sandbox_init (&sb);
  ar_sandbox_opt (&sb, AR_SB_NO_NETWORK, NULL, &err);
  p = write_file ("net-off.json", "{\"no_network\": false}");
  ok (ar_profile_load (&sb, p, &err) == 0 && sb.prof.no_network, "no_network: false does not turn the network back on");
  ar_sandbox_free (&sb);

  ar_sandbox_init (&sb);
  ok (refused (ar_profile_load, &sb, "home.json", "{\"allow_home\": true}", "allow_home", "unknown key"),
      "allow_home is no profile key: a file cannot widen the binds");
  ok (refused (ar_profile_load, &sb, "sys.json", "{\"allow_system_path\": true}", "allow_system_path", "unknown key"),
      "allow_system_path is no profile key either");
  ok (refused (ar_profile_load, &sb, "twice.json", "{\"pids\": 1, \"pids\": 2}", "pids", "twice"),
      "a key given twice is refused");
  ok (refused (ar_profile_load, &sb, "badsize.json", "{\"memory\": \"lots\"}", "memory", NULL),
      "a bad value is refused, naming its key");
  ok (refused (ar_profile_load, &sb, "state.json", "{\"state\": [\"../.ssh/\"]}", "state", ".."),
      "a state path may not leave the home");
  ok (refused (ar_profile_load, &sb, "state2.json", "{\"state\": [\"/etc/\"]}", "state", NULL),
      "a state path is relative to the home");
  ar_sandbox_free (&sb);
}

/* The presets as docs/SANDBOX.md lists them: endpoints (port 443), the state
 * kept under the home, the variables passed by name. */
struct preset {
  const char *name;
  const char *allow[5];
  const char *state[4];
  const char *env[8];
};
static const struct preset presets[] = {
  { "claude",
    { "api.anthropic.com", "platform.claude.com", "claude.ai" },
    { ".claude/", ".claude.json" },
    { "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL", "CLAUDE_CODE_OAUTH_TOKEN" } },
  { "codex",
    { "api.openai.com", "chatgpt.com", "auth.openai.com" },
    { ".codex/" },
    { "OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY" } },
  { "opencode",
    { "opencode.ai", "models.opencode.ai", "api.anthropic.com", "api.openai.com" },
    { ".config/opencode/", ".local/share/opencode/", ".local/state/opencode/" },
    { "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENCODE_API_KEY" } },
  { "gemini",
    { "generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com" },
    { ".gemini/" },
    { "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
      "GOOGLE_GENAI_USE_VERTEXAI" } },
};

static size_t
count (const char *const *v, size_t max)
{
  size_t n = 0;
  while (n < max && v[n])
    n++;
  return n;
}

static void
test_presets (void)
{
  const char *src = getenv ("AGENTRUN_SRCDIR");
  ar_error *err = NULL;
  for (size_t i = 0; i < ARRAY_SIZE (presets); i++)
    {
      const struct preset *w = &presets[i];
      char path[1024];
      struct ar_sandbox sb;
      snprintf (path, sizeof path, "%s/contrib/presets/%s.json", src ? src : ".", w->name);
      ar_sandbox_init (&sb);
      int r = ar_profile_load (&sb, path, &err);
      ok (r == 0, "preset %s loads as a profile", w->name);
      if (r < 0)
        {
          diag ("%s", err->msg);
          ar_error_free (err);
          err = NULL;
        }
      bool same = sb.prof.n_allow == count (w->allow, 5);
      for (size_t k = 0; same && k < sb.prof.n_allow; k++)
        same = strcmp (sb.prof.allow[k].name, w->allow[k]) == 0 && sb.prof.allow[k].port == 443
               && !sb.prof.allow[k].upstream;
      ok (same, "preset %s allows exactly its documented endpoints, port 443", w->name);
      same = sb.n_state == count (w->state, 4);
      for (size_t k = 0; same && k < sb.n_state; k++)
        same = strcmp (sb.state[k], w->state[k]) == 0;
      ok (same, "preset %s keeps exactly its documented state", w->name);
      same = sb.n_env_args == count (w->env, 6);
      for (size_t k = 0; same && k < sb.n_env_args; k++)
        same = strcmp (sb.env_args[k], w->env[k]) == 0;
      ok (same, "preset %s passes exactly its documented variables, by name only", w->name);
      ok (sb.prof.n_binds == 0 && sb.prof.n_masks == 0 && !sb.prof.workspace && !sb.home_arg && !sb.prof.has_memory,
          "preset %s sets nothing else", w->name);
      ar_sandbox_free (&sb);
    }

  struct ar_sandbox sb;
  ar_sandbox_init (&sb);
  static const char *const bad[] = { "Claude", "../claude", "claude.json", "", "a/b" };
  for (size_t i = 0; i < ARRAY_SIZE (bad); i++)
    {
      ok (ar_profile_load_preset (&sb, bad[i], &err) < 0 && err && strstr (err->msg, "preset name"),
          "--agent \"%s\" refused: not a preset name", bad[i]);
      ar_error_free (err);
      err = NULL;
    }
  ok (ar_profile_load_preset (&sb, "no-such-agent-0", &err) < 0 && err && strstr (err->msg, "no such preset"),
      "an unknown preset is an error naming it");
  ar_error_free (err);
  err = NULL;
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

/* The rest of the mapping table of docs/SANDBOX.md: denyWrite, unix sockets,
 * path forms, what cannot be mapped (dropped, stricter) and what cannot be
 * enforced (an error). */
static void
test_settings_rules (void)
{
  struct ar_sandbox sb;
  ar_error *err = NULL;
  char ws[512], rw[512], keep[1024], sock[1024], text[4096], home[512];
  sub_dir ("sws", ws, sizeof ws);
  sub_dir ("srw", rw, sizeof rw);
  snprintf (keep, sizeof keep, "%s/keep.txt", rw);
  write_file ("srw/keep.txt", "x");
  sub_dir ("home", home, sizeof home);
  write_file ("home/secret", "x");

  /* a socket to forward */
  snprintf (sock, sizeof sock, "%s/agent.sock", dir);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  bool have_sock = fd >= 0 && strlen (sock) < sizeof sa.sun_path;
  if (have_sock)
    {
      memcpy (sa.sun_path, sock, strlen (sock) + 1);
      have_sock = bind (fd, (struct sockaddr *) &sa, sizeof sa) == 0;
    }

  char *old_home = getenv ("HOME") ? strdup (getenv ("HOME")) : NULL;
  setenv ("HOME", home, 1);
  ar_sandbox_init (&sb);
  ar_sandbox_opt (&sb, AR_SB_WORKSPACE, ws, &err);
  snprintf (text, sizeof text,
            "{\"sandbox\": {\"filesystem\": {\"allowWrite\": [\"%s\", \"/tmp/*.log\"], \"denyWrite\": [\"%s\"],"
            " \"denyRead\": [\"~/secret\"]}, \"network\": {\"allowUnixSockets\": [\"%s\"],"
            " \"allowLocalBinding\": true}, \"failIfUnavailable\": true}}",
            rw, keep, sock);
  const char *p = write_file ("map.json", text);
  int r = ar_settings_load (&sb, p, &err);
  is_int (r, 0, "settings with denyWrite, unix sockets, ~ paths and unmapped allows load");
  if (r < 0)
    diag ("%s", err->msg);
  const struct ar_agent_bind *b = find_bind (&sb.prof, rw);
  ok (b && b->writable, "allowWrite of a folder is --rw");
  b = find_bind (&sb.prof, keep);
  ok (b && !b->writable, "denyWrite inside a writable folder is a read-only bind over it");
  char want[600];
  snprintf (want, sizeof want, "%s/secret", home);
  ok (has_mask (&sb.prof, want), "\"~/x\" is under $HOME");
  bool pattern = false;
  for (size_t i = 0; i < sb.prof.n_binds; i++)
    pattern = pattern || strchr (sb.prof.binds[i].path, '*');
  ok (!pattern && sb.prof.n_binds == (have_sock ? 3 : 2), "a pattern in allowWrite is dropped: stricter, never looser");
  if (have_sock)
    {
      b = find_bind (&sb.prof, sock);
      ok (b && b->socket && !b->writable, "allowUnixSockets is --unix-socket: a read-only bind of the socket");
    }
  else
    ok (1, "# SKIP no Unix socket could be bound in %s", dir);
  ok (!sb.prof.workspace_ro, "a non-empty allowWrite leaves the workspace writable");
  ar_sandbox_free (&sb);
  ar_error_free (err);
  err = NULL;

  ar_sandbox_init (&sb);
  ar_sandbox_opt (&sb, AR_SB_WORKSPACE, ws, &err);
  p = write_file ("ro.json", "{\"filesystem\": {\"allowWrite\": []}}");
  ok (ar_settings_load (&sb, p, &err) == 0 && sb.prof.workspace_ro, "allowWrite: [] makes the workspace read-only");
  ar_sandbox_free (&sb);
  ar_error_free (err);
  err = NULL;

  /* relative paths are taken from the current folder */
  char cwd[512];
  if (getcwd (cwd, sizeof cwd) && chdir (home) == 0)
    {
      ar_sandbox_init (&sb);
      p = write_file ("rel.json", "{\"filesystem\": {\"denyRead\": [\"secret\"]}}");
      ok (ar_settings_load (&sb, p, &err) == 0 && has_mask (&sb.prof, want),
          "a relative path is from the current folder");
      ar_sandbox_free (&sb);
      ar_error_free (err);
      err = NULL;
      if (chdir (cwd) != 0)
        diag ("could not go back to %s", cwd);
    }

  ar_sandbox_init (&sb);
  ar_sandbox_opt (&sb, AR_SB_WORKSPACE, ws, &err);
  ar_sandbox_opt (&sb, AR_SB_RW, rw, &err);
  ok (refused (ar_settings_load, &sb, "pat.json", "{\"filesystem\": {\"denyRead\": [\"~/*.pem\"]}}", "pattern", NULL),
      "a pattern in denyRead cannot be enforced: an error");
  ok (refused (ar_settings_load, &sb, "patw.json", "{\"filesystem\": {\"denyWrite\": [\"/etc/*\"]}}", "pattern", NULL),
      "a pattern in denyWrite cannot be enforced: an error");
  snprintf (text, sizeof text, "{\"filesystem\": {\"denyWrite\": [\"%s/not-yet\"]}}", rw);
  ok (refused (ar_settings_load, &sb, "later.json", text, "does not exist", NULL),
      "denyWrite of a path missing in a writable folder is an error (the agent could create it)");
  snprintf (text, sizeof text, "{\"filesystem\": {\"denyWrite\": [\"%s\"]}}", dir);
  ok (refused (ar_settings_load, &sb, "around.json", text, "workspace", NULL),
      "denyWrite around the workspace cannot hold: an error");
  ok (refused (ar_settings_load, &sb, "newdeny.json", "{\"filesystem\": {\"denyExec\": [\"/usr/bin\"]}}", "deny", NULL),
      "an unknown setting named like a deny is an error, never skipped");
  ok (refused (ar_settings_load, &sb, "dom.json", "{\"network\": {\"deniedDomains\": [\"a b\"]}}", "cannot be enforced",
               NULL),
      "a denied domain that is not a host name is an error");
  ar_sandbox_free (&sb);

  /* a deny that is moot is no error */
  ar_sandbox_init (&sb);
  ar_sandbox_opt (&sb, AR_SB_WORKSPACE, ws, &err);
  p = write_file ("moot.json", "{\"filesystem\": {\"denyWrite\": [\"/usr\"], \"denyRead\": [\"/nonexistent-x\"]},"
                               " \"network\": {\"deniedDomains\": [\"nothing.example\"]}}");
  r = ar_settings_load (&sb, p, &err);
  ok (r == 0 && !find_bind (&sb.prof, "/usr") && sb.prof.n_masks == 0 && sb.prof.n_deny == 1,
      "moot denies load: /usr is not writable anyway, a missing path outside is hidden already; a deny is kept");
  if (r < 0)
    diag ("%s", err->msg);
  ar_sandbox_free (&sb);
  ar_error_free (err);

  if (old_home)
    setenv ("HOME", old_home, 1);
  else
    unsetenv ("HOME");
  free (old_home);
  if (fd >= 0)
    close (fd);
}

/* Paths compared by components, as the sandbox's placement rules do. */
static void
test_path_under (void)
{
  ok (ar_path_under ("/ws", "/ws"), "a path is under itself");
  ok (ar_path_under ("/ws/.envrc", "/ws"), "a name in a folder is under it");
  ok (ar_path_under ("/ws/a/b", "/ws"), "and deeper");
  ok (!ar_path_under ("/wsx/a", "/ws"), "a folder whose name starts the same is not");
  ok (!ar_path_under ("/w", "/ws"), "nor a shorter one");
  ok (ar_path_under ("/anything", "/"), "/ holds every path");
  ok (ar_path_under ("/", "/"), "/ holds itself");
  ok (!ar_path_under ("/ws", "/ws/a"), "a folder is not under what is below it");
}

/* Relative paths made absolute from the working folder, as given. */
static void
test_path_absolute (void)
{
  char cwd[PATH_MAX], want[PATH_MAX + 16];
  char *a = ar_path_absolute ("/x/../y");
  ok (a && strcmp (a, "/x/../y") == 0, "an absolute path is kept as it is");
  free (a);
  if (!getcwd (cwd, sizeof cwd))
    cwd[0] = '\0';
  snprintf (want, sizeof want, "%s/state/../s", cwd);
  a = ar_path_absolute ("state/../s");
  ok (cwd[0] && a && strcmp (a, want) == 0, "a relative one is put after the working folder, unresolved");
  free (a);
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
  test_profile_rules ();
  test_presets ();
  test_settings ();
  test_settings_rules ();
  test_path_under ();
  test_path_absolute ();
  char cmd[512];
  snprintf (cmd, sizeof cmd, "rm -rf -- '%s'", dir);
  if (system (cmd) != 0)
    diag ("could not remove %s", dir);
  return done_testing ();
}
