#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Validate iobandctl's --json against its documented schema.

Runs `test-tools --print-json KIND` for every command with --json (list,
table, stat, top; stat from an older module too) on the unit tests'
canned inputs, and checks each output against tools/iobandctl.schema.json
with the jsonschema package when it is there, else with the small
validator below (the subset of JSON Schema the file uses: $ref, type,
const, enum, minimum, required, properties, additionalProperties, items,
oneOf). Prints a PASS/FAIL line per output, then "N passed, N failed".

    check_schema.py ./test-tools ../tools/iobandctl.schema.json
"""
import json
import subprocess
import sys

KINDS = ["list", "table", "stat", "stat-old-module", "top"]


def types_of(v):
    if v is None:
        return {"null"}
    if isinstance(v, bool):
        return {"boolean"}
    if isinstance(v, int):
        return {"integer", "number"}
    if isinstance(v, float):
        return {"number"}
    if isinstance(v, str):
        return {"string"}
    if isinstance(v, list):
        return {"array"}
    return {"object"}


def validate(v, s, root, path="$"):
    """Raise ValueError at the first place @v breaks schema @s."""
    if "$ref" in s:
        node = root
        for part in s["$ref"].lstrip("#/").split("/"):
            node = node[part]
        return validate(v, node, root, path)
    if "oneOf" in s:
        ok = 0
        for sub in s["oneOf"]:
            try:
                validate(v, sub, root, path)
                ok += 1
            except ValueError:
                pass
        if ok != 1:
            raise ValueError("%s: matches %d of oneOf, not 1" % (path, ok))
        return
    if "type" in s:
        want = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not types_of(v) & set(want):
            raise ValueError("%s: %r is not %s" % (path, v, "/".join(want)))
    if "const" in s and v != s["const"]:
        raise ValueError("%s: %r is not %r" % (path, v, s["const"]))
    if "enum" in s and v not in s["enum"]:
        raise ValueError("%s: %r is not one of %r" % (path, v, s["enum"]))
    if "minimum" in s and isinstance(v, (int, float)) and \
            not isinstance(v, bool) and v < s["minimum"]:
        raise ValueError("%s: %r < %r" % (path, v, s["minimum"]))
    if isinstance(v, dict):
        for key in s.get("required", []):
            if key not in v:
                raise ValueError("%s: no key %r" % (path, key))
        props = s.get("properties", {})
        extra = s.get("additionalProperties", True)
        for key, val in v.items():
            if key in props:
                validate(val, props[key], root, "%s.%s" % (path, key))
            elif extra is False:
                raise ValueError("%s: key %r is not in the schema" %
                                 (path, key))
            elif isinstance(extra, dict):
                validate(val, extra, root, "%s.%s" % (path, key))
    if isinstance(v, list) and "items" in s:
        for i, item in enumerate(v):
            validate(item, s["items"], root, "%s[%d]" % (path, i))


def main():
    test_tools, schema_file = sys.argv[1], sys.argv[2]
    with open(schema_file) as f:
        schema = json.load(f)
    try:
        import jsonschema
        checker = jsonschema.Draft202012Validator(schema)
        how = "jsonschema"
    except ImportError:
        checker = None
        how = "check_schema.py's validator"
    passed = failed = 0
    for kind in KINDS:
        name = "json schema: %s --json (%s)" % (kind, how)
        try:
            run = subprocess.run([test_tools, "--print-json", kind],
                                 capture_output=True, text=True, check=True)
            outputs, text, at = [], run.stdout, 0
            decoder = json.JSONDecoder()
            while text[at:].strip():
                while text[at].isspace():
                    at += 1
                doc, at = decoder.raw_decode(text, at)
                outputs.append(doc)
            if not outputs:
                raise ValueError("no output")
            for doc in outputs:
                if checker:
                    checker.validate(doc)
                validate(doc, schema, schema)
            print("PASS %s" % name)
            passed += 1
        except Exception as e:  # noqa: BLE001 - any failure is a FAIL line
            print("FAIL %s: %s" % (name, e))
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
