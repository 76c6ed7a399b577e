/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host side of the plugin ABI: the SbxHostV1 table every plugin receives,
 * the per-call SbxHostCall (first error message, report entries), the
 * mapping of SBX_STATUS_* to SBX_PLUGIN_ERROR, and the crash guard that
 * names a plugin that crashes during init/probe/compile.
 */
#include "sbx-plugin-host-private.h"
#include "sbx-plugin-private.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "sbx-compile-report-private.h"

/* Longest message a plugin can hand set_error()/log(); longer text is cut. */
#define MAX_PLUGIN_MESSAGE 4096

static char *
plugin_text (const char *text)
{
  g_autofree char *valid = NULL;
  const char *end;

  if (text == NULL || text[0] == '\0')
    return NULL;
  valid = g_utf8_make_valid (text, -1);
  if (strlen (valid) <= MAX_PLUGIN_MESSAGE)
    return g_steal_pointer (&valid);
  end = g_utf8_find_prev_char (valid, valid + MAX_PLUGIN_MESSAGE + 1);
  return g_strndup (valid, end - valid);
}

/* ------------------------------------------------------------------------- */
/* Status mapping                                                             */
/* ------------------------------------------------------------------------- */

SbxPluginError
sbx_plugin_error_from_status (int32_t status)
{
  switch (status)
    {
    case SBX_STATUS_UNAVAILABLE:
      return SBX_PLUGIN_ERROR_UNAVAILABLE;
    case SBX_STATUS_UNSUPPORTED:
      return SBX_PLUGIN_ERROR_UNSUPPORTED;
    case SBX_STATUS_INVALID:
      return SBX_PLUGIN_ERROR_INVALID;
    case SBX_STATUS_NO_MEMORY:
      return SBX_PLUGIN_ERROR_NO_MEMORY;
    case SBX_STATUS_EXEC_NOT_FOUND:
      return SBX_PLUGIN_ERROR_EXEC_NOT_FOUND;
    case SBX_STATUS_EXEC_DENIED:
      return SBX_PLUGIN_ERROR_EXEC_DENIED;
    case SBX_STATUS_FAILED:
    default:
      /* SBX_STATUS_OK here is a host bug, anything else a plugin bug: both
       * are failures. */
      return SBX_PLUGIN_ERROR_FAILED;
    }
}

const char *
sbx_status_to_string (int32_t status)
{
  switch (status)
    {
    case SBX_STATUS_OK:
      return "ok";
    case SBX_STATUS_FAILED:
      return "failed";
    case SBX_STATUS_UNAVAILABLE:
      return "unavailable";
    case SBX_STATUS_UNSUPPORTED:
      return "unsupported";
    case SBX_STATUS_INVALID:
      return "invalid";
    case SBX_STATUS_NO_MEMORY:
      return "no-memory";
    case SBX_STATUS_EXEC_NOT_FOUND:
      return "exec-not-found";
    case SBX_STATUS_EXEC_DENIED:
      return "exec-denied";
    default:
      return "unknown status";
    }
}

/* ------------------------------------------------------------------------- */
/* SbxHostCall                                                                */
/* ------------------------------------------------------------------------- */

void
sbx_host_call_init (SbxHostCall      *call,
                    const char       *plugin,
                    const char       *extension,
                    const char       *operation,
                    SbxCompileReport *report)
{
  memset (call, 0, sizeof *call);
  call->plugin = plugin;
  call->extension = extension;
  call->operation = operation;
  call->report = report;
}

void
sbx_host_call_clear (SbxHostCall *call)
{
  g_clear_pointer (&call->message, g_free);
}

gboolean
sbx_host_call_fail (SbxHostCall  *call,
                    int32_t       status,
                    GError      **error)
{
  g_autofree char *fallback = NULL;
  const char *message = call->message;

  if (message == NULL)
    message = fallback = g_strdup_printf ("returned status %d (%s) without a message",
                                          (int) status, sbx_status_to_string (status));
  g_set_error (error, SBX_PLUGIN_ERROR, sbx_plugin_error_from_status (status),
               "plugin '%s', extension '%s': %s failed: %s",
               call->plugin, call->extension, call->operation, message);
  return FALSE;
}

