/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <sbx/sbx-fs-resolve.h> on its own: no GLib, no library, as a third-party
 * plugin uses it.  A table of rule sets and paths with the axes the model
 * grants (the precedence rules are written out in the header); the core's
 * sbx_fs_resolve() tests (test-policy) cover the same model through the
 * core, this one proves the header needs nothing else and covers what only
 * plugins use: TREE mode and a NULL glob matcher.
 */
#include "sbx-fs-resolve.h"

#include <stdio.h>

#define R SBX_FS_READ
#define X SBX_FS_EXEC
#define W SBX_FS_WRITE
#define RWX SBX_FS_ALL
#define RULE(flags_, path_, allow_, deny_) \
  { .struct_size = sizeof (SbxFsRuleV1), .flags = (flags_), .allow = (allow_), .deny = (deny_), .fd = -1, \
    .path = (path_) }

typedef struct
{
  const char  *name;
  SbxFsRuleV1  rules[4];
  size_t       n;
  const char  *path;
  uint32_t     mode;
  int          with_glob;   /* pass the toy matcher below */
  uint32_t     expect;
} Case;

/* A toy matcher: a literal prefix up to the first star matches (so the
 * pattern "/w/" followed by a star matches every path under /w/);
 * "[bad" is malformed. */
static int
toy_glob (const char *pattern, const char *path, void *user_data)
{
  size_t n = strcspn (pattern, "*");

  (void) user_data;
  if (pattern[0] == '[')
    return -1;
  return strncmp (pattern, path, n) == 0 ? 1 : 0;
}

static const Case cases[] = {
  { "no-rule-denies", { RULE (0, "/a", R, 0) }, 1, "/b", SBX_FS_RESOLVE_PATH, 0, 0 },
  { "tree-covers-descendant", { RULE (0, "/a", R | W, 0) }, 1, "/a/b/c", SBX_FS_RESOLVE_PATH, 0, R | W },
  { "prefix-is-not-a-parent", { RULE (0, "/a", R, 0) }, 1, "/ab", SBX_FS_RESOLVE_PATH, 0, 0 },
  { "root-covers-all", { RULE (0, "/", RWX, 0) }, 1, "/x/y", SBX_FS_RESOLVE_PATH, 0, RWX },
  { "most-specific-wins", { RULE (0, "/", RWX, 0), RULE (0, "/a", 0, W) }, 2, "/a/f", SBX_FS_RESOLVE_PATH, 0,
    R | X },
  { "per-axis", { RULE (0, "/", R, 0), RULE (0, "/a", 0, W) }, 2, "/a/f", SBX_FS_RESOLVE_PATH, 0, R },
  { "exact-beats-tree", { RULE (0, "/a", 0, R), RULE (SBX_FS_RULE_EXACT, "/a", R, 0) }, 2, "/a",
    SBX_FS_RESOLVE_PATH, 0, R },
  { "exact-not-in-tree-mode", { RULE (0, "/a", 0, R), RULE (SBX_FS_RULE_EXACT, "/a", R, 0) }, 2, "/a",
    SBX_FS_RESOLVE_TREE, 0, 0 },
  { "exact-not-descendants", { RULE (SBX_FS_RULE_EXACT, "/a", R, 0) }, 1, "/a/b", SBX_FS_RESOLVE_PATH, 0, 0 },
  { "deny-wins-tie", { RULE (0, "/a", R, 0), RULE (0, "/a", 0, R) }, 2, "/a", SBX_FS_RESOLVE_PATH, 0, 0 },
  { "allows-unite-at-tie", { RULE (0, "/a", R, 0), RULE (0, "/a", W, 0) }, 2, "/a", SBX_FS_RESOLVE_PATH, 0,
    R | W },
  { "malformed-rule-denies-all", { RULE (0, "/", RWX, 0), RULE (0, "/a", 0, 0) }, 2, "/a/b",
    SBX_FS_RESOLVE_PATH, 0, 0 },
  { "glob-ignored-without-matcher", { RULE (0, "/", RWX, 0), RULE (SBX_FS_RULE_GLOB, "/w/*", 0, R) }, 2,
    "/w/k", SBX_FS_RESOLVE_PATH, 0, RWX },
  { "glob-deny-overrides", { RULE (0, "/", RWX, 0), RULE (0, "/w/k/deep", RWX, 0),
                             RULE (SBX_FS_RULE_GLOB, "/w/*", 0, R) }, 3,
    "/w/k/deep", SBX_FS_RESOLVE_PATH, 1, X | W },
  { "malformed-glob-deny-matches-all", { RULE (0, "/", RWX, 0), RULE (SBX_FS_RULE_GLOB, "[bad", 0, W) }, 2,
    "/etc/x", SBX_FS_RESOLVE_PATH, 1, R | X },
  { "malformed-glob-allow-grants-nothing", { RULE (SBX_FS_RULE_GLOB, "[bad", RWX, 0) }, 1, "/x",
    SBX_FS_RESOLVE_PATH, 1, 0 },
  { "glob-prefix-specificity", { RULE (0, "/", 0, RWX), RULE (SBX_FS_RULE_GLOB, "/w/src/*", R, 0) }, 2,
    "/w/src/a.c", SBX_FS_RESOLVE_PATH, 1, R },
};

int
main (void)
{
  size_t n = sizeof cases / sizeof cases[0];
  int failed = 0;

  printf ("1..%zu\n", n);
  for (size_t i = 0; i < n; i++)
    {
      const Case *c = &cases[i];
      uint32_t got = sbx_fs_resolve_rules (c->rules, c->n, c->path, c->mode,
                                           c->with_glob ? toy_glob : NULL, NULL);

      if (got == c->expect)
        printf ("ok %zu /fs-resolve/%s\n", i + 1, c->name);
      else
        {
          printf ("not ok %zu /fs-resolve/%s\n# got %u, expected %u\n", i + 1, c->name, got, c->expect);
          failed = 1;
        }
    }
  return failed;
}
