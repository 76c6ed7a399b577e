/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals shared by the files of SbxExecutor: the instance struct, the
 * grant transaction (sbx-executor-grants.c), admission (sbx-executor-admit.c),
 * runs (sbx-executor-run.c) and processes (sbx-process.c).
 */
#pragma once

#include <json-glib/json-glib.h>
#include "sbx-backend-private.h"
#include "sbx-executor-private.h"
#include "sbx-grant-private.h"
#include "sbx-policy-private.h"
#include "sbx-supervise-private.h"        /* SbxSuperviseResult */
#include "sbx-executor-egress-private.h"  /* SbxEgress, SbxEgressRun */
#include "sbx-stage-private.h"            /* SbxStage */

G_BEGIN_DECLS

struct _SbxExecutor
{
  GObject            parent_instance;

  SbxExecutorShared *shared;
  SbxEgress         *egress;        /* (nullable) the set's route */
  char              *key;
  char              *home;
  gboolean           home_owned;
  char              *tmpdir;
  char              *state_dir;
  char             **environment;
  SbxPolicy         *policy;
  SbxCompileReport  *report;        /* scope executor: a run without grants */
  SbxCompileReport  *run_report;    /* the same facts, scope run: what a run on
                                     * the executor's own spec reports */
  SbxLevel           level;
  SbxGuarantees      guarantees;

  GMutex             mutex;
  SbxBackendSpec    *spec;          /* (mutex) NULL once closed */
  gboolean           closed;        /* (mutex) */
  gboolean           key_valid;     /* (mutex) */
  guint8             grant_key[SBX_GRANT_KEY_SIZE];  /* (mutex) */
  SbxGrantReplay    *replay;        /* (mutex) spent and in-flight token IDs */
  GHashTable        *retained;      /* (mutex) token ID -> RetainedHandle */
  SbxGrantClockFunc  clock;         /* (mutex) tests only; NULL: wall clock */
  gpointer           clock_data;    /* (mutex) */
};

/* A filesystem grant's identity-pinned handle, kept from issue until the
 * token is spent, expires or the executor closes. */
typedef struct
{
  SbxGrantBinding *binding;
  char            *target;
  gboolean         exact;
  gint64           expiry_ms;
  int              fd;
} RetainedHandle;

void     sbx_executor_retained_handle_free (gpointer data);

/* One filesystem delta of a verified token. */
typedef struct
{
  char            *id;
  const SbxGrantClassInfo *info;
  char            *target;
  SbxGrantBinding *binding;
  gint64           expiry_ms;
  int              fd;          /* fresh handle, -1 for host grants */
} FsDelta;

void     sbx_executor_fs_delta_free (gpointer data);

/* A grant that may or must take guarantees from its spawn, for the run's
 * report (which grant removed what). */
typedef struct
{
  char          *grant;        /* "class:target", as --approve names it */
  SbxGuarantees  bits;         /* what it may or must take */
  guint          spent_index;  /* its line in `spent` */
} GrantDrop;

/* What a batch of verified tokens opens for one spawn. */
typedef struct
{
  GPtrArray *ids;          /* char* reserved in the replay registry */
  GArray    *expiries;     /* gint64, parallel to ids */
  GPtrArray *fs;           /* FsDelta* */
  GArray    *ports;        /* guint16, network.broad.v1 */
  gboolean   command_start;
  SbxGuarantees may_drop;  /* bits a host grant may take from the expected set */
  SbxGuarantees must_drop; /* bits the spawn must not claim (a broad network grant opened them) */
  GPtrArray *spent;        /* char* "class target: what it opened" */
  GPtrArray *proxy_targets; /* char* network.proxy-target.v1 targets (egress) */
  GArray    *drops;        /* GrantDrop, one per host, broad-network or unix-connect grant */
  GPtrArray *unix_sockets; /* char* unix.connect.v1 targets: host sockets opened for this spawn */
} GrantBatch;

void     sbx_executor_grant_batch_clear (GrantBatch *batch);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (GrantBatch, sbx_executor_grant_batch_clear)

typedef struct
{
  const char *execution_id;
  const char *what;
} GrantSpentEvent;

void     sbx_executor_add_grant_spent_members (JsonBuilder *builder,
                                               gpointer     data);

/* SBX_GRANT_ERROR with a formatted message; FALSE. */
gboolean sbx_executor_grant_fail (GError    **error,
                                  int         code,
                                  const char *format,
                                  ...) G_GNUC_PRINTF (3, 4);
/* getrandom() into @buf, all of it. */
gboolean sbx_executor_fill_random (guint8  *buf,
                                   gsize    len,
                                   GError **error);

