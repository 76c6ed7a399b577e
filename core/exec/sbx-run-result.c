/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-run-result-private.h"

/**
 * SbxRunResult:
 *
 * What one finished run produced: its combined output, how the command ended
 * (an exit code, or the signal that killed it — never a bare -1), whether
 * the output was truncated at the run's limit, and how the backend contained
 * the process tree's lifetime.
 *
 * A command that exits non-zero or dies from a signal is a result, not an
 * error.  Immutable and reference counted; safe to share between threads.
 *
 * Since: 0.1
 */
struct _SbxRunResult
{
  gatomicrefcount ref;
  GBytes         *output;
  gboolean        signaled;
  int             exit_code;
  int             term_signal;
  gboolean        truncated;
  SbxLifetimeContainment  containment;
  GTimeSpan       duration;
  char          **grants_spent;   /* NULL-terminated, never NULL */
  char           *denied_target;  /* (nullable) egress: the first target refused */
  char           *denial_reason;  /* (nullable) */
  SbxCompileReport *spawn_report; /* scope run; set by every run of the library */
  SbxLevel        spawn_level;
  SbxGuarantees   spawn_guarantees;
  GPtrArray      *denials;        /* of SbxDenial, never NULL */
  guint64         denials_dropped;
  char           *stage_id;       /* (nullable) a staged run's stage */
  char           *stage_dir;
};

G_STATIC_ASSERT (SBX_LIFETIME_CONTAINMENT_UNSPECIFIED == (int) SBX_CONTAINMENT_UNSPECIFIED);
G_STATIC_ASSERT (SBX_LIFETIME_CONTAINMENT_ENFORCED == (int) SBX_CONTAINMENT_ENFORCED);
G_STATIC_ASSERT (SBX_LIFETIME_CONTAINMENT_BEST_EFFORT == (int) SBX_CONTAINMENT_BEST_EFFORT);

G_DEFINE_BOXED_TYPE (SbxRunResult, sbx_run_result, sbx_run_result_ref, sbx_run_result_unref)

SbxRunResult *
sbx_run_result_new (GBytes          *output,
                    const SbxExitV1 *exit,
                    gboolean         truncated,
                    SbxLifetimeContainment   containment,
                    GTimeSpan        duration)
{
  SbxRunResult *self;

  g_return_val_if_fail (exit != NULL, NULL);

  self = g_new0 (SbxRunResult, 1);
  g_atomic_ref_count_init (&self->ref);
  self->output = output != NULL ? g_bytes_ref (output) : g_bytes_new (NULL, 0);
  self->signaled = exit->kind == SBX_EXIT_SIGNALED;
  self->exit_code = self->signaled ? 0 : exit->code;
  self->term_signal = self->signaled ? exit->signo : 0;
  self->truncated = truncated;
  self->containment = containment;
  self->duration = duration;
  self->grants_spent = g_new0 (char *, 1);
  self->denials = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_denial_unref);
  return self;
}

/**
 * sbx_run_result_ref:
 * @self: a [struct@Sbx.RunResult]
 *
 * Takes a reference.
 *
 * Returns: (transfer full): @self
 *
 * Since: 0.1
 */
void
sbx_run_result_set_output (SbxRunResult *self,
                           GBytes       *output,
                           gboolean      truncated)
{
  g_return_if_fail (self != NULL && output != NULL);

  g_bytes_unref (self->output);
  self->output = g_bytes_ref (output);
  self->truncated |= truncated;
}

SbxRunResult *
sbx_run_result_ref (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref);
  return self;
}

/**
 * sbx_run_result_unref:
 * @self: (transfer full): a [struct@Sbx.RunResult]
 *
 * Drops a reference; the last one frees the result.
 *
 * Since: 0.1
 */
void
sbx_run_result_unref (SbxRunResult *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref))
    return;
  g_bytes_unref (self->output);
  g_strfreev (self->grants_spent);
  g_free (self->denied_target);
  g_free (self->denial_reason);
  g_free (self->stage_id);
  g_free (self->stage_dir);
  g_clear_pointer (&self->spawn_report, sbx_compile_report_unref);
  g_ptr_array_unref (self->denials);
  g_free (self);
}

/**
 * sbx_run_result_get_output:
 * @self: a [struct@Sbx.RunResult]
 *
 * Returns the combined standard output and standard error the run captured,
 * in the order the command wrote them.  Streams the run forwarded to a file
 * descriptor of its [struct@Sbx.RunOptions] are not captured.  When the
 * result is truncated, these are the first bytes up to the limit.
 *
 * Returns: (transfer none): the output (possibly empty, never %NULL)
 *
 * Since: 0.1
 */
GBytes *
sbx_run_result_get_output (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->output;
}

/**
 * sbx_run_result_get_if_exited:
 * @self: a [struct@Sbx.RunResult]
 *
 * Whether the command exited by itself (then
 * [method@Sbx.RunResult.get_exit_status] is its status) rather than being
 * killed by a signal.
 *
 * Returns: %TRUE when the command exited
 *
 * Since: 0.2
 */
