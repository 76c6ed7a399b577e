/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fixtures the registry tests share (tests/registry/): the mock plugins
 * of tests/plugins/ found through SBX_TEST_MOCK_PLUGIN_DIR, their call
 * counters, selection and compile shorthands, scratch directories.
 */
#pragma once

#include <sbx/sbx.h>

#include "sbx-compile-report-private.h"
#include "sbx-plugin-private.h"
#include "sbx-registry-private.h"
#include "executor-test-util.h"

/* Required guarantees of the embedded default profile: host read/write and
 * network denied, env scrubbed. */
#define DEFAULT_SANDBOXED_REQUIRED \
  (SBX_GUARANTEE_ENV_SCRUB | SBX_GUARANTEE_READ_BOUNDARY | SBX_GUARANTEE_WRITE_BOUNDARY | \
   SBX_GUARANTEE_NETWORK_BOUNDARY)

/* How many threads the concurrency cases run at once. */
#define N_THREADS 8

/* The build directory of mock @name, and its module file.  A registry of
 * exactly some mocks: etu_registry ("ok", ..., NULL). */
char        *rtu_mock_dir           (const char        *name);
char        *rtu_mock_file          (const char        *name);
/* The index of plugin @name in the registry's listing, or -1. */
int          rtu_find_plugin        (SbxRegistry       *registry,
                                     const char        *name);
/* The index of rejected candidate @name in @report, or -1. */
int          rtu_find_rejected      (SbxCompileReport  *report,
                                     const char        *name);
/* How often mock-ok's (mock-contract-breaker's) code was called: their own
 * counters, process-wide; 0 when the mock is not loaded. */
unsigned     rtu_mock_ok_count      (const char        *what);
unsigned     rtu_mock_breaker_count (const char        *what);
/* Selects a backend with the embedded defaults; "" (not NULL) as the forced
 * backend so the test's own environment never decides.  The frozen report
 * goes to @out_report when that is not NULL. */
SbxBackend  *rtu_select_or_fail     (SbxRegistry       *registry,
                                     gboolean           unconfined,
                                     SbxGuarantees      required,
                                     const char        *forced,
                                     SbxCompileReport **out_report,
                                     GError           **error);
/* A minimal policy for compile (the mock backends look at little more than
 * the sizes): no rule, network denied, @required guarantees. */
EtuPolicy   *rtu_policy_new         (SbxGuarantees      required);
/* A copy of mock-ok's file in @tmpdir with @mode. */
char        *rtu_copy_mock_ok       (const char        *tmpdir,
                                     mode_t             mode);
/* A fresh 0755 scratch directory; removed (asserted gone) by
 * rtu_remove_tree(). */
char        *rtu_make_tmpdir        (void);
void         rtu_remove_tree        (const char        *dir);

/* Each file's cases, registered by test-registry.c's main(). */
void registry_tests_add_loader  (void);
void registry_tests_add_select  (void);
void registry_tests_add_backend (void);
void registry_tests_add_report  (void);
