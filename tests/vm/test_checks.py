#!/usr/bin/env python3
"""The VM suite's host-side assertions, tested without a VM.

What this is for: the assertions themselves, not the product. It runs no
daxprobe, so it cannot catch a product bug (the VM tests do, in real guests);
it catches an assertion that cannot fail, or one that fails real results.
Each tests/fixtures/<scenario>/_vm/ holds what a real guest shipped when the
fixture was captured. The scenario's own check must accept it, and must
reject it once a verdict, an exit code, a reported size or a kernel answer
is made wrong: an assertion that cannot fail is not a test.
"""

import copy
import json
import os
import re
import unittest

import scenarios

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(os.path.dirname(HERE), "fixtures")


def load(name):
    d = os.path.join(FIXTURES, name, "_vm")
    files = {}
    for root, _, names in os.walk(d):
        for fn in names:
            p = os.path.join(root, fn)
            with open(p, "rb") as f:
                files[os.path.relpath(p, d)] = f.read()
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


def scenario_of(name):
    """A fixture's scenario: NAME, or NAME-6.12, NAME-sid or NAME-nfit when captured on Debian
    13, 14 or the nfit_test kernel"""
    found = scenarios.SCENARIOS.get(name) or scenarios.SCENARIOS.get(
        name.removesuffix("-6.12").removesuffix("-sid"))
    if found is None and name.endswith("-nfit"):
        # Only the nfit boot's later scenarios: nfit-test-nfit predates its checks.
        found = scenarios.SCENARIOS.get(name.removesuffix("-nfit"))
        return found if found and any(found.name in s.then
                                      for s in scenarios.SCENARIOS.values()) else None
    return found


def failures(name, files):
    # A fixture captured as a later scenario of a shared boot (run_scenario's
    # boot-lead file) has its own slice of the boot's kernel log.
    c, _ = scenarios.run_checks(scenario_of(name), files, later="boot-lead" in files)
    return c.failures


