/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <json-glib/json-glib.h>
#include <sbx/sbx.h>
#include <string.h>
#include <unistd.h>

#include "executor-test-util.h"

/* A tree: tmp/ws, tmp/dir, tmp/dir/sub, tmp/link -> dir, tmp/caf\u00e9, tmp/file. */
typedef struct
{
  char *tmp;
} Tree;

static void
tree_setup (Tree *tree)
{
  tree->tmp = etu_make_tmpdir ("sbx-test-json-XXXXXX");
  g_free (etu_mkdir (tree->tmp, "ws"));
  g_free (etu_mkdir (tree->tmp, "dir/sub"));
  g_free (etu_mkdir (tree->tmp, "caf\xc3\xa9"));
  g_free (etu_symlink (tree->tmp, "link", "dir"));
  g_free (etu_write_file (tree->tmp, "file", "x"));
}

static void
tree_teardown (Tree *tree)
{
  etu_rm_rf (tree->tmp);
  g_free (tree->tmp);
}

/* Replaces every "@T" with the tree root. */
static char *
expand (const Tree *tree,
        const char *text,
        gsize       len,
        gsize      *out_len)
{
  GString *out = g_string_new (NULL);

  for (gsize i = 0; i < len; i++)
    {
      if (i + 1 < len && text[i] == '@' && text[i + 1] == 'T')
        {
          g_string_append (out, tree->tmp);
          i++;
        }
      else
        g_string_append_c (out, text[i]);
    }
  *out_len = out->len;
  return g_string_free (out, FALSE);
}

/* ------------------------------------------------------------------------- */
/* One row per JSON error */

typedef struct
{
  const char     *name;
  const char     *text;
  gsize           len;        /* 0: strlen (text) */
  SbxProfileError code;
  const char     *prefix;     /* the message starts with this (member path) */
  const char     *contains;   /* and contains this, when set */
} ErrorRow;

#define WITH_NUL(s) s, sizeof (s) - 1
#define V "{\"version\":1,"

