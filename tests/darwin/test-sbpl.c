/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The darwin-seatbelt SBPL compiler, on any host.
 *
 * For a table of policies (every axis, nested roots, carve-outs, /private
 * symlinked paths, hostile bytes, globs, each network mode) each case:
 *  - reads the output with a small SBPL reader: balanced forms, strings and
 *    regex literals closed, and no unconditional allow of file-read*,
 *    file-write*, process-exec* (nor of "default", nor with a filter that
 *    matches every path);
 *  - evaluates it (last matching rule wins, deny by default, parameters
 *    substituted) at probe paths under both spellings of /private aliases,
 *    and compares each axis with the core's own precedence oracle
 *    sbx_fs_resolve() on the same rules: never more permissive anywhere,
 *    and equal where the compiler claims no narrowing;
 *  - compares the text with its golden file (tests/darwin/golden/NAME.sb;
 *    SBX_UPDATE_GOLDEN=1 rewrites them).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <regex.h>
#include <string.h>

#include "sbx-plugin-abi.h"
#include "sbx-policy-private.h"
#include "sbx-sbpl.h"

/* ------------------------------------------------------------------------- */
/* A small SBPL reader                                                        */
/* ------------------------------------------------------------------------- */

typedef enum
{
  NODE_LIST,
  NODE_ATOM,
  NODE_STRING,
  NODE_REGEX,
} NodeKind;

typedef struct Node Node;
struct Node
{
  NodeKind   kind;
  char      *text;      /* atom, string (unescaped) or regex body */
  GPtrArray *children;  /* NODE_LIST: Node* */
};

static void
node_free (gpointer data)
{
  Node *node = data;

  if (node == NULL)
    return;
  g_free (node->text);
  if (node->children != NULL)
    g_ptr_array_unref (node->children);
  g_free (node);
}

static Node *
node_new (NodeKind kind)
{
  Node *node = g_new0 (Node, 1);

  node->kind = kind;
  if (kind == NODE_LIST)
    node->children = g_ptr_array_new_with_free_func (node_free);
  return node;
}

/* Parses @text into a list of top-level forms; NULL with @why on any
 * imbalance (unclosed form, stray ')', unterminated string or regex, a
 * byte outside printable ASCII and '\n'). */
static GPtrArray *
sbpl_read (const char  *text,
           char       **why)
{
  g_autoptr(GPtrArray) top = g_ptr_array_new_with_free_func (node_free);
  GPtrArray *stack = g_ptr_array_new ();
  const char *p = text;

  for (const unsigned char *u = (const unsigned char *) text; *u != '\0'; u++)
    if ((*u < 0x20 && *u != '\n') || *u > 0x7e)
      {
        *why = g_strdup_printf ("byte 0x%02x at offset %td", *u, (const char *) u - text);
        g_ptr_array_unref (stack);
        return NULL;
      }

  while (*p != '\0')
    {
      GPtrArray *into = stack->len > 0 ? ((Node *) stack->pdata[stack->len - 1])->children : top;

      if (*p == ' ' || *p == '\n' || *p == '\t')
        p++;
      else if (*p == ';')
        {
          while (*p != '\0' && *p != '\n')
            p++;
        }
      else if (*p == '(')
        {
          Node *list = node_new (NODE_LIST);

          g_ptr_array_add (into, list);
          g_ptr_array_add (stack, list);
          p++;
        }
      else if (*p == ')')
        {
          if (stack->len == 0)
            {
              *why = g_strdup_printf ("stray ')' at offset %td", p - text);
              g_ptr_array_unref (stack);
              return NULL;
            }
          g_ptr_array_remove_index (stack, stack->len - 1);
          p++;
        }
      else if (*p == '"' || (p[0] == '#' && p[1] == '"'))
        {
          gboolean regex = *p == '#';
          GString *s = g_string_new (NULL);
          Node *node = node_new (regex ? NODE_REGEX : NODE_STRING);

          p += regex ? 2 : 1;
          while (*p != '\0' && *p != '"')
            {
              /* A regex literal is raw; a string has \\ and \" escapes. */
              if (!regex && *p == '\\')
                {
                  if (p[1] != '\\' && p[1] != '"')
                    {
                      *why = g_strdup_printf ("unknown escape \\%c at offset %td", p[1], p - text);
                      g_string_free (s, TRUE);
                      node_free (node);
                      g_ptr_array_unref (stack);
                      return NULL;
                    }
                  p++;
                }
              g_string_append_c (s, *p);
              p++;
            }
          if (*p != '"')
            {
              *why = g_strdup ("unterminated string");
              g_string_free (s, TRUE);
              node_free (node);
              g_ptr_array_unref (stack);
              return NULL;
            }
          p++;
          node->text = g_string_free (s, FALSE);
          g_ptr_array_add (into, node);
        }
      else
        {
          const char *start = p;
          Node *node = node_new (NODE_ATOM);

          while (*p != '\0' && *p != ' ' && *p != '\n' && *p != '(' && *p != ')' && *p != '"' && *p != ';')
            p++;
          node->text = g_strndup (start, p - start);
          g_ptr_array_add (into, node);
        }
    }
  if (stack->len != 0)
    {
      *why = g_strdup_printf ("%u unclosed form(s)", stack->len);
      g_ptr_array_unref (stack);
      return NULL;
    }
  g_ptr_array_unref (stack);
  return g_steal_pointer (&top);
}

