/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The build-time seccomp table (compile once) against run-time generation:
 * for every option shape the rules distinguish, and for options that
 * normalise to one (Landlock ABIs, non-canonical booleans), the program
 * sbx_seccomp_program_new() takes from the table is the one libseccomp
 * generates now from the same rules, instruction for instruction, rule for
 * rule, with the same reports.  And the run-time check refuses a damaged
 * program.  (What each program denies is tests/linux/test-seccomp.c's and
 * tests/linux/test-linux-entry-paths.c's: they load the table's programs.)
 */
#include "sbx-seccomp.h"
#include "sbx-seccomp-private.h"

#include <string.h>
#include <gio/gio.h>
#include <linux/seccomp.h>
#include <seccomp.h>

static void
collect_report (void *data, const char *feature, uint32_t status, const char *detail)
{
  g_string_append_printf (data, "%s %u %s\n", feature, status, detail != NULL ? detail : "");
}

static void
assert_same_program (const SbxSeccompProgram *table,
                     const SbxSeccompProgram *generated)
{
  size_t n_table, n_generated, n_rules_table, n_rules_generated;
  const struct sock_filter *a = sbx_seccomp_program_filter (table, &n_table);
  const struct sock_filter *b = sbx_seccomp_program_filter (generated, &n_generated);
  const SbxSeccompRule *ra = sbx_seccomp_program_rules (table, &n_rules_table);
  const SbxSeccompRule *rb = sbx_seccomp_program_rules (generated, &n_rules_generated);

  g_assert_cmpuint (n_table, ==, n_generated);
  g_assert_cmpuint (n_table, >, 0);
  g_assert_cmpmem (a, n_table * sizeof a[0], b, n_generated * sizeof b[0]);
  g_assert_cmphex (sbx_seccomp_program_enforces (table), ==, sbx_seccomp_program_enforces (generated));
  g_assert_cmpstr (sbx_seccomp_program_arches (table), ==, sbx_seccomp_program_arches (generated));
  g_assert_cmpuint (n_rules_table, ==, n_rules_generated);
  for (size_t i = 0; i < n_rules_table; i++)
    {
      g_assert_cmpstr (ra[i].name, ==, rb[i].name);
      g_assert_cmpint (ra[i].err, ==, rb[i].err);
      g_assert_cmpint (ra[i].multiplexer, ==, rb[i].multiplexer);
      g_assert_cmpuint (ra[i].n_args, ==, rb[i].n_args);
      for (guint k = 0; k < ra[i].n_args; k++)
        {
          g_assert_cmpuint (ra[i].args[k].arg, ==, rb[i].args[k].arg);
          g_assert_cmpint (ra[i].args[k].op, ==, rb[i].args[k].op);
          g_assert_cmphex (ra[i].args[k].mask, ==, rb[i].args[k].mask);
          g_assert_cmphex (ra[i].args[k].value, ==, rb[i].args[k].value);
        }
    }
}

/* Every shape the rules distinguish: the table has a program, it is the one
 * libseccomp generates now, and it reports the same. */
static void
test_table_matches_generation (void)
{
  static const uint32_t modes[] = { SBX_NET_MODE_DENY, SBX_NET_MODE_OPEN, SBX_NET_MODE_PORTS, SBX_NET_MODE_PROXY };
  guint compared = 0;

  if (sbx_seccomp_n_precompiled == 0)
    {
      g_test_skip ("this build could not run sbx-seccomp-gen (a cross build without an exe_wrapper): "
                   "every program is generated at run time");
      return;
    }
  for (int rung = 1; rung <= 2; rung++)
    for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
      for (int truncate = 0; truncate <= 1; truncate++)
        for (int unix_terminal = 0; unix_terminal < 4; unix_terminal++)
          {
            int allow_unix = unix_terminal / 2, terminal = unix_terminal % 2;
            SbxSeccompOptions options = { rung, modes[m], truncate, allow_unix, terminal };
            g_autoptr(GString) table_report = g_string_new (NULL);
            g_autoptr(GString) generated_report = g_string_new (NULL);
            SbxLinuxReporter reporter = { collect_report, table_report };
            SbxLinuxReporter generated_reporter = { collect_report, generated_report };
            g_autoptr(GError) error = NULL;
            g_autoptr(SbxSeccompProgram) table = sbx_seccomp_program_new (&options, &reporter, &error);
            g_autoptr(SbxSeccompProgram) generated = NULL;

            g_test_message ("rung %d, net mode %u, truncate rules %d, unix %d, caller's terminal %d", rung,
                            modes[m], truncate, allow_unix, terminal);
            g_assert_no_error (error);
            g_assert_nonnull (table);
            g_assert_true (sbx_seccomp_program_is_precompiled (table));
            generated = sbx_seccomp_program_generate (&options, &error);
            g_assert_no_error (error);
            g_assert_nonnull (generated);
            g_assert_false (sbx_seccomp_program_is_precompiled (generated));
            assert_same_program (table, generated);
            /* The reports come from the program, not from where it came
             * from. */
            sbx_seccomp_program_report (generated, &generated_reporter);
            g_assert_cmpstr (table_report->str, !=, "");
            g_assert_cmpstr (table_report->str, ==, generated_report->str);
            compared++;
          }
  g_assert_cmpuint (compared, ==, 2 * 4 * 2 * 2 * 2);
}

/* Options that are not in normal form (every Landlock ABI 0..9, a TRUE
 * that is not 1) get the program of their shape, worked out here
 * independently of normalize_options(): truncation rules exactly for ABI 1
 * and 2; the booleans (unix sockets, the caller's terminal shared) by
 * truth. */