static const ErrorRow error_rows[] = {
  /* unix-sockets: "deny" or "allow" only (no grant class stands behind "gated") */
  { "unix-sockets/gated", V "\"unix-sockets\":\"gated\"}", 0, SBX_PROFILE_ERROR_INVALID, "unix-sockets:",
    "expected \"deny\" or \"allow\", got \"gated\"" },
  { "unix-sockets/boolean", V "\"unix-sockets\":true}", 0, SBX_PROFILE_ERROR_INVALID, "unix-sockets:",
    "expected a string" },
  /* denied-paths: "permission-denied" or "not-found"; the message names the
   * member and the value */
  { "denied-paths/word", V "\"denied-paths\":\"hidden\"}", 0, SBX_PROFILE_ERROR_INVALID, "denied-paths:",
    "expected \"permission-denied\" or \"not-found\", got \"hidden\"" },
  { "denied-paths/case", V "\"denied-paths\":\"Not-Found\"}", 0, SBX_PROFILE_ERROR_INVALID, "denied-paths:",
    "got \"Not-Found\"" },
  { "denied-paths/boolean", V "\"denied-paths\":true}", 0, SBX_PROFILE_ERROR_INVALID, "denied-paths:",
    "expected a string (\"permission-denied\" or \"not-found\"), got a boolean" },
  { "denied-paths/integer", V "\"denied-paths\":1}", 0, SBX_PROFILE_ERROR_INVALID, "denied-paths:",
    "expected a string" },
  { "denied-paths/null", V "\"denied-paths\":null}", 0, SBX_PROFILE_ERROR_INVALID, "denied-paths:",
    "expected a string" },
  /* host-sockets: absolute canonical paths (or "$NAME" of a set variable) */
  { "host-sockets/object", V "\"host-sockets\":{}}", 0, SBX_PROFILE_ERROR_INVALID, "host-sockets:",
    "expected an array" },
  { "host-sockets/number", V "\"host-sockets\":[1]}", 0, SBX_PROFILE_ERROR_INVALID, "host-sockets[0]:",
    "expected a string" },
  { "host-sockets/relative", V "\"host-sockets\":[\"run/x.sock\"]}", 0, SBX_PROFILE_ERROR_INVALID,
    "host-sockets[0] (run/x.sock):", "not absolute" },
  { "host-sockets/dotdot", V "\"host-sockets\":[\"/run/../x.sock\"]}", 0, SBX_PROFILE_ERROR_INVALID,
    "host-sockets[0] (/run/../x.sock):", "not canonical" },
  { "host-sockets/empty-component", V "\"host-sockets\":[\"/run//x.sock\"]}", 0, SBX_PROFILE_ERROR_INVALID,
    "host-sockets[0] (/run//x.sock):", "not canonical" },
  { "host-sockets/twice", V "\"host-sockets\":[\"/run/x.sock\",\"/run/x.sock\"]}", 0, SBX_PROFILE_ERROR_INVALID,
    "host-sockets[1] (/run/x.sock):", "named twice" },
  { "host-sockets/too-long", V "\"host-sockets\":[\"/0123456789012345678901234567890123456789012345678901234567890"
                               "123456789012345678901234567890123456789012345678901234567890\"]}", 0, SBX_PROFILE_ERROR_INVALID, "host-sockets[0] (", "at most 107" },
  { "host-sockets/unset-variable", V "\"host-sockets\":[\"$SBX_TEST_NO_SUCH_VARIABLE\"]}", 0,
    SBX_PROFILE_ERROR_INVALID, "host-sockets[0]:", "$SBX_TEST_NO_SUCH_VARIABLE is not set" },
  /* the object form: { "path", "access": "allow" | "gated" } */
  { "host-sockets/object-unknown-member", V "\"host-sockets\":[{\"path\":\"/run/x.sock\",\"mode\":1}]}", 0,
    SBX_PROFILE_ERROR_INVALID, "host-sockets[0]", "mode" },
  { "host-sockets/object-no-path", V "\"host-sockets\":[{\"access\":\"gated\"}]}", 0,
    SBX_PROFILE_ERROR_INVALID, "host-sockets[0]:", "missing member \"path\"" },
  { "host-sockets/object-path-number", V "\"host-sockets\":[{\"path\":7}]}", 0,
    SBX_PROFILE_ERROR_INVALID, "host-sockets[0].path:", "expected a string" },
  { "host-sockets/object-deny", V "\"host-sockets\":[{\"path\":\"/run/x.sock\",\"access\":\"deny\"}]}", 0,
    SBX_PROFILE_ERROR_INVALID, "host-sockets[0].access:", "names nothing" },
  { "host-sockets/object-bad-word", V "\"host-sockets\":[{\"path\":\"/run/x.sock\",\"access\":\"open\"}]}", 0,
    SBX_PROFILE_ERROR_INVALID, "host-sockets[0].access:", "\"open\"" },
  { "host-sockets/gated-and-allowed", V "\"host-sockets\":[\"/run/x.sock\",{\"path\":\"/run/x.sock\","
                                        "\"access\":\"gated\"}]}", 0, SBX_PROFILE_ERROR_INVALID, "host-sockets[1] (/run/x.sock):", "named twice" },
  { "host-sockets/gated-all-open", V "\"unix-sockets\":\"allow\",\"host-sockets\":[{\"path\":\"/run/x.sock\","
                                     "\"access\":\"gated\"}]}", 0, SBX_PROFILE_ERROR_INVALID, "host-sockets[0] (/run/x.sock):", "no grant could gate it" },
  { "host-sockets/gated-relative", V "\"host-sockets\":[{\"path\":\"x.sock\",\"access\":\"gated\"}]}", 0,
    SBX_PROFILE_ERROR_INVALID, "host-sockets[0] (x.sock):", "not absolute" },
  /* malformed */
  { "malformed/empty", "", 0, SBX_PROFILE_ERROR_PARSE, "(root): line 1, column 1:", "empty" },
  { "malformed/whitespace-only", " \n\t ", 0, SBX_PROFILE_ERROR_PARSE, "(root): line 2, column 3:", "empty" },
  { "malformed/truncated", "{\"version\":1", 0, SBX_PROFILE_ERROR_PARSE, "version: line 1, column 13:", "end of text" },
  { "malformed/missing-comma", "{\"version\":1 \"network\":\"deny\"}", 0, SBX_PROFILE_ERROR_PARSE,
    "version: line 1, column 14:", "expected ',' or '}'" },
  { "malformed/missing-colon", V "\"network\" \"deny\"}", 0, SBX_PROFILE_ERROR_PARSE, "network: line 1,", "expected ':'" },
  { "malformed/trailing-comma", V "}", 0, SBX_PROFILE_ERROR_PARSE, "(root): line 1, column 14:", "member name" },
  { "malformed/trailing-comma-array", V "\"roots\":[{\"path\":\"/\"},]}", 0, SBX_PROFILE_ERROR_PARSE, "roots[1]: line 1,",
    "expected a value" },
  { "malformed/single-quotes", "{'version':1}", 0, SBX_PROFILE_ERROR_PARSE, "(root): line 1, column 2:", "double quotes" },
  { "malformed/comment", "{\"version\":1} // x", 0, SBX_PROFILE_ERROR_PARSE, "(root): line 1, column 15:", "'/'" },
  { "malformed/second-object", "{\"version\":1}{}", 0, SBX_PROFILE_ERROR_PARSE, "(root):", "after the profile object" },
  { "malformed/bad-literal", V "\"ack-unconfined\":tru}", 0, SBX_PROFILE_ERROR_PARSE, "ack-unconfined: line 1,", NULL },
  { "malformed/bad-escape", V "\"network\":\"\\x\"}", 0, SBX_PROFILE_ERROR_PARSE, "network: line 1,", "invalid escape" },
  { "malformed/short-unicode-escape", V "\"network\":\"\\u12\"}", 0, SBX_PROFILE_ERROR_PARSE, "network: line 1,", "hex" },
  { "malformed/raw-control-character", V "\"network\":\"de\tny\"}", 0, SBX_PROFILE_ERROR_PARSE, "network: line 1,",
    "control character 0x09" },
  { "malformed/raw-newline-in-string", V "\n\"network\":\"de\nny\"}", 0, SBX_PROFILE_ERROR_PARSE, "network: line 2,", NULL },
  { "malformed/leading-zero", "{\"version\":01}", 0, SBX_PROFILE_ERROR_PARSE, "version: line 1,", NULL },
  { "malformed/bare-minus", "{\"version\":-}", 0, SBX_PROFILE_ERROR_PARSE, "version: line 1,", "malformed number" },
  { "malformed/fraction-without-digits", "{\"version\":1.}", 0, SBX_PROFILE_ERROR_PARSE, "version: line 1,", "'.'" },
  { "malformed/unterminated-string", V "\"network\":\"deny", 0, SBX_PROFILE_ERROR_PARSE, "network: line 1,", "unterminated" },
  { "malformed/unterminated-name", V "\"netw", 0, SBX_PROFILE_ERROR_PARSE, "(root): line 1,", "unterminated member name" },
  { "malformed/closing-bracket", "]", 0, SBX_PROFILE_ERROR_PARSE, "(root): line 1, column 1:", "expected a value" },
  { "malformed/not-utf8-outside-strings", WITH_NUL ("{\"version\":1}\xff"), SBX_PROFILE_ERROR_PARSE, "(root): line 1,",
    "byte 0xff" },
  { "malformed/nul-outside-strings", WITH_NUL ("{\"version\":1}\0"), SBX_PROFILE_ERROR_PARSE, "(root): line 1,", "byte 0x00" },
  { "malformed/too-deep", V "\"roots\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}", 0,
    SBX_PROFILE_ERROR_PARSE, "roots[0][0]", "nested deeper than 32 levels" },

  /* unknown members, at every level */
  { "unknown/root", V "\"netwrok\":\"deny\"}", 0, SBX_PROFILE_ERROR_INVALID, "(root): unknown member \"netwrok\"", NULL },
  { "unknown/workspace", V "\"workspace\":{\"raed\":\"allow\"}}", 0, SBX_PROFILE_ERROR_INVALID,
    "workspace: unknown member \"raed\"", NULL },
  { "unknown/host", V "\"host\":{\"read\":\"deny\",\"exec\":\"deny\"}}", 0, SBX_PROFILE_ERROR_INVALID,
    "host: unknown member \"exec\"", NULL },
  { "unknown/root-entry", V "\"roots\":[{\"path\":\"/\"},{\"path\":\"/usr\",\"mode\":\"ro\"}]}", 0, SBX_PROFILE_ERROR_INVALID,
    "roots[1]: unknown member \"mode\"", NULL },
  { "unknown/limits", V "\"limits\":{\"cpu\":1}}", 0, SBX_PROFILE_ERROR_INVALID, "limits: unknown member \"cpu\"", NULL },
  { "unknown/odd-name", V "\"a\\\"b\\n\":1}", 0, SBX_PROFILE_ERROR_INVALID, "(root): unknown member \"a\\\"b\\u000a\"", NULL },
  { "unknown/first-in-document-order", V "\"zzz\":1,\"aaa\":2}", 0, SBX_PROFILE_ERROR_INVALID,
    "(root): unknown member \"zzz\"", NULL },

  /* wrong types, member by member */
  { "type/root", "[]", 0, SBX_PROFILE_ERROR_INVALID, "(root): expected an object, got an array", NULL },
  { "type/root-string", "\"profile\"", 0, SBX_PROFILE_ERROR_INVALID, "(root): expected an object, got a string", NULL },
  { "type/version-string", "{\"version\":\"1\"}", 0, SBX_PROFILE_ERROR_INVALID, "version: expected an integer, got a string", NULL },
  { "type/version-fraction", "{\"version\":1.0}", 0, SBX_PROFILE_ERROR_INVALID,
    "version: expected an integer, got a number with a fraction or exponent", NULL },
  { "type/workspace", V "\"workspace\":[]}", 0, SBX_PROFILE_ERROR_INVALID, "workspace: expected an object, got an array", NULL },
  { "type/workspace-root", V "\"workspace\":{\"root\":5}}", 0, SBX_PROFILE_ERROR_INVALID,
    "workspace.root: expected a string, got an integer", NULL },
  { "type/workspace-read", V "\"workspace\":{\"read\":true}}", 0, SBX_PROFILE_ERROR_INVALID,
    "workspace.read: expected a string", "got a boolean" },
  { "type/workspace-write", V "\"workspace\":{\"write\":null}}", 0, SBX_PROFILE_ERROR_INVALID,
    "workspace.write: expected a string", "got null" },
  { "type/host", V "\"host\":\"deny\"}", 0, SBX_PROFILE_ERROR_INVALID, "host: expected an object, got a string", NULL },
  { "type/host-read", V "\"host\":{\"read\":0}}", 0, SBX_PROFILE_ERROR_INVALID, "host.read: expected a string", NULL },
  { "type/host-write", V "\"host\":{\"write\":{}}}", 0, SBX_PROFILE_ERROR_INVALID, "host.write: expected a string",
    "got an object" },
  { "type/network", V "\"network\":1}", 0, SBX_PROFILE_ERROR_INVALID, "network: expected a string", "got an integer" },
  { "type/command", V "\"command\":[]}", 0, SBX_PROFILE_ERROR_INVALID, "command: expected a string", NULL },
  { "type/home", V "\"home\":false}", 0, SBX_PROFILE_ERROR_INVALID, "home: expected a string", NULL },
  { "type/isolation", V "\"isolation\":{}}", 0, SBX_PROFILE_ERROR_INVALID, "isolation: expected a string", NULL },
  { "type/ack-unconfined", V "\"ack-unconfined\":\"yes\"}", 0, SBX_PROFILE_ERROR_INVALID,
    "ack-unconfined: expected true or false, got a string", NULL },
  { "type/roots", V "\"roots\":{}}", 0, SBX_PROFILE_ERROR_INVALID, "roots: expected an array, got an object", NULL },
  { "type/roots-entry", V "\"roots\":[\"/usr\"]}", 0, SBX_PROFILE_ERROR_INVALID, "roots[0]: expected an object, got a string", NULL },
  { "type/roots-path", V "\"roots\":[{\"path\":1}]}", 0, SBX_PROFILE_ERROR_INVALID, "roots[0].path: expected a string", NULL },
  { "type/roots-read", V "\"roots\":[{\"path\":\"/\",\"read\":2}]}", 0, SBX_PROFILE_ERROR_INVALID,
    "roots[0].read: expected a string", NULL },
  { "type/roots-write", V "\"roots\":[{\"path\":\"/\",\"write\":[]}]}", 0, SBX_PROFILE_ERROR_INVALID,
    "roots[0].write: expected a string", NULL },
  { "type/limits", V "\"limits\":5}", 0, SBX_PROFILE_ERROR_INVALID, "limits: expected an object, got an integer", NULL },
  { "type/limits-processes", V "\"limits\":{\"processes\":\"10\"}}", 0, SBX_PROFILE_ERROR_INVALID,
    "limits.processes: expected a non-negative integer", "got a string" },
  { "type/limits-processes-negative", V "\"limits\":{\"processes\":-1}}", 0, SBX_PROFILE_ERROR_INVALID,
    "limits.processes: expected a non-negative integer", "got -1" },
  { "type/limits-processes-fraction", V "\"limits\":{\"processes\":1.5}}", 0, SBX_PROFILE_ERROR_INVALID,
    "limits.processes: expected a non-negative integer", "fraction" },
  { "type/limits-processes-huge", V "\"limits\":{\"processes\":9223372036854775808}}", 0, SBX_PROFILE_ERROR_INVALID,
    "limits.processes: integer 9223372036854775808 is out of range", NULL },
  { "type/limits-memory", V "\"limits\":{\"memory\":true}}", 0, SBX_PROFILE_ERROR_INVALID,
    "limits.memory: expected bytes", "got a boolean" },
  { "type/limits-memory-negative", V "\"limits\":{\"memory\":-5}}", 0, SBX_PROFILE_ERROR_INVALID,
    "limits.memory: expected a non-negative integer", "got -5" },
  { "type/limits-open-files", V "\"limits\":{\"open-files\":\"x\"}}", 0, SBX_PROFILE_ERROR_INVALID,
    "limits.open-files: expected a non-negative integer", NULL },

  /* bad words */
  { "word/workspace-read", V "\"workspace\":{\"read\":\"Allow\"}}", 0, SBX_PROFILE_ERROR_INVALID,
    "workspace.read: expected \"deny\", \"gated\" or \"allow\", got \"Allow\"", NULL },
  { "word/workspace-write", V "\"workspace\":{\"write\":\"\"}}", 0, SBX_PROFILE_ERROR_INVALID,
    "workspace.write: expected \"deny\", \"gated\" or \"allow\", got \"\"", NULL },
  { "word/host-read", V "\"host\":{\"read\":\"yes\"}}", 0, SBX_PROFILE_ERROR_INVALID, "host.read: expected \"deny\"", NULL },
  { "word/host-write", V "\"host\":{\"write\":\"rw\"}}", 0, SBX_PROFILE_ERROR_INVALID, "host.write: expected \"deny\"", "\"rw\"" },
  { "word/network", V "\"network\":\"on\"}", 0, SBX_PROFILE_ERROR_INVALID,
    "network: expected \"deny\", \"gated\" or \"allow\", got \"on\"", NULL },
  { "word/command", V "\"command\":\"allow \"}", 0, SBX_PROFILE_ERROR_INVALID, "command: expected \"deny\"", "\"allow \"" },
  { "word/roots-read", V "\"roots\":[{\"path\":\"/\"},{\"path\":\"/usr\"},{\"path\":\"/tmp\",\"read\":\"alow\"}]}", 0,
    SBX_PROFILE_ERROR_INVALID, "roots[2].read: expected \"deny\", \"gated\" or \"allow\", got \"alow\"", NULL },
  { "word/roots-write", V "\"roots\":[{\"path\":\"/\",\"write\":\"DENY\"}]}", 0, SBX_PROFILE_ERROR_INVALID,
    "roots[0].write: expected \"deny\"", NULL },
  { "word/home", V "\"home\":\"shared\"}", 0, SBX_PROFILE_ERROR_INVALID,
    "home: expected \"isolated\" or \"real\", got \"shared\"", NULL },
  { "word/isolation", V "\"isolation\":\"none\"}", 0, SBX_PROFILE_ERROR_INVALID,
    "isolation: expected \"sandboxed\" or \"unconfined\", got \"none\"", NULL },
  { "word/limits-memory-suffix", V "\"limits\":{\"memory\":\"5X\"}}", 0, SBX_PROFILE_ERROR_INVALID,
    "limits.memory: expected a size", "got \"5X\"" },
  { "word/limits-memory-two-suffixes", V "\"limits\":{\"memory\":\"1KB\"}}", 0, SBX_PROFILE_ERROR_INVALID,
    "limits.memory: expected a size", NULL },
  { "word/limits-memory-empty", V "\"limits\":{\"memory\":\"\"}}", 0, SBX_PROFILE_ERROR_INVALID, "limits.memory: expected a size", NULL },
  { "word/limits-memory-negative", V "\"limits\":{\"memory\":\"-1\"}}", 0, SBX_PROFILE_ERROR_INVALID, "limits.memory: expected a size", NULL },
  { "word/limits-memory-overflow", V "\"limits\":{\"memory\":\"9999999999T\"}}", 0, SBX_PROFILE_ERROR_INVALID,
    "limits.memory: expected a size", NULL },

  /* NUL bytes, encodings */
  { "nul/escaped-in-string", V "\"network\":\"de\\u0000ny\"}", 0, SBX_PROFILE_ERROR_INVALID, "network: string contains a NUL byte", NULL },
  { "nul/raw-in-string", WITH_NUL (V "\"network\":\"de\0ny\"}"), SBX_PROFILE_ERROR_INVALID, "network: string contains a NUL byte", NULL },
  { "nul/in-path", V "\"roots\":[{\"path\":\"/usr\\u0000/x\"}]}", 0, SBX_PROFILE_ERROR_INVALID,
    "roots[0].path: string contains a NUL byte", NULL },
  { "nul/in-root-member-name", V "\"work\\u0000space\":{}}", 0, SBX_PROFILE_ERROR_INVALID, "(root): member name contains a NUL byte", NULL },
  { "nul/in-nested-member-name", V "\"workspace\":{\"re\\u0000ad\":\"allow\"}}", 0, SBX_PROFILE_ERROR_INVALID,
    "workspace: member name contains a NUL byte", NULL },
  { "nul/raw-in-member-name", WITH_NUL (V "\"ho\0st\":{}}"), SBX_PROFILE_ERROR_INVALID, "(root): member name contains a NUL byte", NULL },
  { "encoding/invalid-utf8", WITH_NUL (V "\"network\":\"\xc3\x28\"}"), SBX_PROFILE_ERROR_INVALID, "network: string is not valid UTF-8", NULL },
  { "encoding/encoded-surrogate", WITH_NUL (V "\"network\":\"\xed\xa0\x80\"}"), SBX_PROFILE_ERROR_INVALID,
    "network: string is not valid UTF-8", NULL },
  { "encoding/lone-surrogate", V "\"network\":\"\\ud800\"}", 0, SBX_PROFILE_ERROR_INVALID,
    "network: string has an unpaired surrogate", NULL },
  { "encoding/lone-low-surrogate", V "\"network\":\"\\udc00x\"}", 0, SBX_PROFILE_ERROR_INVALID, "network: string has an unpaired", NULL },

  /* duplicate member names (json-glib would keep the last) */
  { "duplicate/root-member", V "\"network\":\"deny\",\"network\":\"allow\"}", 0, SBX_PROFILE_ERROR_INVALID,
    "(root): duplicate member \"network\"", NULL },
  { "duplicate/version", "{\"version\":2,\"version\":1}", 0, SBX_PROFILE_ERROR_INVALID, "(root): duplicate member \"version\"", NULL },
  { "duplicate/nested-member", V "\"workspace\":{\"read\":\"allow\",\"read\":\"deny\"}}", 0, SBX_PROFILE_ERROR_INVALID,
    "workspace: duplicate member \"read\"", NULL },
  { "duplicate/in-root-entry", V "\"roots\":[{\"path\":\"/\"},{\"path\":\"/usr\",\"path\":\"/\"}]}", 0, SBX_PROFILE_ERROR_INVALID,
    "roots[1]: duplicate member \"path\"", NULL },
  { "duplicate/escaped-spelling", V "\"network\":\"deny\",\"netw\\u006frk\":\"allow\"}", 0, SBX_PROFILE_ERROR_INVALID,
    "(root): duplicate member \"network\"", NULL },
  { "duplicate/in-unknown-member", V "\"x\":{\"a\":1,\"a\":2}}", 0, SBX_PROFILE_ERROR_INVALID, "x: duplicate member \"a\"", NULL },

  /* roots */
  { "roots/duplicate-same-access", V "\"roots\":[{\"path\":\"@T/dir\",\"read\":\"allow\"},{\"path\":\"@T/dir\",\"read\":\"allow\"}]}", 0,
    SBX_PROFILE_ERROR_INVALID, "roots[1].path (", "duplicates roots[0].path" },
  { "roots/duplicate-spelling", V "\"roots\":[{\"path\":\"@T/dir\"},{\"path\":\"@T/dir/sub/..//\"}]}", 0,
    SBX_PROFILE_ERROR_INVALID, "roots[1].path (", "duplicates roots[0].path" },
  { "roots/duplicate-symlink", V "\"roots\":[{\"path\":\"@T/dir\"},{\"path\":\"@T/ws\"},{\"path\":\"@T/link\",\"write\":\"allow\"}]}", 0,
    SBX_PROFILE_ERROR_INVALID, "roots[2].path (", "link): duplicates roots[0].path" },
  { "roots/relative", V "\"roots\":[{\"path\":\"usr\"}]}", 0, SBX_PROFILE_ERROR_INVALID, "roots[0].path (usr): path is not absolute", NULL },
  { "roots/dot-relative", V "\"roots\":[{\"path\":\"./dir\"}]}", 0, SBX_PROFILE_ERROR_INVALID, "roots[0].path (./dir): path is not absolute", NULL },
  { "roots/empty-path", V "\"roots\":[{\"path\":\"\"}]}", 0, SBX_PROFILE_ERROR_INVALID, "roots[0].path: path is empty", NULL },
  { "roots/missing-path", V "\"roots\":[{\"read\":\"allow\"}]}", 0, SBX_PROFILE_ERROR_INVALID, "roots[0]: missing member \"path\"", NULL },
  { "roots/not-a-directory", V "\"roots\":[{\"path\":\"@T/file\"}]}", 0, SBX_PROFILE_ERROR_INVALID, "roots[0].path (", "not a directory" },
  { "roots/missing-directory", V "\"roots\":[{\"path\":\"@T/nope\"}]}", 0, SBX_PROFILE_ERROR_INVALID, "roots[0].path (", "resolve symlinks" },
  { "roots/is-the-workspace", V "\"workspace\":{\"root\":\"@T/ws\"},\"roots\":[{\"path\":\"@T/ws/.\"}]}", 0,
    SBX_PROFILE_ERROR_INVALID, "roots[0].path (", "duplicates the workspace root" },

  /* version */
  { "version/missing", "{\"network\":\"deny\"}", 0, SBX_PROFILE_ERROR_INVALID, "(root): missing member \"version\"", NULL },
  { "version/unsupported", "{\"version\":2}", 0, SBX_PROFILE_ERROR_INVALID, "version: unsupported version 2", NULL },
  { "version/zero", "{\"version\":0}", 0, SBX_PROFILE_ERROR_INVALID, "version: unsupported version 0", NULL },
  { "version/before-unknown-members", "{\"future\":{},\"version\":3}", 0, SBX_PROFILE_ERROR_INVALID, "version: unsupported version 3", NULL },

  /* workspace */
  { "workspace/missing", V "\"workspace\":{\"root\":\"@T/nope\"}}", 0, SBX_PROFILE_ERROR_INVALID, "workspace.root (", "resolve symlinks" },
  { "workspace/missing-relative", V "\"workspace\":{\"root\":\"nope\"}}", 0, SBX_PROFILE_ERROR_INVALID, "workspace.root (",
    "/nope): resolve symlinks" },
  { "workspace/empty", V "\"workspace\":{\"root\":\"\"}}", 0, SBX_PROFILE_ERROR_INVALID, "workspace.root: path is empty", NULL },
  { "workspace/file", V "\"workspace\":{\"root\":\"@T/file\"}}", 0, SBX_PROFILE_ERROR_INVALID, "workspace.root (", "not a directory" },

  /* unconfined rules, with member paths */
  { "unconfined/not-acknowledged", V "\"isolation\":\"unconfined\"}", 0, SBX_PROFILE_ERROR_INVALID,
    "isolation: unconfined execution is not acknowledged (set ack-unconfined)", NULL },
  { "unconfined/access", V "\"isolation\":\"unconfined\",\"ack-unconfined\":true}", 0, SBX_PROFILE_ERROR_INVALID,
    "workspace.read: an unconfined profile needs allow, not deny", NULL },
  { "unconfined/root", V "\"isolation\":\"unconfined\",\"ack-unconfined\":true,\"network\":\"allow\","
                         "\"workspace\":{\"read\":\"allow\",\"write\":\"allow\"},\"host\":{\"read\":\"allow\",\"write\":\"allow\"},"
                         "\"roots\":[{\"path\":\"@T/dir\",\"read\":\"allow\",\"write\":\"allow\"},{\"path\":\"@T/caf\\u00e9\",\"read\":\"allow\"}]}", 0,
    SBX_PROFILE_ERROR_INVALID, "roots[1].write: an unconfined profile needs allow, not deny", NULL },
  { "unconfined/ack-on-sandboxed", V "\"ack-unconfined\":true}", 0, SBX_PROFILE_ERROR_INVALID,
    "ack-unconfined: set on a sandboxed profile", NULL },
};

