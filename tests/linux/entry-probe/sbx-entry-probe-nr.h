/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The system calls sbx-entry-probe makes, by name, and a fallback for each
 * one the including architecture header lacks: -1 (absent on that entry
 * path), except fchmodat2, which is newer than some installed headers and
 * has the same number in the unified range of every x86 ABI.
 * Include after <asm/unistd_{64,32,x32}.h>; SBX_PROBE_NR_BASE is 0, or
 * __X32_SYSCALL_BIT for x32.
 */
#pragma once

#ifndef __NR_socket
#define __NR_socket (-1)
#endif
#ifndef __NR_socketpair
#define __NR_socketpair (-1)
#endif
#ifndef __NR_sendto
#define __NR_sendto (-1)
#endif
#ifndef __NR_connect
#define __NR_connect (-1)
#endif
#ifndef __NR_bind
#define __NR_bind (-1)
#endif
#ifndef __NR_listen
#define __NR_listen (-1)
#endif
#ifndef __NR_close
#define __NR_close (-1)
#endif
#ifndef __NR_socketcall
#define __NR_socketcall (-1)
#endif
#ifndef __NR_ipc
#define __NR_ipc (-1)
#endif
#ifndef __NR_setns
#define __NR_setns (-1)
#endif
#ifndef __NR_unshare
#define __NR_unshare (-1)
#endif
#ifndef __NR_clone
#define __NR_clone (-1)
#endif
#ifndef __NR_clone3
#define __NR_clone3 (-1)
#endif
#ifndef __NR_mount
#define __NR_mount (-1)
#endif
#ifndef __NR_umount2
#define __NR_umount2 (-1)
#endif
#ifndef __NR_pivot_root
#define __NR_pivot_root (-1)
#endif
#ifndef __NR_move_mount
#define __NR_move_mount (-1)
#endif
#ifndef __NR_open_tree
#define __NR_open_tree (-1)
#endif
#ifndef __NR_fsopen
#define __NR_fsopen (-1)
#endif
#ifndef __NR_fsmount
#define __NR_fsmount (-1)
#endif
#ifndef __NR_fsconfig
#define __NR_fsconfig (-1)
#endif
#ifndef __NR_fspick
#define __NR_fspick (-1)
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr (-1)
#endif
#ifndef __NR_chroot
#define __NR_chroot (-1)
#endif
#ifndef __NR_keyctl
#define __NR_keyctl (-1)
#endif
#ifndef __NR_add_key
#define __NR_add_key (-1)
#endif
#ifndef __NR_request_key
#define __NR_request_key (-1)
#endif
#ifndef __NR_bpf
#define __NR_bpf (-1)
#endif
#ifndef __NR_perf_event_open
#define __NR_perf_event_open (-1)
#endif
#ifndef __NR_userfaultfd
#define __NR_userfaultfd (-1)
#endif
#ifndef __NR_ptrace
#define __NR_ptrace (-1)
#endif
#ifndef __NR_process_vm_readv
#define __NR_process_vm_readv (-1)
#endif
#ifndef __NR_process_vm_writev
#define __NR_process_vm_writev (-1)
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd (-1)
#endif
#ifndef __NR_kcmp
#define __NR_kcmp (-1)
#endif
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup (-1)
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter (-1)
#endif
#ifndef __NR_io_uring_register
#define __NR_io_uring_register (-1)
#endif
#ifndef __NR_open_by_handle_at
#define __NR_open_by_handle_at (-1)
#endif
#ifndef __NR_name_to_handle_at
#define __NR_name_to_handle_at (-1)
#endif
#ifndef __NR_init_module
#define __NR_init_module (-1)
#endif
#ifndef __NR_finit_module
#define __NR_finit_module (-1)
#endif
#ifndef __NR_delete_module
#define __NR_delete_module (-1)
#endif
#ifndef __NR_kexec_load
#define __NR_kexec_load (-1)
#endif
#ifndef __NR_kexec_file_load
#define __NR_kexec_file_load (-1)
#endif
#ifndef __NR_reboot
#define __NR_reboot (-1)
#endif
#ifndef __NR_swapon
#define __NR_swapon (-1)
#endif
#ifndef __NR_swapoff
#define __NR_swapoff (-1)
#endif
#ifndef __NR_acct
#define __NR_acct (-1)
#endif
#ifndef __NR_quotactl
#define __NR_quotactl (-1)
#endif
#ifndef __NR_quotactl_fd
#define __NR_quotactl_fd (-1)
#endif
#ifndef __NR_syslog
#define __NR_syslog (-1)
#endif
#ifndef __NR_iopl
#define __NR_iopl (-1)
#endif
#ifndef __NR_ioperm
#define __NR_ioperm (-1)
#endif
#ifndef __NR_modify_ldt
#define __NR_modify_ldt (-1)
#endif
#ifndef __NR_ioctl
#define __NR_ioctl (-1)
#endif
#ifndef __NR_personality
#define __NR_personality (-1)
#endif
#ifndef __NR_mknod
#define __NR_mknod (-1)
#endif
#ifndef __NR_mknodat
#define __NR_mknodat (-1)
#endif
#ifndef __NR_chmod
#define __NR_chmod (-1)
#endif
#ifndef __NR_fchmod
#define __NR_fchmod (-1)
#endif
#ifndef __NR_fchmodat
#define __NR_fchmodat (-1)
#endif
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 (SBX_PROBE_NR_BASE + 452)
#endif
#ifndef __NR_open
#define __NR_open (-1)
#endif
#ifndef __NR_openat
#define __NR_openat (-1)
#endif
#ifndef __NR_creat
#define __NR_creat (-1)
#endif
#ifndef __NR_openat2
#define __NR_openat2 (-1)
#endif
#ifndef __NR_unlink
#define __NR_unlink (-1)
#endif
#ifndef __NR_mkdir
#define __NR_mkdir (-1)
#endif
#ifndef __NR_rmdir
#define __NR_rmdir (-1)
#endif
#ifndef __NR_inotify_init1
#define __NR_inotify_init1 (-1)
#endif
#ifndef __NR_inotify_add_watch
#define __NR_inotify_add_watch (-1)
#endif
#ifndef __NR_fanotify_init
#define __NR_fanotify_init (-1)
#endif
#ifndef __NR_fanotify_mark
#define __NR_fanotify_mark (-1)
#endif
#ifndef __NR_shmget
#define __NR_shmget (-1)
#endif
#ifndef __NR_shmat
#define __NR_shmat (-1)
#endif
#ifndef __NR_shmdt
#define __NR_shmdt (-1)
#endif
#ifndef __NR_shmctl
#define __NR_shmctl (-1)
#endif
#ifndef __NR_msgget
#define __NR_msgget (-1)
#endif
#ifndef __NR_msgctl
#define __NR_msgctl (-1)
#endif
#ifndef __NR_semget
#define __NR_semget (-1)
#endif
#ifndef __NR_semctl
#define __NR_semctl (-1)
#endif
#ifndef __NR_getpid
#define __NR_getpid (-1)
#endif
#ifndef __NR_exit
#define __NR_exit (-1)
#endif
#ifndef __NR_msgsnd
#define __NR_msgsnd (-1)
#endif
#ifndef __NR_msgrcv
#define __NR_msgrcv (-1)
#endif
#ifndef __NR_semop
#define __NR_semop (-1)
#endif
#ifndef __NR_semtimedop
#define __NR_semtimedop (-1)
#endif
#ifndef __NR_semtimedop_time64
#define __NR_semtimedop_time64 (-1)
#endif
#ifndef __NR_lookup_dcookie
#define __NR_lookup_dcookie (-1)
#endif
#ifndef __NR_nfsservctl
#define __NR_nfsservctl (-1)
#endif
#ifndef __NR_uselib
#define __NR_uselib (-1)
#endif
#ifndef __NR_vm86
#define __NR_vm86 (-1)
#endif
#ifndef __NR_vm86old
#define __NR_vm86old (-1)
#endif
#ifndef __NR_umount
#define __NR_umount (-1)
#endif
#ifndef __NR_inotify_init
#define __NR_inotify_init (-1)
#endif
#ifndef __NR_dup
#define __NR_dup (-1)
#endif
#ifndef __NR_setsid
#define __NR_setsid (-1)
#endif
#ifndef __NR_getpgid
#define __NR_getpgid (-1)
#endif

