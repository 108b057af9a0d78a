#!/usr/bin/env python3
"""Write a TOML config made of a contrib snippet plus a test's own settings.

usage: mkconf.py SNIPPET OUT [TABLE.KEY=JSON | TABLE.KEY+=JSON | TABLE.KEY^=JSON]...

The snippet is parsed (so a broken snippet fails the test that uses it) and
written back with the settings merged in: `=` sets a key, `+=` appends to a
list, `^=` puts in front of it. Tests load this file instead of a hand copy of the snippet, because
podman reads exactly one file when CONTAINERS_CONF is set and TOML forbids
repeating a table such as [engine].
"""
import json
import sys
import tomllib


def set_path(doc, dotted, value, how):
    *tables, key = dotted.split(".")
    for t in tables:
        doc = doc.setdefault(t, {})
    if how:
        new = value if isinstance(value, list) else [value]
        old = doc.get(key, [])
        doc[key] = old + new if how == "+" else new + old
    else:
        doc[key] = value


def scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, list):
        return "[" + ", ".join(scalar(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def quote_key(k):
    ok = k and all(c.isalnum() or c in "-_" for c in k)
    return k if ok else json.dumps(k)


def emit(doc, prefix, out):
    plain = {k: v for k, v in doc.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in doc.items() if isinstance(v, dict)}
    if prefix and (plain or not tables):
        out.append("[" + ".".join(quote_key(p) for p in prefix) + "]")
    for k, v in plain.items():
        out.append(f"{quote_key(k)} = {scalar(v)}")
    if plain:
        out.append("")
    for k, v in tables.items():
        emit(v, prefix + [k], out)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    with open(argv[1], "rb") as f:
        doc = tomllib.load(f)
    for arg in argv[3:]:
        key, _, raw = arg.partition("=")
        how = key[-1] if key[-1] in "+^" else ""
        set_path(doc, key.rstrip("+^"), json.loads(raw), how)
    out = []
    emit(doc, [], out)
    with open(argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv)