static void
test_table_normalises (void)
{
  static const uint32_t modes[] = { SBX_NET_MODE_DENY, SBX_NET_MODE_OPEN, SBX_NET_MODE_PORTS, SBX_NET_MODE_PROXY };
  static const gboolean unix_values[] = { FALSE, TRUE, 2 };

  if (sbx_seccomp_n_precompiled == 0)
    {
      g_test_skip ("this build has no seccomp table");
      return;
    }
  for (int rung = 1; rung <= 2; rung++)
    for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
      for (int abi = 0; abi <= 9; abi++)
        for (guint ut = 0; ut < G_N_ELEMENTS (unix_values) * G_N_ELEMENTS (unix_values); ut++)
          {
            guint u = ut / G_N_ELEMENTS (unix_values), t = ut % G_N_ELEMENTS (unix_values);
            SbxSeccompOptions options = { rung, modes[m], abi, unix_values[u], unix_values[t] };
            SbxSeccompOptions shape = { rung, modes[m], abi == 1 || abi == 2, unix_values[u] != FALSE,
                                        unix_values[t] != FALSE };
            g_autoptr(GError) error = NULL;
            g_autoptr(SbxSeccompProgram) program = sbx_seccomp_program_new (&options, NULL, &error);
            g_autoptr(SbxSeccompProgram) expected = sbx_seccomp_program_new (&shape, NULL, &error);

            g_assert_no_error (error);
            g_assert_nonnull (program);
            g_assert_nonnull (expected);
            g_assert_true (sbx_seccomp_program_is_precompiled (program));
            assert_same_program (program, expected);
            g_assert_cmpint ((sbx_seccomp_program_enforces (program) & SBX_SECCOMP_ENFORCES_TRUNCATE_DENIED) != 0,
                             ==, abi == 1 || abi == 2);
            g_assert_cmpint ((sbx_seccomp_program_enforces (program) & SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED) != 0,
                             ==, unix_values[u] == FALSE);
            g_assert_cmpint ((sbx_seccomp_program_enforces (program) & SBX_SECCOMP_ENFORCES_TERMINAL_SETTINGS_DENIED)
                             != 0, ==, unix_values[t] != FALSE);
          }
}

/* Options the rules do not know are refused before the table is asked. */
static void
test_table_refuses_bad_options (void)
{
  SbxSeccompOptions bad_rung = { 0, SBX_NET_MODE_DENY, 0, FALSE };
  SbxSeccompOptions bad_mode = { 1, SBX_NET_MODE_PROXY + 1, 0, FALSE };
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) error2 = NULL;

  g_assert_null (sbx_seccomp_program_new (&bad_rung, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_null (sbx_seccomp_program_new (&bad_mode, NULL, &error2));
  g_assert_error (error2, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
}

/* The run-time check: a table program passes, and each kind of damage it
 * looks for is refused with a message. */
static void
test_check_filter (void)
{
  SbxSeccompOptions options = { 1, SBX_NET_MODE_DENY, 7, FALSE };
  g_autoptr(SbxSeccompProgram) program = sbx_seccomp_program_generate (&options, NULL);
  g_autofree struct sock_filter *copy = NULL;
  g_autoptr(GError) error = NULL;
  size_t len;
  const struct sock_filter *filter;
  size_t jump = 0;

  g_assert_nonnull (program);
  filter = sbx_seccomp_program_filter (program, &len);
  g_assert_true (sbx_seccomp_check_filter (filter, len, &error));
  g_assert_no_error (error);

  copy = g_memdup2 (filter, len * sizeof filter[0]);
  /* the last conditional jump made to land one past the end */
  for (jump = len; jump-- > 0;)
    if (BPF_CLASS (copy[jump].code) == BPF_JMP && BPF_OP (copy[jump].code) != BPF_JA)
      break;
  g_assert_cmpuint (jump, <, len);
  g_assert_cmpuint (len - jump - 1, <=, 255);
  copy[jump].jt = (uint8_t) (len - jump - 1);
  g_assert_false (sbx_seccomp_check_filter (copy, len, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_FAILED);
  g_clear_error (&error);

  /* the end is not a return */
  memcpy (copy, filter, len * sizeof filter[0]);
  copy[len - 1].code = BPF_LD | BPF_W | BPF_ABS;
  g_assert_false (sbx_seccomp_check_filter (copy, len, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_FAILED);
  g_clear_error (&error);

  memcpy (copy, filter, len * sizeof filter[0]);
  /* not starting with the architecture load */
  copy[0].k = offsetof (struct seccomp_data, nr);
  g_assert_false (sbx_seccomp_check_filter (copy, len, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_FAILED);
  g_clear_error (&error);

  /* empty */
  g_assert_false (sbx_seccomp_check_filter (filter, 0, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_FAILED);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* Under qemu-user (the aarch64 CI phase) seccomp(2) does not reach a
   * kernel: the run-time generation needs the level a current kernel has,
   * as in test-seccomp. */
  if (g_getenv ("SBX_TEST_SECCOMP_API_LEVEL") != NULL)
    g_assert_cmpint (seccomp_api_set ((unsigned int) g_ascii_strtoull (g_getenv ("SBX_TEST_SECCOMP_API_LEVEL"),
                                                                       NULL, 10)), ==, 0);
  g_test_add_func ("/seccomp-table/matches-generation", test_table_matches_generation);
  g_test_add_func ("/seccomp-table/normalises", test_table_normalises);
  g_test_add_func ("/seccomp-table/refuses-bad-options", test_table_refuses_bad_options);
  g_test_add_func ("/seccomp-table/check-filter", test_check_filter);
  return g_test_run ();
}
