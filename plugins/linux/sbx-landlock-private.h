/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Landlock plan's layout, shared by the parent side (sbx-landlock.c,
 * which builds it once per executor) and the child side
 * (sbx-linux-child-lsm.c, which replays it between clone() and execve()).
 * Plain data only: the child reads it through CLONE_VM and must not call
 * anything of the parent side.  Never installed.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <glib.h>

#include "sbx-landlock-compat.h"

/* ------------------------------------------------------------------------- */
/* Access sets                                                                */
/* ------------------------------------------------------------------------- */

#define LL_FS_ABI1 ((1ULL << 13) - 1)   /* EXECUTE .. MAKE_SYM */

/* Rights a rule on a non-directory may carry (the kernel refuses others). */
#define LL_FILE_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
                        LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
                        LANDLOCK_ACCESS_FS_IOCTL_DEV)

#define LL_READ_FILE   (LANDLOCK_ACCESS_FS_READ_FILE)
#define LL_READ_DIR    (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_EXEC        (LANDLOCK_ACCESS_FS_EXECUTE)
#define LL_WRITE_FILE  (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)
#define LL_WRITE_DIR   (LL_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
                        LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | \
                        LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | \
                        LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER | \
                        LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define LL_DEVICE_EXTRA (LANDLOCK_ACCESS_FS_IOCTL_DEV)

#define RULE_FD    1  /* fd is the inode itself */
#define RULE_NAME  2  /* fd is the pinned parent directory, name the entry */

typedef struct
{
  uint64_t    access;     /* already masked to handled_fs and to the file type */
  uint64_t    ino;
  uint32_t    dev_major;
  uint32_t    dev_minor;
  uint32_t    type;       /* S_IFMT bits the inode must have */
  int         fd;
  int         kind;       /* RULE_* */
  const char *name;       /* RULE_NAME: entry name in the parent (owned by names) */
} LlRule;

struct _SbxLandlockPlan
{
  int           abi;
  int           rung;
  uint64_t      handled_fs;
  uint64_t      handled_net;
  uint64_t      scoped;
  size_t        attr_size;
  uint32_t      enforces;

  LlRule       *rules;
  size_t        n_rules;
  uint64_t     *ports;      /* CONNECT_TCP rules */
  size_t        n_ports;
  int          *fds;        /* every fd the plan owns */
  size_t        n_fds;
  GStringChunk *names;
};

/* The access sets of the view-only extra rules (sbx-landlock.h's
 * sbx_landlock_plan_access_*), for child code: no argument checks, no
 * logging, plain arithmetic on the plan. */
static inline uint64_t
sbx_landlock_plan_child_read_dir (const SbxLandlockPlan *plan)
{
  return LL_READ_DIR & plan->handled_fs;
}

static inline uint64_t
sbx_landlock_plan_child_rw_dir (const SbxLandlockPlan *plan)
{
  return (LL_READ_DIR | LL_WRITE_DIR) & plan->handled_fs;
}

static inline uint64_t
sbx_landlock_plan_child_rw_file (const SbxLandlockPlan *plan)
{
  return (LL_READ_FILE | LL_WRITE_FILE | LL_DEVICE_EXTRA) & plan->handled_fs;
}