static const char *
atom (Node *node)
{
  return node != NULL && node->kind == NODE_ATOM ? node->text : NULL;
}

/* The string a filter argument denotes: a literal, or (param "K"). */
static const char *
filter_value (Node                 *arg,
              const SbxSbplProfile *profile)
{
  if (arg->kind == NODE_STRING || arg->kind == NODE_REGEX)
    return arg->text;
  if (arg->kind == NODE_LIST && arg->children->len == 2
      && g_strcmp0 (atom (arg->children->pdata[0]), "param") == 0
      && ((Node *) arg->children->pdata[1])->kind == NODE_STRING)
    {
      const char *key = ((Node *) arg->children->pdata[1])->text;

      for (gsize i = 0; i < profile->n_params; i++)
        if (g_str_equal (profile->param_keys[i], key))
          return profile->param_values[i];
      g_error ("parameter %s is not defined", key);
    }
  g_error ("unexpected filter argument");
  return NULL;
}

static gboolean
is_file_operation (const char *op)
{
  return g_str_has_prefix (op, "file-read") || g_str_has_prefix (op, "file-write")
         || g_str_has_prefix (op, "process-exec") || g_str_equal (op, "file*")
         || g_str_equal (op, "default") || g_str_equal (op, "file-map-executable");
}

static guint32
operation_axis (const char *op)
{
  if (g_str_has_prefix (op, "file-read"))
    return SBX_FS_READ;
  if (g_str_has_prefix (op, "process-exec") || g_str_equal (op, "file-map-executable"))
    return SBX_FS_EXEC;
  if (g_str_has_prefix (op, "file-write"))
    return SBX_FS_WRITE;
  return SBX_FS_ALL;
}

/* No allow of a file operation without a filter, none whose filter matches
 * every path unless the policy itself grants that axis on "/" (@root_axes:
 * a profile whose host read is allowed), no (allow default). */
static void
assert_no_unconditional_allow (GPtrArray            *forms,
                               const SbxSbplProfile *profile,
                               guint32               root_axes)
{
  for (guint i = 0; i < forms->len; i++)
    {
      Node *form = forms->pdata[i];
      const char *verb;

      if (form->kind != NODE_LIST || form->children->len == 0)
        continue;
      verb = atom (form->children->pdata[0]);
      if (g_strcmp0 (verb, "allow") != 0)
        continue;
      g_assert_cmpuint (form->children->len, >=, 2);
      {
        const char *op = atom (form->children->pdata[1]);
        gboolean file_op = op != NULL && is_file_operation (op);
        guint n_filters = 0;

        g_assert_nonnull (op);
        g_assert_cmpstr (op, !=, "default");
        for (guint k = 2; k < form->children->len; k++)
          {
            Node *filter = form->children->pdata[k];

            if (filter->kind == NODE_ATOM)
              {
                /* A second operation in the same form. */
                if (is_file_operation (filter->text))
                  file_op = TRUE;
                continue;
              }
            g_assert_true (filter->kind == NODE_LIST);
            n_filters++;
            if (file_op && g_strcmp0 (op, "file-read-metadata") != 0)
              {
                const char *kind = atom (filter->children->pdata[0]);
                const char *value = filter_value (filter->children->pdata[1], profile);

                if (g_strcmp0 (kind, "subpath") == 0 && (operation_axis (op) & ~root_axes) != 0)
                  g_assert_cmpstr (value, !=, "/");
                if (g_strcmp0 (kind, "regex") == 0)
                  {
                    g_assert_cmpstr (value, !=, "^.*$");
                    g_assert_cmpstr (value, !=, ".*");
                    g_assert_cmpstr (value, !=, "^/.*$");
                    g_assert_cmpstr (value, !=, "^/");
                  }
              }
          }
        if (file_op)
          g_assert_cmpuint (n_filters, >, 0);
      }
    }
}

