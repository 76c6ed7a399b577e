/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-fs-resolve.h: the filesystem precedence model of the plugin ABI, as
 * code.  Installed with sbx-plugin-1 (<sbx/sbx-fs-resolve.h>) next to
 * sbx-plugin-abi.h; plain C11 with no dependency but the C library's
 * <string.h>, header-only, so a backend built with mingw and no GLib uses
 * the very function the core and the Linux backend use.
 *
 * The model (SbxFsRuleV1 in sbx-plugin-abi.h): for each axis (read, exec,
 * write) on its own, among the rules that match the path and mention the
 * axis (allow or deny), the most specific decides; specificity is twice the
 * length of the rule's literal path (for a glob, of its prefix before the
 * first wildcard, trailing '/' dropped), plus one for an EXACT rule.  At a
 * tie, allows unite, denies unite, and any deny wins.  An axis no rule
 * mentions is denied.  A rule with allow == 0 and deny == 0 is malformed and
 * denies every axis.  A matching GLOB rule takes part like a literal one (its
 * specificity is its literal prefix) and, when it denies an axis, that deny
 * overrides every allow.  (The host only ever emits GLOB denies; a glob
 * allow is honoured for rule sets written by hand.)
 *
 * Paths are absolute and clean (no "//", no "/./", no "/../", no trailing
 * '/' except "/" itself), as the host guarantees for SbxFsRuleV1.path; a
 * caller resolving another path cleans it first.
 */
#ifndef SBX_FS_RESOLVE_H
#define SBX_FS_RESOLVE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sbx-plugin-abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How sbx_fs_resolve_rules() looks at @path. */
#define SBX_FS_RESOLVE_PATH  0u  /* the path itself: EXACT rules on it apply */
#define SBX_FS_RESOLVE_TREE  1u  /* what a rule on the whole tree at @path may carry:
                                  * EXACT rules never apply (they name one inode) */

/**
 * SbxFsGlobMatchFunc:
 * @pattern: a GLOB rule's pattern
 * @path: the path being resolved
 * @user_data: as given to sbx_fs_resolve_rules()
 *
 * Returns 1 when @pattern matches @path, 0 when it does not, and -1 when
 * @pattern is malformed (a malformed deny then matches every path).
 */
typedef int SbxFsGlobMatchFunc (const char *pattern, const char *path, void *user_data);

/* The deny axes of @rule, with the malformed-rule rule applied. */
static inline uint32_t
sbx_fs_rule_denied (const SbxFsRuleV1 *rule)
{
  if (rule->allow == 0 && rule->deny == 0)
    return SBX_FS_ALL;
  return rule->deny;
}

/* Does the literal (non-glob) @rule cover @path? */
static inline int
sbx_fs_rule_covers (const SbxFsRuleV1 *rule,
                    const char        *path,
                    uint32_t           mode)
{
  size_t len;

  if (rule->flags & SBX_FS_RULE_EXACT)
    return mode == SBX_FS_RESOLVE_PATH && strcmp (rule->path, path) == 0;
  if (strcmp (rule->path, "/") == 0)
    return 1;
  len = strlen (rule->path);
  return strncmp (rule->path, path, len) == 0 && (path[len] == '\0' || path[len] == '/');
}

/* Specificity of @rule: 2 x the length of its literal part, +1 when EXACT. */
static inline int64_t
sbx_fs_rule_specificity (const SbxFsRuleV1 *rule)
{
  size_t len;

  if (rule->flags & SBX_FS_RULE_GLOB)
    {
      len = strcspn (rule->path, "*?[");
      while (len > 1 && rule->path[len - 1] == '/')
        len--;
    }
  else
    len = strlen (rule->path);
  return (int64_t) len * 2 + ((rule->flags & SBX_FS_RULE_EXACT) ? 1 : 0);
}

/**
 * sbx_fs_resolve_rules:
 * @rules: the policy's rules
 * @n_rules: how many
 * @path: an absolute, clean path
 * @mode: %SBX_FS_RESOLVE_PATH or %SBX_FS_RESOLVE_TREE
 * @glob_match: (nullable): matcher for GLOB rules
 * @user_data: passed to @glob_match
 *
 * Returns the SBX_FS_* axes the rules grant at @path.  With @glob_match
 * NULL, GLOB rules are left out: the answer is then an upper bound that the
 * caller must narrow by the glob denies through a mechanism of its own (the
 * Linux backend masks the matching files).
 */
static inline uint32_t
sbx_fs_resolve_rules (const SbxFsRuleV1  *rules,
                      size_t              n_rules,
                      const char         *path,
                      uint32_t            mode,
                      SbxFsGlobMatchFunc *glob_match,
                      void               *user_data)
{
  static const uint32_t axes[3] = { SBX_FS_READ, SBX_FS_EXEC, SBX_FS_WRITE };
  uint32_t glob_denied = 0;
  uint32_t result = 0;
  size_t a, i;

  for (a = 0; a < 3; a++)
    {
      uint32_t axis = axes[a];
      int64_t best = -1;
      int allowed = 0, denied = 0;

      for (i = 0; i < n_rules; i++)
        {
          const SbxFsRuleV1 *rule = &rules[i];
          uint32_t rule_deny = sbx_fs_rule_denied (rule);
          int rule_allows = (rule->allow & axis) != 0;
          int rule_denies = (rule_deny & axis) != 0;
          int64_t spec;

          if (!rule_allows && !rule_denies)
            continue;
          if (rule->flags & SBX_FS_RULE_GLOB)
            {
              int m;

              if (glob_match == NULL)
                continue;
              m = glob_match (rule->path, path, user_data);
              /* a malformed pattern matches every path on the deny side and
               * none on the allow side: it fails closed both ways */
              if (m < 0)
                m = rule_denies;
              if (!m)
                continue;
              if (rule_denies)
                glob_denied |= axis;   /* glob denies override every allow */
            }
          else if (!sbx_fs_rule_covers (rule, path, mode))
            continue;
          spec = sbx_fs_rule_specificity (rule);
          if (spec > best)
            {
              best = spec;
              allowed = rule_allows;
              denied = rule_denies;
            }
          else if (spec == best)
            {
              allowed = allowed || rule_allows;
              denied = denied || rule_denies;
            }
        }
      if (best >= 0 && allowed && !denied)
        result |= axis;
    }
  return result & ~glob_denied;
}

#ifdef __cplusplus
}
#endif

#endif /* SBX_FS_RESOLVE_H */
