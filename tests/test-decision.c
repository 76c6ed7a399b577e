/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The decision broker on its own (core/sbx-decision.c), without a sandbox:
 *  - a question is delivered once on the broker's context, identical
 *    requests merge into it and every one gets the answer exactly once;
 *  - allow once answers the merged requests and the next one asks again;
 *    allow for the run answers later identical requests without asking;
 *  - each approval is one spent line; a denial is none;
 *  - no delivery, the timeout and the close deny; answers after that do
 *    nothing;
 *  - a flood of distinct targets: at most SBX_DECISION_MAX_PENDING wait,
 *    the rest are refused at once (bounded).
 */
#include <sbx/sbx.h>

#include "sbx-decision-private.h"

typedef struct
{
  gint    answers;   /* (atomic): the timer's thread answers too */
  guint32 last;
  guint   denied;
} Ticket;

static void
answer (void    *ticket,
        guint32  decision)
{
  Ticket *t = ticket;

  t->last = decision;
  if (decision == SBX_DECISION_DENY)
    t->denied++;
  g_atomic_int_inc (&t->answers);
}

static SbxDenial *
denial_for (const char *target)
{
  return sbx_denial_new (SBX_DENIAL_OPERATION_CONNECT, target + 4, "egress-proxy",
                         SBX_GRANT_CLASS_NETWORK_PROXY_TARGET, target, "network is gated");
}

static void
deliver_keep (SbxDecisionRequest *request,
              gpointer            data)
{
  g_ptr_array_add (data, g_object_ref (request));
}

static SbxDecisionBroker *
broker_keeping (GPtrArray *asked,
                GTimeSpan  timeout)
{
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  SbxDecisionBroker *broker;

  sbx_run_options_set_ask (options, TRUE);
  if (timeout > 0)
    sbx_run_options_set_ask_timeout (options, timeout);
  broker = sbx_decision_broker_new (sbx_run_options_peek_ask (options), g_main_context_default ());
  sbx_decision_broker_set_deliver (broker, g_main_context_default (), deliver_keep, g_ptr_array_ref (asked),
                                   (GDestroyNotify) g_ptr_array_unref);
  return broker;
}

static void
drain (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static void
test_merge_and_once (void)
{
  g_autoptr(GPtrArray) asked = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SbxDecisionBroker) broker = broker_keeping (asked, 0);
  g_autoptr(SbxDenial) d = denial_for ("tcp:127.0.0.1:80");
  g_auto(GStrv) spent = NULL;
  Ticket t[4] = { 0 };

  for (guint i = 0; i < 3; i++)
    sbx_decision_broker_ask (broker, d, answer, &t[i]);
  drain ();
  g_assert_cmpuint (asked->len, ==, 1);
  g_assert_cmpuint (sbx_decision_broker_get_n_waiting (broker), ==, 3);
  g_assert_cmpstr (sbx_denial_get_grant_target (sbx_decision_request_get_denial (asked->pdata[0])), ==,
                   "tcp:127.0.0.1:80");
  sbx_decision_request_allow_once (asked->pdata[0]);
  for (guint i = 0; i < 3; i++)
    {
      g_assert_cmpint (t[i].answers, ==, 1);
      g_assert_cmpuint (t[i].last, ==, SBX_DECISION_ONCE);
    }
  /* answered: a second answer does nothing */
  sbx_decision_request_deny (asked->pdata[0]);
  g_assert_cmpint (t[0].answers, ==, 1);
  g_assert_false (sbx_decision_request_is_pending (asked->pdata[0]));
  /* once: the next request asks again */
  sbx_decision_broker_ask (broker, d, answer, &t[3]);
  drain ();
  g_assert_cmpuint (asked->len, ==, 2);
  sbx_decision_request_deny (asked->pdata[1]);
  g_assert_cmpuint (t[3].denied, ==, 1);
  spent = sbx_decision_broker_dup_spent (broker);
  g_assert_cmpstr (spent[0], ==, "network.proxy-target.v1 tcp:127.0.0.1:80: approved while running, once");
  g_assert_null (spent[1]);
  sbx_decision_broker_close (broker);
}

