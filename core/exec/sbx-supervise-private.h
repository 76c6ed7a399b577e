/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How a supervised process ended, as the exit event reports it: the one
 * run engine is SbxProcess (sbx-process-watch.c: the deadline, the kills,
 * the reap) with, for a run, the collect of sbx-executor-run.c (the output
 * limit, the PTY relay).
 */
#pragma once

#include <gio/gio.h>
#include "sbx-backend-private.h"

G_BEGIN_DECLS

typedef enum
{
  SBX_SUPERVISE_EXITED,       /* the target ended on its own (or by the output limit) */
  SBX_SUPERVISE_TIMED_OUT,    /* the deadline passed; the tree was killed */
  SBX_SUPERVISE_CANCELLED,    /* the cancellable fired; the tree was killed */
  SBX_SUPERVISE_CLOSED,       /* the set's close came; the tree was killed */
} SbxSuperviseOutcome;

/* What the exit event says of a process that was spawned. */
typedef struct
{
  SbxSuperviseOutcome outcome;
  SbxExitV1           exit;         /* from the backend's finish() */
  gboolean            truncated;    /* output passed the limit; the tree was killed */
  guint32             containment;  /* SBX_CONTAINMENT_* */
  gint64              duration_us;  /* spawn to reap */
} SbxSuperviseResult;

G_END_DECLS
