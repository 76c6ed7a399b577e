/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* See ask-test-util.h. */
#include "ask-test-util.h"

#include "sbx-decision-private.h"

AskTester
ask_tester_new (AskMode mode)
{
  AskTester tester = { mode, g_ptr_array_new_with_free_func (g_object_unref), 0, FALSE };

  return tester;
}

void
ask_tester_clear (AskTester *tester)
{
  g_clear_pointer (&tester->asked, g_ptr_array_unref);
}

void
ask_tester_answer (SbxDecisionRequest *request,
                   AskTester          *tester)
{
  g_assert_true (sbx_decision_request_is_pending (request));
  g_ptr_array_add (tester->asked, g_object_ref (request));
  switch (tester->mode)
    {
    case ASK_ONCE_THEN_DENY:
      if (tester->asked->len == 1)
        sbx_decision_request_allow_once (request);
      else
        sbx_decision_request_deny (request);
      break;
    case ASK_FOR_RUN_THEN_DENY:
      if (tester->asked->len == 1)
        sbx_decision_request_allow_for_run (request);
      else
        sbx_decision_request_deny (request);
      break;
    case ASK_DENY:
      sbx_decision_request_deny (request);
      break;
    case ASK_KEEP:
    default:
      break;
    }
}

static void
on_func (SbxDecisionRequest *request,
         gpointer            tester)
{
  ask_tester_answer (request, tester);
}

void
ask_tester_on_signal (SbxProcess         *process,
                      SbxDecisionRequest *request,
                      gpointer            tester)
{
  (void) process;
  ask_tester_answer (request, tester);
}

const char *
ask_tester_grant_target (AskTester *tester,
                         guint      i)
{
  return sbx_denial_get_grant_target (sbx_decision_request_get_denial (tester->asked->pdata[i]));
}

/* ASK_KEEP with @want: allows the one question once @want requests wait
 * on it (the count grows on the mechanism's thread: looked at every
 * 10 ms). */
static gboolean
answer_when_merged (gpointer data)
{
  AskTester *tester = data;
  SbxDecisionRequest *request;

  if (tester->asked->len == 0)
    return G_SOURCE_CONTINUE;
  request = tester->asked->pdata[0];
  if (sbx_decision_broker_get_n_waiting (sbx_decision_request_get_broker (request)) < tester->want)
    return G_SOURCE_CONTINUE;
  g_assert_cmpuint (sbx_decision_broker_get_n_asked (sbx_decision_request_get_broker (request)), ==, 1);
  sbx_decision_request_allow_once (request);
  tester->answered = TRUE;
  return G_SOURCE_REMOVE;
}

static void
run_done (GObject      *source,
          GAsyncResult *result,
          gpointer      data)
{
  SbxRunResult **out = data;
  g_autoptr(GError) error = NULL;

  *out = sbx_executor_run_finish (SBX_EXECUTOR (source), result, &error);
  g_assert_no_error (error);
}

char *
ask_run_python (SbxExecutor       *executor,
                const char        *cwd,
                const char        *script,
                const char *const *args,
                AskTester         *tester,
                GTimeSpan          timeout,
                SbxRunResult     **out_result)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) argv = NULL;
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  SbxRunResult *result = NULL;
  GBytes *bytes;
  gsize len;
  const char *data;
  char *out;

  g_strv_builder_add_many (builder, "/usr/bin/python3", "-c", script, NULL);
  g_strv_builder_addv (builder, (const char **) args);
  argv = g_strv_builder_end (builder);
  sbx_run_options_set_ask (options, TRUE);
  if (timeout > 0)
    sbx_run_options_set_ask_timeout (options, timeout);
  sbx_run_options_set_decision_func (options, on_func, tester, NULL);
  if (tester->mode == ASK_KEEP && tester->want > 0)
    g_timeout_add (10, answer_when_merged, tester);
  sbx_executor_run_async (executor, cwd, (const char *const *) argv, options, NULL, run_done, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  bytes = sbx_run_result_get_output (result);
  data = g_bytes_get_data (bytes, &len);
  out = g_strndup (data, len);
  g_test_message ("%s", out);
  if (out_result != NULL)
    *out_result = result;
  else
    sbx_run_result_unref (result);
  return out;
}

static void
wait_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (sbx_process_wait_finish (SBX_PROCESS (source), result, &error));
  g_assert_no_error (error);
  *(gboolean *) data = TRUE;
}

void
ask_wait_process (SbxProcess *process)
{
  gboolean done = FALSE;

  sbx_process_wait_async (process, NULL, wait_cb, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}
