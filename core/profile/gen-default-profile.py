#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build step: turns data/profiles/default.json into a C header with the
# profile's settings as constants (sbx-profile-default-table.h), so that
# sbx_profile_new_default() builds the default profile without parsing JSON
# at run time (the parse was most of `sbx profile show --default`'s cost).
#
# default.json stays the one source of truth.  This script accepts only the
# subset of the profile format the default uses and fails the build on
# anything else (an unknown member, a word the format does not have, a
# workspace.root, a size string other than "auto"), naming the member: a
# default that needs more must extend this script, not be read differently.
# What remains a run-time decision stays one: the workspace (the caller's
# directory), "memory": "auto" (half the physical RAM, capped) and every
# validation rule (sbx_profile_new_with_names() runs on the result as on a
# parsed file).  tests/test-profile-json.c checks that the result equals
# the parse of data/profiles/default.json.
#
# Usage: gen-default-profile.py INPUT.json OUTPUT.h

import json
import sys

ACCESS = {"deny": "SBX_ACCESS_DENY", "gated": "SBX_ACCESS_GATED", "allow": "SBX_ACCESS_ALLOW"}
HOME = {"isolated": "SBX_HOME_ISOLATED", "real": "SBX_HOME_REAL"}
ISOLATION = {"sandboxed": "SBX_ISOLATION_SANDBOXED", "unconfined": "SBX_ISOLATION_UNCONFINED"}
UNIX = {"deny": "FALSE", "allow": "TRUE"}
DENIED_PATHS = {"permission-denied": "SBX_DENIED_PATHS_PERMISSION_DENIED", "not-found": "SBX_DENIED_PATHS_NOT_FOUND"}
LIMIT_MAX = (1 << 62)  # generous; sbx_profile_new_with_names() applies the real bound


def fail(path, message):
    sys.exit("gen-default-profile: %s: %s: %s" % (sys.argv[1], path, message))


def reject_duplicates(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            fail(key, "duplicate member")
        seen[key] = value
    return seen


def members(obj, path, allowed):
    if not isinstance(obj, dict):
        fail(path, "expected an object")
    for key in obj:
        if key not in allowed:
            fail(path, "member %r is not supported by this generator" % key)


def word(obj, path, key, words, default):
    if key not in obj:
        return default
    value = obj[key]
    if not isinstance(value, str) or value not in words:
        fail("%s.%s" % (path, key), "expected one of %s" % ", ".join(sorted(words)))
    return words[value]


def count(obj, path, key, allow_auto=False):
    if key not in obj:
        return "0", "FALSE"
    value = obj[key]
    if allow_auto and value == "auto":
        return "0", "TRUE"
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > LIMIT_MAX:
        fail("%s.%s" % (path, key), "expected a non-negative integer%s" % (' or "auto"' if allow_auto else ""))
    return "G_GUINT64_CONSTANT (%d)" % value, "FALSE"


def c_string(text):
    out = []
    for byte in text.encode("utf-8"):
        if byte in (0x22, 0x5C):
            out.append("\\" + chr(byte))
        elif 0x20 <= byte < 0x7F and byte != 0x3F:
            out.append(chr(byte))
        else:
            out.append("\\%03o" % byte)
    return '"' + "".join(out) + '"'


def main():
    with open(sys.argv[1], encoding="utf-8") as stream:
        profile = json.load(stream, object_pairs_hook=reject_duplicates)

    members(profile, "(root)", {"version", "workspace", "host", "network", "command", "home", "isolation",
                                "ack-unconfined", "unix-sockets", "denied-paths", "roots", "limits"})
    if profile.get("version") != 1 or isinstance(profile.get("version"), bool):
        fail("version", "expected 1")
    workspace = profile.get("workspace", {})
    members(workspace, "workspace", {"read", "write"})
    host = profile.get("host", {})
    members(host, "host", {"read", "write"})
    ack = profile.get("ack-unconfined", False)
    if not isinstance(ack, bool):
        fail("ack-unconfined", "expected true or false")
    roots = profile.get("roots", [])
    if not isinstance(roots, list):
        fail("roots", "expected an array")
    limits = profile.get("limits", {})
    members(limits, "limits", {"processes", "memory", "open-files"})
    processes, _ = count(limits, "limits", "processes")
    memory, memory_auto = count(limits, "limits", "memory", allow_auto=True)
    open_files, _ = count(limits, "limits", "open-files")

    root_lines = []
    for i, entry in enumerate(roots):
        path = "roots[%d]" % i
        members(entry, path, {"path", "read", "write"})
        if not isinstance(entry.get("path"), str) or not entry["path"].startswith("/"):
            fail(path + ".path", "expected an absolute path")
        root_lines.append("  { %s, %s, %s }," % (c_string(entry["path"]),
                                                  word(entry, path, "read", ACCESS, "SBX_ACCESS_DENY"),
                                                  word(entry, path, "write", ACCESS, "SBX_ACCESS_DENY")))
    root_lines.append("  { NULL, SBX_ACCESS_DENY, SBX_ACCESS_DENY },")

    out = [
        "/* Generated by core/profile/gen-default-profile.py from data/profiles/default.json; do not edit. */",
        "#pragma once",
        "",
        "static const struct",
        "{",
        "  const char *path;",
        "  SbxAccess   read;",
        "  SbxAccess   write;",
        "} sbx_default_profile_roots[] = {",
    ] + root_lines + [
        "};",
        "",
        "static const struct",
        "{",
        "  SbxAccess    workspace_read, workspace_write;",
        "  SbxAccess    host_read, host_write;",
        "  SbxAccess    network, command;",
        "  SbxHome      home;",
        "  SbxIsolation isolation;",
        "  gboolean     ack_unconfined;",
        "  gboolean     unix_sockets;",
        "  SbxDeniedPaths denied_paths;",
        "  guint64      processes, memory, open_files;",
        "  gboolean     memory_auto;   /* \"memory\": \"auto\": computed when loaded */",
        "} sbx_default_profile_table = {",
        "  %s, %s," % (word(workspace, "workspace", "read", ACCESS, "SBX_ACCESS_DENY"),
                      word(workspace, "workspace", "write", ACCESS, "SBX_ACCESS_DENY")),
        "  %s, %s," % (word(host, "host", "read", ACCESS, "SBX_ACCESS_DENY"),
                      word(host, "host", "write", ACCESS, "SBX_ACCESS_DENY")),
        "  %s, %s," % (word(profile, "(root)", "network", ACCESS, "SBX_ACCESS_DENY"),
                      word(profile, "(root)", "command", ACCESS, "SBX_ACCESS_DENY")),
        "  %s," % word(profile, "(root)", "home", HOME, "SBX_HOME_ISOLATED"),
        "  %s," % word(profile, "(root)", "isolation", ISOLATION, "SBX_ISOLATION_SANDBOXED"),
        "  %s," % ("TRUE" if ack else "FALSE"),
        "  %s," % word(profile, "(root)", "unix-sockets", UNIX, "FALSE"),
        "  %s," % word(profile, "(root)", "denied-paths", DENIED_PATHS, "SBX_DENIED_PATHS_PERMISSION_DENIED"),
        "  %s, %s, %s," % (processes, memory, open_files),
        "  %s," % memory_auto,
        "};",
        "",
    ]
    with open(sys.argv[2], "w", encoding="utf-8") as stream:
        stream.write("\n".join(out))


main()
