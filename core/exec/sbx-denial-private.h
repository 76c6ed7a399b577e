/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Denials inside the library (sbx-denial.c).  Never installed.
 *
 * A run's denials are collected in one SbxDenialLog: bounded and merged, so
 * a tool that loops on refused attempts cannot grow the supervisor's memory.
 * Two denials are the same entry when their operation, target and mechanism
 * are equal; a repeat only raises the entry's count.  Past
 * SBX_DENIAL_LOG_MAX_ENTRIES distinct entries, a new one is counted as
 * dropped and not kept.
 *
 * Thread safety: a log may be fed from any thread (the egress plugin's
 * threads, the run's thread); a snapshot copies under the log's lock.
 */
#pragma once

#include <json-glib/json-glib.h>
#include "sbx-denial.h"

G_BEGIN_DECLS

/* The most distinct denials a run keeps. */
#define SBX_DENIAL_LOG_MAX_ENTRIES 256

/* A denial with count 1.  @grant_class and @grant_target come together (or
 * neither, then @reason says why no grant can open it).  @argv (nullable) is
 * copied. */
SbxDenial     *sbx_denial_new            (SbxDenialOperation  operation,
                                          const char         *target,
                                          const char         *mechanism,
                                          const char         *grant_class,
                                          const char         *grant_target,
                                          const char         *reason);
/* The process inside that tried it (before the denial is shared). */
void           sbx_denial_set_process    (SbxDenial          *self,
                                          gint64              pid,
                                          const char         *process_name,
                                          const char *const  *argv);

/* The members of a reporter's "denied" event (docs/writing-plugins.md §8):
 * operation, target, mechanism, count, and grant_class + grant_target or
 * reason; pid, process and argv when known. */
void           sbx_denial_add_json_members (SbxDenial        *self,
                                            JsonBuilder      *builder);

typedef struct _SbxDenialLog SbxDenialLog;

/* Called, with no lock held, for the first occurrence of each distinct
 * denial the log keeps (on the thread that added it). */
typedef void (*SbxDenialLogNotify) (SbxDenial *denial,
                                    gpointer   user_data);

SbxDenialLog  *sbx_denial_log_new        (void);
SbxDenialLog  *sbx_denial_log_ref        (SbxDenialLog       *self);
void           sbx_denial_log_unref      (SbxDenialLog       *self);
/* Sets the function told of new distinct denials (NULL: none); @notify
 * must stay callable until it is unset. */
void           sbx_denial_log_set_notify (SbxDenialLog       *self,
                                          SbxDenialLogNotify  notify,
                                          gpointer            user_data);
/* Adds one occurrence of @denial (its count is ignored; it is not kept
 * when it merges into an entry or is dropped). */
void           sbx_denial_log_add        (SbxDenialLog       *self,
                                          SbxDenial          *denial);
/* The distinct denials in the order first seen, each a fresh immutable
 * copy with its merged count. */
GPtrArray     *sbx_denial_log_snapshot   (SbxDenialLog       *self);
/* Occurrences of distinct denials that did not fit (0: nothing dropped). */
guint64        sbx_denial_log_get_dropped (SbxDenialLog      *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxDenialLog, sbx_denial_log_unref)

G_END_DECLS
