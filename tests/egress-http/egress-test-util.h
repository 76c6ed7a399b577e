/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test harness for plugins/egress-http: a fake host that advertises
 * SBX_HOST_FEATURE_EGRESS_V1 and drives the plugin's real vtable, and local
 * servers on loopback (echo, HTTP origin, scripted upstream), each on its
 * own thread and GMainContext. */
#ifndef EGRESS_TEST_UTIL_H
#define EGRESS_TEST_UTIL_H

#include <gio/gio.h>
#include <sbx/sbx-plugin-abi.h>

G_BEGIN_DECLS

const SbxPluginDescriptor *sbx_plugin_egress_http_entry (void);

typedef struct
{
  SbxHostV1                 host;
  GMutex                    lock;
  int32_t                   error_status;
  char                     *error;
  void                     *plugin_ctx;
  const SbxEgressVTableV1  *vtable;
} EgressTestHost;

EgressTestHost *egress_test_host_new       (uint64_t features);
void            egress_test_host_free      (EgressTestHost *th);
/* The last set_error message, cleared. */
char           *egress_test_host_take_error (EgressTestHost *th);

typedef struct
{
  EgressTestHost *th;
  void           *route;
  char           *fingerprint;
  guint32         address_guarantee;
  guint16         port;       /* the proxy's loopback port */
} EgressTestRoute;

/* start(config) and serve() on a fresh 127.0.0.1 listener; NULL + error text on failure */
EgressTestRoute *egress_test_route_start   (EgressTestHost *th,
                                            const char     *config,
                                            char          **error);
void             egress_test_route_stop    (EgressTestRoute *r);
/* authorize; targets NULL = all.  Returns the credential (g_free). */
char            *egress_test_authorize     (EgressTestRoute    *r,
                                            const char         *execution_id,
                                            const char *const  *targets);
/* revoke; returns the denial (g_free) or NULL; asserts OK. */
char            *egress_test_revoke        (EgressTestRoute *r,
                                            const char      *execution_id);
/* "Proxy-Authorization: Basic ...\r\n" for id:cred */
char            *egress_test_auth_header   (const char *execution_id,
                                            const char *credential);

/* A loopback server.  kind: echo (bytes back, half-close honoured), http
 * (one request per connection; answers 200 with a body that echoes the
 * request head it received, plus hop-by-hop response fields), or scripted
 * (writes @script on accept after reading a head, then closes). */
typedef enum { TEST_SERVER_ECHO, TEST_SERVER_HTTP, TEST_SERVER_SCRIPTED } TestServerKind;

typedef struct _TestServer TestServer;
TestServer *test_server_new            (TestServerKind kind,
                                        const char    *script);
guint16     test_server_get_port       (TestServer    *s);
guint       test_server_get_n_accepted (TestServer    *s);
guint       test_server_get_n_live     (TestServer    *s);
/* the last request head the http server received (g_free) */
char       *test_server_last_head      (TestServer    *s);
void        test_server_free           (TestServer    *s);

/* Blocking client helpers (timeouts of 10 s on every socket). */
GSocket    *test_connect_loopback      (guint16 port);
void        test_send_all              (GSocket *s, const void *data, gsize len);
/* Reads a response head (through CRLFCRLF); returns the status, head in *head. */
guint       test_read_status           (GSocket *s, char **head);
/* Reads until EOF or @max bytes. */
GByteArray *test_read_all              (GSocket *s, gsize max);
/* Reads exactly @len bytes. */
void        test_read_exact            (GSocket *s, guint8 *buf, gsize len);

/* Opens a tunnel: CONNECT @authority with @auth_header (may be NULL) and
 * returns the socket when the status is @expect (else asserts). */
GSocket    *test_connect_request       (guint16 proxy_port, const char *authority,
                                        const char *auth_header, guint expect, char **head);

G_END_DECLS

#endif