/* Does one filter match @path? */
static gboolean
filter_matches (Node                 *filter,
                const SbxSbplProfile *profile,
                const char           *path)
{
  const char *kind = atom (filter->children->pdata[0]);
  const char *value;

  if (g_strcmp0 (kind, "target") == 0 || g_strcmp0 (kind, "global-name") == 0
      || g_strcmp0 (kind, "remote") == 0)
    return FALSE;
  g_assert_cmpuint (filter->children->len, ==, 2);
  value = filter_value (filter->children->pdata[1], profile);
  if (g_strcmp0 (kind, "literal") == 0)
    return g_str_equal (value, path);
  if (g_strcmp0 (kind, "subpath") == 0)
    {
      gsize n = strlen (value);

      if (g_str_equal (value, "/"))
        return TRUE;
      return strncmp (path, value, n) == 0 && (path[n] == '\0' || path[n] == '/');
    }
  if (g_strcmp0 (kind, "regex") == 0)
    {
      regex_t re;
      gboolean matched;

      g_assert_cmpint (regcomp (&re, value, REG_EXTENDED | REG_NOSUB), ==, 0);
      matched = regexec (&re, path, 0, NULL, 0) == 0;
      regfree (&re);
      return matched;
    }
  if (g_strcmp0 (kind, "target") == 0 || g_strcmp0 (kind, "global-name") == 0
      || g_strcmp0 (kind, "remote") == 0)
    return FALSE;
  g_error ("unknown filter %s", kind);
  return FALSE;
}

/* Does an operation named in a rule cover the checked one?  "file-read*"
 * covers file-read-data; an exact name covers itself. */
static gboolean
operation_covers (const char *rule_op,
                  const char *op)
{
  gsize n = strlen (rule_op);

  if (n > 0 && rule_op[n - 1] == '*')
    return strncmp (rule_op, op, n - 1) == 0;
  return g_str_equal (rule_op, op);
}

/* The verdict of the profile for @op on @path: last matching rule, deny by
 * default. */
static gboolean
sbpl_allows (GPtrArray            *forms,
             const SbxSbplProfile *profile,
             const char           *op,
             const char           *path)
{
  gboolean allowed = FALSE;

  for (guint i = 0; i < forms->len; i++)
    {
      Node *form = forms->pdata[i];
      const char *verb;
      gboolean op_match = FALSE;
      gboolean has_filter = FALSE;
      gboolean filter_match = FALSE;

      if (form->kind != NODE_LIST || form->children->len < 2)
        continue;
      verb = atom (form->children->pdata[0]);
      if (g_strcmp0 (verb, "allow") != 0 && g_strcmp0 (verb, "deny") != 0)
        continue;
      for (guint k = 1; k < form->children->len; k++)
        {
          Node *part = form->children->pdata[k];

          if (part->kind == NODE_ATOM)
            op_match = op_match || operation_covers (part->text, op)
                       || g_str_equal (part->text, "default");
          else
            {
              has_filter = TRUE;
              filter_match = filter_match || filter_matches (part, profile, path);
            }
        }
      if (op_match && (!has_filter || filter_match))
        allowed = g_str_equal (verb, "allow");
    }
  return allowed;
}

/* ------------------------------------------------------------------------- */
/* The oracle                                                                 */
/* ------------------------------------------------------------------------- */

static char *
canonical (const char *path)
{
  static const char *const dirs[] = { "/tmp", "/var", "/etc" };

  for (gsize i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      gsize n = strlen (dirs[i]);

      if (strncmp (path, dirs[i], n) == 0 && (path[n] == '\0' || path[n] == '/'))
        return g_strconcat ("/private", path, NULL);
    }
  return g_strdup (path);
}

static char *
public_spelling (const char *canonical_path)
{
  static const char *const dirs[] = { "/private/tmp", "/private/var", "/private/etc" };

  for (gsize i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      gsize n = strlen (dirs[i]);

      if (strncmp (canonical_path, dirs[i], n) == 0 && (canonical_path[n] == '\0' || canonical_path[n] == '/'))
        return g_strdup (canonical_path + strlen ("/private"));
    }
  return NULL;
}

/* The IR the SBPL must match: the policy's rules with the host closure
 * replaced by the macOS one, every literal path canonical. */
static GArray *
oracle_rules (const SbxPolicyV1 *policy,
              GPtrArray         *strings)
{
  GArray *rules = g_array_new (FALSE, TRUE, sizeof (SbxFsRuleV1));
  const SbxSbplRuntimeRow *rows;
  gsize n_rows;

  rows = sbx_sbpl_runtime_closure (&n_rows);
  for (gsize i = 0; i < n_rows; i++)
    {
      SbxFsRuleV1 rule = { sizeof rule, 0, 0, 0, SBX_FS_ORIGIN_RUNTIME, -1, rows[i].path };

      rule.flags = (rows[i].flags & SBX_SBPL_ROW_EXACT) ? SBX_FS_RULE_EXACT : 0;
      rule.allow = rows[i].axes & SBX_FS_ALL;
      g_array_append_val (rules, rule);
    }
  for (guint32 i = 0; i < policy->n_fs_rules; i++)
    {
      SbxFsRuleV1 rule = policy->fs_rules[i];

      if (rule.origin == SBX_FS_ORIGIN_RUNTIME || rule.origin == SBX_FS_ORIGIN_DEVICE)
        continue;
      if (!(rule.flags & SBX_FS_RULE_GLOB))
        {
          char *path = canonical (rule.path);

          g_ptr_array_add (strings, path);
          rule.path = path;
        }
      else
        rule.allow = 0;   /* globs only ever deny */
      g_array_append_val (rules, rule);
    }
  return rules;
}

