/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The inside of SbxProcess, shared by its three files:
 *   sbx-process.c        the object and its GSubprocess-shaped methods
 *                        (streams, waits, signals, exit status);
 *   sbx-process-watch.c  supervision: kills and timers, reaping, the pidfd
 *                        watches, the blocking wait, the set's close, the
 *                        verdict of a wait;
 *   sbx-process-spawn.c  the start: stdio and the PTY master, the backend's
 *                        spawn, registration for the set's close.
 * The methods and the start call supervision; supervision calls neither.
 * This header is the representation only (a module of its own for
 * tests/check-include-cycles.py); the functions each file offers the
 * others are in sbx-process-private.h, sbx-process-watch-private.h and
 * sbx-process-spawn-private.h.
 * See sbx-process.c for the life of a process and its locking.
 */
#pragma once

#include "sbx-process.h"
#include "sbx-denial-private.h"
#include "sbx-executor-impl-private.h"   /* SbxStartRequest, SbxAdmission */
#include "sbx-plugin-backend.h"          /* SbxSpawnResultV1, SbxExitV1 */
#include "sbx-supervise-private.h"       /* SbxSuperviseOutcome */

G_BEGIN_DECLS

typedef enum
{
  STATE_SPAWNING,
  STATE_RUNNING,
  STATE_REAPING,
  STATE_DONE,
} ProcessState;

struct _SbxProcess
{
  GObject           parent_instance;

  SbxExecutor      *executor;
  SbxStartRequest  *rr;
  SbxAdmission      admission;
  SbxCompileReport *spawn_report;  /* the admission's, kept after it is cleared */
  SbxLevel          spawn_level;
  SbxGuarantees     spawn_guarantees;
  GMainContext     *context;       /* thread-default at spawn */
  GCancellable     *cancellable;   /* the spawn's, kills the tree */
  gulong            cancel_id;
  char             *identifier;

  GOutputStream    *stdin_pipe;
  GInputStream     *stdout_pipe;
  GInputStream     *stderr_pipe;
  int               pty_master;    /* -1 without a PTY */

  GMutex            mutex;
  GCond             cond;
  ProcessState      state;         /* (mutex) */
  gboolean          close_requested;  /* (mutex) set close came while SPAWNING */
  guint             signalling;    /* (mutex) backend signal() calls in flight */
  gboolean          reap_queued;   /* (mutex) */
  SbxSuperviseOutcome outcome;     /* (mutex) why the tree was killed, if it was */
  gint64            kill_at;       /* (mutex) monotonic µs of the grace's SIGKILL, 0 none */
  gint64            deadline;      /* monotonic µs, 0 none; immutable after spawn */
  gint64            last_kill;     /* (mutex) */
  gboolean          killed;        /* (mutex) SIGKILL sent */
  GPtrArray        *watches;       /* (mutex) GSource* */
  GPtrArray        *pending;       /* (mutex) GTask* of wait_async */
  SbxSpawnResultV1  spawn;         /* pid, child, containment */
  int               pidfd;
  gint64            started;
  SbxExitV1         exit;          /* (mutex) valid in DONE */
  GError           *teardown_error; /* (mutex) */
  gint64            duration_us;

  /* A run's process (sbx_process_start_for_run(), immutable after the
   * start): the run collects its output itself, so it has no streams and
   * no ::denied; a sync run's watch reaps on the run's own thread. */
  gboolean          for_run;
  gboolean          reap_inline;
  gboolean          truncated;     /* (mutex) the run's output passed its limit */
  SbxRunResult     *run_result;    /* made by the reap (without the output) */
  /* (mutex) called once DONE, on the reaping thread, then cleared: how a
   * run's collect learns of the reap without a task of its own */
  void            (*reaped_fn) (gpointer data);
  gpointer          reaped_data;
};

/* A wait_async() task's data. */
typedef struct
{
  gulong   handler;
  gboolean cancelled;
} WaitData;

G_END_DECLS
