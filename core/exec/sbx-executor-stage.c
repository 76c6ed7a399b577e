/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Staged runs, the run engine's side (docs/staging.md): what is refused
 * before a stage is made, and what becomes of the stage after the run.
 * A staged run is never run unstaged: every refusal comes before the
 * spawn, and the backend refuses again what it cannot stage.
 */
#include "sbx-executor-impl-private.h"

#include "sbx-run-result-private.h"

SbxStage *
sbx_executor_stage_begin (SbxExecutor           *self,
                          const SbxStartRequest *rr,
                          const SbxAdmission    *admission,
                          GError               **error)
{
  const char *backend = sbx_backend_get_name (sbx_backend_spec_get_backend (admission->spec));

  /* What a grant opens for writing would bypass the stage. */
  if (admission->host_write || (admission->write_paths != NULL && admission->write_paths->len > 0)
      || (admission->write_trees != NULL && admission->write_trees->len > 0))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           "a staged run cannot take a grant that opens a path for writing");
      return NULL;
    }
  if (!sbx_backend_spec_can_stage (admission->spec))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "the backend “%s” cannot stage a run (staging needs a mount namespace for "
                   "its overlay: linux-userns); the run is refused rather than run unstaged",
                   backend);
      return NULL;
    }
  return sbx_stage_new (sbx_policy_get_abi (self->policy), backend, (const char *const *) rr->argv,
                        error);
}

void
sbx_executor_stage_end (SbxStage     *stage,
                        SbxRunResult *run_result)
{
  /* Without a result the caller never learns the stage's ID: a stage it
   * could not find would only be left behind. */
  if (run_result != NULL)
    sbx_run_result_set_stage (run_result, stage->id, stage->dir);
  else
    sbx_stage_remove_tree (stage->dir, NULL);
  sbx_stage_free (stage);
}
