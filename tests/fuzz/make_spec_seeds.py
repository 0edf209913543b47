#!/usr/bin/python3
"""Writes the seed corpus of fuzz_run_spec (tests/fuzz/corpus/fuzz_run_spec/) from real specs.

    /usr/bin/python3 tests/fuzz/make_spec_seeds.py

Seeds: the example specs of client/examples/ (as they are, and with their sweep shrunk below the
fuzz target's limits so that the whole validator runs on them), every raw-string spec of the run
spec and error tests (tests/runspec/run_spec_test.cpp, tests/service/errors_test.cpp: valid specs
and one invalid spec per field), and a few texts that only the JSON layer sees. Earlier seeds of
this script (example-*, test-*, text-*) are replaced; files of other names are left alone.
"""
import glob
import json
import os
import re

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus", "fuzz_run_spec")
TEST_SOURCES = ["tests/runspec/run_spec_test.cpp", "tests/service/errors_test.cpp"]
# fuzz_support.hpp small_options(): max_systems 256.
MAX_SYSTEMS = 256

# Texts for the JSON layer (parse_spec_text): duplicate keys at depth, bad UTF-8, odd numbers.
TEXTS = {
    "duplicate-key": b'{"model": "duffing", "model": "duffing"}',
    "duplicate-nested-key": b'{"model": "duffing", "systems": [{}, {"q0": [1, 2], "q0": [1, 2]}]}',
    "bad-utf8-key": b'{"model": "duffing", "params": {"k\xff1": 1}}',
    "control-chars": b'{"model": "duf\\u0000fing\\u001b[31m", "description": "\\ud800"}',
    "big-numbers": b'{"model": "duffing", "sweep": {"count": 1e400, "seed": 18446744073709551615}}',
    "deep-nesting": b'{"model": "duffing", "description": ' + b"[" * 64 + b"]" * 64 + b"}",
    "first-n": b'{"model": "duffing", "systems": [{}, {}],'
    b' "output": {"trajectories": "first:999999999999999999"}}',
    "long-field": b'{"model": "duffing", "params": {"' + b"\\u00e9" * 300 + b'": 1}}',
}


def raw_strings(path):
    """The R"(...)" literals of a C++ source, in order."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    return [m.group(1) for m in re.finditer(r'R"\((.*?)\)"', text, re.S)]


def shrunk(doc):
    """The same spec with its sweep within the fuzz target's limits, or None if it is."""
    sweep = doc.get("sweep")
    if not isinstance(sweep, dict) or not isinstance(sweep.get("count"), int):
        return None
    if sweep["count"] <= MAX_SYSTEMS:
        return None
    small = json.loads(json.dumps(doc))
    small["sweep"]["count"] = 40
    return small


def main():
    os.makedirs(OUT, exist_ok=True)
    for old in glob.glob(os.path.join(OUT, "*")):
        if re.match(r"(example|test|text)-", os.path.basename(old)):
            os.remove(old)
    seeds = {}

    def add(name, data):
        if isinstance(data, str):
            data = data.encode("utf-8")
        if data not in seeds.values():
            seeds[name] = data

    for path in sorted(glob.glob(os.path.join(ROOT, "client", "examples", "*.json"))):
        stem = os.path.splitext(os.path.basename(path))[0]
        with open(path, "rb") as f:
            data = f.read()
        add("example-" + stem + ".json", data)
        small = shrunk(json.loads(data))
        if small is not None:
            add("example-" + stem + "-small.json", json.dumps(small))
    for path in TEST_SOURCES:
        stem = os.path.splitext(os.path.basename(path))[0]
        for i, text in enumerate(raw_strings(path)):
            add("test-%s-%03d.json" % (stem, i), text)
    for name, data in TEXTS.items():
        add("text-" + name + ".json", data)
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print("wrote %d fuzz_run_spec seeds to %s" % (len(seeds), os.path.relpath(OUT, ROOT)))


if __name__ == "__main__":
    main()