def captured():
    if not os.path.isdir(FIXTURES):
        return []
    return sorted(n for n in os.listdir(FIXTURES)
                  if scenario_of(n)
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

    # -- the kernel's own answers (evidence_checks.py) ----------------------------

    def test_failed_daxctl_reference_fails(self):
        # A failed `daxctl list` is no reference: not "no devices".
        for name in captured():
            files = dict(load(name), **{"daxctl-list.rc": b"1\n",
                                        "daxctl-list.stderr": b"error: no such bus\n"})
            with self.subTest(name):
                self.assertTrue(any("daxctl list` exited 1" in f for f in failures(name, files)))

    def test_refusal_with_the_other_code_fails(self):
        # Each refusal has one right verdict: ext4's refused dax mount is
        # dax_not_requested, XFS's accepted-then-off mount dax_silently_off.
        swap = {"dax_not_requested": "dax_silently_off", "dax_silently_off": "dax_not_requested"}
        for refusal in ("inline-data", "data-journal", "xfs-blocksize"):
            def m(doc):
                mnt = scenarios.pmem_mount(doc)
                mnt["verdict"]["code"] = swap[mnt["verdict"]["code"]]
            fname = f"refusal-{refusal}.json"
            with self.subTest(refusal):
                f = failures("ext4-1k-dax", with_json(load("ext4-1k-dax"), fname, m))
                self.assertTrue(any(f"{refusal}: mount verdict" in x for x in f), f)

    def test_perf_note_against_the_kernel(self):
        # fsdax-xfs's profile -- CMD counted kernel-mode faults (root): it must say
        # nothing of user-mode only while the kernel opens the full counter,
        # and must say it when the kernel opens only the user-mode one.
        files = load("fsdax-xfs")
        files["kernel-sources.txt"] = load("ext4-1k-dax")["kernel-sources.txt"]
        self.assertEqual(failures("fsdax-xfs", dict(files, **{
            "kernel-sources.txt": files["kernel-sources.txt"] + b"perf_kernel=ok\n"})), [])
        f = failures("fsdax-xfs", dict(files, **{
            "kernel-sources.txt": files["kernel-sources.txt"] + b"perf_kernel=error EACCES\n"}))
        self.assertTrue(any("perf_note" in x for x in f), f)

    def test_unusable_source_without_its_reason_fails(self):
        # tracepoints unusable: the reason must be the kernel's (tracefs not
        # mounted); perf refused: the reason names the paranoid level.
        files = load("fsdax-xfs")
        kernel = (b"fs_dax_dir=no\nfs_dax_events=\nuid=0\nperf=error Permission denied\n"
                  b"perf_kernel=error Permission denied\ncachestat=ENOSYS x\n"
                  b"tracefs_mounted=no\nperf_event_paranoid=3\n")

        def m(doc):
            doc["faults"]["tracepoints"] = {"usable": False, "reason": "tracefs not readable"}
            doc["faults"]["perf"] = {"usable": False, "reason": "no permission"}
        f = failures("fsdax-xfs", with_doc(dict(files, **{"kernel-sources.txt": kernel}), m))
        self.assertTrue(any("tracepoints' reason names 'tracefs not mounted'" in x for x in f), f)
        self.assertTrue(any("perf_event_paranoid=3" in x for x in f), f)

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


# -- every assertion kind, broken one at a time ---------------------------------
# Each entry: the kind of assertion, and a mutation of one scenario's shipped
# files that must make that scenario's check fail (None: not applicable to
# this scenario). Every kind must apply to at least one captured scenario, so
# an assertion kind that silently stops running is noticed too.

def set_kv(files, name, key, value):
    lines = files[name].decode().splitlines()
    out = [f"{key}={value}" if ln.startswith(key + "=") else ln for ln in lines]
    return dict(files, **{name: ("\n".join(out) + "\n").encode()})


def cache_delta(files, name):
    if "cached.txt" not in files:
        return None
    delta = int(scenarios.Results(files).kv("cached.txt")["delta_kb"])
    # DAX: reading 32 MiB must not grow the cache; without DAX it must.
    return set_kv(files, "cached.txt", "delta_kb", "0" if delta >= 4096 else "32768")


def profile_field(field):
    def mutate(files, name):
        if "profile.json" not in files:
            return None

        def m(doc):
            f = doc["files"][0]
            if field == "dax":
                f["dax"] = not f["dax"]
            elif field == "mapping":
                f["mapping"]["code"] = "fallback" if f["mapping"]["code"] == "page_cache" else "page_cache"
            elif field == "pmd":
                # PMD-mapped: a wrong count; other DAX: tracepoints "not counted";
                # no DAX: PMD faults where there can be none.
                code = f["mapping"]["code"]
                f["faults"]["dax_pmd"] = 7 if code == "pmd" else None if f["dax"] else 16
            elif field == "pte":
                if f["mapping"]["code"] != "pmd":
                    return
                f["faults"]["dax_pte"] = 5
        out = with_json(files, "profile.json", m)
        return out if out["profile.json"] != with_json(files, "profile.json", lambda d: None)["profile.json"] else None
    return mutate


def fallback_field(field):
    """A fallback's cause or its ready 2 MiB pieces made wrong (issue 36)."""
    def mutate(files, name):
        if "profile.json" not in files or "fiemap.txt" not in files:
            return None

        def m(doc):
            mapping = doc["files"][0]["mapping"]
            if field == "cause":
                mapping["cause"] = {"layout": "device", "device": "layout"}.get(mapping.get("cause"))
            else:
                mapping["pmd_ready_pieces"] = (mapping.get("pmd_ready_pieces") or 0) + 1
        return with_json(files, "profile.json", m)
    return mutate


def profile_rc(files, name):
    return dict(files, **{"profile.rc": b"1\n"}) if "profile.rc" in files else None


def kernel_log(files, name):
    log = files.get("dmesg.txt", b"")
    for line in (b"Turning off DAX", b"DAX unsupported by block device"):
        if line in log and scenario_of(name).check in (scenarios.check_raw_xfs, scenarios.check_raw_ext4):
            return dict(files, **{"dmesg.txt": log.replace(line, b"(edited out)")})
    return None


# erofs-dax asserts its files, not the kernel log: the XFS lines in its
# kmsg history are an earlier scenario's of the same boot (fsdax-ext4-nodax).
KMSG_NOT_ASSERTED = ("erofs-dax",)


def kmsg_evidence(files, name):
    doc = json.loads(files["check.json"])
    m = scenarios.pmem_mount(doc)
    if not m or "Turning off DAX" not in scenarios.evidence_text(m) or name in KMSG_NOT_ASSERTED:
        return None

    def drop(doc):
        mnt = scenarios.pmem_mount(doc)
        mnt["kmsg"] = []
        mnt["verdict"]["evidence"] = [e for e in mnt["verdict"]["evidence"]
                                      if "Turning off DAX" not in json.dumps(e)]
    return with_json(files, "check.json", drop)


def remedy(files, name):
    doc = json.loads(files["check.json"])
    objs = [scenarios.pmem_mount(doc)] + scenarios.namespaces(doc)
    if not any("ndctl create-namespace" in scenarios.remedy_text(o) for o in objs if o):
        return None

    def m(doc):
        for o in [scenarios.pmem_mount(doc)] + scenarios.namespaces(doc):
            if o and isinstance(o.get("verdict", {}).get("remedy"), str):
                o["verdict"]["remedy"] = "reboot"
    return with_json(files, "check.json", m)


def file_residency(files, name):
    doc = json.loads(files["check.json"])
    f = scenarios.file_entry(doc, "/mnt/pmem/testfile")
    if not f:
        return None

    def m(doc):
        g = scenarios.file_entry(doc, "/mnt/pmem/testfile")
        big = (g["residency"].get("resident_bytes") or 0) >= 30 * scenarios.MiB
        g["residency"]["resident_bytes"] = 0 if big else 32 * scenarios.MiB
    return with_json(files, "check.json", m)


def file_statx(files, name):
    doc = json.loads(files["check.json"])
    if not scenarios.file_entry(doc, "/mnt/pmem/testfile"):
        return None

    def m(doc):
        g = scenarios.file_entry(doc, "/mnt/pmem/testfile")
        g["statx_dax"] = not g.get("statx_dax")
    return with_json(files, "check.json", m)


def mount_rc(files, name):
    if "mount.txt" not in files:
        return None
    rc = scenarios.Results(files).kv("mount.txt").get("rc")
    return set_kv(files, "mount.txt", "rc", "32" if rc == "0" else "0")


def init_labels(files, name):
    log = files.get("commands.log", b"").decode()
    if "init-labels" not in log:
        return None
    # The vacuous version of this check took the *next* command's "= 0".
    head, tail = log.split("+ ndctl init-labels", 1)
    body, rest = tail.split("\n= ", 1)
    rest = rest.split("\n", 1)[1]
    return dict(files, **{"commands.log": (head + "+ ndctl init-labels" + body + "\n= 1\n" + rest).encode()})


def devdax_chardev(files, name):
    doc = json.loads(files["check.json"])
    if not any(n.get("mode") == "devdax" for n in scenarios.namespaces(doc)):
        return None

    def m(doc):
        for n in scenarios.namespaces(doc):
            if n.get("mode") == "devdax":
                n["chardev"] = "dax9.9"
    return with_json(files, "check.json", m)


def nfit_present(files, name):
    doc = json.loads(files["check.json"])
    if (doc.get("nfit") or {}).get("present") is not False:
        return None
    return with_json(files, "check.json", lambda d: d["nfit"].__setitem__("present", True))


def map_sync(files, name):
    doc = json.loads(files["check.json"])
    m = scenarios.pmem_mount(doc)
    if not m or (m.get("map_sync") or {}).get("ok") is not True:
        return None
    return with_json(files, "check.json", lambda d: scenarios.pmem_mount(d)["map_sync"].__setitem__("ok", False))


def guest_oops(files, name):
    # What 6.12 logs when cachestat(2) touches a DAX file.
    oops = (b"BUG: unable to handle page fault for address: ffffffffffffff8e\n"
            b"RIP: 0010:workingset_test_recent+0x2a/0x1a0\n")
    return dict(files, **{"dmesg.txt": files.get("dmesg.txt", b"") + oops})


def history_as_current(files, name):
    doc = json.loads(files["check.json"])
    if not any(m.get("kmsg_history") for m in doc.get("mounts") or []) or name in KMSG_NOT_ASSERTED:
        return None

    def m(doc):
        for mnt in doc["mounts"]:
            mnt["kmsg"] += [h["message"] for h in mnt.get("kmsg_history") or []]
            mnt["kmsg_history"] = []
    return with_json(files, "check.json", m)


def residency_method(files, name):
    f = scenarios.file_entry(json.loads(files["check.json"]), "/mnt/pmem/testfile")
    if not f or (f.get("residency") or {}).get("method") not in ("cachestat", "mincore"):
        return None

    def m(doc):
        r = scenarios.file_entry(doc, "/mnt/pmem/testfile")["residency"]
        r["method"] = "mincore" if r["method"] == "cachestat" else "cachestat"
    return with_json(files, "check.json", m)


def host_backends(files, name):
    q = files.get("host/query.json")
    if not q:
        return None
    doc = json.loads(q)
    b = doc["vms"][0]["host"]["nvdimm_backends"][-1]
    b["persistence"] = "none" if b["persistence"] != "none" else "page_cache"
    return dict(files, **{"host/query.json": json.dumps(doc).encode()})


def kernel_statx(files, name):
    names = [n for n in files if n.startswith("kernel-") and b"attributes=" in files[n]]
    if not names:
        return None
    text = files[names[0]].decode()
    flipped = text.replace("attributes=0x200000", "attributes=0x0") if "attributes=0x200000" in text \
        else text.replace("attributes=0x0", "attributes=0x200000")
    return dict(files, **{names[0]: flipped.encode()})


def virtiofs_kernel(key, wrong):
    """The guest kernel's virtio-fs answer `key` made `wrong`."""
    def mutate(files, name):
        if "kernel-virtiofs.txt" not in files:
            return None
        return set_kv(files, "kernel-virtiofs.txt", key, wrong)
    return mutate


def virtiofs_verdict(files, name):
    """daxprobe judges the virtio-fs mount as if it were on pmem."""
    if "kernel-virtiofs.txt" not in files:
        return None

    def m(doc):
        for mount in doc["mounts"]:
            if mount["fstype"] == "virtiofs":
                mount["verdict"]["code"] = "dax_not_requested"
    return with_doc(files, m)


def source_usable(source):
    """daxprobe says the evidence source is (un)usable where the kernel said
    the opposite."""
    def mutate(files, name):
        if "kernel-sources.txt" not in files:
            return None

        def m(doc):
            s = doc["faults"][source]
            s["usable"] = not s["usable"]
        return with_json(files, "check.json", m)
    return mutate


def dax_device_mode(files, name):
    if not json.loads(files["check.json"]).get("dax_devices"):
        return None

    def m(doc):
        d = doc["dax_devices"][0]
        d["mode"] = "devdax" if d.get("mode") == "system-ram" else "system-ram"
    return with_json(files, "check.json", m)


def refusal_remedy(files, name):
    names = sorted(n for n in files if n.startswith("refusal-") and n.endswith(".json"))
    if not names:
        return None

    def m(doc):
        scenarios.pmem_mount(doc)["verdict"]["remedy"] = "umount /mnt/pmem && mount -o dax=always"
    return with_json(files, names[-1], m)


def erofs_doc(fname, mutate_mount):
    """An erofs-dax result whose `fname` mount went through mutate_mount(m)."""
    def mutate(files, name):
        if "erofs-before-statx-small.txt" not in files or fname not in files:
            return None

        def m(doc):
            mutate_mount(scenarios.pmem_mount(doc))
        return with_json(files, fname, m)
    return mutate


def erofs_today(m):
    """What daxprobe said before issue 34: dax_active, no census."""
    m["verdict"].update(code="dax_active", warnings=[], remedy=None)
    m.pop("census", None)


def erofs_kernel_after(files, name):
    """The kernel says a file is still not DAX after the remedy."""
    if "erofs-after-statx-small.txt" not in files:
        return None
    text = re.sub(r"(?m)^stat\.attributes = 0x[0-9a-fA-F]+", "stat.attributes = 0x0",
                  files["erofs-after-statx-small.txt"].decode())
    return dict(files, **{"erofs-after-statx-small.txt": text.encode()})


def erofs_lz4_not_compressed(files, name):
    """The kernel says the lz4 image's text file is not compressed."""
    if "erofs-lz4-statx-text.txt" not in files:
        return None
    text = re.sub(r"(?m)^stat\.attributes = 0x[0-9a-fA-F]+", "stat.attributes = 0x0",
                  files["erofs-lz4-statx-text.txt"].decode())
    return dict(files, **{"erofs-lz4-statx-text.txt": text.encode()})


def erofs_lz4_doc(mutate_mount):
    """An erofs-dax result whose lz4 image's check went through mutate_mount(m)."""
    def mutate(files, name):
        if "erofs-lz4-check.json" not in files:
            return None
        return with_json(files, "erofs-lz4-check.json",
                         lambda doc: mutate_mount(scenarios.pmem_mount(doc)))
    return mutate


# what memory_failure() logs for a device-DAX pfn (mm/memory-failure.c)
MEMORY_FAILURE_LINE = b"[ 9.9] Memory failure: 0x100a08: recovery action for dax page: Recovered\n"


def mce_doc(fname, mutate_ns):
    """A devdax result (with its injected machine check) whose `fname`
    namespace0.0 went through mutate_ns(ns)."""
    def mutate(files, name):
        if "mce-facts.txt" not in files or fname not in files:
            return None

        def m(doc):
            mutate_ns(next(n for n in scenarios.namespaces(doc) if n.get("dev") == "namespace0.0"))
        return with_json(files, fname, m)
    return mutate


def mce_file(fname, text):
    """A devdax result whose kernel answer `fname` says `text` instead."""
    def mutate(files, name):
        if "mce-facts.txt" not in files:
            return None
        return dict(files, **{fname: text.encode()})
    return mutate


MUTATIONS = {
    "erofs lz4: compressed file called inline": erofs_lz4_doc(
        lambda m: [e.update(reason="inline_tail") for e in m["census"]["exceptions"]]),
    "erofs lz4: a compressed file not named": erofs_lz4_doc(
        lambda m: m["census"]["exceptions"].pop()),
    "erofs lz4: noinline_data remedy": erofs_lz4_doc(lambda m: m["verdict"].update(
        remedy="umount /mnt/pmem; mkfs.erofs -E noinline_data /dev/pmem0 SOURCE_DIR")),
    "erofs lz4: warning without never DAX": erofs_lz4_doc(lambda m: m["verdict"].update(
        warnings=[w.replace("never DAX", "not DAX") for w in m["verdict"]["warnings"]])),
    "erofs lz4: kernel compression": erofs_lz4_not_compressed,
    "erofs: census files_seen": erofs_doc("check.json", lambda m: m["census"].update(files_seen=4)),
    "erofs: census sampled": erofs_doc("check.json", lambda m: m["census"].update(
        sampled="1 in 2 regular files")),
    "erofs: today's verdict": erofs_doc("check.json", erofs_today),
    "erofs: census names a DAX file": erofs_doc("check.json", lambda m: m["census"]["exceptions"].append(
        {"path": "/mnt/pmem/whole", "reason": "inline_tail"})),
    "erofs: census reason": erofs_doc("check.json", lambda m: m["census"]["exceptions"][0].update(
        reason="unknown")),
    "erofs: warning names a DAX file": erofs_doc("check.json", lambda m: m["verdict"]["warnings"].append(
        "/mnt/pmem/whole")),
    "erofs: remedy from another mkfs": erofs_doc("check.json", lambda m: m["verdict"].update(
        remedy="mkfs.xfs -d su=2m,sw=1")),
    "erofs: check after the remedy still warns": erofs_doc("erofs-check-after.json", lambda m: m["verdict"].update(
        code="files_not_dax")),
    "erofs: kernel after the remedy": erofs_kernel_after,
    "tracepoints vs the kernel": source_usable("tracepoints"),
    "perf vs the kernel": source_usable("perf"),
    "dax devices vs daxctl": dax_device_mode,
    "refusal remedy": refusal_remedy,
    "cache (Cached delta)": cache_delta,
    "profile: dax": profile_field("dax"),
    "profile: mapping code": profile_field("mapping"),
    "profile: PMD fault count": profile_field("pmd"),
    "profile: PTE faults on PMD": profile_field("pte"),
    "profile: exit code": profile_rc,
    "profile: fallback cause": fallback_field("cause"),
    "profile: ready 2 MiB pieces vs fiemap": fallback_field("ready"),
    "kernel log (dmesg)": kernel_log,
    "kernel log in the mount's evidence": kmsg_evidence,
    "remedy": remedy,
    "file residency": file_residency,
    "file statx": file_statx,
    "mount exit code": mount_rc,
    "init-labels exit code": init_labels,
    "devdax chardev": devdax_chardev,
    "nfit.present": nfit_present,
    "map_sync": map_sync,
    "guest oops": guest_oops,
    "kmsg history as current": history_as_current,
    "residency method": residency_method,
    "kernel statx": kernel_statx,
    "host backends": host_backends,
    "virtio-fs: -o dax refused": virtiofs_kernel("mount_dax", "0"),
    "virtio-fs: dax=inode accepted": virtiofs_kernel("mount_dax_inode", "32"),
    "virtio-fs: in mountinfo": virtiofs_kernel("mountinfo", ""),
    "virtio-fs: Cached grows": virtiofs_kernel("cached_delta_kb", "0"),
    "virtio-fs: mount verdict": virtiofs_verdict,
    "mce: media_errors a sector off": mce_doc("check.json", lambda n: n["media_errors"][0].update(
        offset=n["media_errors"][0]["offset"] + 512)),
    "mce: no warning": mce_doc("check.json", lambda n: n["verdict"].update(
        severity="ok", warnings=[])),
    "mce: clear-errors promised": mce_doc("check.json", lambda n: n["verdict"].update(
        remedy="ndctl clear-errors namespace0.0")),
    "mce: second check lost the errors": mce_doc("check-after.json", lambda n: n.update(
        media_errors=[], badblock_count=0)),
    "mce: clear-errors worked": mce_file("media-errors-after-clear.json", "[]"),
    "mce: no machine check reached the region": mce_file("region-badblocks-after-mce.txt", ""),
    "mce: the load faulted": mce_file("mce-load.txt", "Bus error\nrc=135\n"),
    "mce: the warning promises a fault": mce_doc("check.json", lambda n: n["verdict"].update(
        warnings=[w.split(", a load")[0] + ", a load there faults (SIGBUS)"
                  for w in n["verdict"]["warnings"]])),
    "mce: memory_failure ran": lambda files, name: (
        dict(files, **{"dmesg.txt": files["dmesg.txt"] + MEMORY_FAILURE_LINE})
        if "mce-facts.txt" in files else None),
}


class GuestKernelCrash(unittest.TestCase):
    """run_scenario boots once more only after a guest kernel crash outside
    daxprobe (the emulator's, as seen once under TCG on a loaded host)."""

    # The console of that run (virtio-pmem-6.12, 2026-12-03), abridged.
    TCG_CRASH = (
        "DAXPROBE-STEP prepare\n"
        "[   26.280215] traps: PANIC: double fault, error_code: 0x0\n"
        "[   26.310097] Oops: double fault: 0000 [#1] PREEMPT SMP NOPTI\n"
        "[   26.311531] CPU: 0 UID: 0 PID: 178 Comm: mkdir Not tainted 6.12.117+deb13-amd64 #1\n"
        "[   26.312223] RIP: 0010:kmem_cache_alloc_lru_noprof+0xc8/0x300\n")

    def test_crash_outside_daxprobe_is_named(self):
        import run_scenario
        self.assertEqual(run_scenario.guest_kernel_crash(self.TCG_CRASH), "mkdir")
        # 6.1 prints no UID field.
        self.assertEqual(run_scenario.guest_kernel_crash(
            "Kernel panic - not syncing: x\nCPU: 1 PID: 9 Comm: kworker/0:1 Not tainted\n"),
            "kworker/0:1")

    def test_crash_in_daxprobe_or_none_is_not(self):
        import run_scenario
        self.assertIsNone(run_scenario.guest_kernel_crash(
            self.TCG_CRASH.replace("Comm: mkdir", "Comm: daxprobe")))
        self.assertIsNone(run_scenario.guest_kernel_crash(
            "DAXPROBE-STEP prepare\nDAXPROBE-STEP check\nDAXPROBE-DONE\n"))


class ProvokedWarning(unittest.TestCase):
    """A scenario that provokes a kernel WARNING on purpose (cxl-no-commit)
    tolerates that WARNING's Call Trace, never another one."""

    def trace(self, where, kernel="6.12"):
        warning = (f"WARNING: CPU: 0 PID: 190 at {where}:183 f+0x1/0x2 [cxl_core]"
                   if kernel == "6.12" else f"WARNING: {where}:235 at f+0x68/0x80, CPU#0: cxl/144")
        return (f"[ 30.1] {warning}\n"
                "[ 30.1] Call Trace:\n[ 30.1]  <TASK>\n"
                "[ 30.1] ---[ end trace 0000000000000000 ]---\n")

    def failures(self, log, provoked):
        c = scenarios.Checker()
        scenarios.expect_kernel_healthy(c, scenarios.Results({"dmesg.txt": log.encode()}),
                                        provoked)
        return c.failures

    def test_only_the_provoked_trace_is_allowed(self):
        region = "drivers/cxl/core/region.c"
        self.assertEqual(self.failures(self.trace(region), region), [])
        self.assertTrue(self.failures(self.trace(region), None))
        self.assertTrue(self.failures(self.trace("mm/memory.c"), region))
        self.assertTrue(self.failures(self.trace(region) + self.trace("fs/dax.c"), region))

    def test_7_2_format(self):
        region = "drivers/cxl/core/region.c"
        self.assertEqual(self.failures(self.trace(region, "7.2"), region), [])
        self.assertTrue(self.failures(self.trace("mm/memory.c", "7.2"), region))
        self.assertTrue(self.failures(self.trace(region, "7.2") + self.trace("fs/dax.c", "7.2"),
                                      region))


def walk_dicts(obj, fn):
    """fn(d) on every dict inside obj."""
    if isinstance(obj, dict):
        fn(obj)
        for v in obj.values():
            walk_dicts(v, fn)
    elif isinstance(obj, list):
        for v in obj:
            walk_dicts(v, fn)


class CxlRemedies(unittest.TestCase):
    """The shared CXL boot ran daxprobe's remedies as printed
    (cxl_checks.expect_cxl_remedies) and tried the region daxprobe no longer
    offers (expect_no_free_decoder): each wrong outcome must fail."""

    def boots(self):
        names = [n for n in captured() if scenario_of(n).name == "cxl"
                 and os.path.exists(os.path.join(FIXTURES, n, "_vm", "cxl-region-remedy.rc"))]
        self.assertTrue(names, "no cxl fixture holds the remedies' run")
        return names

    def mutants(self, files):
        setup = scenarios.Results(files).kv("cxl-setup.txt")
        spare, unused, region = setup["spare"], setup["unused"], setup["spare_region"]

        def memdev(doc, dev, verdict):
            for m in doc["cxl"]["memdevs"]:
                if m["dev"] == dev:
                    m["verdict"] = verdict

        def region_code(code):
            def m(doc):
                for r in doc["cxl"]["regions"]:
                    if r["dev"] == region:
                        r["verdict"]["code"] = code
            return m

        def field(key, value):
            return lambda doc: walk_dicts(doc, lambda d: key in d and d.__setitem__(key, value))

        def swap(name, data):
            return dict(files, **{name: data})

        no_region = {"code": "cxl_no_region", "severity": "warning", "summary": "",
                     "evidence": [], "warnings": [],
                     "remedy": f"cxl create-region -m -t pmem -d decoder0.0 -w 1 {unused}"}
        decoder_free = lambda d: "decoder" in d and d.pop("region", None)
        # Each mutant, and what the failure it causes must say.
        return {
            "another command run": (swap("cxl-region-remedy-cmd.txt",
                                         b"cxl create-region -m -t ram -w 1 " + spare.encode()),
                                    f"the command run for {spare}"),
            "create-region failed": (swap("cxl-region-remedy.rc", b"1\n"),
                                     "create-region remedy's exit status"),
            "region not committed": (with_json(files, "cxl-remedy-regions.json",
                                               field("decode_state", "reset")),
                                     f"cxl list -R -v -r {region}"),
            "region of another size": (with_json(files, "cxl-remedy-regions.json",
                                                 field("size", 1 << 20)),
                                       f"cxl list -R -v -r {region}"),
            "still no region": (with_json(files, "cxl-check-after-region.json",
                                          lambda d: memdev(d, spare, dict(no_region))),
                                f"no cxl_no_region for {spare}"),
            "no namespace verdict": (with_json(files, "cxl-check-after-region.json",
                                               region_code("cxl_region_ok")),
                                     f"the next check: {region}"),
            "another namespace command": (swap("cxl-namespace-remedy-cmd.txt",
                                               b"ndctl create-namespace -m devdax -r x"),
                                          "the command run for nd"),
            "create-namespace failed": (swap("cxl-namespace-remedy.rc", b"1\n"),
                                        "create-namespace remedy's exit status"),
            "a devdax namespace": (with_json(files, "cxl-ndctl-remedy-namespaces.json",
                                             field("mode", "devdax")), "ndctl list -N -r"),
            "still no namespace": (with_json(files, "cxl-check-after-namespace.json",
                                             region_code("cxl_region_no_namespace")),
                                   "the check after the namespace"),
            "unused offered a command": (with_doc(files, lambda d: memdev(d, unused, no_region)),
                                         "cxl_no_region without a command"),
            "unused's port has a free decoder": (with_json(files, "cxl-list.json",
                                                           lambda d: walk_dicts(d, decoder_free)),
                                                 "every decoder of"),
            "unused region committed": (swap("cxl-unused-regions.json",
                                             b'{"region":"region9","decode_state":"commit"}'),
                                        f"committed a region of {unused}"),
            "unused decoder in a region": (swap("cxl-unused-region.txt", b"region9\n"),
                                           f"{unused}'s endpoint decoder"),
        }

    def test_real_runs_pass_and_each_mutant_fails(self):
        for name in self.boots():
            files = load(name)
            self.assertEqual(failures(name, files), [], name)
            for what, (broken, needle) in self.mutants(files).items():
                with self.subTest(name=name, mutant=what):
                    got = failures(name, broken)
                    self.assertTrue(any(needle in f for f in got), got)


class SharedBoot(unittest.TestCase):
    """A scenario that runs after another in the same boot is checked as
    itself over its own folder (/results/NAME/), and must have shipped one,
    with its own slice of the kernel log. Two captured scenarios stand in for
    a shared boot's results (as /init lays them out)."""

    FIRST, LATER = "devdax", "devdax-system-ram"

    def shared(self):
        lead = scenarios.SCENARIOS[self.FIRST]
        lead = scenarios.Scenario(lead.name, lead.check, then=(self.LATER,))
        files = dict(load(self.FIRST))
        files.update({f"{self.LATER}/{k}": v for k, v in load(self.LATER).items()})
        mark = f"[   42.000000] {scenarios.KMSG_MARK}{self.LATER} begins\n".encode()
        files[f"{self.LATER}/dmesg.txt"] = mark + files[f"{self.LATER}/dmesg.txt"]
        # Captured before /init kept daxctl's exit status; a live guest has it.
        files.update({"daxctl-list.rc": b"0\n", f"{self.LATER}/daxctl-list.rc": b"0\n"})
        return (lambda fs: scenarios.run_checks(lead, fs, live=True)[0].failures), files, mark

    def test_later_scenario_is_checked(self):
        run, files, _ = self.shared()
        later = self.LATER
        self.assertEqual(run(files), [])
        broken = with_json(files, f"{later}/check.json",
                           lambda d: d["namespaces"][0]["verdict"].__setitem__("code", "dax_capable"))
        f = run(broken)
        self.assertTrue(f and all(x.startswith(f"[{later}]") for x in f), f)
        only_first = {k: v for k, v in files.items() if not k.startswith(later + "/")}
        self.assertTrue(any("shipped no results" in x for x in run(only_first)), run(only_first))

    def test_each_scenario_has_its_own_kernel_log(self):
        """A kernel log line of an earlier scenario in the same boot must not
        pass a later one's check: each dmesg.txt is that scenario's slice."""
        run, files, mark = self.shared()
        later = self.LATER
        # The whole boot's log as the later one's: its mark is not its first line.
        whole = dict(files, **{f"{later}/dmesg.txt": files["dmesg.txt"] + mark})
        self.assertTrue(any(f.startswith(f"[{later}] a later scenario's kernel log begins")
                            for f in run(whole)), run(whole))
        # The first one's log running on into the later one's.
        on = dict(files, **{"dmesg.txt": files["dmesg.txt"] + files[f"{later}/dmesg.txt"]})
        self.assertTrue(any(f.startswith("scenario marks") for f in run(on)), run(on))

    def test_shared_boots_can_share(self):
        """What `then` names exists, runs nothing further itself, and needs
        the same QEMU as its lead (one boot) and no host actor."""
        qemu = lambda s: (s.nvdimm, s.label_size, s.virtio_pmem, s.cmdline, s.virtiofs_files,
                          s.cxl)
        for lead in scenarios.SCENARIOS.values():
            for name in lead.then:
                with self.subTest(lead=lead.name, later=name):
                    s = scenarios.SCENARIOS[name]
                    self.assertEqual((s.then, s.host), ((), None))
                    self.assertEqual(qemu(s), qemu(lead))


class EveryAssertionKind(unittest.TestCase):
    def test_each_kind_fails_when_broken(self):
        for kind, mutate in MUTATIONS.items():
            applied = []
            for name in captured():
                files = mutate(load(name), name)
                if files is None:
                    continue
                applied.append(name)
                with self.subTest(kind=kind, scenario=name):
                    self.assertTrue(failures(name, files), f"{kind} broken in {name}, yet the check passed")
            with self.subTest(kind=kind):
                self.assertTrue(applied, f"no captured scenario exercises the {kind} assertion")

    def test_command_rc_reads_only_its_own_command(self):
        log = "+ ndctl init-labels -f nmem0\nerror: busy\n= 1\n+ ndctl enable-region region0\n= 0\n"
        self.assertEqual(scenarios.command_rc(log, "ndctl init-labels"), 1)
        self.assertEqual(scenarios.command_rc(log, "ndctl enable-region"), 0)
        self.assertIsNone(scenarios.command_rc("+ ndctl init-labels\n+ next\n= 0\n", "ndctl init-labels"))
        self.assertIsNone(scenarios.command_rc(log, "mkfs"))


class KataRoot(unittest.TestCase):
    """Kata's image as the root (kata_checks.py): each captured boot passes
    (test_captured_results_pass) and fails once daxprobe's answer about the
    root, or the kernel's, is made wrong."""

    def kata_fixtures(self):
        return [n for n in captured() if n.startswith("kata-")]

    def assert_fails(self, name, files, what):
        with self.subTest(f"{name}: {what}"):
            self.assertTrue(failures(name, files), what)

    def test_root_answers_mutated_fail(self):
        for name in self.kata_fixtures():
            files = load(name)

            def root(doc):
                return scenarios.pmem_mount(doc, "/")

            def setter(field, value):
                def m(doc):
                    root(doc)[field] = value
                return m
            for field, value in (("device", "259:0"), ("blockdev", "pmem0"), ("disk", "pmem1"),
                                 ("partition_start", None), ("namespace", "namespace1.0"),
                                 ("pmd_offset", 0)):
                self.assert_fails(name, with_doc(files, setter(field, value)), f"/ {field}")

            def no_warnings(doc):
                root(doc)["verdict"]["warnings"] = []
            if "-dax" in name:
                self.assert_fails(name, with_doc(files, no_warnings), "no 2 MiB warning")

            def umount_remedy(doc):
                root(doc)["verdict"]["remedy"] = ("umount / && mount -o dax=always "
                                                  "/dev/pmem0p1 /  # or rootflags=dax")
            if "nodax" in name:
                self.assert_fails(name, with_doc(files, umount_remedy), "umount / remedy")

            def problem_dimm(doc):
                doc.setdefault("dimms", []).append(
                    {"verdict": {"code": "dimm_not_persistent", "severity": "problem"}})
            if "-dax" in name:
                self.assert_fails(name, with_doc(files, problem_dimm), "a problem DIMM verdict")

    def test_kernel_answers_mutated_fail(self):
        for name in self.kata_fixtures():
            files = load(name)
            line = files["kernel-root-mountinfo.txt"].decode()
            f = dict(files)
            f["kernel-root-mountinfo.txt"] = line.replace("/dev/root", "/dev/pmem0p1").encode()
            self.assert_fails(name, f, "root mounted by its node name")
            f = dict(files)
            f["kernel-root-dev.txt"] = files["kernel-root-dev.txt"].replace(
                b"dev_root_exists=no", b"dev_root_exists=yes")
            self.assert_fails(name, f, "/dev/root left behind")
            f = dict(files)
            trace = files["kernel-fs-dax.txt"].decode()
            n = re.search(r"pmd_fault_done=(\d+)", trace).group(1)
            f["kernel-fs-dax.txt"] = (f"pmd_fault_done={n}\nfallback=0\nnopage={n}\n"
                                      if "-dax" in name else
                                      "pmd_fault_done=16\nfallback=16\nnopage=0\n").encode()
            self.assert_fails(name, f, "2 MiB faults the other way")

    def test_dax_dropped_fails_the_dax_check(self):
        for name in self.kata_fixtures():
            if "nodax" not in name:
                continue
            attach = "nvdimm" if "nvdimm" in name else "virtio-pmem"
            c = scenarios.Checker()
            kata_checks = __import__("kata_checks")
            kata_checks.check_kata(c, scenarios.Results(load(name)), attach, True)
            with self.subTest(name):
                self.assertTrue(c.failures)


if __name__ == "__main__":
    unittest.main(verbosity=2)