static void
test_for_run (void)
{
  g_autoptr(GPtrArray) asked = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SbxDecisionBroker) broker = broker_keeping (asked, 0);
  g_autoptr(SbxDenial) d = denial_for ("tcp:127.0.0.1:80");
  g_autoptr(SbxDenial) other = denial_for ("tcp:127.0.0.1:81");
  Ticket t[3] = { 0 };

  sbx_decision_broker_ask (broker, d, answer, &t[0]);
  drain ();
  sbx_decision_request_allow_for_run (asked->pdata[0]);
  g_assert_cmpuint (t[0].last, ==, SBX_DECISION_FOR_RUN);
  /* the same target: answered without a question; another one asks */
  sbx_decision_broker_ask (broker, d, answer, &t[1]);
  g_assert_cmpuint (t[1].last, ==, SBX_DECISION_FOR_RUN);
  sbx_decision_broker_ask (broker, other, answer, &t[2]);
  drain ();
  g_assert_cmpuint (asked->len, ==, 2);
  g_assert_cmpint (t[2].answers, ==, 0);
  /* the run's end denies what is pending, and every later request */
  sbx_decision_broker_close (broker);
  g_assert_cmpuint (t[2].denied, ==, 1);
  g_assert_false (sbx_decision_request_is_pending (asked->pdata[1]));
  sbx_decision_broker_ask (broker, other, answer, &t[2]);
  g_assert_cmpuint (t[2].denied, ==, 2);
  g_assert_cmpuint (sbx_decision_broker_get_n_asked (broker), ==, 2);
}

static void
test_no_delivery (void)
{
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(SbxDecisionBroker) broker = NULL;
  g_autoptr(SbxDenial) d = denial_for ("tcp:127.0.0.1:80");
  Ticket t = { 0 };

  sbx_run_options_set_ask (options, TRUE);
  broker = sbx_decision_broker_new (sbx_run_options_peek_ask (options), g_main_context_default ());
  sbx_decision_broker_ask (broker, d, answer, &t);
  g_assert_cmpuint (t.denied, ==, 1);
  g_assert_cmpuint (sbx_decision_broker_get_n_asked (broker), ==, 0);
  sbx_decision_broker_close (broker);
}

static void
test_timeout (void)
{
  g_autoptr(GPtrArray) asked = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SbxDecisionBroker) broker = broker_keeping (asked, 50 * G_TIME_SPAN_MILLISECOND);
  g_autoptr(SbxDenial) d = denial_for ("tcp:127.0.0.1:80");
  Ticket t = { 0 };
  gint64 deadline = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;

  sbx_decision_broker_ask (broker, d, answer, &t);
  /* the timer runs on its own thread: this context need not run */
  while (g_atomic_int_get (&t.answers) == 0 && g_get_monotonic_time () < deadline)
    g_usleep (1000);
  g_assert_cmpuint (t.denied, ==, 1);
  drain ();
  /* delivered after its timeout: no longer pending, so not asked */
  g_assert_cmpuint (asked->len, ==, 0);
  sbx_decision_broker_close (broker);
}

static void
test_flood (void)
{
  g_autoptr(GPtrArray) asked = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SbxDecisionBroker) broker = broker_keeping (asked, 0);
  g_autofree Ticket *t = g_new0 (Ticket, 1000);
  guint refused = 0;

  for (guint i = 0; i < 1000; i++)
    {
      g_autofree char *target = g_strdup_printf ("tcp:127.0.0.1:%u", 1000 + i);
      g_autoptr(SbxDenial) d = denial_for (target);

      sbx_decision_broker_ask (broker, d, answer, &t[i]);
    }
  for (guint i = 0; i < 1000; i++)
    refused += t[i].denied;
  g_assert_cmpuint (refused, ==, 1000 - SBX_DECISION_MAX_PENDING);
  g_assert_cmpuint (sbx_decision_broker_get_n_waiting (broker), ==, SBX_DECISION_MAX_PENDING);
  drain ();
  g_assert_cmpuint (asked->len, ==, SBX_DECISION_MAX_PENDING);
  sbx_decision_broker_close (broker);
  for (guint i = 0; i < 1000; i++)
    g_assert_cmpint (t[i].answers, ==, 1);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/decision/merge-and-once", test_merge_and_once);
  g_test_add_func ("/decision/for-run", test_for_run);
  g_test_add_func ("/decision/no-delivery", test_no_delivery);
  g_test_add_func ("/decision/timeout", test_timeout);
  g_test_add_func ("/decision/flood", test_flood);
  return g_test_run ();
}
