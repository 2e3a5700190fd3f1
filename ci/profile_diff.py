#!/usr/bin/env python3
"""Compares two cuhal device profiles (fakecuda/profiles/*.json) and lists the differences.

    ci/profile_diff.py COMMITTED.json FRESH.json [--json]

Identity fields (uuid, pci_bus_id) differ between any two boards and are reported separately as
"identity"; every other difference (name, total_memory, driver_version, an attribute's value, an
attribute present in one profile only) is a "difference". Exit status: 0 when there is no
difference beyond identity, 1 otherwise, 2 on bad input.
"""
import json
import sys

IDENTITY = ("uuid", "pci_bus_id")
SCALARS = ("name", "total_memory", "driver_version")


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            profile = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"profile_diff: {path}: {e}")
    if not isinstance(profile, dict) or not isinstance(profile.get("attributes"), dict):
        sys.exit(f"profile_diff: {path}: not a cuhal device profile (no 'attributes' object)")
    return profile


def diff(a, b):
    """Returns (identity, differences): lists of {"field", "committed", "fresh"}."""
    identity = [{"field": k, "committed": a.get(k), "fresh": b.get(k)}
                for k in IDENTITY if a.get(k) != b.get(k)]
    differences = [{"field": k, "committed": a.get(k), "fresh": b.get(k)}
                   for k in SCALARS if a.get(k) != b.get(k)]
    attrs_a, attrs_b = a["attributes"], b["attributes"]
    for key in sorted(set(attrs_a) | set(attrs_b)):
        if attrs_a.get(key) != attrs_b.get(key):
            differences.append({"field": f"attributes.{key}", "committed": attrs_a.get(key),
                                "fresh": attrs_b.get(key)})
    return identity, differences


def main(argv):
    args = [x for x in argv[1:] if not x.startswith("--")]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    identity, differences = diff(load(args[0]), load(args[1]))
    if "--json" in argv:
        print(json.dumps({"identity": identity, "differences": differences}, indent=2))
    else:
        for d in identity:
            print(f"identity   {d['field']}: {d['committed']} -> {d['fresh']}")
        for d in differences:
            print(f"DIFFERENT  {d['field']}: {d['committed']} -> {d['fresh']}")
        print(f"{len(differences)} difference(s), {len(identity)} identity field(s) differ")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
