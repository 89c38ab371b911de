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


def with_json(files, fname, mutate):
    """A copy of `files` whose JSON file `fname` went through mutate(doc)."""
    doc = copy.deepcopy(json.loads(files[fname]))
    mutate(doc)
    out = dict(files)
    out[fname] = json.dumps(doc).encode()
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

    # -- the workload commands (exercise, profile -- CMD) ------------------------

    def with_files(self, fname):
        names = [n for n in captured() if fname in load(n)]
        self.assertTrue(names, f"no captured scenario ships {fname}")
        return names

    def assert_mutation_fails(self, fname, mutate, expect=None):
        for name in self.with_files(fname):
            with self.subTest(name):
                f = failures(name, with_json(load(name), fname, lambda d: mutate(name, d)))
                self.assertTrue(f)
                if expect:
                    self.assertTrue(any(expect in x for x in f), f)

    def test_exercise_cached_growth_flips(self):
        # DAX with page-cache growth, or no DAX without it: both must fail.
        def m(name, doc):
            for p in doc["phases"]:
                p["cached_kb_delta"] = 0 if not doc["dax"] else 32768
        self.assert_mutation_fails("exercise.json", m, "Cached")

    def test_exercise_footprint_wrong(self):
        def m(name, doc):
            doc["footprint"]["code"] = "page_cache" if doc["dax"] else "no_page_cache"
        self.assert_mutation_fails("exercise.json", m, "footprint")

    def test_exercise_left_file_or_failed(self):
        self.assert_mutation_fails("exercise.json", lambda n, d: d.update(removed=False), "removed")
        for name in self.with_files("exercise.rc"):
            files = load(name)
            files["exercise.rc"] = b"1\n"
            with self.subTest(name):
                self.assertTrue(failures(name, files))
            del files["exercise.json"]
            with self.subTest(name + " without exercise.json"):
                self.assertTrue(failures(name, files))

    def test_exercise_pmd_fallback_fails_on_xfs(self):
        files = load("fsdax-xfs")

        def m(doc):
            doc["phases"][1]["faults"]["dax_pmd_fallback"] = 2
            doc["phases"][1]["faults"]["dax_pte"] = 1024
        f = failures("fsdax-xfs", with_json(files, "exercise.json", m))
        self.assertTrue(any("fallbacks" in x for x in f), f)
        self.assertTrue(any("PTE" in x for x in f), f)

    def test_exercise_residency_on_nodax(self):
        def m(doc):
            for p in doc["phases"]:
                p["page_cache_after"]["resident_bytes"] = 0
        f = failures("fsdax-ext4-nodax", with_json(load("fsdax-ext4-nodax"), "exercise.json", m))
        self.assertTrue(any("resident after" in x for x in f), f)

    def test_profile_dd_cached_flips(self):
        def m(name, doc):
            pc = doc["command"]["page_cache"]
            pc["cached_kb_delta"] = 32768 if name != "fsdax-ext4-nodax" else 12
        self.assert_mutation_fails("profile-dd.json", m, "Cached")

    def test_profile_dd_residency_method(self):
        def m(name, doc):
            f = doc["command"]["page_cache"]["files"][0]
            f["method"] = "cachestat" if f["method"] == "not_applicable_dax" else "not_applicable_dax"
        self.assert_mutation_fails("profile-dd.json", m, "method")

    def test_profile_cmd_fault_kinds(self):
        # ext4's dd-written file without fallbacks, XFS's fallocated file with them.
        def m(name, doc):
            f = doc["command"]["faults"]
            if name == "fsdax-xfs":
                f["dax_pmd_fallback"], f["dax_pte"] = 3, 1536
            else:
                f["dax_pmd_fallback"], f["dax_pte"] = 0, 0
        self.assert_mutation_fails("profile-cmd.json", m, "profile-cmd")

    def test_profile_cmd_fallback_source_fails(self):
        def m(name, doc):
            doc["command"]["faults"]["source"] = "rusage"
        self.assert_mutation_fails("profile-cmd.json", m, "perf")

    def test_profile_cmd_exit_status(self):
        def m(name, doc):
            doc["command"]["exit_status"] = 1
        self.assert_mutation_fails("profile-cmd.json", m, "exit status")


if __name__ == "__main__":
    unittest.main(verbosity=2)
