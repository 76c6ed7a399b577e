/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by the live-approval tests that run a probe with asking on
 * (test-ask-dns.c, linux/test-linux-unix-ask.c): a scripted answerer and a
 * run that collects the probe's output.
 */
#pragma once

#include <sbx/sbx.h>

G_BEGIN_DECLS

typedef enum
{
  ASK_ONCE_THEN_DENY,     /* allow the first question once, deny the rest */
  ASK_FOR_RUN_THEN_DENY,  /* allow the first for the run, deny the rest */
  ASK_DENY,
  ASK_KEEP,               /* keep every question (with @want: see below) */
} AskMode;

typedef struct
{
  AskMode     mode;
  GPtrArray  *asked;     /* SbxDecisionRequest (owned refs) */
  guint       want;      /* ASK_KEEP: allow the first once when this many wait on it */
  gboolean    answered;  /* ASK_KEEP with @want: it was */
} AskTester;

AskTester   ask_tester_new             (AskMode             mode);
void        ask_tester_clear           (AskTester          *tester);
/* Records @request and answers it as @tester's mode says. */
void        ask_tester_answer          (SbxDecisionRequest *request,
                                        AskTester          *tester);
/* SbxProcess::approval-requested for ask_tester_answer. */
void        ask_tester_on_signal       (SbxProcess         *process,
                                        SbxDecisionRequest *request,
                                        gpointer            tester);
/* The grant target of the @i-th question. */
const char *ask_tester_grant_target    (AskTester          *tester,
                                        guint               i);
/* Runs /usr/bin/python3 -c @script @args (through sbx_executor_run_async,
 * its questions answered by @tester on this thread; @timeout 0: the
 * default) and returns its output; its result in *@out_result
 * (nullable). */
char       *ask_run_python             (SbxExecutor        *executor,
                                        const char         *cwd,
                                        const char         *script,
                                        const char *const  *args,
                                        AskTester          *tester,
                                        GTimeSpan           timeout,
                                        SbxRunResult      **out_result);
/* Runs this thread's main context until @process was waited for. */
void        ask_wait_process           (SbxProcess         *process);

G_END_DECLS
