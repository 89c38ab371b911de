#!/usr/bin/env python3
"""The VM suite's host-side assertions, tested without a VM.

Each tests/fixtures/<scenario>/_vm/ holds what a real guest shipped when the
fixture was captured. The scenario's own check must accept it, and must
reject it once a verdict, an exit code or a reported size is made wrong: an
assertion that cannot fail is not a test.
"""

import copy
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scenarios  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(HERE), "fixtures")


def load(name):
    d = os.path.join(FIXTURES, name, "_vm")
    files = {}
    for fn in os.listdir(d):
        with open(os.path.join(d, fn), "rb") as f:
            files[fn] = f.read()
    return files


def with_doc(files, mutate):
    doc = json.loads(files["check.json"])
    doc2 = copy.deepcopy(doc)
    mutate(doc2)
    out = dict(files)
    out["check.json"] = json.dumps(doc2).encode()
    return out


def failures(name, files):
    c, _ = scenarios.run_checks(scenarios.SCENARIOS[name], files)
    return c.failures


def captured():
    if not os.path.isdir(FIXTURES):
        return []
    return sorted(n for n in os.listdir(FIXTURES)
                  if n in scenarios.SCENARIOS
                  and os.path.exists(os.path.join(FIXTURES, n, "_vm", "check.json")))


class Checks(unittest.TestCase):
    def test_fixtures_exist(self):
        self.assertTrue(captured(), f"no captured scenarios under {FIXTURES}")

    def test_captured_results_pass(self):
        for name in captured():
            with self.subTest(name):
                self.assertEqual(failures(name, load(name)), [])

    def test_wrong_exit_code_fails(self):
        for name in captured():
            files = load(name)
            files["check.rc"] = b"2\n"
            with self.subTest(name):
                self.assertTrue(failures(name, files))

    def test_wrong_top_verdict_fails(self):
        for name in captured():
            def m(doc):
                doc["verdict"]["code"] = "check_failed"
            with self.subTest(name):
                self.assertTrue(failures(name, with_doc(load(name), m)))

    def test_wrong_mount_verdict_fails(self):
        wrong = {"dax_active": "dax_silently_off", "dax_silently_off": "dax_active",
                 "dax_not_requested": "dax_active"}
        for name in captured():
            files = load(name)
            doc = json.loads(files["check.json"])
            if not scenarios.pmem_mount(doc):
                continue

            def m(doc):
                mnt = scenarios.pmem_mount(doc)
                mnt["verdict"]["code"] = wrong.get(mnt["verdict"]["code"], "dax_active")
            with self.subTest(name):
                self.assertTrue(failures(name, with_doc(files, m)))

    def test_namespace_disagreeing_with_ndctl_fails(self):
        for name in captured():
            files = load(name)
            if not scenarios.namespaces(json.loads(files["check.json"])):
                continue

            def m(doc):
                doc["namespaces"][0]["size"] += 4096
            with self.subTest(name):
                self.assertTrue(any("vs ndctl" in f for f in failures(name, with_doc(files, m))))

    def test_missing_namespace_fails(self):
        for name in captured():
            files = load(name)
            if not scenarios.namespaces(json.loads(files["check.json"])):
                continue

            def m(doc):
                doc["namespaces"] = []
            with self.subTest(name):
                self.assertTrue(failures(name, with_doc(files, m)))


if __name__ == "__main__":
    unittest.main(verbosity=2)