/* ------------------------------------------------------------------------- */
/* Cases                                                                      */
/* ------------------------------------------------------------------------- */

#define R SBX_FS_READ
#define X SBX_FS_EXEC
#define W SBX_FS_WRITE
#define EXACT SBX_FS_RULE_EXACT
#define GLOB SBX_FS_RULE_GLOB

typedef struct
{
  const char *path;
  uint32_t    flags;
  uint32_t    allow;
  uint32_t    deny;
  uint32_t    origin;
} Rule;

typedef struct
{
  const char *name;
  Rule        rules[12];
  uint32_t    net_mode;
  uint16_t    proxy_port;
  uint16_t    ports[3];
  uint32_t    net_flags;
  gboolean    narrows;      /* the compiler reports a narrowing: check soundness only */
  const char *must_contain; /* (nullable) a substring the text must have */
  const char *must_not_contain;
} Case;

/* The base of every Sandboxed case: host denied, a set directory denied
 * whole with HOME and TMPDIR inside, one host closure row (replaced). */
#define BASE_RULES                                                               \
  { "/", 0, 0, R | X | W, SBX_FS_ORIGIN_HOST },                                  \
  { "/usr", 0, R | X, 0, SBX_FS_ORIGIN_RUNTIME },                                \
  { "/Users/u/.sbx/set", 0, 0, R | X | W, SBX_FS_ORIGIN_HOST },                  \
  { "/Users/u/.sbx/set/home", 0, R | X | W, 0, SBX_FS_ORIGIN_HOME },             \
  { "/Users/u/.sbx/set/tmp", 0, R | X | W, 0, SBX_FS_ORIGIN_TMPDIR }

