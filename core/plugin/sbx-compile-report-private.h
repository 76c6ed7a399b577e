/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Builder side of SbxCompileReport.  A report is mutable only while one
 * thread builds it (the selection, then the backend compile of an executor);
 * sbx_compile_report_freeze() makes it immutable, after which it may be
 * shared and read from any thread.  Every setter on a frozen report is a
 * programmer error (g_return_if_fail).
 *
 * Used by the executor.
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>
#include "sbx-compile-report.h"
#include "sbx-profile.h"

G_BEGIN_DECLS

/* The "schema" member of to_json(); independent of the plugin ABI version. */
#define SBX_COMPILE_REPORT_SCHEMA 1

/* Caps that keep a misbehaving plugin from growing a report without bound. */
#define SBX_COMPILE_REPORT_MAX_ENTRIES   1024
#define SBX_COMPILE_REPORT_MAX_TEXT      4096  /* bytes per feature/detail/reason */

SbxCompileReport *sbx_compile_report_new              (void);
/* @feature and @detail are copied; invalid UTF-8 is replaced, over-long text
 * cut.  Returns FALSE (and adds nothing) when the report already holds
 * SBX_COMPILE_REPORT_MAX_ENTRIES entries. */
gboolean          sbx_compile_report_add_entry        (SbxCompileReport *self,
                                                       const char       *feature,
                                                       SbxReportStatus   status,
                                                       const char       *detail);
void              sbx_compile_report_set_backend      (SbxCompileReport *self,
                                                       const char       *backend);
void              sbx_compile_report_set_level        (SbxCompileReport *self,
                                                       SbxLevel          level);
void              sbx_compile_report_set_guarantees   (SbxCompileReport *self,
                                                       SbxGuarantees     guarantees);
void              sbx_compile_report_set_required     (SbxCompileReport *self,
                                                       SbxGuarantees     required);
void              sbx_compile_report_set_scope        (SbxCompileReport *self,
                                                       SbxReportScope    scope);
/* (transfer full) A deep copy of @self, not frozen (the copy of a frozen
 * report may be built on: a run's report starts as its executor's). */
SbxCompileReport *sbx_compile_report_dup              (SbxCompileReport *self);
void              sbx_compile_report_add_rejected     (SbxCompileReport *self,
                                                       const char       *backend,
                                                       const char       *reason);
/* Records a root (@kind "workspace" or "root") as the resolved @path it
 * became, with its access. */
void              sbx_compile_report_add_root         (SbxCompileReport *self,
                                                       const char       *kind,
                                                       const char       *path,
                                                       SbxAccess         read,
                                                       SbxAccess         write);
/* Appends every entry of @from (not its rejected list) to @self. */
void              sbx_compile_report_append_entries   (SbxCompileReport *self,
                                                       SbxCompileReport *from);
void              sbx_compile_report_freeze           (SbxCompileReport *self);
gboolean          sbx_compile_report_is_frozen        (SbxCompileReport *self);
/* (transfer full): the object that to_json() serializes; lets other JSON
 * documents (the registry listing, reporter events) embed a report. */
JsonNode         *sbx_compile_report_to_json_node     (SbxCompileReport *self);

G_END_DECLS
