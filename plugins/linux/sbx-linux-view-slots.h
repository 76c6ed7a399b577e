/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor's file slots (sbx-linux-view-files.c): hidden regular
 * files of the view's FUSE root that Landlock's rung-1 domain lets the
 * target read (one READ_FILE rule per slot, added by the child while it
 * builds the sandbox).  A domain never widens, so a file the supervisor
 * serves later, once a read of it was approved while the tool runs, is
 * served as one of these inodes: the supervisor answers the approved
 * path's lookup with a slot's node id, and the kernel gives the new name
 * the slot's inode, which the rule names.
 *
 * Each slot's name answers only its first lookup (the child's, before the
 * target runs); every later lookup of it is a missing name.  Plain data:
 * child code (sbx-linux-child.c) reads it.
 */
#pragma once

#define SBX_VIEW_N_SLOTS 16

/* Names no mount plan uses (the view mounts only at configured roots and
 * the fixed /proc, /dev, /sys, /tmp, /etc/hosts and resolver paths). */
#define SBX_VIEW_SLOT_PREFIX ".sbx-view-slot-"

#define SBX_VIEW_SLOT_NAMES                                                   \
  {                                                                           \
    "/" SBX_VIEW_SLOT_PREFIX "0", "/" SBX_VIEW_SLOT_PREFIX "1",               \
    "/" SBX_VIEW_SLOT_PREFIX "2", "/" SBX_VIEW_SLOT_PREFIX "3",               \
    "/" SBX_VIEW_SLOT_PREFIX "4", "/" SBX_VIEW_SLOT_PREFIX "5",               \
    "/" SBX_VIEW_SLOT_PREFIX "6", "/" SBX_VIEW_SLOT_PREFIX "7",               \
    "/" SBX_VIEW_SLOT_PREFIX "8", "/" SBX_VIEW_SLOT_PREFIX "9",               \
    "/" SBX_VIEW_SLOT_PREFIX "10", "/" SBX_VIEW_SLOT_PREFIX "11",             \
    "/" SBX_VIEW_SLOT_PREFIX "12", "/" SBX_VIEW_SLOT_PREFIX "13",             \
    "/" SBX_VIEW_SLOT_PREFIX "14", "/" SBX_VIEW_SLOT_PREFIX "15",             \
  }
