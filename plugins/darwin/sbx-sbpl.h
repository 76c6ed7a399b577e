/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Seatbelt profile (SBPL) compiler of the darwin-seatbelt backend.
 *
 * Portable C11 against sbx-plugin-abi.h and libc only (no macOS headers, no
 * GLib), so it builds, runs and is tested on every host: the plugin's
 * explain() and the golden tests use it on Linux, the macOS spawn glue feeds
 * its output to sandbox-exec.
 *
 * What it emits, and the rules it keeps (the Go library's Seatbelt
 * profile with its holes fixed):
 *  - "(deny default)" and a fixed preamble with no broad file-read*,
 *    file-write* or process-exec* allow, no wildcard mach-lookup (only the
 *    named services libc needs), signals and process-info only within the
 *    same sandbox;
 *  - the IR's filesystem rules in ascending precedence (2 x length of the
 *    canonical path, +1 when EXACT), allows before denies inside one
 *    precedence: SBPL applies the last matching rule, so the most specific
 *    rule decides and a deny wins a tie, exactly as sbx_fs_resolve() does;
 *    EXACT becomes (literal ...), a tree (subpath ...);
 *  - every path under both spellings of macOS's /tmp, /var and /etc symlinks
 *    (/private/...), for allows and for carve-out denies alike, so an alias
 *    cannot bypass a deny;
 *  - the IR's runtime closure and device rules (which name the host's own
 *    paths) are replaced by the macOS closure below, each row with only the
 *    bits it needs (libraries are readable and mappable, not executable);
 *  - glob denies last, as (regex #"...") when the pattern is plain
 *    printable ASCII, else as a deny of the literal prefix (narrower);
 *  - paths whose bytes are not all printable ASCII never appear in the text:
 *    they travel as sandbox parameters and the text says (param "SBX_Pn"),
 *    so no byte of a path can end a string or a form;
 *  - network: nothing under DENY, (allow network*) under OPEN, only the
 *    proxy port on localhost under PROXY, the listed TCP ports (and the
 *    mDNSResponder socket when DNS is asked) under PORTS.
 */
#ifndef SBX_SBPL_H
#define SBX_SBPL_H

#include <stddef.h>
#include <stdint.h>

#include <sbx/sbx-plugin-abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Optional symlink resolver (the macOS glue passes one based on
 * realpath(3)): returns a malloc'd canonical spelling of @path, or NULL when
 * it has none (missing path, no change).  The compiler then emits that
 * spelling too. */
typedef char *(*SbxSbplResolveFunc) (const char *path, void *data);

typedef struct
{
  SbxSbplResolveFunc resolve;       /* NULL: lexical aliases only */
  void              *resolve_data;
} SbxSbplOptions;

typedef struct
{
  char    *feature;
  uint32_t status;    /* SBX_ABI_REPORT_* */
  char    *detail;
} SbxSbplEntry;

typedef struct
{
  char         *text;          /* the profile, NUL-terminated, printable ASCII + '\n' */
  size_t        n_params;
  char        **param_keys;    /* "SBX_P0", ... */
  char        **param_values;  /* the raw path bytes */
  size_t        n_entries;
  SbxSbplEntry *entries;       /* report entries of the compilation */
  uint32_t      level;         /* SBX_ABI_LEVEL_* the profile achieves on macOS */
  uint64_t      guarantees;    /* SBX_ABI_GUARANTEE_* it enforces on macOS */
} SbxSbplProfile;

/* Compiles @policy.  Returns SBX_STATUS_OK and *out, or another status with
 * a message in @err (naming the rule and value at fault). */
int32_t sbx_sbpl_compile      (const SbxPolicyV1     *policy,
                               const SbxSbplOptions  *options,
                               SbxSbplProfile       **out,
                               char                  *err,
                               size_t                 err_size);
void    sbx_sbpl_profile_free (SbxSbplProfile        *profile);

/* The macOS runtime closure the compiler emits in place of the IR's
 * RUNTIME and DEVICE rules (for tests and documentation).  @axes are
 * SBX_FS_READ / _EXEC / _WRITE plus SBX_SBPL_AXIS_MAP (file-map-executable
 * without process-exec: libraries). */
#define SBX_SBPL_AXIS_MAP  8u
#define SBX_SBPL_ROW_EXACT 1u

typedef struct
{
  const char *path;    /* canonical (/private/...) spelling */
  uint32_t    axes;
  uint32_t    flags;   /* SBX_SBPL_ROW_EXACT */
} SbxSbplRuntimeRow;

const SbxSbplRuntimeRow *sbx_sbpl_runtime_closure (size_t *n_rows);

/* The text plus, as comments, each parameter with its value escaped (C
 * style: \\, \", \n, \xHH for every byte outside printable ASCII).  What
 * explain prints.  malloc'd. */
char   *sbx_sbpl_profile_describe (const SbxSbplProfile *profile);

#ifdef __cplusplus
}
#endif

#endif /* SBX_SBPL_H */