static void
test_error_row (gconstpointer data)
{
  const ErrorRow *row = data;
  Tree tree;
  g_autofree char *text = NULL;
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(GError) error = NULL;
  gsize len;

  tree_setup (&tree);
  text = expand (&tree, row->text, row->len != 0 ? row->len : strlen (row->text), &len);
  profile = sbx_profile_new_from_json (text, (gssize) len, tree.tmp, &error);
  g_assert_null (profile);
  g_assert_error (error, SBX_PROFILE_ERROR, (int) row->code);
  if (!g_str_has_prefix (error->message, row->prefix))
    g_error ("message \"%s\" does not start with \"%s\"", error->message, row->prefix);
  if (row->contains != NULL && strstr (error->message, row->contains) == NULL)
    g_error ("message \"%s\" lacks \"%s\"", error->message, row->contains);
  g_assert_true (g_utf8_validate (error->message, -1, NULL));
  tree_teardown (&tree);
}

/* Just over 1 MiB is refused before parsing; just under is parsed. */
static void
test_oversized (void)
{
  const gsize limit = 1024 * 1024;
  g_autoptr(GString) text = g_string_new ("{\"version\":1}");
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxProfile) fits = NULL;
  g_autofree char *tmp = etu_make_tmpdir ("sbx-test-json-XXXXXX");
  g_autofree char *file = NULL;

  while (text->len < limit)
    g_string_append_c (text, ' ');
  fits = sbx_profile_new_from_json (text->str, (gssize) text->len, tmp, &error);
  g_assert_no_error (error);
  g_assert_nonnull (fits);

  g_string_append_c (text, ' ');
  profile = sbx_profile_new_from_json (text->str, (gssize) text->len, tmp, &error);
  g_assert_null (profile);
  g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_PARSE);
  g_assert_cmpstr (error->message, ==, "(root): the profile text is 1048577 bytes, more than the limit of 1048576 bytes");
  g_clear_error (&error);

  /* The same through a file, which is not read past the limit. */
  file = etu_write_file (tmp, "big.json", text->str);
  profile = sbx_profile_new_from_file (file, tmp, &error);
  g_assert_null (profile);
  g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_PARSE);
  g_assert_true (g_str_has_prefix (error->message, "(root): the profile text is"));
  etu_rm_rf (tmp);
}

