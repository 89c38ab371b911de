#!/usr/bin/env python3
"""Which unit and integration tests can see a planted bug: those whose
programs (meson's `depends` of the test, and the test's own executable)
differ from the unmutated build's. A test none of whose programs changed
runs the same bytes as the baseline did, so running it again tells nothing.
Compared by content, not mtime: a relink that pulls nothing of the mutated
object writes the same bytes (ld and ar are deterministic), and a restored
file's rebuild (ccache) gives back the unmutated programs.

  affected.py programs BUILD        the files to build for both suites (for ninja):
                                    not the whole build, whose .debs and guest
                                    images a mutant would make stale
  affected.py snapshot BUILD FILE   the programs' digests, into FILE
  affected.py select BUILD FILE     the tests whose programs differ from FILE's,
                                    one name a line; nothing if no program changed
"""
import hashlib
import json
import os
import subprocess
import sys

SUITES = {"unit", "integration"}


def introspect(build, what):
    out = subprocess.run(["meson", "introspect", build, what], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def digest(path):
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


def outputs(build):
    """target id -> {output file: sha256}, for the programs the suites use"""
    used = {d for test in suite_tests(build) for d in test.get("depends", [])}
    return {t["id"]: {f: digest(f) for f in t.get("filename", [])}
            for t in introspect(build, "--targets") if t["id"] in used}


def in_suites(test):
    # Meson names a suite "project:suite" in introspection.
    return any(s.split(":")[-1] in SUITES for s in test["suite"])


def suite_tests(build):
    return [t for t in introspect(build, "--tests") if in_suites(t)]


def main():
    mode, build = sys.argv[1:3]
    if mode == "programs":
        files = {t["id"]: t.get("filename", []) for t in introspect(build, "--targets")}
        wanted = {f for test in suite_tests(build) for d in test.get("depends", [])
                  for f in files.get(d, [])}
        print("\n".join(sorted(os.path.relpath(f, build) for f in wanted)))
        return 0
    path = sys.argv[3]
    if mode == "snapshot":
        with open(path, "w") as f:
            json.dump(outputs(build), f)
        return 0
    with open(path) as f:
        before = json.load(f)
    after = outputs(build)
    changed = {t for t, files in after.items() if files != before.get(t)}
    changed_files = {f for t in changed for f in after[t]}
    for test in suite_tests(build):
        if changed & set(test.get("depends", [])) or (test["cmd"] and test["cmd"][0] in changed_files):
            print(test["name"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
