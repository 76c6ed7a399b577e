/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-plugin-reporter.h — the reporter extension (SBX_EXT_REPORTER): sinks
 * that receive a run's events.  The rules every plugin follows are in
 * sbx-plugin-envelope.h.
 */
#ifndef SBX_PLUGIN_REPORTER_H
#define SBX_PLUGIN_REPORTER_H

#include "sbx-plugin-envelope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Reporter extension                                                         */
/* ------------------------------------------------------------------------- */

/**
 * SbxReporterVTableV1:
 *
 * Reporters receive events as versioned JSON objects ("schema": 1), one per
 * call.  They can never alter policy: a reporter error is logged and
 * counted by the host and changes nothing else.
 *
 * @open: create a sink from @config (reporter-specific, e.g. a file path).
 * @emit: deliver one event; @event_json is one JSON object without newline.
 * @close: flush and free @sink.
 */
typedef int32_t SbxReporterOpenFunc (void *plugin_ctx, SbxHostCall *call, const char *config,
                                     void **sink_out);
typedef int32_t SbxReporterEmitFunc (void *plugin_ctx, SbxHostCall *call, void *sink,
                                     const char *event_json, size_t length);
typedef void SbxReporterCloseFunc (void *plugin_ctx, void *sink);

typedef struct SbxReporterVTableV1
{
  uint32_t             struct_size;
  uint32_t             reserved0;   /* 0 */
  SbxReporterOpenFunc *open;
  SbxReporterEmitFunc *emit;
  SbxReporterCloseFunc *close;
} SbxReporterVTableV1;

#define SBX_REPORTER_VTABLE_V1_MIN_SIZE (offsetof (SbxReporterVTableV1, close) + sizeof (SbxReporterCloseFunc *))

#ifdef __cplusplus
}
#endif

#endif /* SBX_PLUGIN_REPORTER_H */
