#include "config.h"
#include "clock.h"
#include "log.h"
#include "strio.h"
#include "util.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int log_fd = -1;
static bool log_json;
static bool log_debug;
static const char *log_command;

static const char *const level_names[] = { "debug", "info", "warning", "error" };

int
ar_log_init (const char *file, const char *format, bool debug, ar_error **err)
{
  log_debug = debug;
  if (format && strcmp (format, "json") == 0)
    log_json = true;
  else if (format && strcmp (format, "text") != 0)
    return ar_err (err, 0, "--log-format: unknown format \"%s\" (text or json)", format);
  if (file && *file)
    {
      log_fd = open (file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (log_fd < 0)
        return ar_err (err, errno, "--log: open %s", file);
    }
  return 0;
}

int
ar_log_fd (void)
{
  return log_fd;
}

void
ar_log_set_command (const char *name)
{
  log_command = name;
}

bool
ar_log_debug_enabled (void)
{
  return log_debug;
}

/* A message names paths and names a sandboxed command chose (a folder it
 * made, a socket's path): none may drive the terminal it is written to
 * (an escape sequence sets the clipboard or the title, a carriage return
 * draws over the line). Control characters but tab and newline, and the
 * C1 ones in UTF-8, become '?'. */
static void
defang (char *s)
{
  for (unsigned char *p = (unsigned char *) s; *p; p++)
    if ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f)
      *p = '?';
    else if (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)
      p[0] = '?', p[1] = '?';
}

void
ar_log (enum ar_log_level level, const char *fmt, ...)
{
  char msg[4096], line[8192 + 128], ts[AR_RFC3339_LEN];
  va_list ap;
  int saved = errno;

  if (level == AR_LOG_DEBUG && !log_debug)
    return;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  defang (msg);

  ar_rfc3339_now_buf (9, ts);

  if (log_fd >= 0)
    {
      int n;
      if (log_json)
        {
          char esc[8192];
          ar_json_escape (esc, sizeof esc, msg);
          n = snprintf (line, sizeof line, "{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s\"}\n", level_names[level],
                        esc, ts);
        }
      else
        n = snprintf (line, sizeof line, "%s %s: %s\n", ts, level_names[level], msg);
      if (n > 0)
        (void) ar_write_all (log_fd, line, (size_t) n < sizeof line ? (size_t) n : sizeof line - 1);
    }
  /* Errors and warnings always reach stderr too; debug/info only without a log file. */
  if (level >= AR_LOG_WARNING || log_fd < 0)
    {
      bool named = level == AR_LOG_ERROR && log_command;
      int n = snprintf (line, sizeof line, "agentrun: %s%s%s%s\n", named ? log_command : "", named ? ": " : "",
                        level == AR_LOG_WARNING ? "warning: "
                        : level == AR_LOG_DEBUG ? "debug: "
                                                : "",
                        msg);
      if (n > 0)
        (void) ar_write_all (STDERR_FILENO, line, (size_t) n < sizeof line ? (size_t) n : sizeof line - 1);
    }
  errno = saved;
}

void
ar_log_error (ar_error *err)
{
  if (!err)
    return;
  ar_log (AR_LOG_ERROR, "%s", err->msg);
  ar_error_free (err);
}
