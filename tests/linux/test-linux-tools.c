/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Real tools work under the default profile (workspace read/write, host
 * denied, network denied, isolated HOME and TMPDIR) on both rungs: sh and
 * coreutils, grep, sed, find, tar, python3, git init/add/commit, make and
 * gcc compiling and running a small C program, ">/dev/null", "$TMPDIR".
 */
#include "backend-test-util.h"
#include "executor-test-util.h"

#include <string.h>
#include <unistd.h>

typedef struct
{
  char             *workspace;
  LinuxTestPolicy  *policy;
  LinuxTestBackend *backend;
} Fixture;

static gboolean
fixture_setup (Fixture    *fx,
               const char *rung)
{
  g_autofree char *why = NULL;

  if (!linux_test_have_rung (rung, &why))
    {
      g_test_skip (why);
      return FALSE;
    }
  fx->workspace = etu_make_tmpdir ("sbx-tools-XXXXXX");
  fx->policy = linux_test_policy_new (fx->workspace, 2, 2, 0, 0);
  linux_test_policy_set_limits (fx->policy, 1024, G_GUINT64_CONSTANT (4) << 30, 0);
  fx->backend = linux_test_backend_new (rung);
  g_assert_cmpint (linux_test_backend_compile (fx->backend, linux_test_policy_get (fx->policy)), ==,
                   SBX_STATUS_OK);
  return TRUE;
}

static void
fixture_teardown (Fixture *fx)
{
  g_clear_pointer (&fx->backend, linux_test_backend_free);
  g_clear_pointer (&fx->policy, linux_test_policy_free);
  if (fx->workspace != NULL)
    etu_rm_rf (fx->workspace);
  g_clear_pointer (&fx->workspace, g_free);
}

typedef struct
{
  const char *name;
  const char *script;
  const char *expect;   /* exact stdout */
  gboolean    needs;    /* tool is required (TRUE) or skipped when missing */
  const char *program;  /* checked with g_find_program_in_path */
} ToolCase;

static const ToolCase tool_cases[] = {
  { "sh-coreutils",
    "set -e; mkdir -p a/b; echo hello > a/b/f; cp a/b/f g; mv g h; ls a/b; cat h; wc -c < h; "
    "sort -r <<EOF\nx\ny\nEOF\n"
    "rm -r a; test ! -e a && echo removed; date +%Y >/dev/null; id -un >/dev/null; "
    "chmod +x h; stat -c %A h | cut -c4",
    "f\nhello\n6\ny\nx\nremoved\nx\n", TRUE, "sh" },
  { "grep-sed",
    "printf 'alpha\\nbeta\\ngamma\\n' > f; grep -n a f | head -2; sed -e 's/beta/BETA/' -i f; grep -c BETA f",
    "1:alpha\n2:beta\n1\n", TRUE, "grep" },
  { "find",
    "mkdir -p src/x; touch src/x/a.c src/b.c src/c.h; find . -name '*.c' | sort",
    "./src/b.c\n./src/x/a.c\n", TRUE, "find" },
  { "tar",
    "mkdir -p d/e; echo data > d/e/f; tar -cf a.tar d; rm -r d; tar -xf a.tar; cat d/e/f; "
    "tar -czf b.tgz d && tar -tzf b.tgz | sort | tail -1",
    "data\nd/e/f\n", TRUE, "tar" },
  { "python3",
    "python3 -c 'import json, tempfile, os, subprocess, hashlib\n"
    "p = tempfile.mkstemp()[1]\n"
    "print(p.startswith(os.environ[\"TMPDIR\"]), json.dumps({\"a\": 1}))\n"
    "print(subprocess.run([\"echo\", \"sub\"], capture_output=True, text=True).stdout.strip())\n"
    "print(hashlib.sha256(b\"x\").hexdigest()[:8])'",
    "True {\"a\": 1}\nsub\n2d711642\n", TRUE, "python3" },
  { "git",
    "set -e; git init -q repo; cd repo; echo hi > f; git add f; "
    "git -c user.name=T -c user.email=t@example.org commit -q -m first; "
    "git log --format=%s; git status --porcelain | wc -l",
    "first\n0\n", TRUE, "git" },
  { "make-gcc",
    "set -e; printf '#include <stdio.h>\\nint main(void){puts(\"compiled\");return 0;}\\n' > hello.c; "
    "printf 'hello: hello.c\\n\\tgcc -O2 -o hello hello.c\\n' > Makefile; "
    "make -s; ./hello",
    "compiled\n", TRUE, "gcc" },
  { "dev-null-tmpdir",
    "echo gone > /dev/null; cat /dev/null; echo x > \"$TMPDIR/t\"; cat \"$TMPDIR/t\"; "
    "mktemp -p \"$TMPDIR\" >/dev/null && echo mktemp-ok; echo home > \"$HOME/h\" && cat \"$HOME/h\"; "
    "head -c 8 /dev/zero | wc -c",
    "x\nmktemp-ok\nhome\n8\n", TRUE, "mktemp" },
};

static void
test_tool (gconstpointer data)
{
  const char *const *pair = data;
  const char *rung = pair[0];
  const ToolCase *tc = (const ToolCase *) (const void *) pair[1];
  g_autofree char *program = g_find_program_in_path (tc->program);
  Fixture fx = { 0 };
  g_autoptr(LinuxTestRun) run = NULL;

  if (program == NULL)
    {
      g_test_skip_printf ("%s is not installed (scripts/setup.sh installs it)", tc->program);
      return;
    }
  if (!fixture_setup (&fx, rung))
    return;
  run = linux_test_backend_sh (fx.backend, fx.policy, fx.workspace, tc->script);
  g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
  g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
  if (run->exit.code != 0)
    g_test_message ("%s failed; stderr: %s", tc->name, run->err);
  g_assert_cmpuint (run->exit.kind, ==, SBX_EXIT_EXITED);
  g_assert_cmpint (run->exit.code, ==, 0);
  g_assert_cmpstr (run->out, ==, tc->expect);
  fixture_teardown (&fx);
}

int
main (int argc, char **argv)
{
  static const char *const rungs[] = { "linux-userns", "linux-landlock" };

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  for (gsize r = 0; r < G_N_ELEMENTS (rungs); r++)
    for (gsize i = 0; i < G_N_ELEMENTS (tool_cases); i++)
      {
        g_autofree char *path = g_strdup_printf ("/linux/%s/tools/%s", rungs[r], tool_cases[i].name);
        const char **pair = g_new (const char *, 2);

        pair[0] = rungs[r];
        pair[1] = (const char *) (const void *) &tool_cases[i];
        g_test_add_data_func_full (path, pair, test_tool, g_free);
      }
  return g_test_run ();
}
