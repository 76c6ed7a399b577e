/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tiny report sink shared by the modules of the Linux backend, so each
 * module can be unit-tested without a host.  The plugin glue forwards to
 * host->report() of the current SbxHostCall.
 */
#pragma once

#include <stdint.h>

typedef struct
{
  /* @status is SBX_ABI_REPORT_*; @detail may be NULL. */
  void  (*report) (void *data, const char *feature, uint32_t status, const char *detail);
  void   *data;
} SbxLinuxReporter;

static inline void
sbx_linux_report (const SbxLinuxReporter *reporter,
                  const char             *feature,
                  uint32_t                status,
                  const char             *detail)
{
  if (reporter != NULL && reporter->report != NULL)
    reporter->report (reporter->data, feature, status, detail);
}
