/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-http-head.h — a strict parser for HTTP/1.x message heads (request or
 * status line plus header fields, up to the empty line).  Bodies are not
 * parsed here.  Strict because the proxy sits on a trust boundary: what it
 * accepts must mean the same thing to it and to whatever it forwards to
 * (request smuggling), so everything RFC 9112 lets a recipient reject is
 * rejected: bare LF, obs-fold, whitespace before ':', control characters,
 * duplicate framing/authority fields, more than SBX_HTTP_MAX_FIELDS fields.
 * Fuzzed by tests/fuzz/fuzz-http-head.c.
 */
#ifndef SBX_HTTP_HEAD_H
#define SBX_HTTP_HEAD_H

#include <glib.h>

G_BEGIN_DECLS

#define SBX_HTTP_MAX_FIELDS 128

typedef enum
{
  SBX_HTTP_PARSE_OK,          /* a complete head; *head set */
  SBX_HTTP_PARSE_INCOMPLETE,  /* no empty line yet, and still under the limit */
  SBX_HTTP_PARSE_TOO_LARGE,   /* no complete head within max_size bytes (431) */
  SBX_HTTP_PARSE_INVALID,     /* malformed (400); *why set */
} SbxHttpParse;

typedef struct
{
  /* request: method, target; response: status, reason */
  char      *method;
  char      *target;
  guint      status;
  char      *reason;
  guint      minor_version;   /* HTTP/1.<minor>, 0 or 1 */
  GPtrArray *names;           /* (element-type utf8) field names as received */
  GPtrArray *values;          /* (element-type utf8) values, surrounding OWS removed */
  gsize      head_length;     /* bytes of the head including the final CRLF CRLF */
} SbxHttpHead;

SbxHttpParse  sbx_http_head_parse         (const char   *data,
                                           gsize         length,
                                           gsize         max_size,
                                           gboolean      response,
                                           SbxHttpHead **head,
                                           const char  **why);
void          sbx_http_head_free          (SbxHttpHead  *head);
/* The value of the only field called @name (case-insensitive), NULL when
 * absent; *count (optional) receives how many fields have that name. */
const char   *sbx_http_head_get           (SbxHttpHead  *head,
                                           const char   *name,
                                           guint        *count);
/* Whether @token is one of the comma-separated tokens of @list
 * (case-insensitive). */
gboolean      sbx_http_list_has_token     (const char   *list,
                                           const char   *token);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxHttpHead, sbx_http_head_free)

G_END_DECLS

#endif /* SBX_HTTP_HEAD_H */
