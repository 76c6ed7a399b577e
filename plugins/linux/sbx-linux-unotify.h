/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The connect supervisor (sbx-linux-unotify.c): serves the seccomp listener
 * of each sandbox's filter (SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED) on one
 * thread for the whole process, from start() to stop().
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>

#include <sbx/sbx-plugin-abi.h>

G_BEGIN_DECLS

typedef struct
{
  int             rung;            /* SBX_LINUX_RUNG_* */
  gboolean        private_netns;   /* the sandbox has a network namespace of its own */
  /* Landlock's TCP connect rule of the policy, which the supervisor's own
   * connect does not inherit: TRUE when TCP connects are limited to
   * @tcp_ports[n_tcp_ports]. */
  gboolean        tcp_ruled;
  const uint64_t *tcp_ports;
  size_t          n_tcp_ports;
  /* NULL-terminated (or NULL): host sockets the target may connect to by
   * exactly this absolute path (the profile's "host-sockets") */
  const char * const *host_sockets;
  /* Where every refusal of a unix connect is reported (the spawn request's
   * denial_sink, copied; NULL: nowhere).  Valid until stop(). */
  const SbxBackendDenialSinkV1 *denials;
} SbxUnotifyPolicy;

typedef struct _SbxUnotify SbxUnotify;

/* Starts serving @listener (taken) for the sandbox whose sbx-init is
 * @init_pid (in our pid namespace); @diag (taken) is a NETLINK_SOCK_DIAG
 * socket of the sandbox's network namespace.  The policy is copied.  NULL
 * with @error set (both descriptors closed) when the thread cannot start. */
SbxUnotify *sbx_unotify_start (int                     listener,
                               int                     diag,
                               pid_t                   init_pid,
                               const SbxUnotifyPolicy *policy,
                               GError                **error);
/* Unregisters the sandbox (the thread never looks at it again) and closes
 * everything it held.  NULL is allowed. */
void        sbx_unotify_stop  (SbxUnotify *self);

typedef struct _SbxLinuxSpec SbxLinuxSpec;

/* The spawn's side: the socket pair B sends the listener over (close-on-
 * exec, above stdio), and the supervisor started from what arrived on
 * @sock for the sandbox of @spec whose sbx-init is @init_pid.  FALSE/NULL
 * with *error_message set. */
gboolean    sbx_unotify_channel_open (int           pair[2],
                                      char        **error_message);
SbxUnotify *sbx_linux_unotify_begin  (const SbxLinuxSpec           *spec,
                                      int                           sock,
                                      pid_t                         init_pid,
                                      const SbxBackendDenialSinkV1 *denials,
                                      char                        **error_message);

G_END_DECLS