static void
test_file_errors (void)
{
  g_autofree char *tmp = etu_make_tmpdir ("sbx-test-json-XXXXXX");
  g_autofree char *missing = g_build_filename (tmp, "missing.json", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_null (sbx_profile_new_from_file (missing, NULL, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_assert_nonnull (strstr (error->message, missing));
  g_clear_error (&error);
  g_assert_null (sbx_profile_new_from_file (tmp, NULL, &error));   /* a directory */
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_ISDIR);
  etu_rm_rf (tmp);
}

/* ------------------------------------------------------------------------- */
/* The accepted side */

static SbxProfile *
load_ok (const char *text,
         const char *base)
{
  g_autoptr(GError) error = NULL;
  SbxProfile *profile = sbx_profile_new_from_json (text, -1, base, &error);

  g_assert_no_error (error);
  g_assert_nonnull (profile);
  return profile;
}

static void
test_minimal_defaults (void)
{
  Tree tree;
  g_autoptr(SbxProfile) profile = NULL;

  tree_setup (&tree);
  profile = load_ok ("{\"version\":1}", tree.tmp);
  g_assert_cmpstr (sbx_profile_get_workspace_root (profile), ==, tree.tmp);
  g_assert_cmpint (sbx_profile_get_workspace_read (profile), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_workspace_write (profile), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_host_read (profile), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_host_write (profile), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_network (profile), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_command (profile), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_home (profile), ==, SBX_HOME_ISOLATED);
  g_assert_cmpint (sbx_profile_get_isolation (profile), ==, SBX_ISOLATION_SANDBOXED);
  g_assert_false (sbx_profile_get_ack_unconfined (profile));
  g_assert_cmpuint (sbx_profile_get_n_roots (profile), ==, 0);
  g_assert_cmpuint (sbx_profile_get_max_processes (profile), ==, 0);
  g_assert_cmpuint (sbx_profile_get_max_memory (profile), ==, 0);
  g_assert_cmpuint (sbx_profile_get_max_open_files (profile), ==, 0);
  tree_teardown (&tree);
}

static void
test_workspace_resolution (void)
{
  Tree tree;
  g_autofree char *ws = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *cwd = g_get_current_dir ();
  char *cwd_canonical = NULL;

  tree_setup (&tree);
  ws = g_build_filename (tree.tmp, "ws", NULL);
  dir = g_build_filename (tree.tmp, "dir", NULL);
  {
    /* relative to base_dir, through a symlink, with a trailing "/." */
    g_autoptr(SbxProfile) p = load_ok ("{\"version\":1,\"workspace\":{\"root\":\"link/.\"}}", tree.tmp);

    g_assert_cmpstr (sbx_profile_get_workspace_root (p), ==, dir);
  }
  {
    g_autoptr(SbxProfile) p = load_ok ("{\"version\":1,\"workspace\":{\"root\":\".\"}}", ws);

    g_assert_cmpstr (sbx_profile_get_workspace_root (p), ==, ws);
  }
  {
    /* an absolute root ignores base_dir */
    g_autofree char *text = g_strdup_printf ("{\"version\":1,\"workspace\":{\"root\":\"%s\"}}", ws);
    g_autoptr(SbxProfile) p = load_ok (text, "/");

    g_assert_cmpstr (sbx_profile_get_workspace_root (p), ==, ws);
  }
  {
    /* no base_dir: the current directory */
    g_autoptr(SbxProfile) p = load_ok ("{\"version\":1}", NULL);

    cwd_canonical = realpath (cwd, NULL);
    g_assert_cmpstr (sbx_profile_get_workspace_root (p), ==, cwd_canonical);
  }
  {
    /* a non-ASCII path, written raw and escaped */
    g_autofree char *cafe = g_build_filename (tree.tmp, "caf\xc3\xa9", NULL);
    g_autoptr(SbxProfile) p1 = load_ok ("{\"version\":1,\"workspace\":{\"root\":\"caf\xc3\xa9\"}}", tree.tmp);
    g_autoptr(SbxProfile) p2 = load_ok ("{\"version\":1,\"workspace\":{\"root\":\"caf\\u00e9\"}}", tree.tmp);

    g_assert_cmpstr (sbx_profile_get_workspace_root (p1), ==, cafe);
    g_assert_true (sbx_profile_equal (p1, p2));
  }
  free (cwd_canonical);
  tree_teardown (&tree);
}

static void
test_accepted_forms (void)
{
  Tree tree;
  guint64 auto_memory;
  long pages = sysconf (_SC_PHYS_PAGES);
  long page_size = sysconf (_SC_PAGESIZE);

  auto_memory = MIN (((guint64) pages / 2) * (guint64) page_size, G_GUINT64_CONSTANT (4) << 30);
  tree_setup (&tree);
  {
    /* BOM, CRLF, escapes, every word */
    g_autoptr(SbxProfile) p = load_ok ("\xEF\xBB\xBF{\r\n \"version\" : 1 ,\r\n"
                                       "\t\"workspace\": {\"root\": \"\\u0077s\", \"read\": \"gated\", \"write\": \"allow\"},\n"
                                       " \"host\": {\"read\": \"allow\", \"write\": \"gated\"},\n"
                                       " \"network\": \"gated\", \"command\": \"deny\", \"home\": \"real\",\n"
                                       " \"isolation\": \"sandboxed\", \"ack-unconfined\": false,\n"
                                       " \"roots\": [{\"path\": \"\\/usr\"}],\n"
                                       " \"limits\": {\"processes\": 0, \"memory\": \"1k\", \"open-files\": 64}}",
                                       tree.tmp);

    g_assert_cmpint (sbx_profile_get_workspace_read (p), ==, SBX_ACCESS_GATED);
    g_assert_cmpint (sbx_profile_get_workspace_write (p), ==, SBX_ACCESS_ALLOW);
    g_assert_cmpint (sbx_profile_get_host_read (p), ==, SBX_ACCESS_ALLOW);
    g_assert_cmpint (sbx_profile_get_host_write (p), ==, SBX_ACCESS_GATED);
    g_assert_cmpint (sbx_profile_get_network (p), ==, SBX_ACCESS_GATED);
    g_assert_cmpint (sbx_profile_get_command (p), ==, SBX_ACCESS_DENY);
    g_assert_cmpint (sbx_profile_get_home (p), ==, SBX_HOME_REAL);
    g_assert_cmpstr (sbx_profile_get_root_path (p, 0), ==, "/usr");
    g_assert_cmpint (sbx_profile_get_root_read (p, 0), ==, SBX_ACCESS_DENY);
    g_assert_cmpuint (sbx_profile_get_max_processes (p), ==, 0);
    g_assert_cmpuint (sbx_profile_get_max_memory (p), ==, 1024);
    g_assert_cmpuint (sbx_profile_get_max_open_files (p), ==, 64);
  }
  {
    static const struct { const char *memory; guint64 bytes; } sizes[] = {
      { "\"512M\"", G_GUINT64_CONSTANT (512) << 20 }, { "\"4G\"", G_GUINT64_CONSTANT (4) << 30 },
      { "\"2t\"", G_GUINT64_CONSTANT (2) << 40 }, { "\"123\"", 123 }, { "4096", 4096 }, { "0", 0 },
      { "\"0\"", 0 }, { "\"8388607T\"", G_GUINT64_CONSTANT (8388607) << 40 },
      { "9223372036854775807", G_MAXINT64 },
    };

    for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
      {
        g_autofree char *text = g_strdup_printf ("{\"version\":1,\"limits\":{\"memory\":%s}}", sizes[i].memory);
        g_autoptr(SbxProfile) p = load_ok (text, tree.tmp);

        g_assert_cmpuint (sbx_profile_get_max_memory (p), ==, sizes[i].bytes);
      }
  }
  {
    g_autoptr(SbxProfile) p = load_ok ("{\"version\":1,\"limits\":{\"memory\":\"auto\"}}", tree.tmp);

    g_assert_cmpuint (sbx_profile_get_max_memory (p), ==, auto_memory);
    g_assert_cmpuint (sbx_profile_get_max_memory (p), <=, G_GUINT64_CONSTANT (4) << 30);
    g_assert_cmpuint (sbx_profile_get_max_memory (p), >, 0);
  }
  {
    /* unconfined, acknowledged */
    g_autoptr(SbxProfile) p = load_ok ("{\"version\":1,\"isolation\":\"unconfined\",\"ack-unconfined\":true,"
                                       "\"workspace\":{\"read\":\"allow\",\"write\":\"allow\"},"
                                       "\"host\":{\"read\":\"allow\",\"write\":\"allow\"},\"network\":\"allow\"}",
                                       tree.tmp);

    g_assert_cmpint (sbx_profile_get_isolation (p), ==, SBX_ISOLATION_UNCONFINED);
    g_assert_true (sbx_profile_get_ack_unconfined (p));
  }
  tree_teardown (&tree);
}

/* ------------------------------------------------------------------------- */
/* Round trips and the normalized form */

/* sbx_profile_to_json() writes its text itself: it must be, byte for byte,
 * what json-glib's pretty generator (indent 2) prints for the same tree,
 * the form it had when it was generated with json-glib. */
static void
assert_generator_form (const char *text)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *generated = NULL;
  g_autofree char *expected = NULL;

  node = json_from_string (text, &error);
  g_assert_no_error (error);
  json_generator_set_root (generator, node);
  json_generator_set_pretty (generator, TRUE);
  json_generator_set_indent (generator, 2);
  generated = json_generator_to_data (generator, NULL);
  expected = g_strconcat (generated, "\n", NULL);
  g_assert_cmpstr (text, ==, expected);
}

static void
assert_round_trip (SbxProfile *profile)
{
  g_autofree char *text = sbx_profile_to_json (profile);
  g_autofree char *again_text = NULL;
  g_autoptr(SbxProfile) again = NULL;
  g_autoptr(GError) error = NULL;
  static const char *const order[] = {
    "\"version\"", "\"workspace\"", "\"host\"", "\"network\"", "\"command\"", "\"home\"", "\"isolation\"", "\"roots\"",
  };
  const char *last = text;

  g_assert_true (g_str_has_suffix (text, "}\n"));
  assert_generator_form (text);
  for (guint i = 0; i < G_N_ELEMENTS (order); i++)
    {
      const char *at = strstr (text, order[i]);

      g_assert_nonnull (at);
      g_assert_true (at >= last);
      last = at;
    }
  again = sbx_profile_new_from_json (text, -1, "/nonexistent-base", &error);
  g_assert_no_error (error);
  g_assert_true (sbx_profile_equal (again, profile));
  g_assert_cmpstr (sbx_profile_get_fingerprint (again), ==, sbx_profile_get_fingerprint (profile));
  again_text = sbx_profile_to_json (again);
  g_assert_cmpstr (again_text, ==, text);
}

static void
test_round_trips (void)
{
  Tree tree;
  g_autofree char *text = NULL;

  tree_setup (&tree);
  text = g_strdup_printf ("{\"version\":1,\"workspace\":{\"root\":\"ws\",\"read\":\"allow\",\"write\":\"gated\"},"
                          "\"host\":{\"read\":\"gated\"},\"network\":\"allow\",\"command\":\"gated\",\"home\":\"real\","
                          "\"roots\":[{\"path\":\"%s/dir/sub\",\"read\":\"allow\",\"write\":\"allow\"},"
                          "{\"path\":\"%s/caf\\u00e9\",\"read\":\"gated\"},{\"path\":\"%s/link\",\"write\":\"gated\"}],"
                          "\"limits\":{\"processes\":3,\"memory\":\"auto\",\"open-files\":9}}",
                          tree.tmp, tree.tmp, tree.tmp);
  {
    g_autoptr(SbxProfile) p = load_ok (text, tree.tmp);

    assert_round_trip (p);
  }
  {
    g_autoptr(SbxProfile) p = load_ok ("{\"version\":1,\"isolation\":\"unconfined\",\"ack-unconfined\":true,"
                                       "\"workspace\":{\"read\":\"allow\",\"write\":\"allow\"},"
                                       "\"host\":{\"read\":\"allow\",\"write\":\"allow\"},\"network\":\"allow\"}",
                                       tree.tmp);
    g_autofree char *json = sbx_profile_to_json (p);

    g_assert_nonnull (strstr (json, "\"ack-unconfined\" : true"));
    assert_round_trip (p);
  }
  {
    /* unix sockets: absent and "deny" are the same closed profile (same
     * fingerprint, member not written); "allow" opens them and round-trips */
    g_autoptr(SbxProfile) absent = load_ok ("{\"version\":1}", tree.tmp);
    g_autoptr(SbxProfile) denied = load_ok ("{\"version\":1,\"unix-sockets\":\"deny\"}", tree.tmp);
    g_autoptr(SbxProfile) allowed = load_ok ("{\"version\":1,\"unix-sockets\":\"allow\"}", tree.tmp);
    g_autofree char *absent_json = sbx_profile_to_json (absent);
    g_autofree char *allowed_json = sbx_profile_to_json (allowed);

    g_assert_false (sbx_profile_get_unix_sockets (absent));
    g_assert_false (sbx_profile_get_unix_sockets (denied));
    g_assert_true (sbx_profile_get_unix_sockets (allowed));
    g_assert_cmpstr (sbx_profile_get_fingerprint (absent), ==, sbx_profile_get_fingerprint (denied));
    g_assert_cmpstr (sbx_profile_get_fingerprint (absent), !=, sbx_profile_get_fingerprint (allowed));
    g_assert_null (strstr (absent_json, "unix-sockets"));
    g_assert_nonnull (strstr (allowed_json, "\"unix-sockets\" : \"allow\""));
    assert_round_trip (allowed);
  }
  {
    /* denied paths: absent and "permission-denied" are the same profile
     * (same fingerprint, member not written); "not-found" is another one
     * and round-trips */
    g_autoptr(SbxProfile) absent = load_ok ("{\"version\":1}", tree.tmp);
    g_autoptr(SbxProfile) explain = load_ok ("{\"version\":1,\"denied-paths\":\"permission-denied\"}", tree.tmp);
    g_autoptr(SbxProfile) hide = load_ok ("{\"version\":1,\"denied-paths\":\"not-found\"}", tree.tmp);
    g_autofree char *absent_json = sbx_profile_to_json (absent);
    g_autofree char *hide_json = sbx_profile_to_json (hide);

    g_assert_cmpint (sbx_profile_get_denied_paths (absent), ==, SBX_DENIED_PATHS_PERMISSION_DENIED);
    g_assert_cmpint (sbx_profile_get_denied_paths (explain), ==, SBX_DENIED_PATHS_PERMISSION_DENIED);
    g_assert_cmpint (sbx_profile_get_denied_paths (hide), ==, SBX_DENIED_PATHS_NOT_FOUND);
    g_assert_cmpstr (sbx_profile_get_fingerprint (absent), ==, sbx_profile_get_fingerprint (explain));
    g_assert_cmpstr (sbx_profile_get_fingerprint (absent), !=, sbx_profile_get_fingerprint (hide));
    g_assert_true (sbx_profile_equal (absent, explain));
    g_assert_false (sbx_profile_equal (absent, hide));
    g_assert_null (strstr (absent_json, "denied-paths"));
    g_assert_nonnull (strstr (hide_json, "\"denied-paths\" : \"not-found\""));
    assert_round_trip (hide);
  }
  {
    /* host sockets: sorted, written back, part of the fingerprint (absent
     * and empty alike); "$NAME" is the caller's variable */
    g_autoptr(SbxProfile) absent = load_ok ("{\"version\":1}", tree.tmp);
    g_autoptr(SbxProfile) empty = load_ok ("{\"version\":1,\"host-sockets\":[]}", tree.tmp);
    g_autoptr(SbxProfile) named = NULL;
    g_autofree char *json = NULL;
    const char * const *sockets;

    g_setenv ("SBX_TEST_AGENT_SOCK", "/tmp/agent-x/agent.1", TRUE);
    named = load_ok ("{\"version\":1,\"host-sockets\":[\"/run/user/1000/bus\",\"$SBX_TEST_AGENT_SOCK\"]}", tree.tmp);
    g_unsetenv ("SBX_TEST_AGENT_SOCK");
    sockets = sbx_profile_get_host_sockets (named);
    g_assert_cmpstr (sockets[0], ==, "/run/user/1000/bus");
    g_assert_cmpstr (sockets[1], ==, "/tmp/agent-x/agent.1");
    g_assert_null (sockets[2]);
    g_assert_null (sbx_profile_get_host_sockets (absent)[0]);
    g_assert_cmpstr (sbx_profile_get_fingerprint (absent), ==, sbx_profile_get_fingerprint (empty));
    g_assert_cmpstr (sbx_profile_get_fingerprint (absent), !=, sbx_profile_get_fingerprint (named));
    json = sbx_profile_to_json (named);
    g_assert_nonnull (strstr (json, "\"host-sockets\""));
    g_assert_nonnull (strstr (json, "\"/tmp/agent-x/agent.1\""));
    assert_round_trip (named);
  }
  {
    /* gated host sockets: their own sorted list, written back as objects,
     * part of the fingerprint, and what access_for answers */
    g_autoptr(SbxProfile) allowed = load_ok ("{\"version\":1,\"host-sockets\":[\"/run/b.sock\"]}", tree.tmp);
    g_autoptr(SbxProfile) gated = load_ok ("{\"version\":1,\"host-sockets\":[{\"path\":\"/run/b.sock\","
                                           "\"access\":\"gated\"},{\"path\":\"/run/a.sock\"},"
                                           "{\"path\":\"/run/c.sock\",\"access\":\"gated\"}]}", tree.tmp);
    g_autofree char *json = sbx_profile_to_json (gated);
    const char * const *sockets = sbx_profile_get_gated_host_sockets (gated);
    SbxAccess access = SBX_ACCESS_ALLOW;
    g_autoptr(GError) error = NULL;

    g_assert_cmpstr (sockets[0], ==, "/run/b.sock");
    g_assert_cmpstr (sockets[1], ==, "/run/c.sock");
    g_assert_null (sockets[2]);
    g_assert_cmpstr (sbx_profile_get_host_sockets (gated)[0], ==, "/run/a.sock");
    g_assert_null (sbx_profile_get_gated_host_sockets (allowed)[0]);
    g_assert_cmpstr (sbx_profile_get_fingerprint (allowed), !=, sbx_profile_get_fingerprint (gated));
    g_assert_nonnull (strstr (json, "\"access\" : \"gated\""));
    assert_round_trip (gated);
    g_assert_true (sbx_profile_access_for (gated, "unix.connect", "/run/b.sock", &access, &error));
    g_assert_cmpint (access, ==, SBX_ACCESS_GATED);
    g_assert_true (sbx_profile_access_for (gated, "unix.connect", "/run/a.sock", &access, &error));
    g_assert_cmpint (access, ==, SBX_ACCESS_ALLOW);
    g_assert_true (sbx_profile_access_for (gated, "unix.connect", "/run/d.sock", &access, &error));
    g_assert_cmpint (access, ==, SBX_ACCESS_DENY);
    g_assert_false (sbx_profile_access_for (gated, "unix.connect", "run/d.sock", &access, &error));
    g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID);
  }
  {
    g_autoptr(SbxProfile) p = load_ok ("{\"version\":1}", tree.tmp);
    g_autofree char *json = sbx_profile_to_json (p);

    g_assert_null (strstr (json, "limits"));
    g_assert_null (strstr (json, "ack-unconfined"));
    assert_round_trip (p);
  }
  {
    /* Limits near the top of the range, one at a time. */
    g_autoptr(SbxProfile) p = load_ok ("{\"version\":1,\"limits\":{\"open-files\":9223372036854775807}}", tree.tmp);
    g_autofree char *json = sbx_profile_to_json (p);

    g_assert_null (strstr (json, "\"processes\""));
    g_assert_nonnull (strstr (json, "9223372036854775807"));
    assert_round_trip (p);
  }
  tree_teardown (&tree);
}

