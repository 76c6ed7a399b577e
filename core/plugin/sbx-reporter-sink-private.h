/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reporter sinks (sbx-reporter-sink.c): one opened reporter extension of a
 * plugin, events are delivered to.  The registry finds the extension
 * (sbx_registry_open_reporter); the sink holds the plugin record only.
 */
#pragma once

#include <glib.h>
#include "sbx-plugin-reporter.h"

G_BEGIN_DECLS

typedef struct _SbxPlugin SbxPlugin;
typedef struct _SbxReporterSink SbxReporterSink;

/* Opens extension @name of @plugin (a reference is taken), whose vtable is
 * @vtable, with its @config (e.g. a file path). */
SbxReporterSink *sbx_reporter_sink_open     (SbxPlugin                 *plugin,
                                             const char                *name,
                                             const SbxReporterVTableV1 *vtable,
                                             const char                *config,
                                             GError                   **error);
/* Delivers one event (a JSON object, "schema": 1).  Failures are logged and
 * counted, never propagated: reporters cannot alter policy. */
void             sbx_reporter_sink_emit     (SbxReporterSink *sink,
                                             const char      *event_json);
guint            sbx_reporter_sink_get_n_failures (SbxReporterSink *sink);
void             sbx_reporter_sink_close    (SbxReporterSink *sink);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxReporterSink, sbx_reporter_sink_close)

G_END_DECLS
