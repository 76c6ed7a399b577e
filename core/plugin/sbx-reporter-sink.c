/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reporter sinks: an opened reporter extension events are delivered to.
 * Reporters can never alter policy: a failed emit is logged and counted,
 * never propagated to the run that caused it.
 */
#include "sbx-reporter-sink-private.h"

#include "sbx-plugin-private.h"
#include "sbx-plugin-host-private.h"

#include <string.h>

/* ------------------------------------------------------------------------- */
/* Reporter sinks                                                             */
/* ------------------------------------------------------------------------- */

struct _SbxReporterSink
{
  SbxPlugin                 *plugin; /* (owned) */
  char                      *name;
  const SbxReporterVTableV1 *vtable;
  void                      *sink;
  gint                       n_failures; /* (atomic) */
};

SbxReporterSink *
sbx_reporter_sink_open (SbxPlugin                 *plugin,
                        const char                *name,
                        const SbxReporterVTableV1 *vtable,
                        const char                *config,
                        GError                   **error)
{
  SbxReporterSink *sink;
  SbxHostCall      call;
  void            *plugin_sink = NULL;
  int32_t          status;

  sbx_host_call_init (&call, plugin->name, name, "open", NULL);
  status = vtable->open (plugin->ctx, &call, config, &plugin_sink);
  if (status != SBX_STATUS_OK)
    {
      sbx_host_call_fail (&call, status, error);
      sbx_host_call_clear (&call);
      return NULL;
    }
  sbx_host_call_clear (&call);

  sink = g_new0 (SbxReporterSink, 1);
  sink->plugin = sbx_plugin_ref (plugin);
  sink->name = g_strdup (name);
  sink->vtable = vtable;
  sink->sink = plugin_sink;
  return sink;
}

void
sbx_reporter_sink_emit (SbxReporterSink *sink,
                        const char      *event_json)
{
  SbxHostCall call;
  int32_t     status;

  g_return_if_fail (sink != NULL);
  g_return_if_fail (event_json != NULL);

  sbx_host_call_init (&call, sink->plugin->name, sink->name, "emit", NULL);
  status = sink->vtable->emit (sink->plugin->ctx, &call, sink->sink, event_json, strlen (event_json));
  if (status != SBX_STATUS_OK)
    {
      g_autoptr(GError) error = NULL;
      /* Logged and counted, never propagated: a reporter cannot change what
       * the sandbox does.  The first failure is visible (MESSAGE, not
       * WARNING, which test harnesses make fatal), later ones are debug. */
      gboolean first = g_atomic_int_add (&sink->n_failures, 1) == 0;

      sbx_host_call_fail (&call, status, &error);
      g_log_structured (G_LOG_DOMAIN, first ? G_LOG_LEVEL_MESSAGE : G_LOG_LEVEL_DEBUG,
                        "SBX_REPORTER", sink->name,
                        "MESSAGE", "reporter event dropped: %s", error->message);
    }
  sbx_host_call_clear (&call);
}

guint
sbx_reporter_sink_get_n_failures (SbxReporterSink *sink)
{
  g_return_val_if_fail (sink != NULL, 0);

  return (guint) g_atomic_int_get (&sink->n_failures);
}

void
sbx_reporter_sink_close (SbxReporterSink *sink)
{
  if (sink == NULL)
    return;
  sink->vtable->close (sink->plugin->ctx, sink->sink);
  sbx_plugin_unref (sink->plugin);
  g_free (sink->name);
  g_free (sink);
}