/* Every file in data/profiles loads, round-trips, and the default one is the
 * embedded default. */
/* Every ASCII byte but '/' and NUL, and UTF-8, in root paths and the
 * workspace: json-glib's escapes, byte for byte (0x1f included, which
 * json-glib 1.6 writes unescaped). */
static void
test_writer_escapes (void)
{
  g_autofree char *tmp = etu_make_tmpdir ("sbx-test-json-XXXXXX");
  g_autofree char *ws = etu_mkdir (tmp, "w\"s\\\t\x7f\xc3\xa9\xe2\x80\xa8");
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  sbx_profile_config_set_workspace (config, ws, SBX_ACCESS_ALLOW, SBX_ACCESS_GATED);
  sbx_profile_config_set_limits (config, 7, 0, 9);
  sbx_profile_config_set_unix_sockets (config, TRUE);
  sbx_profile_config_set_denied_paths (config, SBX_DENIED_PATHS_NOT_FOUND);
  for (guint c = 1; c < 128; c++)
    {
      char name[] = { 'r', (char) c, '\0' };
      g_autofree char *dir = NULL;

      if (c == '/')
        continue;
      dir = etu_mkdir (tmp, name);
      sbx_profile_config_add_root (config, dir, c % 2 ? SBX_ACCESS_ALLOW : SBX_ACCESS_GATED, SBX_ACCESS_DENY);
    }
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  text = sbx_profile_to_json (profile);
  assert_generator_form (text);
  g_assert_nonnull (strstr (text, "\\u0001"));
  g_assert_nonnull (strstr (text, "\\u007f"));
  g_assert_nonnull (strstr (text, "\\\"s\\\\\\t\\u007f\xc3\xa9\xe2\x80\xa8"));
  g_assert_nonnull (strstr (text, "\"unix-sockets\" : \"allow\""));
  g_assert_nonnull (strstr (text, "\"open-files\" : 9"));
  etu_rm_rf (tmp);
}