#define SBX_PROBE_CALLS \
  X (socket) \
  X (socketpair) \
  X (sendto) \
  X (connect) \
  X (bind) \
  X (listen) \
  X (close) \
  X (socketcall) \
  X (ipc) \
  X (setns) \
  X (unshare) \
  X (clone) \
  X (clone3) \
  X (mount) \
  X (umount2) \
  X (pivot_root) \
  X (move_mount) \
  X (open_tree) \
  X (fsopen) \
  X (fsmount) \
  X (fsconfig) \
  X (fspick) \
  X (mount_setattr) \
  X (chroot) \
  X (keyctl) \
  X (add_key) \
  X (request_key) \
  X (bpf) \
  X (perf_event_open) \
  X (userfaultfd) \
  X (ptrace) \
  X (process_vm_readv) \
  X (process_vm_writev) \
  X (pidfd_getfd) \
  X (kcmp) \
  X (io_uring_setup) \
  X (io_uring_enter) \
  X (io_uring_register) \
  X (open_by_handle_at) \
  X (name_to_handle_at) \
  X (init_module) \
  X (finit_module) \
  X (delete_module) \
  X (kexec_load) \
  X (kexec_file_load) \
  X (reboot) \
  X (swapon) \
  X (swapoff) \
  X (acct) \
  X (quotactl) \
  X (quotactl_fd) \
  X (syslog) \
  X (iopl) \
  X (ioperm) \
  X (modify_ldt) \
  X (ioctl) \
  X (personality) \
  X (mknod) \
  X (mknodat) \
  X (chmod) \
  X (fchmod) \
  X (fchmodat) \
  X (fchmodat2) \
  X (open) \
  X (openat) \
  X (creat) \
  X (openat2) \
  X (unlink) \
  X (mkdir) \
  X (rmdir) \
  X (inotify_init1) \
  X (inotify_add_watch) \
  X (fanotify_init) \
  X (fanotify_mark) \
  X (shmget) \
  X (shmat) \
  X (shmdt) \
  X (shmctl) \
  X (msgget) \
  X (msgctl) \
  X (semget) \
  X (semctl) \
  X (getpid) \
  X (exit) \
  X (msgsnd) \
  X (msgrcv) \
  X (semop) \
  X (semtimedop) \
  X (semtimedop_time64) \
  X (lookup_dcookie) \
  X (nfsservctl) \
  X (uselib) \
  X (vm86) \
  X (vm86old) \
  X (umount) \
  X (inotify_init) \
  X (dup) \
  X (setsid) \
  X (getpgid)

typedef struct
{
  const char *name;
  long        nr;
} SbxProbeNr;

extern const SbxProbeNr sbx_probe_nr_native[];
extern const SbxProbeNr sbx_probe_nr_i386[];
extern const SbxProbeNr sbx_probe_nr_x32[];
