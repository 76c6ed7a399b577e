/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Grant tokens: the format, the MAC, the class table, the replay registry
 * and the filesystem identity binding.  The executor
 * (sbx-executor.c) holds the key, the clock and the registries and decides
 * the order of checks; everything here is a pure function of its arguments
 * except the filesystem probes, so the token parser can be fuzzed alone.
 *
 * Token: "sbx1" "." b64url(payload) "." b64url(HMAC-SHA256(key, payload)),
 * unpadded base64url, canonical (a re-encoding of the same bytes is refused).
 * The payload is a JSON object with exactly these members, in this order:
 *   ExecutionID, Command, WorkingDirectory, ProfileFingerprint,
 *   RouteFingerprint, GuaranteeBits, Class, Target,
 *   PathBinding (null | {CanonicalPath, ExistingPath, Identity}),
 *   ExpiryUnixMilli, Nonce (16 numbers 0..255).
 * Unlike upstream (Go's lenient decoding), unknown, missing, duplicated or
 * mistyped members are MALFORMED even after the MAC passed.
 */
#pragma once

#include <glib.h>
#include "sbx-grant.h"
#include "sbx-grant-binding-private.h"
#include "sbx-guarantees.h"

G_BEGIN_DECLS

#ifndef SBX_GRANT_KEY_SIZE
#define SBX_GRANT_KEY_SIZE       32   /* also in sbx-executor-private.h */
#endif
#define SBX_GRANT_TOKEN_PREFIX   "sbx1"
#define SBX_GRANT_NONCE_SIZE     16
#define SBX_GRANT_MAC_SIZE       32
/* Longer tokens are refused before any decoding (MALFORMED). */
#define SBX_GRANT_TOKEN_MAX      (64 * 1024)
/* Route fingerprint of an executor without an egress route. */
#define SBX_GRANT_ROUTE_DIRECT   "direct:v1"

typedef struct
{
  char            *execution_id;
  char            *command;
  char            *cwd;
  char            *profile_fingerprint;
  char            *route_fingerprint;
  guint64          guarantee_bits;
  char            *grant_class;
  char            *target;
  SbxGrantBinding *binding;           /* (nullable) filesystem path/tree classes */
  gint64           expiry_ms;         /* Unix time in milliseconds */
  guint8           nonce[SBX_GRANT_NONCE_SIZE];
} SbxGrantPayload;

void     sbx_grant_payload_clear  (SbxGrantPayload *payload);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SbxGrantPayload, sbx_grant_payload_clear)

/* safetext: non-empty, valid UTF-8, no NUL, equal to its own trimmed form
 * (no leading or trailing Unicode white space). */
gboolean sbx_grant_text_valid     (const char *text);

/* The payload's exact bytes (what the MAC covers). */
char    *sbx_grant_payload_serialize (const SbxGrantPayload *payload);
/* Strict parse of a payload (MALFORMED on any deviation).  @out is filled
 * only on success. */
gboolean sbx_grant_payload_parse  (const char       *json,
                                   gsize             length,
                                   SbxGrantPayload  *out,
                                   GError          **error);

/* Mints a token over @payload with @key (SBX_GRANT_KEY_SIZE bytes). */
char    *sbx_grant_token_mint     (const guint8          *key,
                                   const SbxGrantPayload *payload);
/* Authenticates @token with @key and parses it: MALFORMED (shape, base64,
 * JSON) or BAD_MAC.  The MAC is compared in constant time, before the
 * payload is parsed. */
gboolean sbx_grant_token_open     (const guint8     *key,
                                   const char       *token,
                                   SbxGrantPayload  *out,
                                   GError          **error);
/* The token's ID: lowercase hex SHA-256 of the whole token string. */
char    *sbx_grant_token_id       (const char *token);

/* Unpadded base64url, strict (exposed for the fuzz target and tests). */
char    *sbx_grant_b64url_encode  (const guint8 *data,
                                   gsize         len);
