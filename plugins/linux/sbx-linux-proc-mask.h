/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The /proc entries a sandbox of a root caller must not read.
 *
 * Inside the sandbox uid 0 is host uid 0 (the user namespace maps the caller
 * to itself), and the kernel checks these files by mode or by capability in
 * the initial user namespace only loosely: /proc/keys lists root's keyrings,
 * /proc/kmsg and the *info files give kernel memory layout and activity.
 * The list follows the container runtimes' masked paths (runc's default
 * spec: kcore, keys, latency_stats, timer_list, timer_stats, sched_debug,
 * acpi, scsi, asound; plus the root-only files runtimes leave to the
 * capability checks they drop).  /proc/sys, /proc/sysrq-trigger, /proc/bus,
 * /proc/fs and /proc/irq need no entry: the whole procfs is mounted
 * read-only.
 *
 * Rung 1 covers each file with an empty unreadable file and each directory
 * with an empty read-only tmpfs on the fresh procfs it adds to the view
 * (child code: the tables are immutable data).  Absent entries are skipped.
 * Rung 2 adds no /proc: the host's is visible only where the profile lets
 * the host be read, and the report says so (sbx-linux-spec.c).
 *
 * Paths are relative to the root ("proc/keys"), so child code can open them
 * beneath the new root; "/" + entry is the host path.
 */
static const char *const sbx_linux_proc_masked_files[] = {
  "proc/kcore", "proc/keys", "proc/key-users", "proc/kmsg", "proc/kallsyms",
  "proc/latency_stats", "proc/timer_list", "proc/timer_stats", "proc/sched_debug",
  "proc/slabinfo", "proc/vmallocinfo", "proc/iomem", "proc/ioports",
  "proc/pagetypeinfo", "proc/kpagecount", "proc/kpageflags", "proc/kpagecgroup",
  "proc/modules", "proc/mtrr", "proc/dma", "proc/lock_stat", "proc/sysrq-trigger",
};

static const char *const sbx_linux_proc_masked_dirs[] = {
  "proc/acpi", "proc/scsi", "proc/asound", "proc/driver", "proc/tty/driver",
};