static void
test_data_profiles (void)
{
  g_autofree char *dir_path = g_test_build_filename (G_TEST_DIST, "..", "data", "profiles", NULL);
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *tmp = etu_make_tmpdir ("sbx-test-json-XXXXXX");
  const char *name;
  guint n = 0;
  gboolean seen_default = FALSE;

  dir = g_dir_open (dir_path, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir_path, name, NULL);
      g_autoptr(SbxProfile) profile = NULL;

      if (!g_str_has_suffix (name, ".json"))
        continue;
      profile = sbx_profile_new_from_file (path, tmp, &error);
      if (profile == NULL)
        g_error ("%s: %s", name, error->message);
      g_assert_cmpint (sbx_profile_get_isolation (profile), ==, SBX_ISOLATION_SANDBOXED);
      assert_round_trip (profile);
      n++;

      if (g_str_equal (name, "default.json"))
        {
          g_autoptr(SbxProfile) embedded = sbx_profile_new_default (tmp, &error);

          g_assert_no_error (error);
          g_assert_true (sbx_profile_equal (embedded, profile));
          seen_default = TRUE;
        }
      if (g_str_equal (name, "offline-sdk.json"))
        {
          g_assert_cmpuint (sbx_profile_get_n_roots (profile), ==, 1);
          g_assert_cmpint (sbx_profile_get_root_read (profile, 0), ==, SBX_ACCESS_ALLOW);
          g_assert_cmpint (sbx_profile_get_root_write (profile, 0), ==, SBX_ACCESS_DENY);
          g_assert_cmpint (sbx_profile_get_workspace_write (profile), ==, SBX_ACCESS_ALLOW);
        }
      if (g_str_equal (name, "review-readonly.json"))
        {
          g_assert_cmpint (sbx_profile_get_workspace_read (profile), ==, SBX_ACCESS_ALLOW);
          g_assert_cmpint (sbx_profile_get_workspace_write (profile), ==, SBX_ACCESS_DENY);
          g_assert_cmpint (sbx_profile_get_network (profile), ==, SBX_ACCESS_DENY);
        }
      if (g_str_equal (name, "workspace-build.json"))
        {
          g_assert_cmpint (sbx_profile_get_workspace_write (profile), ==, SBX_ACCESS_ALLOW);
          g_assert_cmpint (sbx_profile_get_network (profile), ==, SBX_ACCESS_DENY);
        }
    }
  g_assert_cmpuint (n, >=, 4);
  g_assert_true (seen_default);
  etu_rm_rf (tmp);
}