static const Case cases[] = {
  { "workspace-rw", { BASE_RULES,
                      { "/Users/u/src/app", 0, R | X | W, 0, SBX_FS_ORIGIN_WORKSPACE } },
    SBX_NET_MODE_DENY, 0, { 0 }, 0, FALSE, NULL, NULL },
  { "workspace-read-only", { BASE_RULES,
                             { "/Users/u/src/app", 0, R | X, W, SBX_FS_ORIGIN_WORKSPACE } },
    SBX_NET_MODE_DENY, 0, { 0 }, 0, FALSE, NULL, NULL },
  { "host-read-allowed", {
      { "/", 0, R | X, W, SBX_FS_ORIGIN_HOST },
      { "/Users/u/src/app", 0, R | X | W, 0, SBX_FS_ORIGIN_WORKSPACE },
      { "/Users/u/.sbx/set", 0, 0, R | X | W, SBX_FS_ORIGIN_HOST },
      { "/Users/u/.sbx/set/tmp", 0, R | X | W, 0, SBX_FS_ORIGIN_TMPDIR }
    },
    SBX_NET_MODE_DENY, 0, { 0 }, 0, FALSE, NULL, NULL },
  { "exec-only-and-write-only", { BASE_RULES,
                                  { "/opt/tools", 0, X, R | W, SBX_FS_ORIGIN_ROOT },
                                  { "/Users/u/drop", 0, W, R | X, SBX_FS_ORIGIN_ROOT } },
    SBX_NET_MODE_DENY, 0, { 0 }, 0, FALSE, NULL, NULL },
  { "nested-roots", { BASE_RULES,
                      { "/opt/sdk", 0, R | X, W, SBX_FS_ORIGIN_ROOT },
                      { "/opt/sdk/secret", 0, 0, R | X | W, SBX_FS_ORIGIN_ROOT },
                      { "/opt/sdk/secret/public", 0, R, X | W, SBX_FS_ORIGIN_ROOT },
                      { "/opt/sdk/secret/public/out", 0, R | W, X, SBX_FS_ORIGIN_ROOT } },
    SBX_NET_MODE_DENY, 0, { 0 }, 0, FALSE, NULL, NULL },
  { "carve-outs", { BASE_RULES,
                    { "/Users/u/src/app", 0, R | X | W, 0, SBX_FS_ORIGIN_WORKSPACE },
                    { "/Users/u/src/app/.git", 0, R, X | W, SBX_FS_ORIGIN_WORKSPACE },
                    { "/Users/u/src/app/.env", EXACT, 0, R | X | W, SBX_FS_ORIGIN_WORKSPACE },
                    { "/Users/u/src/app/build", EXACT, R, W, SBX_FS_ORIGIN_WORKSPACE } },
    SBX_NET_MODE_DENY, 0, { 0 }, 0, FALSE, "(literal \"/Users/u/src/app/.env\")", NULL },
  { "private-aliases", { BASE_RULES,
                         { "/tmp/ws", 0, R | X | W, 0, SBX_FS_ORIGIN_WORKSPACE },
                         { "/private/tmp/ws/.git", 0, R, W | X, SBX_FS_ORIGIN_WORKSPACE },
                         { "/var/folders/xy/T/data", 0, R, W | X, SBX_FS_ORIGIN_ROOT },
                         { "/private/etc/secret.conf", EXACT, 0, R | X | W, SBX_FS_ORIGIN_ROOT },
                         { "/etc", 0, R, W | X, SBX_FS_ORIGIN_ROOT } },
    SBX_NET_MODE_DENY, 0, { 0 }, 0, FALSE, "(subpath \"/private/tmp/ws\") (subpath \"/tmp/ws\")", NULL },
  { "hostile-bytes", { BASE_RULES,
                       { "/Users/u/we\"ird\\dir", 0, R | X | W, 0, SBX_FS_ORIGIN_WORKSPACE },
                       { "/Users/u/new\nline\"))(allow file-read* (subpath \"/\"", 0, R, W | X, SBX_FS_ORIGIN_ROOT },
                       { "/Users/u/bytes-\xff\xfe-\x01", 0, R, W | X, SBX_FS_ORIGIN_ROOT },
                       { "/Users/u/we\"ird\\dir/secret\n", EXACT, 0, R | X | W, SBX_FS_ORIGIN_ROOT },
                       { "/Users/u/caf\xc3\xa9", 0, R | W, X, SBX_FS_ORIGIN_ROOT } },
    SBX_NET_MODE_DENY, 0, { 0 }, 0, FALSE, "(subpath \"/Users/u/we\\\"ird\\\\dir\")", "new\nline" },
  { "glob-denies", { BASE_RULES,
                     { "/Users/u/src/app", 0, R | X | W, 0, SBX_FS_ORIGIN_WORKSPACE },
                     { "**/.env*", GLOB, 0, R | X | W, SBX_FS_ORIGIN_WORKSPACE },
                     { "/Users/u/src/app/**/*.pem", GLOB, 0, R, SBX_FS_ORIGIN_WORKSPACE },
                     { "/Users/u/src/app/key[0-9].txt", GLOB, 0, R | W, SBX_FS_ORIGIN_WORKSPACE } },
    SBX_NET_MODE_DENY, 0, { 0 }, 0, FALSE, "(regex #\"^.*/\\.env[^/]*$\")", NULL },
  { "glob-unrepresentable", { BASE_RULES,
                              { "/Users/u/src/app", 0, R | X | W, 0, SBX_FS_ORIGIN_WORKSPACE },
                              { "/Users/u/src/app/q\"uote/*", GLOB, 0, R, SBX_FS_ORIGIN_WORKSPACE },
                              { "/Users/u/src/app/odd/[z-a]", GLOB, 0, W, SBX_FS_ORIGIN_WORKSPACE } },
    SBX_NET_MODE_DENY, 0, { 0 }, 0, TRUE, NULL, NULL },
  { "network-proxy", { BASE_RULES,
                       { "/Users/u/src/app", 0, R | X | W, 0, SBX_FS_ORIGIN_WORKSPACE } },
    SBX_NET_MODE_PROXY, 3128, { 0 }, 0, FALSE, "(allow network-outbound (remote tcp \"localhost:3128\"))",
    "(allow network*)" },
  { "network-ports-dns", { BASE_RULES,
                           { "/Users/u/src/app", 0, R | X | W, 0, SBX_FS_ORIGIN_WORKSPACE } },
    SBX_NET_MODE_PORTS, 0, { 443, 80 }, SBX_NET_FLAG_DNS, FALSE, "(remote tcp \"*:443\")", "(allow network*)" },
  { "network-open", { BASE_RULES,
                      { "/Users/u/src/app", 0, R | X | W, 0, SBX_FS_ORIGIN_WORKSPACE } },
    SBX_NET_MODE_OPEN, 0, { 0 }, 0, FALSE, "(allow network*)", NULL },
  { "tie-deny-wins", { BASE_RULES,
                       { "/opt/shared", 0, R | X, 0, SBX_FS_ORIGIN_ROOT },
                       { "/opt/shared", 0, W, R, SBX_FS_ORIGIN_ROOT },
                       { "/opt/shared/f", EXACT, R, 0, SBX_FS_ORIGIN_ROOT },
                       { "/opt/shared/f", EXACT, 0, R, SBX_FS_ORIGIN_ROOT } },
    SBX_NET_MODE_DENY, 0, { 0 }, 0, FALSE, NULL, NULL },
  { "bare-deny-rule", { BASE_RULES,
                        { "/Users/u/src/app", 0, R | X | W, 0, SBX_FS_ORIGIN_WORKSPACE },
                        { "/Users/u/src/app/vault", 0, 0, 0, SBX_FS_ORIGIN_WORKSPACE } },
    SBX_NET_MODE_DENY, 0, { 0 }, 0, FALSE, NULL, NULL },
};

