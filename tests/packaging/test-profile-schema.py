#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""TAP: the profile schema describes what the parser accepts.

    test-profile-schema.py SBX SCHEMA PROFILES_DIR

- the schema is a valid draft 2020-12 schema;
- every profile in PROFILES_DIR, and its normalized form (`sbx profile
  show`), validates, and the parser accepts it (positive control);
- documents the parser rejects for a type or enum error, an unknown member,
  a missing member or an unconfined rule, the schema rejects too;
- a differential check: every member of a document that uses every member
  is replaced by values of every JSON type, added to and removed; the
  parser (`sbx profile check`) and the schema must agree on each variant.
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("1..0 # SKIP python3-jsonschema is not installed (scripts/setup.sh installs it)")
    sys.exit(0)

SBX, SCHEMA, PROFILES = sys.argv[1], sys.argv[2], sys.argv[3]
n = 0
STRING_VALUES = ["x", "deny", "gated", "allow", "isolated", "real", "sandboxed", "unconfined",
                 "permission-denied", "not-found",
                 "auto", "1G", "7t", "", "/etc"]


def report(ok, name, details=()):
    global n
    n += 1
    print(f"{'ok' if ok else 'not ok'} {n} {name}")
    for line in details:
        print(f"# {line}")


def parser_verdicts(workspace, documents):
    """Runs `sbx profile check` once over every document; returns a list of
    (accepted, message) in the same order."""
    paths = []
    for i, doc in enumerate(documents):
        path = os.path.join(workspace, f"doc-{i}.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        paths.append(path)
    verdicts = []
    # In chunks: one process per few hundred files.
    for start in range(0, len(paths), 200):
        chunk = paths[start:start + 200]
        proc = subprocess.run([SBX, "profile", "check", "--workspace", workspace, *chunk],
                              capture_output=True, text=True, check=False)
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"sbx profile check exited {proc.returncode}: {proc.stderr}")
        oks = {line.split(": ok ")[0] for line in proc.stdout.splitlines() if ": ok " in line}
        errors = {}
        for line in proc.stderr.splitlines():
            for p in chunk:
                if line.startswith(f"sbx: {p}: "):
                    errors[p] = line[len(f"sbx: {p}: "):]
        for p in chunk:
            if (p in oks) == (p in errors):
                raise RuntimeError(f"no single verdict for {p}: {proc.stdout} {proc.stderr}")
            verdicts.append((p in oks, errors.get(p, "")))
    return verdicts


def schema_errors(validator, doc):
    return [f"{'/'.join(str(x) for x in e.absolute_path) or '(root)'}: {e.message}"
            for e in validator.iter_errors(doc)]


def main():
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
        report(schema.get("$schema") == "https://json-schema.org/draft/2020-12/schema",
               "/schema/is-draft-2020-12")
    except jsonschema.SchemaError as e:
        report(False, "/schema/is-draft-2020-12", [str(e).splitlines()[0]])
        print(f"1..{n}")
        return
    validator = jsonschema.Draft202012Validator(schema)

    workspace = tempfile.mkdtemp(prefix="sbx-test-schema.")
    try:
        # Relative workspace roots in the variants name existing directories,
        # so the parser judges the value, not the file system.
        for name in STRING_VALUES:
            if name and "/" not in name:
                os.mkdir(os.path.join(workspace, name))
        run(validator, workspace)
    finally:
        shutil.rmtree(workspace)
    print(f"1..{n}")