/* (self->mutex) Verifies every token of @grants in order; on success every
 * token ID is reserved in the replay registry, and the caller commits or
 * un-reserves the batch. */
gboolean sbx_executor_verify_batch_locked (SbxExecutor       *self,
                                           const char        *execution_id,
                                           const char        *command,
                                           const char        *cwd,
                                           const char *const *grants,
                                           GrantBatch        *batch,
                                           GError           **error);
/* (self->mutex) Un-reserves a batch that will not run: nothing consumed. */
void     sbx_executor_unreserve_batch_locked (SbxExecutor *self,
                                              GrantBatch  *batch);
/* (self->mutex) Burns the batch's tokens. */
void     sbx_executor_commit_batch_locked (SbxExecutor *self,
                                           GrantBatch  *batch);
/* The spec of one spawn with the batch's deltas; its guarantees (after the
 * egress composition) must equal the expected ones.  *out_report is the
 * run's report (scope run, frozen), with an entry per guarantee a grant
 * removed; *out_level and *out_guarantees are the spawn's. */
SbxBackendSpec *sbx_executor_compile_transient (SbxExecutor       *self,
                                                GrantBatch        *batch,
                                                SbxCompileReport **out_report,
                                                SbxLevel          *out_level,
                                                SbxGuarantees     *out_guarantees,
                                                GError           **error);
/* A report for a compile of the executor's profile: backend, required
 * guarantees, roots, the set's rejected candidates.  (transfer full) */
SbxCompileReport *sbx_executor_report_new (SbxExecutorShared *shared,
                                           SbxGuarantees      required);
/* The command gate of a start without grants. */
gboolean sbx_executor_check_command_gate (SbxExecutor  *self,
                                          GError      **error);

/* One start (run or spawn), from the caller's arguments and options; a
 * deep copy, so an async run or a process owns it. */
typedef struct
{
  char          *cwd;
  char         **argv;
  GTimeSpan      timeout;
  gint64         deadline_real_us;  /* g_get_real_time() µs, 0: none */
  guint64        max_output;
  SbxStdioMode   modes[3];
  int            fds[3];            /* caller's stdin, stdout, stderr; -1: none */
  gboolean       owns_fds;          /* the fds are our duplicates */
  gboolean       pty;
  guint16        rows;
  guint16        cols;
  guint64        ignored_signals;   /* bit N-1: signal N starts ignored (SBX_SPAWN_IGNORED_SIGNALS) */
  GTimeSpan      grace;             /* force_exit's SIGTERM -> SIGKILL, > 0 */
  int            pty_fds[2];        /* a run's PTY resize hook: the resize and size
                                     * descriptors (the caller's, or our duplicates
                                     * with owns_fds); -1: none */
  /* A grant transaction: the options carry grants or an execution ID. */
  gboolean       with_grants;
  char          *execution_id;
  char          *command;           /* what the grants bind: sbx_grant_command_for_argv */
  char         **grants;            /* wiped when freed */
  gboolean       staged;            /* sbx_run_options_set_staged (runs only) */
  /* A staged run's roots (SBX_SPAWN_STAGED), borrowed from the run's
   * SbxStage, which outlives the spawn; n_stage_roots 0: not staged. */
  const SbxStageRootV1 *stage_roots;
  guint32        n_stage_roots;
  /* Live decisions (sbx-decision.c): the options' settings, and the
   * caller's thread-default context where questions go. */
  struct _SbxAskSettings *ask;      /* (nullable) (owned) */
  GMainContext  *ask_context;       /* (nullable) (owned) */
} SbxStartRequest;

SbxStartRequest *sbx_start_request_new       (const char          *cwd,
                                              const char *const   *argv,
                                              const SbxRunOptions *options);
void             sbx_start_request_free      (SbxStartRequest     *rr);
/* Replaces the caller's fds by our own duplicates (the caller may close
 * its fds once an async call returns). */
gboolean         sbx_start_request_own_fds   (SbxStartRequest     *rr,
                                              GError             **error);
void             sbx_start_request_close_fds (SbxStartRequest     *rr);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxStartRequest, sbx_start_request_free)