typedef struct
{
  GArray        *rules;  /* SbxFsRuleV1 */
  SbxNetPolicyV1 net;
  uint16_t       ports[3];
  SbxLimitsV1    limits;
  SbxPolicyV1    policy;
} BuiltPolicy;

static void
build_policy (const Case  *c,
              BuiltPolicy *out)
{
  out->rules = g_array_new (FALSE, TRUE, sizeof (SbxFsRuleV1));
  for (gsize i = 0; i < G_N_ELEMENTS (c->rules) && c->rules[i].path != NULL; i++)
    {
      SbxFsRuleV1 rule = { sizeof rule, c->rules[i].flags, c->rules[i].allow, c->rules[i].deny,
                           c->rules[i].origin, -1, c->rules[i].path };

      g_array_append_val (out->rules, rule);
    }
  memset (&out->net, 0, sizeof out->net);
  out->net.struct_size = sizeof out->net;
  out->net.mode = c->net_mode;
  out->net.flags = c->net_flags;
  out->net.proxy_port = c->proxy_port;
  memcpy (out->ports, c->ports, sizeof out->ports);
  for (gsize i = 0; i < G_N_ELEMENTS (c->ports) && c->ports[i] != 0; i++)
    out->net.n_tcp_ports++;
  out->net.tcp_ports = out->ports;
  memset (&out->limits, 0, sizeof out->limits);
  out->limits.struct_size = sizeof out->limits;
  memset (&out->policy, 0, sizeof out->policy);
  out->policy.struct_size = sizeof out->policy;
  out->policy.fs_rules = (const SbxFsRuleV1 *) out->rules->data;
  out->policy.n_fs_rules = out->rules->len;
  out->policy.net = &out->net;
  out->policy.limits = &out->limits;
  out->policy.workspace = "/Users/u/src/app";
  out->policy.home = "/Users/u/.sbx/set/home";
  out->policy.tmpdir = "/Users/u/.sbx/set/tmp";
}

/* Probe paths: every rule path (and the closure's), a child, a grandchild,
 * a sibling sharing the prefix, and each parent; as canonical spellings. */
static GPtrArray *
probe_paths (GArray *oracle)
{
  GPtrArray *paths = g_ptr_array_new_with_free_func (g_free);
  GHashTable *seen = g_hash_table_new (g_str_hash, g_str_equal);
  static const char *const extra[] = {
    "/Users/u/src/app/.env", "/Users/u/src/app/.env.local", "/Users/u/src/app/sub/.env",
    "/Users/u/src/app/sub/key.pem", "/Users/u/src/app/key.pem", "/Users/u/src/app/key1.txt", "/Users/u/src/app/keyx.txt",
    "/Users/u/src/app/q\"uote/x", "/Users/u/src/app/odd/z", "/Users/u/other", "/Users",
    "/private/etc/passwd", "/private/var/root", "/Applications/App.app",
  };

#define ADD(p)                                                        \
  G_STMT_START {                                                      \
    char *s_ = (p);                                                   \
    if (!g_hash_table_contains (seen, s_))                            \
      {                                                               \
        g_ptr_array_add (paths, s_);                                  \
        g_hash_table_add (seen, s_);                                  \
      }                                                               \
    else                                                              \
      g_free (s_);                                                    \
  } G_STMT_END

  for (guint i = 0; i < oracle->len; i++)
    {
      const SbxFsRuleV1 *rule = &g_array_index (oracle, SbxFsRuleV1, i);
      g_autofree char *parent = NULL;

      if (rule->flags & SBX_FS_RULE_GLOB)
        continue;
      ADD (g_strdup (rule->path));
      ADD (g_strconcat (rule->path, g_str_equal (rule->path, "/") ? "" : "/", "child", NULL));
      ADD (g_strconcat (rule->path, g_str_equal (rule->path, "/") ? "" : "/", "child/deeper", NULL));
      ADD (g_strconcat (rule->path, "x", NULL));
      parent = g_path_get_dirname (rule->path);
      ADD (g_strdup (parent));
    }
  for (gsize i = 0; i < G_N_ELEMENTS (extra); i++)
    ADD (g_strdup (extra[i]));
#undef ADD
  g_hash_table_unref (seen);
  return paths;
}