gboolean
sbx_run_result_get_if_exited (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return !self->signaled;
}

/**
 * sbx_run_result_get_exit_status:
 * @self: a [struct@Sbx.RunResult]
 *
 * The command's exit status (0–255) when it exited; 0 when it was killed by
 * a signal (check [method@Sbx.RunResult.get_if_signaled] first).
 *
 * Returns: the exit status
 *
 * Since: 0.2
 */
int
sbx_run_result_get_exit_status (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->exit_code;
}

/**
 * sbx_run_result_get_if_signaled:
 * @self: a [struct@Sbx.RunResult]
 *
 * Whether the command was killed by a signal (including the kill of an
 * output limit: see [method@Sbx.RunResult.get_truncated]).
 *
 * Returns: %TRUE when the command died from a signal
 *
 * Since: 0.2
 */
gboolean
sbx_run_result_get_if_signaled (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return self->signaled;
}

/**
 * sbx_run_result_get_term_sig:
 * @self: a [struct@Sbx.RunResult]
 *
 * The number of the signal that killed the command, or 0 when it exited.
 *
 * Returns: the signal number
 *
 * Since: 0.2
 */
int
sbx_run_result_get_term_sig (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->term_signal;
}

/**
 * sbx_run_result_get_successful:
 * @self: a [struct@Sbx.RunResult]
 *
 * Whether the command exited with status 0 and its output was not
 * truncated.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
sbx_run_result_get_successful (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return !self->signaled && self->exit_code == 0 && !self->truncated;
}

/**
 * sbx_run_result_get_truncated:
 * @self: a [struct@Sbx.RunResult]
 *
 * Whether the command produced more output than the run's limit.  Nothing
 * past the limit was kept or forwarded, and the whole process tree was
 * killed as soon as the limit was passed.
 *
 * Returns: %TRUE when the output was truncated
 *
 * Since: 0.1
 */
gboolean
sbx_run_result_get_truncated (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return self->truncated;
}

/**
 * sbx_run_result_get_lifetime_containment:
 * @self: a [struct@Sbx.RunResult]
 *
 * How the backend contained the lifetime of the run's process tree.
 *
 * Returns: the containment
 *
 * Since: 0.2
 */
SbxLifetimeContainment
sbx_run_result_get_lifetime_containment (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, SBX_LIFETIME_CONTAINMENT_UNSPECIFIED);

  return self->containment;
}

/**
 * sbx_run_result_get_duration:
 * @self: a [struct@Sbx.RunResult]
 *
 * The time from spawn until the command was reaped.
 *
 * Returns: the duration in microseconds
 *
 * Since: 0.1
 */
GTimeSpan
sbx_run_result_get_duration (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->duration;
}

void
sbx_run_result_set_grants_spent (SbxRunResult      *self,
                                 const char *const *spent)
{
  g_strfreev (self->grants_spent);
  self->grants_spent = spent != NULL ? g_strdupv ((char **) spent) : g_new0 (char *, 1);
}

/**
 * sbx_run_result_get_grants_spent:
 * @self: a [struct@Sbx.RunResult]
 *
 * What each grant spent by this run opened, one line per token in the order
 * given, as "CLASS TARGET: what it opened" (for example
 * `command.start.v1 make: authorized this start`).  Empty for a run without
 * grants.  Tokens themselves never appear.
 *
 * Returns: (transfer none) (array zero-terminated=1): the grants spent
 *
 * Since: 0.1
 */
const char *const *
sbx_run_result_get_grants_spent (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return (const char *const *) self->grants_spent;
}

void
sbx_run_result_set_network_denial (SbxRunResult *self,
                                   const char   *target,
                                   const char   *reason)
{
  g_free (self->denied_target);
  g_free (self->denial_reason);
  self->denied_target = g_strdup (target);
  self->denial_reason = g_strdup (reason);
}

/**
 * sbx_run_result_get_denied_target:
 * @self: a [struct@Sbx.RunResult]
 *
 * The first network target the executor set's egress route refused during
 * this run, as a canonical `tcp:HOST:PORT` (`tcp:invalid:1` when the
 * request named no parseable target), or %NULL when nothing was refused
 * (or the set has no route).  Later refusals of the same run are not
 * recorded here.
 *
 * Deprecated in favour of [method@Sbx.RunResult.get_denials], which lists
 * every refusal of the run (kept working).
 *
 * Returns: (nullable): the denied target
 *
 * Since: 0.1
 */
const char *
sbx_run_result_get_denied_target (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->denied_target;
}

/**
 * sbx_run_result_get_denial_reason:
 * @self: a [struct@Sbx.RunResult]
 *
 * Why [method@Sbx.RunResult.get_denied_target] was refused, in words (for
 * example `not approved for this execution`, or the address rule that
 * refused it), or %NULL.
 *
 * Deprecated in favour of [method@Sbx.RunResult.get_denials] (kept working).
 *
 * Returns: (nullable): the reason
 *
 * Since: 0.1
 */