/* ------------------------------------------------------------------------- */
/* The SbxHostV1 table                                                        */
/* ------------------------------------------------------------------------- */

static void
host_set_error (SbxHostCall *call,
                int32_t      status,
                const char  *message)
{
  if (call == NULL || call->has_error)
    return;  /* the first message wins */
  call->has_error = TRUE;
  call->status = status;
  call->message = plugin_text (message);
}

static void
host_report (SbxHostCall *call,
             const char  *feature,
             uint32_t     status,
             const char  *detail)
{
  g_autofree char *note = NULL;

  if (call == NULL)
    return;
  if (call->report == NULL || feature == NULL || feature[0] == '\0')
    {
      call->n_dropped++;
      return;
    }
  if (status < SBX_ABI_REPORT_ENFORCED || status > SBX_ABI_REPORT_VACUOUS)
    {
      /* We cannot know what an unknown status claims: say "unenforced". */
      note = g_strdup_printf ("%s (the plugin reported unknown status %u)",
                              detail != NULL ? detail : "", (unsigned) status);
      detail = note;
      status = SBX_ABI_REPORT_UNENFORCED;
    }
  if (!sbx_compile_report_add_entry (call->report, feature, (SbxReportStatus) status, detail))
    call->n_dropped++;
}

static gboolean
domain_is_well_formed (const char *domain)
{
  gsize len;

  if (domain == NULL)
    return FALSE;
  len = strlen (domain);
  if (len == 0 || len > 64)
    return FALSE;
  for (gsize i = 0; i < len; i++)
    if (!g_ascii_islower (domain[i]) && !g_ascii_isdigit (domain[i]) && domain[i] != '-' && domain[i] != '_')
      return FALSE;
  return TRUE;
}

/*
 * Plugin log levels map onto GLib's as ERROR -> WARNING, WARNING -> MESSAGE,
 * INFO -> INFO, DEBUG -> DEBUG.  Never G_LOG_LEVEL_ERROR (it aborts) nor
 * CRITICAL (GLib reserves it for programmer errors of the caller).  The GLib
 * domain is "sbx-plugin-<domain>", so G_MESSAGES_DEBUG=sbx-plugin-linux shows
 * one plugin's debug output.
 */
static void
host_log (uint32_t    level,
          const char *domain,
          const char *message)
{
  g_autofree char *log_domain = NULL;
  g_autofree char *text = plugin_text (message);
  GLogLevelFlags flags;

  if (text == NULL)
    return;
  switch (level)
    {
    case SBX_LOG_ERROR:
      flags = G_LOG_LEVEL_WARNING;
      break;
    case SBX_LOG_WARNING:
      flags = G_LOG_LEVEL_MESSAGE;
      break;
    case SBX_LOG_INFO:
      flags = G_LOG_LEVEL_INFO;
      break;
    case SBX_LOG_DEBUG:
    default:
      flags = G_LOG_LEVEL_DEBUG;
      break;
    }
  log_domain = g_strconcat ("sbx-plugin-", domain_is_well_formed (domain) ? domain : "unknown", NULL);
  g_log_structured (log_domain, flags,
                    "SBX_PLUGIN_DOMAIN", domain_is_well_formed (domain) ? domain : "unknown",
                    "MESSAGE", "%s", text);
}

/* One allocator for everything that crosses the boundary plugin -> host:
 * GLib's, so the host frees such memory with g_free(). */
static void *
host_alloc (size_t size)
{
  return g_try_malloc (size != 0 ? size : 1);
}

static void
host_release (void *ptr)
{
  g_free (ptr);
}

static const SbxHostV1 host_table = {
  .struct_size = sizeof (SbxHostV1),
  .abi_version = SBX_PLUGIN_ABI_VERSION,
  .features = SBX_HOST_FEATURES_IMPLEMENTED,
  .core_version = SBX_VERSION_STRING,
  .set_error = host_set_error,
  .report = host_report,
  .log = host_log,
  .alloc = host_alloc,
  .release = host_release,
};

const SbxHostV1 *
sbx_host_table (void)
{
  return &host_table;
}

/* ------------------------------------------------------------------------- */
/* Crash guard                                                                */
/* ------------------------------------------------------------------------- */