static char *
golden_path (const char *name)
{
  return g_build_filename (g_getenv ("SBX_TEST_SRCDIR") != NULL ? g_getenv ("SBX_TEST_SRCDIR") : SBX_TEST_SRCDIR,
                           "darwin", "golden", name, NULL);
}

static void
test_case (gconstpointer data)
{
  const Case *c = data;
  BuiltPolicy built;
  SbxSbplProfile *profile = NULL;
  char err[512] = "";
  g_autofree char *why = NULL;
  g_autoptr(GPtrArray) forms = NULL;
  g_autoptr(GPtrArray) strings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) oracle = NULL;
  g_autoptr(GPtrArray) paths = NULL;
  g_autofree char *golden_name = g_strconcat (c->name, ".sb", NULL);
  g_autofree char *golden = golden_path (golden_name);
  g_autofree char *described = NULL;
  static const struct { uint32_t axis; const char *op; } axes[] = {
    { SBX_FS_READ, "file-read-data" }, { SBX_FS_EXEC, "process-exec" }, { SBX_FS_WRITE, "file-write-data" },
  };
  guint n_checked = 0;
  gboolean reported_narrowing = FALSE;

  build_policy (c, &built);
  g_assert_cmpint (sbx_sbpl_compile (&built.policy, NULL, &profile, err, sizeof err), ==, SBX_STATUS_OK);
  g_assert_nonnull (profile);

  forms = sbpl_read (profile->text, &why);
  if (forms == NULL)
    g_error ("%s: SBPL does not read back: %s\n%s", c->name, why, profile->text);
  oracle = oracle_rules (&built.policy, strings);
  assert_no_unconditional_allow (forms, profile,
                                 sbx_fs_resolve ((const SbxFsRuleV1 *) oracle->data, oracle->len, "/"));
  /* (version 1) and (deny default) come first. */
  g_assert_cmpuint (forms->len, >, 2);
  g_assert_cmpstr (atom (((Node *) forms->pdata[0])->children->pdata[0]), ==, "version");
  g_assert_cmpstr (atom (((Node *) forms->pdata[1])->children->pdata[0]), ==, "deny");
  g_assert_cmpstr (atom (((Node *) forms->pdata[1])->children->pdata[1]), ==, "default");

  for (gsize i = 0; i < profile->n_entries; i++)
    if (profile->entries[i].status == SBX_ABI_REPORT_NARROWED
        && !g_str_equal (profile->entries[i].feature, "mach-lookup")
        && !g_str_equal (profile->entries[i].feature, "network-boundary"))
      reported_narrowing = TRUE;
  g_assert_cmpint (reported_narrowing, ==, c->narrows);

  /* Semantics: the oracle decides every axis at every probe path, under
   * both spellings. */
  paths = probe_paths (oracle);
  for (guint i = 0; i < paths->len; i++)
    {
      const char *path = paths->pdata[i];
      guint32 expected = sbx_fs_resolve ((const SbxFsRuleV1 *) oracle->data, oracle->len, path);
      g_autofree char *alias = public_spelling (path);

      for (gsize a = 0; a < G_N_ELEMENTS (axes); a++)
        {
          gboolean want = (expected & axes[a].axis) != 0;
          gboolean got = sbpl_allows (forms, profile, axes[a].op, path);

          if (got && !want)
            g_error ("%s: SBPL allows %s on \"%s\"; the policy denies it", c->name, axes[a].op, path);
          if (!c->narrows && got != want)
            g_error ("%s: SBPL denies %s on \"%s\"; the policy allows it", c->name, axes[a].op, path);
          if (alias != NULL)
            {
              gboolean got_alias = sbpl_allows (forms, profile, axes[a].op, alias);

              if (got_alias && !want)
                g_error ("%s: SBPL allows %s on alias \"%s\"; the policy denies it", c->name, axes[a].op, alias);
              if (!c->narrows && got_alias != want)
                g_error ("%s: SBPL denies %s on alias \"%s\"", c->name, axes[a].op, alias);
            }
          n_checked++;
        }
    }
  g_assert_cmpuint (n_checked, >, 30);

  if (c->must_contain != NULL)
    g_assert_nonnull (strstr (profile->text, c->must_contain));
  if (c->must_not_contain != NULL)
    g_assert_null (strstr (profile->text, c->must_not_contain));

  /* The golden text (with its parameter comments). */
  described = sbx_sbpl_profile_describe (profile);
  if (g_strcmp0 (g_getenv ("SBX_UPDATE_GOLDEN"), "1") == 0)
    {
      g_autoptr(GError) error = NULL;

      g_assert_true (g_file_set_contents (golden, described, -1, &error));
    }
  else
    {
      g_autofree char *expected = NULL;
      g_autoptr(GError) error = NULL;

      if (!g_file_get_contents (golden, &expected, NULL, &error))
        g_error ("%s: %s (run with SBX_UPDATE_GOLDEN=1 to create it, then review it)", c->name, error->message);
      g_assert_cmpstr (described, ==, expected);
    }

  sbx_sbpl_profile_free (profile);
  g_array_unref (built.rules);
}

