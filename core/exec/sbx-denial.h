/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_DENIAL_H
#define SBX_DENIAL_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <glib-object.h>
#include "sbx-version.h"

G_BEGIN_DECLS

/**
 * SbxDenialOperation:
 * @SBX_DENIAL_OPERATION_READ: reading a file. Since: 0.2
 * @SBX_DENIAL_OPERATION_WRITE: creating or writing a file. Since: 0.2
 * @SBX_DENIAL_OPERATION_EXEC: executing a file. Since: 0.2
 * @SBX_DENIAL_OPERATION_LIST: listing a directory. Since: 0.2
 * @SBX_DENIAL_OPERATION_CONNECT: opening a network connection to a
 *   host:port. Since: 0.2
 * @SBX_DENIAL_OPERATION_RESOLVE: resolving a host name. Since: 0.2
 * @SBX_DENIAL_OPERATION_UNIX_CONNECT: connecting to a unix socket of the
 *   host. Since: 0.2
 * @SBX_DENIAL_OPERATION_COMMAND_START: starting a command under a profile
 *   that gates or denies command execution. Since: 0.2
 *
 * What a sandboxed tool tried when it was refused: the operation of a
 * [struct@Sbx.Denial].
 *
 * Since: 0.2
 */
typedef enum /*< prefix=SBX_DENIAL_OPERATION >*/
{
  SBX_DENIAL_OPERATION_READ          = 0,
  SBX_DENIAL_OPERATION_WRITE         = 1,
  SBX_DENIAL_OPERATION_EXEC          = 2,
  SBX_DENIAL_OPERATION_LIST          = 3,
  SBX_DENIAL_OPERATION_CONNECT       = 4,
  SBX_DENIAL_OPERATION_RESOLVE       = 5,
  SBX_DENIAL_OPERATION_UNIX_CONNECT  = 6,
  SBX_DENIAL_OPERATION_COMMAND_START = 7,
} SbxDenialOperation;

typedef struct _SbxDenial SbxDenial;

#define SBX_TYPE_DENIAL (sbx_denial_get_type ())
SBX_AVAILABLE_IN_0_2
GType               sbx_denial_get_type          (void) G_GNUC_CONST;
SBX_AVAILABLE_IN_0_2
SbxDenial          *sbx_denial_ref               (SbxDenial *self);
SBX_AVAILABLE_IN_0_2
void                sbx_denial_unref             (SbxDenial *self);

SBX_AVAILABLE_IN_0_2
SbxDenialOperation  sbx_denial_get_operation     (SbxDenial *self);
SBX_AVAILABLE_IN_0_2
const char         *sbx_denial_get_target        (SbxDenial *self);
SBX_AVAILABLE_IN_0_2
const char *const  *sbx_denial_get_argv          (SbxDenial *self);
SBX_AVAILABLE_IN_0_2
gint64              sbx_denial_get_pid           (SbxDenial *self);
SBX_AVAILABLE_IN_0_2
const char         *sbx_denial_get_process_name  (SbxDenial *self);
SBX_AVAILABLE_IN_0_2
const char         *sbx_denial_get_mechanism     (SbxDenial *self);
SBX_AVAILABLE_IN_0_2
guint64             sbx_denial_get_count         (SbxDenial *self);
SBX_AVAILABLE_IN_0_2
const char         *sbx_denial_get_grant_class   (SbxDenial *self);
SBX_AVAILABLE_IN_0_2
const char         *sbx_denial_get_grant_target  (SbxDenial *self);
SBX_AVAILABLE_IN_0_2
const char         *sbx_denial_get_reason        (SbxDenial *self);
SBX_AVAILABLE_IN_0_2
char               *sbx_denial_to_string         (SbxDenial *self);

SBX_AVAILABLE_IN_0_2
const char         *sbx_denial_operation_to_string (SbxDenialOperation operation);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxDenial, sbx_denial_unref)

G_END_DECLS

#endif /* SBX_DENIAL_H */