static void
test_default_profile (void)
{
  g_autofree char *tmp = etu_make_tmpdir ("sbx-test-json-XXXXXX");
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxProfile) in_cwd = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *cwd = g_get_current_dir ();
  char *cwd_canonical = realpath (cwd, NULL);
  guint64 expected_memory;

  expected_memory = MIN (((guint64) sysconf (_SC_PHYS_PAGES) / 2) * (guint64) sysconf (_SC_PAGESIZE),
                         G_GUINT64_CONSTANT (4) << 30);
  profile = sbx_profile_new_default (tmp, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_profile_get_workspace_root (profile), ==, tmp);
  g_assert_cmpint (sbx_profile_get_workspace_read (profile), ==, SBX_ACCESS_ALLOW);
  g_assert_cmpint (sbx_profile_get_workspace_write (profile), ==, SBX_ACCESS_ALLOW);
  g_assert_cmpint (sbx_profile_get_host_read (profile), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_host_write (profile), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_network (profile), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_command (profile), ==, SBX_ACCESS_ALLOW);
  g_assert_cmpint (sbx_profile_get_home (profile), ==, SBX_HOME_ISOLATED);
  g_assert_cmpint (sbx_profile_get_isolation (profile), ==, SBX_ISOLATION_SANDBOXED);
  g_assert_cmpuint (sbx_profile_get_n_roots (profile), ==, 0);
  g_assert_cmpuint (sbx_profile_get_max_processes (profile), ==, 1024);
  g_assert_cmpuint (sbx_profile_get_max_memory (profile), ==, expected_memory);
  g_assert_cmpuint (sbx_profile_get_max_open_files (profile), ==, 0);

  in_cwd = sbx_profile_new_default (NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_profile_get_workspace_root (in_cwd), ==, cwd_canonical);

  g_assert_null (sbx_profile_new_default ("/nonexistent-sbx-workspace", &error));
  g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID);
  g_assert_true (g_str_has_prefix (error->message, "workspace.root (/nonexistent-sbx-workspace): resolve symlinks"));
  free (cwd_canonical);
  etu_rm_rf (tmp);
}