/* Hostile bytes never reach the text: a path that is not printable ASCII is
 * a parameter, and the parameter carries the exact bytes. */
static void
test_hostile_paths_are_parameters (void)
{
  const char *hostile = "/Users/u/x\n\")(allow file-write* (subpath \"/\"))\xff";
  SbxFsRuleV1 rules[] = {
    { sizeof (SbxFsRuleV1), 0, 0, SBX_FS_ALL, SBX_FS_ORIGIN_HOST, -1, "/" },
    { sizeof (SbxFsRuleV1), 0, SBX_FS_ALL, 0, SBX_FS_ORIGIN_WORKSPACE, -1, hostile },
  };
  SbxPolicyV1 policy = { 0 };
  SbxSbplProfile *profile = NULL;
  char err[256];
  gboolean found = FALSE;

  policy.struct_size = sizeof policy;
  policy.fs_rules = rules;
  policy.n_fs_rules = G_N_ELEMENTS (rules);
  g_assert_cmpint (sbx_sbpl_compile (&policy, NULL, &profile, err, sizeof err), ==, SBX_STATUS_OK);
  g_assert_null (strstr (profile->text, "(allow file-write* (subpath \"/\"))"));
  g_assert_null (strchr (profile->text, '\xff'));
  for (gsize i = 0; i < profile->n_params; i++)
    if (g_str_equal (profile->param_values[i], hostile))
      {
        g_autofree char *ref = g_strdup_printf ("(subpath (param \"%s\"))", profile->param_keys[i]);

        g_assert_nonnull (strstr (profile->text, ref));
        found = TRUE;
      }
  g_assert_true (found);
  sbx_sbpl_profile_free (profile);
}

/* The reader itself rejects what it must (so its verdicts mean something). */
static void
test_reader_rejects (void)
{
  static const char *const bad[] = {
    "(allow file-read* (subpath \"/a\")",
    "(allow file-read*))",
    "(allow file-read* (subpath \"/a))",
    "(allow file-read* (regex #\"^/a))",
    "(allow file-read* (subpath \"/a\\n\"))",
    "(allow file-read* (subpath \"/a\xff\"))",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *why = NULL;
      g_autoptr(GPtrArray) forms = sbpl_read (bad[i], &why);

      g_assert_null (forms);
      g_assert_nonnull (why);
    }
}

/* The unconditional-allow check fails on the forms upstream emitted. */
static void
test_unconditional_allow_detected (void)
{
  static const char *const bad[] = {
    "(version 1)(deny default)(allow file-read*)",
    "(version 1)(deny default)(allow process-exec*)",
    "(version 1)(deny default)(allow file-write* (subpath \"/\"))",
    "(version 1)(allow default)",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sbpl/unconditional-allow/subprocess/%" G_GSIZE_FORMAT, i);

      g_test_trap_subprocess (path, 0, G_TEST_SUBPROCESS_DEFAULT);
      g_test_trap_assert_failed ();
      /* It failed on the check, not for any other reason. */
      g_test_trap_assert_stderr ("*assert_no_unconditional_allow*");
    }
}

static void
child_unconditional_allow (gconstpointer data)
{
  static const char *const bad[] = {
    "(version 1)(deny default)(allow file-read*)",
    "(version 1)(deny default)(allow process-exec*)",
    "(version 1)(deny default)(allow file-write* (subpath \"/\"))",
    "(version 1)(allow default)",
  };
  SbxSbplProfile empty = { 0 };
  g_autofree char *why = NULL;
  g_autoptr(GPtrArray) forms = sbpl_read (bad[GPOINTER_TO_SIZE (data)], &why);

  g_assert_nonnull (forms);
  assert_no_unconditional_allow (forms, &empty, 0);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sbpl/golden/%s", cases[i].name);

      g_test_add_data_func (path, &cases[i], test_case);
    }
  g_test_add_func ("/sbpl/hostile-paths-are-parameters", test_hostile_paths_are_parameters);
  g_test_add_func ("/sbpl/reader/rejects-imbalance", test_reader_rejects);
  g_test_add_func ("/sbpl/reader/detects-unconditional-allow", test_unconditional_allow_detected);
  for (gsize i = 0; i < 4; i++)
    {
      g_autofree char *path = g_strdup_printf ("/sbpl/unconditional-allow/subprocess/%" G_GSIZE_FORMAT, i);

      g_test_add_data_func (path, GSIZE_TO_POINTER (i), child_unconditional_allow);
    }
  return g_test_run ();
}
