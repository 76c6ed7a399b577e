/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seccomp program's layout, shared by the parent side (sbx-seccomp.c,
 * which builds it once per executor) and the child side
 * (sbx-linux-child-lsm.c, which loads it between clone() and execve()).
 * Plain data only.  Never installed.
 */
#pragma once

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
};