/* The current directory is gone: the default profile must fail, not fall
 * back to "/" as g_get_current_dir() would.  (Subprocess: changes the cwd.) */
static void
test_default_removed_cwd (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *tmp = etu_make_tmpdir ("sbx-test-json-XXXXXX");
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxProfile) before = NULL;
      g_autoptr(SbxProfile) after = NULL;
      g_autoptr(SbxProfile) absolute = NULL;

      g_assert_cmpint (chdir (tmp), ==, 0);
      before = sbx_profile_new_default (NULL, &error);   /* the control */
      g_assert_no_error (error);
      g_assert_cmpstr (sbx_profile_get_workspace_root (before), ==, tmp);

      g_assert_cmpint (rmdir (tmp), ==, 0);
      after = sbx_profile_new_default (NULL, &error);
      g_assert_null (after);
      g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID);
      g_assert_true (g_str_has_prefix (error->message,
                                       "workspace.root: cannot resolve against the current directory: getcwd: "));
      g_clear_error (&error);
      g_assert_null (sbx_profile_new_from_json ("{\"version\":1,\"workspace\":{\"root\":\"x\"}}", -1, "rel", &error));
      g_assert_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID);
      g_clear_error (&error);
      /* an absolute root does not need the current directory */
      absolute = sbx_profile_new_from_json ("{\"version\":1,\"workspace\":{\"root\":\"/usr\"}}", -1, NULL, &error);
      g_assert_no_error (error);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (error_rows); i++)
    {
      g_autofree char *path = g_strdup_printf ("/profile/json/rejects/%s", error_rows[i].name);

      g_test_add_data_func (path, &error_rows[i], test_error_row);
    }
  g_test_add_func ("/profile/json/rejects/oversized", test_oversized);
  g_test_add_func ("/profile/json/rejects/file-errors", test_file_errors);
  g_test_add_func ("/profile/json/accepts/minimal-defaults", test_minimal_defaults);
  g_test_add_func ("/profile/json/accepts/workspace-resolution", test_workspace_resolution);
  g_test_add_func ("/profile/json/accepts/forms", test_accepted_forms);
  g_test_add_func ("/profile/json/round-trip", test_round_trips);
  g_test_add_func ("/profile/json/data-profiles", test_data_profiles);
  g_test_add_func ("/profile/json/writer-escapes", test_writer_escapes);
  g_test_add_func ("/profile/json/default-profile", test_default_profile);
  g_test_add_func ("/profile/json/default-profile/removed-cwd", test_default_removed_cwd);
  return g_test_run ();
}
