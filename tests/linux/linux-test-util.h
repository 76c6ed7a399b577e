/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the Landlock and seccomp unit tests: run a probe in a
 * forked child, optionally confined, and bring its result back; build
 * policies; scratch trees.
 */
#pragma once

#include <glib.h>
#include "executor-test-util.h"
#include "sbx-landlock.h"
#include "sbx-seccomp.h"

/* run_probe() results other than an errno value (0 = the probe succeeded) */
#define PROBE_SIGNALED(sig)     (1000 + (sig))
#define PROBE_SETUP_FAILED(err) (2000 + (err))
#define PROBE_NO_RESULT         3000

typedef int (*ProbeFunc) (gconstpointer data);

typedef struct
{
  const SbxLandlockPlan       *plan;      /* NULL: no Landlock */
  const SbxLandlockExtraRule  *extra;
  size_t                       n_extra;
  const SbxSeccompProgram     *program;   /* NULL: no seccomp */
  /* Runs in the child before the confinement; non-zero errno aborts with
   * PROBE_SETUP_FAILED. */
  int                        (*before) (gconstpointer data);
  gconstpointer                before_data;
} Confinement;

/* Fork, confine the child with @c (NULL: unconfined), run @probe there and
 * return its result (0 or an errno value), or a PROBE_* code. */
int run_probe (const Confinement *c, ProbeFunc probe, gconstpointer data);

/* Convenience: result name for assertion messages. */
const char *probe_result_name (int result);

#define assert_probe(res, expected)                                                 \
  G_STMT_START {                                                                    \
    int res_ = (res), exp_ = (expected);                                            \
    if (res_ != exp_)                                                               \
      {                                                                             \
        g_autofree char *msg_ = g_strdup_printf ("%s gave %s, expected %s", #res,   \
                                                 probe_result_name (res_),          \
                                                 probe_result_name (exp_));         \
        g_assertion_message (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC, msg_);    \
      }                                                                             \
  } G_STMT_END

/* Report capture */
typedef struct
{
  GPtrArray *entries;    /* "feature|status|detail" */
} TestReport;

void        test_report_init    (TestReport *r, SbxLinuxReporter *reporter);
void        test_report_clear   (TestReport *r);
/* The status of @feature, or 0 when absent; *detail (optional) borrowed. */
uint32_t    test_report_status  (TestReport *r, const char *feature, const char **detail);
void        test_report_dump    (TestReport *r);

/* Scratch directories: canonical, removed with the helper library's one
 * recursive delete. */
static inline char *
scratch_new (void)
{
  return etu_make_tmpdir ("sbx-lsm-XXXXXX");
}

static inline void
scratch_free (char *dir)
{
  etu_rm_rf (dir);
  g_free (dir);
}

static inline void
write_file (const char *path,
            const char *contents)
{
  g_free (etu_write_file (path, "", contents));
}

static inline char *
path_join (const char *a,
           const char *b)
{
  return g_build_filename (a, b, NULL);
}
