/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * TEMPORARY: stand-ins for lsm's sbx-landlock.c and sbx-seccomp.c, built only
 * while those files are not in the tree (see meson.build).  They enforce
 * nothing and say so: the plan's enforcement bits are 0 and seccomp reports
 * itself unavailable, so the glue never claims what they do not do.
 */
#include <errno.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/landlock.h>

#include "sbx-linux-private.h"
#include "sbx-raw-syscall.h"

struct _SbxLandlockPlan
{
  int abi;
};

int
sbx_landlock_probe_abi (void)
{
  long r = syscall (__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

  return r < 0 ? 0 : (int) r;
}

SbxLandlockPlan *
sbx_landlock_plan_new (const SbxPolicyV1        *policy,
                       const SbxLandlockOptions *options,
                       const SbxLinuxReporter   *reporter,
                       GError                  **error)
{
  SbxLandlockPlan *plan = g_new0 (SbxLandlockPlan, 1);

  plan->abi = options->abi;
  sbx_linux_report (reporter, "landlock", SBX_ABI_REPORT_UNENFORCED,
                    "the Landlock module is not built into this tree yet");
  return plan;
}

void
sbx_landlock_plan_free (SbxLandlockPlan *plan)
{
  g_free (plan);
}

uint32_t
sbx_landlock_plan_enforces (const SbxLandlockPlan *plan)
{
  return 0;
}

uint64_t
sbx_landlock_plan_access_read_dir (const SbxLandlockPlan *plan)
{
  return 0;
}

uint64_t
sbx_landlock_plan_access_rw_dir (const SbxLandlockPlan *plan)
{
  return 0;
}

uint64_t
sbx_landlock_plan_access_rw_file (const SbxLandlockPlan *plan)
{
  return 0;
}

SBX_CHILD_FUNC int
sbx_landlock_plan_apply (const SbxLandlockPlan       *plan,
                         const SbxLandlockExtraRule  *extra,
                         size_t                       n_extra,
                         const char                 **failed_step)
{
  return 0;
}

gboolean
sbx_seccomp_available (void)
{
  return FALSE;
}

SbxSeccompProgram *
sbx_seccomp_program_new (const SbxSeccompOptions *options,
                         const SbxLinuxReporter  *reporter,
                         GError                 **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "seccomp module not built yet");
  return NULL;
}

void
sbx_seccomp_program_free (SbxSeccompProgram *program)
{
}

uint32_t
sbx_seccomp_program_enforces (const SbxSeccompProgram *program)
{
  return 0;
}

SBX_CHILD_FUNC int
sbx_seccomp_program_apply (const SbxSeccompProgram *program)
{
  return 0;
}