guint8  *sbx_grant_b64url_decode  (const char   *text,
                                   gsize         text_len,
                                   gsize        *out_len);

/* The ten classes. */
typedef enum
{
  SBX_GRANT_SHAPE_COMMAND,      /* target == command */
  SBX_GRANT_SHAPE_FS_EXACT,     /* canonical absolute path, exact entry */
  SBX_GRANT_SHAPE_FS_TREE,      /* canonical absolute path of a configured root */
  SBX_GRANT_SHAPE_FS_HOST,      /* "host:*" */
  SBX_GRANT_SHAPE_NET_BROAD,    /* "tcp:*:PORT" */
  SBX_GRANT_SHAPE_NET_PROXY,    /* "tcp:HOST:PORT", already normalised */
  SBX_GRANT_SHAPE_UNIX_SOCKET,  /* a host unix socket's clean absolute path (< 108 bytes) */
} SbxGrantShape;

typedef struct
{
  const char    *name;
  const char    *kind;        /* sbx_profile_access_for() kind */
  SbxGrantShape  shape;
  guint32        fs_allow;    /* SBX_FS_* the delta grants (filesystem classes) */
  SbxGuarantees  required;    /* achieved bits the class needs */
} SbxGrantClassInfo;

/* NULL for an unknown class. */
const SbxGrantClassInfo *sbx_grant_class_lookup (const char *grant_class);
const SbxGrantClassInfo *sbx_grant_class_nth    (guint       index);

/* Normalises @target for @info, lexically except for filesystem path and
 * tree targets, which are canonicalised with sbx_path_canonical_path() (the
 * deepest existing ancestor's symlinks resolved, a missing suffix kept).
 * Returns the target and sets *out_scope to the sbx_profile_access_for()
 * scope; MALFORMED naming the target when it does not fit the class.  A
 * NULL @target of command.start.v1 means @command. */
char    *sbx_grant_normalize_target (const SbxGrantClassInfo *info,
                                     const char              *command,
                                     const char              *target,
                                     char                   **out_scope,
                                     GError                 **error);
/* What a unix.connect.v1 grant takes from its spawn, whatever the
 * backend's compile says: every boundary a host daemon's socket defeats
 * (its daemon acts for the sandbox outside every mechanism: a session bus
 * starts programs, docker's socket is root), as the Linux backend's claims
 * withdraw them where host sockets are reachable. */
#define SBX_GRANT_UNIX_CONNECT_TAKES (SBX_GUARANTEE_READ_BOUNDARY | SBX_GUARANTEE_WRITE_BOUNDARY          \
                                      | SBX_GUARANTEE_NETWORK_BOUNDARY | SBX_GUARANTEE_ADDRESS_NETWORK \
                                      | SBX_GUARANTEE_TARGET_NETWORK)
/* unix.connect.v1: a clean absolute path (not "/") that fits a socket
 * address (< 108 bytes). */
gboolean sbx_grant_unix_socket_valid (const char *target);
/* network.broad.v1: the port of a valid "tcp:*:PORT" target, else 0. */
guint16  sbx_grant_broad_port       (const char *target);

/* Replay registry: token ID -> expiry (ms).  Bounded by live tokens: prune
 * drops every entry whose expiry < @now_ms. */
typedef struct _SbxGrantReplay SbxGrantReplay;

SbxGrantReplay *sbx_grant_replay_new      (void);
void            sbx_grant_replay_free     (SbxGrantReplay *replay);
void            sbx_grant_replay_prune    (SbxGrantReplay *replay,
                                           gint64          now_ms);
gboolean        sbx_grant_replay_contains (SbxGrantReplay *replay,
                                           const char     *id);
void            sbx_grant_replay_add      (SbxGrantReplay *replay,
                                           const char     *id,
                                           gint64          expiry_ms);
gboolean        sbx_grant_replay_remove   (SbxGrantReplay *replay,
                                           const char     *id);
guint           sbx_grant_replay_size     (SbxGrantReplay *replay);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxGrantReplay, sbx_grant_replay_free)

G_END_DECLS
