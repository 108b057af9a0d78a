/* Logging: text to stderr by default; with --log FILE, lines go to FILE too,
 * and with --log-format json each line is {"level","msg","time"} as podman and
 * containerd read runc's log. */
#ifndef AR_LOG_H
#define AR_LOG_H

#include <stdbool.h>
#include "error.h"

enum ar_log_level { AR_LOG_DEBUG, AR_LOG_INFO, AR_LOG_WARNING, AR_LOG_ERROR };

int ar_log_init (const char *file, const char *format, bool debug, ar_error **err);
/* The command this process runs (the CLI's, once it knows it): error lines
 * on stderr then read "agentrun: NAME: message", so messages never name
 * it themselves. The log file's lines keep the message alone, as runc's. */
void ar_log_set_command (const char *name);
bool ar_log_debug_enabled (void);
/* The --log file's fd, or -1: a child that closes what it does not need keeps it. */
int ar_log_fd (void);
void ar_log (enum ar_log_level level, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* Report an error object at error level (and free it). */
void ar_log_error (ar_error *err);

#define ar_debug(...)                                                                                                  \
  do                                                                                                                   \
    {                                                                                                                  \
      if (ar_log_debug_enabled ())                                                                                     \
        ar_log (AR_LOG_DEBUG, __VA_ARGS__);                                                                            \
    }                                                                                                                  \
  while (0)
#define ar_warn(...) ar_log (AR_LOG_WARNING, __VA_ARGS__)
#define ar_info(...) ar_log (AR_LOG_INFO, __VA_ARGS__)

#endif