def run(validator, workspace):
    # 1. Shipped profiles, raw and normalized.
    shipped = sorted(f for f in os.listdir(PROFILES) if f.endswith(".json"))
    docs = []
    for name in shipped:
        with open(os.path.join(PROFILES, name), encoding="utf-8") as f:
            docs.append(json.load(f))
    verdicts = parser_verdicts(workspace, docs)
    for name, doc, (accepted, message) in zip(shipped, docs, verdicts):
        errors = schema_errors(validator, doc)
        report(accepted and not errors, f"/schema/shipped/{name}",
               ([f"parser: {message}"] if not accepted else []) + [f"schema: {e}" for e in errors])
        path = os.path.join(PROFILES, name)
        proc = subprocess.run([SBX, "profile", "show", "--workspace", workspace, path],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            report(False, f"/schema/normalized/{name}", [proc.stderr.strip()])
            continue
        normalized = json.loads(proc.stdout)["profile"]
        errors = schema_errors(validator, normalized)
        report(not errors, f"/schema/normalized/{name}", [f"schema: {e}" for e in errors])
    report(len(shipped) >= 4, f"/schema/shipped/count ({len(shipped)} profiles)")

    # 2. Invalid examples: the parser rejects each, and so must the schema.
    base = {"version": 1}
    invalid = {
        "missing-version": {},
        "version-2": {"version": 2},
        "version-string": {"version": "1"},
        "unknown-top-member": {"version": 1, "netwrok": "deny"},
        "network-bad-word": {"version": 1, "network": "alow"},
        "network-integer": {"version": 1, "network": 2},
        "network-null": {"version": 1, "network": None},
        "home-bad-word": {"version": 1, "home": "shared"},
        "isolation-bad-word": {"version": 1, "isolation": "none"},
        "workspace-not-object": {"version": 1, "workspace": "."},
        "workspace-unknown-member": {"version": 1, "workspace": {"execute": "allow"}},
        "workspace-root-integer": {"version": 1, "workspace": {"root": 1}},
        "workspace-root-empty": {"version": 1, "workspace": {"root": ""}},
        "host-read-gated-typo": {"version": 1, "host": {"read": "gate"}},
        "ack-string": {"version": 1, "ack-unconfined": "true"},
        "unix-sockets-gated": {"version": 1, "unix-sockets": "gated"},
        "unix-sockets-boolean": {"version": 1, "unix-sockets": True},
        "denied-paths-bad-word": {"version": 1, "denied-paths": "hidden"},
        "denied-paths-boolean": {"version": 1, "denied-paths": True},
        "roots-object": {"version": 1, "roots": {"path": "/usr"}},
        "root-without-path": {"version": 1, "roots": [{"read": "allow"}]},
        "root-relative": {"version": 1, "roots": [{"path": "usr"}]},
        "root-unknown-member": {"version": 1, "roots": [{"path": "/usr", "exec": "allow"}]},
        "limits-negative": {"version": 1, "limits": {"processes": -1}},
        "limits-fraction": {"version": 1, "limits": {"processes": 1.5}},
        "limits-too-big": {"version": 1, "limits": {"open-files": 9223372036854775808}},
        "memory-bad-suffix": {"version": 1, "limits": {"memory": "4X"}},
        "memory-boolean": {"version": 1, "limits": {"memory": True}},
        "limits-unknown-member": {"version": 1, "limits": {"cpu": 1}},
        "unconfined-unacknowledged": {"version": 1, "isolation": "unconfined"},
        "acknowledged-but-sandboxed": {"version": 1, "ack-unconfined": True},
        "unconfined-network-denied": {
            "version": 1, "isolation": "unconfined", "ack-unconfined": True,
            "workspace": {"read": "allow", "write": "allow"},
            "host": {"read": "allow", "write": "allow"}},
        "unconfined-root-not-allowed": {
            "version": 1, "isolation": "unconfined", "ack-unconfined": True,
            "workspace": {"read": "allow", "write": "allow"},
            "host": {"read": "allow", "write": "allow"}, "network": "allow",
            "roots": [{"path": "/usr", "read": "allow"}]},
    }
    names = list(invalid)
    verdicts = parser_verdicts(workspace, [invalid[k] for k in names])
    for name, (accepted, message) in zip(names, verdicts):
        errors = schema_errors(validator, invalid[name])
        details = []
        if accepted:
            details.append("the parser accepts it: the example is not invalid")
        if not errors:
            details.append(f"the schema accepts it, the parser says: {message}")
        report(not accepted and bool(errors), f"/schema/invalid/{name}", details)

    # 3. Differential: a document using every member, mutated member by member.
    full = {
        "version": 1,
        "workspace": {"root": ".", "read": "allow", "write": "gated"},
        "host": {"read": "gated", "write": "deny"},
        "network": "deny",
        "command": "allow",
        "home": "real",
        "isolation": "sandboxed",
        "ack-unconfined": False,
        "unix-sockets": "deny",
        "denied-paths": "not-found",
        "roots": [{"path": "/usr", "read": "allow", "write": "deny"}],
        "limits": {"processes": 64, "memory": "512m", "open-files": 128},
    }
    unconfined = {
        "version": 1,
        "workspace": {"root": ".", "read": "allow", "write": "allow"},
        "host": {"read": "allow", "write": "allow"},
        "network": "allow",
        "command": "gated",
        "home": "isolated",
        "isolation": "unconfined",
        "ack-unconfined": True,
        "unix-sockets": "allow",
        "denied-paths": "permission-denied",
        "roots": [{"path": "/usr", "read": "allow", "write": "allow"}],
        "limits": {"processes": 0, "memory": 1048576, "open-files": 0},
    }
    values = STRING_VALUES + [0, 7, -1, 1.5, 2**63 - 1, 2**63, True, False,
              None, [], {}, ["x"], {"x": 1}]
    variants = []
    for seed_name, seed in (("sandboxed", full), ("unconfined", unconfined)):
        variants.append((f"{seed_name}", seed))
        for path in leaf_paths(seed):
            for value in values:
                variants.append((f"{seed_name}:{fmt(path)}={json.dumps(value)}", replaced(seed, path, value)))
            variants.append((f"{seed_name}:-{fmt(path)}", removed(seed, path)))
        for path in object_paths(seed):
            variants.append((f"{seed_name}:+{fmt(path + ['extra'])}", replaced(seed, path + ["extra"], "deny")))
    verdicts = parser_verdicts(workspace, [doc for _, doc in variants])
    disagreements = []
    accepted_count = 0
    for (name, doc), (accepted, message) in zip(variants, verdicts):
        errors = schema_errors(validator, doc)
        accepted_count += accepted
        if accepted != (not errors):
            disagreements.append(f"{name}: parser {'accepts' if accepted else 'rejects (' + message + ')'}, "
                                 f"schema {'rejects: ' + errors[0] if errors else 'accepts'}")
    report(not disagreements,
           f"/schema/differential ({len(variants)} variants, {accepted_count} accepted by both)",
           disagreements[:40])
    report(accepted_count > 20 and len(variants) - accepted_count > 200,
           "/schema/differential/covers-both-verdicts")


def leaf_paths(doc, prefix=None):
    prefix = prefix or []
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from leaf_paths(v, prefix + [k]) if isinstance(v, (dict, list)) and v else [prefix + [k]]
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from leaf_paths(v, prefix + [i])
    if prefix and isinstance(doc, (dict, list)):
        yield prefix


def object_paths(doc, prefix=None):
    prefix = prefix or []
    if isinstance(doc, dict):
        yield prefix
        for k, v in doc.items():
            yield from object_paths(v, prefix + [k])
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from object_paths(v, prefix + [i])


def fmt(path):
    return ".".join(str(p) for p in path) or "(root)"


def replaced(doc, path, value):
    doc = copy.deepcopy(doc)
    target = doc
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value
    return doc


def removed(doc, path):
    doc = copy.deepcopy(doc)
    target = doc
    for p in path[:-1]:
        target = target[p]
    del target[path[-1]]
    return doc


if __name__ == "__main__":
    main()