const char *
sbx_run_result_get_denial_reason (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->denial_reason;
}

void
sbx_run_result_set_denials (SbxRunResult *self,
                            SbxDenialLog *log)
{
  g_return_if_fail (self != NULL);

  g_ptr_array_unref (self->denials);
  self->denials = sbx_denial_log_snapshot (log);
  self->denials_dropped = sbx_denial_log_get_dropped (log);
}

/**
 * sbx_run_result_get_denials:
 * @self: a [struct@Sbx.RunResult]
 *
 * Every distinct refusal of this run, in the order first seen: each
 * [struct@Sbx.Denial] carries how many times it was tried and the grant
 * that would open it (or why none can).  The list is bounded (at most 256
 * entries): a tool looping on refused attempts only raises counts, and
 * distinct refusals past the bound are counted by
 * [method@Sbx.RunResult.get_denials_dropped] instead of kept.
 *
 * Returns: (transfer none) (element-type SbxDenial): the denials (possibly
 *   empty, never %NULL)
 *
 * Since: 0.2
 */
GPtrArray *
sbx_run_result_get_denials (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->denials;
}

/**
 * sbx_run_result_get_denials_dropped:
 * @self: a [struct@Sbx.RunResult]
 *
 * How many refusals of distinct targets did not fit in
 * [method@Sbx.RunResult.get_denials] once it was full.  Non-zero means the
 * list overflowed and is incomplete.
 *
 * Returns: the refusals not listed (0: the list is complete)
 *
 * Since: 0.2
 */
guint64
sbx_run_result_get_denials_dropped (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->denials_dropped;
}

void
sbx_run_result_set_spawn (SbxRunResult     *self,
                          SbxCompileReport *report,
                          SbxLevel          level,
                          SbxGuarantees     guarantees)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (report != NULL);

  g_clear_pointer (&self->spawn_report, sbx_compile_report_unref);
  self->spawn_report = sbx_compile_report_ref (report);
  self->spawn_level = level;
  self->spawn_guarantees = guarantees;
}

/**
 * sbx_run_result_get_spawn_report:
 * @self: a [struct@Sbx.RunResult]
 *
 * Returns the compile report of this run's spawn: what held for this run,
 * after its grants and its egress route (scope %SBX_REPORT_SCOPE_RUN).  It
 * is the executor's report ([method@Sbx.Executor.get_report], what a run
 * without grants gets) unless the run's grants changed the policy; then it
 * is the report of the spec compiled for this run alone, without the
 * guarantees a grant took away and with an entry naming that grant.  A
 * wrapper that decides on what a run had reads this one.
 *
 * Returns: (transfer none): the run's report
 *
 * Since: 0.2
 */
SbxCompileReport *
sbx_run_result_get_spawn_report (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->spawn_report;
}

/**
 * sbx_run_result_get_spawn_level:
 * @self: a [struct@Sbx.RunResult]
 *
 * Returns the confinement level of this run's spawn (the level of
 * [method@Sbx.RunResult.get_spawn_report]; [method@Sbx.Executor.get_level]
 * is the executor's, for a run without grants).
 *
 * Returns: the level
 *
 * Since: 0.2
 */
SbxLevel
sbx_run_result_get_spawn_level (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, SBX_LEVEL_NONE);

  return self->spawn_level;
}

/**
 * sbx_run_result_get_spawn_guarantees:
 * @self: a [struct@Sbx.RunResult]
 *
 * Returns the guarantees that held for this run's spawn, after its grants
 * and egress route: [method@Sbx.Executor.get_guarantees] less what a grant
 * took away (a host grant may take `read-boundary` or `write-boundary`, a
 * `network.broad.v1` grant takes `network-boundary` and `address-network`).
 *
 * Returns: the guarantees
 *
 * Since: 0.2
 */
SbxGuarantees
sbx_run_result_get_spawn_guarantees (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, SBX_GUARANTEE_NONE);

  return self->spawn_guarantees;
}

void
sbx_run_result_set_stage (SbxRunResult *self,
                          const char   *id,
                          const char   *dir)
{
  g_free (self->stage_id);
  g_free (self->stage_dir);
  self->stage_id = g_strdup (id);
  self->stage_dir = g_strdup (dir);
}

/**
 * sbx_run_result_get_stage_id:
 * @self: a run result
 *
 * The stage a staged run ([method@Sbx.RunOptions.set_staged]) wrote
 * into; pass it to [func@Sbx.Changes.open].
 *
 * Returns: (nullable): the stage's ID, or %NULL when the run was not staged
 *
 * Since: 0.2
 */
const char *
sbx_run_result_get_stage_id (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->stage_id;
}

/**
 * sbx_run_result_get_stage_dir:
 * @self: a run result
 *
 * Where the stage of a staged run lives (a 0700 directory of the caller's).
 *
 * Returns: (nullable) (type filename): the stage's directory, or %NULL when
 *   the run was not staged
 *
 * Since: 0.2
 */
const char *
sbx_run_result_get_stage_dir (SbxRunResult *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->stage_dir;
}