/*
 * Why this mechanism (the "probe-segfaults" mock proves it): a plugin that crashes
 * inside probe() takes the whole process down, and the default message
 * ("Segmentation fault") does not say which of several plugins did it.  We
 * cannot survive the crash safely (the plugin may hold locks, the heap may be
 * corrupt), so we only name it:
 *
 *  - Around each init/probe/compile call, the calling thread points a
 *    thread-local variable at a message it formatted beforehand, and the
 *    first guard entered installs a handler for SIGSEGV, SIGBUS, SIGILL,
 *    SIGFPE and SIGABRT (saving the previous dispositions); the last guard
 *    left restores them.  A process-wide counter under guard_lock makes this
 *    safe for concurrent callers.
 *  - The handler uses only async-signal-safe calls: write(2) of the
 *    preformatted message (if the crashing thread is inside a plugin call),
 *    sigaction() to put the previous disposition back, and, for a signal that
 *    was sent rather than caused by a fault, raise() so it is delivered again
 *    once the handler returns.  A fault simply re-executes the faulting
 *    instruction, which then meets the previous disposition: the default
 *    action (the process dies by that signal, a core dump as configured) or
 *    a sanitizer's or the application's own handler.
 *  - The message is preformatted because formatting in a handler is not
 *    async-signal-safe; the TLS slot was touched before the call, so reading
 *    it in the handler does not allocate.
 *
 * spawn/signal/finish are not guarded: they run on the hot path, concurrently
 * with the application's own threads, and flipping process-wide signal
 * dispositions there would race with an application installing its own.
 */

static const int guarded_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

static GMutex guard_lock;
static guint guard_depth;                                            /* (locked guard_lock) */
static struct sigaction saved_actions[G_N_ELEMENTS (guarded_signals)]; /* (locked guard_lock) */
static __thread const char *crash_message;                           /* this thread's guard */

static void
write_all (int         fd,
           const char *text,
           size_t      len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, text, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      text += n;
      len -= (size_t) n;
    }
}

static void
crash_handler (int        signo,
               siginfo_t *info,
               void      *context)
{
  int saved_errno = errno;
  const char *message = crash_message;

  if (message != NULL)
    {
      char digits[16];
      size_t n = sizeof digits;
      unsigned value = (unsigned) signo;

      do
        {
          digits[--n] = (char) ('0' + value % 10);
          value /= 10;
        }
      while (value != 0 && n > 0);
      write_all (STDERR_FILENO, message, strlen (message));
      write_all (STDERR_FILENO, digits + n, sizeof digits - n);
      write_all (STDERR_FILENO, ")\n", 2);
      crash_message = NULL;  /* print once, even if the fault repeats */
    }

  for (guint i = 0; i < G_N_ELEMENTS (guarded_signals); i++)
    if (guarded_signals[i] == signo)
      sigaction (signo, &saved_actions[i], NULL);

  /* si_code <= 0: sent by kill/raise/abort, not a fault: deliver it again. */
  if (info == NULL || info->si_code <= 0)
    raise (signo);
  errno = saved_errno;
}

void
sbx_crash_guard_enter (SbxCrashGuard *guard,
                       const char    *plugin,
                       const char    *operation,
                       const char    *extension)
{
  g_snprintf (guard->message, sizeof guard->message,
              "sbx: plugin '%s' crashed in %s (extension '%s', signal ",
              plugin, operation, extension != NULL ? extension : "-");
  guard->previous = crash_message;
  crash_message = guard->message;

  g_mutex_lock (&guard_lock);
  if (guard_depth++ == 0)
    {
      struct sigaction action;

      memset (&action, 0, sizeof action);
      action.sa_sigaction = crash_handler;
      action.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset (&action.sa_mask);
      for (guint i = 0; i < G_N_ELEMENTS (guarded_signals); i++)
        sigaction (guarded_signals[i], &action, &saved_actions[i]);
    }
  g_mutex_unlock (&guard_lock);
}

void
sbx_crash_guard_leave (SbxCrashGuard *guard)
{
  g_mutex_lock (&guard_lock);
  if (--guard_depth == 0)
    for (guint i = 0; i < G_N_ELEMENTS (guarded_signals); i++)
      sigaction (guarded_signals[i], &saved_actions[i], NULL);
  g_mutex_unlock (&guard_lock);

  crash_message = guard->previous;
}