/* What admission gives a start. */
typedef struct
{
  SbxSharedGuard    *guard;      /* the set's lifecycle barrier, released last */
  SbxBackendSpec    *spec;       /* the executor's or the transient one */
  char              *cwd;        /* where the child runs (canonical with grants) */
  GPtrArray         *spent;      /* NULL-terminated "what each token opened", or NULL */
  guint64            run_id;
  gint64             deadline;   /* monotonic µs, 0: none */
  SbxEgressRun       egress;     /* the run's authorization on the set's route (egress) */
  /* The backend's refusals (SbxSpawnRequestV1.denial_sink), fed into
   * egress.denials, the run's one log (sbx-backend-denials.c). */
  struct _SbxBackendDenials *backend_denials;
  /* What the grants opened for writing (upstream EffectiveAccess). */
  gboolean           host_write;
  GPtrArray         *write_paths;  /* char*, exact entries */
  GPtrArray         *write_trees;  /* char*, trees */
  /* What held for this spawn (after its grants and the egress route): the
   * transient spec's report, or the executor's facts as a run's report.
   * Never the executor's own report (scope executor). */
  SbxCompileReport  *report;       /* scope run, frozen */
  SbxLevel           level;
  SbxGuarantees      guarantees;
} SbxAdmission;

/* Every check and reservation before a spawn (see sbx-executor-admit.c);
 * on success @out holds the barrier and the spawn event is emitted. */
gboolean sbx_executor_admit      (SbxExecutor            *self,
                                  const SbxStartRequest  *rr,
                                  GCancellable           *cancellable,
                                  SbxAdmission           *out,
                                  GError                **error);
/* Releases what admission holds, the barrier last.  Idempotent. */
void     sbx_admission_clear     (SbxAdmission           *admission);
void     sbx_executor_emit_exit  (SbxExecutor              *self,
                                  const SbxAdmission       *admission,
                                  const SbxSuperviseResult *result,
                                  const GError             *error,
                                  gboolean                  spawned);
/* The run engine's fds for a run's streams (stdin -1: the null device,
 * stdout/stderr -1: captured); *null_fd is an opened null device when a
 * stream asks for one (the caller passes it on to run_admitted). */
gboolean sbx_run_streams_resolve (const SbxStartRequest *rr,
                                  int                    fds[3],
                                  int                   *null_fd,
                                  GError               **error);
/* The run engine (sbx-executor-run.c): spawns an admitted start as an
 * SbxProcess and collects it (output limit, PTY relay, timeout and
 * deadline through the process, egress, the exit event).  Takes @rr, the
 * contents of @admission and @null_fd.  The sync form iterates a private
 * main context and reaps on this thread; the async one collects on the
 * thread-default context and completes @task with the SbxRunResult. */
SbxRunResult *sbx_executor_run_admitted       (SbxExecutor     *self,
                                               SbxStartRequest *rr,
                                               SbxAdmission    *admission,
                                               const int        fds[3],
                                               int              null_fd,
                                               GCancellable    *cancellable,
                                               GError         **error);
void          sbx_executor_run_admitted_async (SbxExecutor     *self,
                                               SbxStartRequest *rr,
                                               SbxAdmission    *admission,
                                               const int        fds[3],
                                               int              null_fd,
                                               GCancellable    *cancellable,
                                               GTask           *task);
/* Where a sync run's verdict lands (the call iterates until @done). */
typedef struct
{
  SbxRunResult *result;
  GError       *error;
  gboolean      done;
} SbxRunSync;

/* The engine itself (sbx-run-collect.c): spawns the admitted run and
 * collects it on the thread-default main context.  A sync run (@sync set,
 * @task NULL) reaps there and its verdict lands in @sync; an async one
 * reaps on the shared pool and completes @task with the SbxRunResult.
 * Takes @rr, the contents of @admission and @null_fd. */
void          sbx_run_collect_start           (SbxExecutor     *self,
                                               SbxStartRequest *rr,
                                               SbxAdmission    *admission,
                                               const int        fds[3],
                                               int              null_fd,
                                               GCancellable    *cancellable,
                                               GTask           *task,
                                               SbxRunSync      *sync);
/* A staged run (sbx-executor-stage.c): refuses what cannot be staged
 * (grants, a backend that did not announce staging, a writable host
 * root), then makes the stage the run writes into.  NULL with @error
 * (G_IO_ERROR_*, naming why; the run maps it as a spawn error) on refusal. */
SbxStage     *sbx_executor_stage_begin  (SbxExecutor           *self,
                                         const SbxStartRequest *rr,
                                         const SbxAdmission    *admission,
                                         GError               **error);
/* After the run: hands @stage to @run_result, or removes it when the run
 * gave no result (failed before or after its spawn).  Frees @stage. */
void          sbx_executor_stage_end    (SbxStage              *stage,
                                         SbxRunResult          *run_result);
/* Turns a backend's spawn error (consumed) into an executor error. */
void     sbx_executor_map_spawn_error (GError     **error,
                                       GError      *spawn_error,
                                       const char  *argv0);

G_END_DECLS
