/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seccomp program's layout, shared by the parent side (sbx-seccomp.c,
 * which builds it once per executor), the child side
 * (sbx-linux-child-lsm.c, which loads it between clone() and execve()) and
 * the build-time generator (sbx-seccomp-gen.c, which writes the table
 * sbx-seccomp-table.c).  Plain data only.  Never installed.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>

#include "sbx-seccomp.h"

struct _SbxSeccompProgram
{
  struct sock_filter *filter;
  unsigned short      len;
  uint32_t            enforces;
  char               *arches;
  SbxSeccompRule     *rules;     /* the rule table the filter was built from (parent side only) */
  size_t              n_rules;
  uint32_t            native_arch;   /* SCMP_ARCH_* the program was generated for */
  int                 last_known;    /* highest system call number known to the generation */
  int                 precompiled;   /* filter and arches belong to the build-time table */
};

/* A rule of the build-time table: SbxSeccompRule without pointers (the
 * name is an offset into sbx_seccomp_rule_names), so the table needs no
 * load-time relocation; sbx_seccomp_program_new() unpacks the rules of the
 * program it takes. */
typedef struct
{
  uint16_t name;
  int16_t  err;
  uint8_t  multiplexer;
  uint8_t  n_args;
  struct
  {
    uint8_t  arg;
    uint8_t  op;
    uint64_t mask;
    uint64_t value;
  } args[3];
} SbxSeccompPackedRule;

/* One program of the build-time table: the normalised options it was
 * generated for (the key), and the result. */
typedef struct
{
  int                       rung;
  uint32_t                  net_mode;
  int                       landlock_abi;          /* normalised: 1 when truncation needs rules, else 0 */
  int                       allow_unix_sockets;
  int                       caller_terminal_shared;
  uint32_t                  native_arch;
  const struct sock_filter *filter;
  unsigned short            len;
  uint32_t                  enforces;
  const char               *arches;
  const SbxSeccompPackedRule *rules;
  size_t                    n_rules;
  int                       last_known;
} SbxSeccompPrecompiled;

/* sbx-seccomp-table.c (generated; empty when the build could not run its
 * generator). */
extern const SbxSeccompPrecompiled sbx_seccomp_precompiled[];
extern const size_t                sbx_seccomp_n_precompiled;
extern const char                  sbx_seccomp_rule_names[];   /* NUL-separated */

/* Generates the program for @options with libseccomp, reporting nothing:
 * what sbx_seccomp_program_new() does when the table has no program for the
 * options, and what the generator and the tests call. */
SbxSeccompProgram *sbx_seccomp_program_generate      (const SbxSeccompOptions *options,
                                                      GError                 **error);
/* The run-time check of a table program (see sbx-seccomp.c). */
gboolean           sbx_seccomp_check_filter          (const struct sock_filter *filter,
                                                      size_t                    len,
                                                      GError                  **error);
/* What sbx_seccomp_program_new() reports for @program (from the program
 * alone, wherever it came from). */
void               sbx_seccomp_program_report        (const SbxSeccompProgram *program,
                                                      const SbxLinuxReporter  *reporter);
/* TRUE when @program came from the build-time table. */
gboolean           sbx_seccomp_program_is_precompiled (const SbxSeccompProgram *program);
