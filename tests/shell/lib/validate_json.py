#!/usr/bin/python3
# validate_json.py <schema.json> <document.json>...: validates each document
# against the schema (JSON Schema 2020-12, python3-jsonschema), and again
# with no key allowed that the schema does not name, so that a key added to
# the output without its line in the schema fails too.  Exit 0 when all pass;
# otherwise each error on stdout and exit 1.
import json
import sys

import jsonschema


def mixins(node, found):
    """the $defs that objects with properties of their own also $ref"""
    if isinstance(node, dict):
        if "properties" in node and "$ref" in node:
            found.add(node["$ref"].rsplit("/", 1)[-1])
        for v in node.values():
            mixins(v, found)
    elif isinstance(node, list):
        for v in node:
            mixins(v, found)
    return found


def closed(node, skip, name=None):
    """the schema with unevaluatedProperties false on every object it
    describes but the mixins, whose properties the objects using them see"""
    if isinstance(node, dict):
        node = {k: closed(v, skip, k) for k, v in node.items()}
        if "properties" in node and name not in skip:
            node.setdefault("unevaluatedProperties", False)
        return node
    if isinstance(node, list):
        return [closed(v, skip) for v in node]
    return node


def main():
    if len(sys.argv) < 3:
        print(__doc__ or "usage: validate_json.py <schema> <document>...")
        return 2
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = 0
    for name, s in (("", schema), (" (closed)", closed(schema, mixins(schema, set())))):
        validator = jsonschema.Draft202012Validator(s)
        for path in sys.argv[2:]:
            with open(path) as f:
                doc = json.load(f)
            for e in validator.iter_errors(doc):
                where = "/".join(str(p) for p in e.absolute_path)
                print(f"{path}{name}: at '{where}': {e.message[:300]}")
                errors += 1
    return 1 if errors else 0


sys.exit(main())
