#!/usr/bin/env python3
"""`daxprobe profile -- CMD` counts what `perf stat` counts.

Runs the same deterministic command (touch_pages: N fresh anonymous pages,
again in a child with --fork) under `perf stat -x, -e minor-faults,major-faults`
and under `daxprobe profile --json`, and compares the fault counts. Both
attach counters to a child stopped before exec (enable_on_exec, inherit), so
the counts agree to within a few faults (what differs between two runs of a
dynamically linked program). Then the forced fallback (--no-perf: rusage and
/proc/vmstat, the path taken when perf is not permitted), exit statuses and
--output.

Usage: profile_vs_perf.py DAXPROBE TOUCH_PAGES      (exit 77: perf cannot run here)
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

DAXPROBE = TOUCH = None
PERF = shutil.which("perf") or "/usr/bin/perf"
PAGES = 4096
# Two runs of the same program differ by a few faults (ASLR moves what shares
# a page); the counts compared are ~8300, and a lost child would cost 4096.
TOLERANCE = 16


def perf_stat(argv):
    p = subprocess.run([PERF, "stat", "-x,", "-e", "minor-faults,major-faults", "--"] + argv,
                       capture_output=True, text=True)
    counts = {}
    for line in p.stderr.splitlines():
        f = line.split(",")
        if len(f) >= 3 and f[2] in ("minor-faults", "major-faults"):
            counts[f[2]] = int(f[0]) if f[0].isdigit() else None
    return p.returncode, counts, p.stderr


def profile(argv, *opts):
    p = subprocess.run([DAXPROBE, "profile", "--json", *opts, "--"] + argv,
                       capture_output=True, text=True)
    return p.returncode, json.loads(p.stdout), p.stderr


def skip_reason():
    if not os.access(PERF, os.X_OK):
        return f"{PERF} not found (apt-get install linux-perf)"
    rc, counts, err = perf_stat(["true"])
    if rc != 0 or counts.get("minor-faults") is None:
        return f"perf stat cannot count page faults here (rc {rc}): {err.strip()[-300:]}"
    return None


class ProfileVsPerf(unittest.TestCase):
    def test_faults_agree_with_perf_stat(self):
        argv = [TOUCH, str(PAGES), "--fork"]
        rc, counts, err = perf_stat(argv)
        self.assertEqual(rc, 0, err)
        rc, doc, err = profile(argv)
        self.assertEqual(rc, 0, err)
        self.assertEqual(doc["schema"], "daxprobe.profile/1")
        cmd = doc["command"]
        self.assertEqual(cmd["argv"], argv)
        self.assertEqual(cmd["exit_status"], 0)
        f = cmd["faults"]
        self.assertEqual(f["source"], "perf", f)
        self.assertIsNone(f["perf_error"])
        # Both processes touched PAGES pages: the child's are counted (inherit).
        self.assertGreaterEqual(f["minor"], 2 * PAGES)
        self.assertLessEqual(abs(f["minor"] - counts["minor-faults"]), TOLERANCE,
                             f"daxprobe {f['minor']} vs perf stat {counts['minor-faults']}")
        self.assertLessEqual(abs(f["major"] - counts["major-faults"]), 2)
        for key in ("wall_seconds", "user_seconds", "system_seconds"):
            self.assertIsInstance(cmd[key], float)
        self.assertGreaterEqual(cmd["peak_rss_kb"], PAGES * 4)  # each process held all its pages
        self.assertGreaterEqual(cmd["vmstat_delta"]["pgfault"], 2 * PAGES)
        pc = cmd["page_cache"]
        for key in ("cached_kb_before", "cached_kb_after", "cached_kb_delta", "buffers_kb_delta"):
            self.assertIsInstance(pc[key], int, key)
        self.assertEqual(pc["files"], [])

    def test_contract_keys(self):
        # The fields the appliance comparison reads (agent/PROFILE.md): added
        # to, never renamed.
        with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
            path = os.path.join(d, "f")
            with open(path, "wb") as f:
                f.write(b"y" * 8192)
            rc, doc, err = profile(["true"], "--path", path)
        self.assertEqual(rc, 0, err)
        cmd = doc["command"]
        for key, kind in (("argv", list), ("exit_status", int), ("wall_seconds", float),
                          ("user_seconds", float), ("system_seconds", float),
                          ("peak_rss_kb", int), ("faults", dict), ("vmstat_delta", dict),
                          ("page_cache", dict)):
            self.assertIsInstance(cmd.get(key), kind, key)
        self.assertLessEqual({"source", "minor", "major", "perf_error", "dax_pmd",
                              "dax_pmd_fallback", "dax_pte", "tracepoint_error"},
                             set(cmd["faults"]))
        self.assertLessEqual({"pgfault", "pgmajfault"}, set(cmd["vmstat_delta"]))
        self.assertLessEqual({"cached_kb_before", "cached_kb_after", "cached_kb_delta",
                              "buffers_kb_delta", "files"}, set(cmd["page_cache"]))
        (f,) = cmd["page_cache"]["files"]
        self.assertLessEqual({"path", "method", "resident_bytes_before", "resident_bytes_after"},
                             set(f))
        self.assertIn(f["method"], ("cachestat", "mincore", "not_applicable_dax"))

    def test_forced_fallback_is_taken_and_said(self):
        argv = [TOUCH, str(PAGES), "--fork"]
        _, counts, _ = perf_stat(argv)
        rc, doc, err = profile(argv, "--no-perf")
        self.assertEqual(rc, 0, err)
        f = doc["command"]["faults"]
        self.assertEqual(f["source"], "rusage")
        self.assertIn("--no-perf", f["perf_error"])
        self.assertIsNone(f["dax_pmd"])
        self.assertIn("--no-perf", f["tracepoint_error"])
        # rusage also counts the forked child's faults before exec and
        # exec's own: more than perf, but the same child-inclusive total.
        self.assertGreaterEqual(f["minor"], 2 * PAGES)
        self.assertLessEqual(abs(f["minor"] - counts["minor-faults"]), 64,
                             f"rusage {f['minor']} vs perf stat {counts['minor-faults']}")
        text = subprocess.run([DAXPROBE, "profile", "--no-perf", "--", TOUCH, "16"],
                              capture_output=True, text=True)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("fallback: rusage", text.stdout)

    def test_unprivileged_says_what_it_counted(self):
        # As nobody, perf_event_paranoid decides: at 2 only user-mode faults
        # may be counted (daxprobe must say so, and perf stat then counts
        # the same :u events); at 3 (Debian) nothing, and the rusage
        # fallback must be taken and said.
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            self.skipTest("needs root and setpriv to drop to nobody")
        drop = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        argv = [TOUCH, str(PAGES), "--fork"]
        p = subprocess.run(drop + [DAXPROBE, "profile", "--json", "--"] + argv,
                           capture_output=True, text=True)
        if p.returncode == 126 or "Permission denied" in p.stderr:
            self.skipTest(f"nobody cannot run the build's programs: {p.stderr.strip()[-200:]}")
        self.assertEqual(p.returncode, 0, p.stderr)
        f = json.loads(p.stdout)["command"]["faults"]
        self.assertGreaterEqual(f["minor"], 2 * PAGES)
        self.assertIsNone(f["dax_pmd"])  # tracepoints need privilege
        self.assertTrue(f["tracepoint_error"])
        if f["source"] == "perf":
            self.assertIn("user-mode faults only", f["perf_note"] or "")
            q = subprocess.run(drop + [PERF, "stat", "-x,", "-e", "minor-faults", "--"] + argv,
                               capture_output=True, text=True)
            perf = [int(x.split(",")[0]) for x in q.stderr.splitlines()
                    if ",minor-faults" in x and x.split(",")[0].isdigit()]
            self.assertEqual(len(perf), 1, q.stderr)
            self.assertLessEqual(abs(f["minor"] - perf[0]), TOLERANCE,
                                 f"daxprobe {f['minor']} vs perf stat {perf[0]} (both unprivileged)")
        else:
            self.assertEqual(f["source"], "rusage")
            self.assertIn("perf_event_open", f["perf_error"])

    def test_exit_status_passed_on(self):
        rc, doc, _ = profile(["sh", "-c", "exit 7"])
        self.assertEqual((rc, doc["command"]["exit_status"]), (7, 7))
        rc, doc, _ = profile(["sh", "-c", "kill -TERM $$"])
        self.assertEqual((rc, doc["command"]["signal"]), (128 + 15, 15))
        self.assertNotIn("exit_status", doc["command"])
        rc, doc, _ = profile(["/nonexistent/daxprobe-test-command"])
        self.assertEqual(rc, 127)
        self.assertIn("No such file", doc["command"]["exec_error"] or "")

    def test_usage_errors_exit_2(self):
        for args in (["profile"], ["profile", "--write", "--", "true"], ["profile", "--bogus"]):
            p = subprocess.run([DAXPROBE] + args, capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, args)

    def test_output_file_keeps_the_command_output_apart(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "profile.json")
            p = subprocess.run([DAXPROBE, "profile", "--json", "-o", out, "--", "echo", "hello"],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout, "hello\n")
            with open(out) as f:
                self.assertEqual(json.load(f)["command"]["argv"], ["echo", "hello"])

    def test_unwritable_output_refused_before_the_command_runs(self):
        with tempfile.TemporaryDirectory() as d:
            marker = os.path.join(d, "ran")
            p = subprocess.run([DAXPROBE, "profile", "-o", os.path.join(d, "no", "such", "dir"),
                                "--", "touch", marker], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("cannot write", p.stderr)
            self.assertFalse(os.path.exists(marker), "the command ran with nowhere to put its result")

    def test_named_files_residency(self):
        with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
            path = os.path.join(d, "data")
            with open(path, "wb") as f:
                f.write(b"x" * (4 << 20))
                f.flush()
                os.fsync(f.fileno())
                os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
            rc, doc, err = profile(["dd", f"if={path}", "of=/dev/null", "bs=1M"], "--path", path)
            self.assertEqual(rc, 0, err)
            files = doc["command"]["page_cache"]["files"]
            self.assertEqual(len(files), 1)
            f = files[0]
            self.assertIn(f["method"], ("cachestat", "mincore"))
            self.assertLess(f["resident_bytes_before"], 1 << 20, f)
            self.assertEqual(f["resident_bytes_after"], 4 << 20, f)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    DAXPROBE, TOUCH = sys.argv[1], sys.argv[2]
    why = skip_reason()
    if why:
        print(f"SKIP: {why}")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0], "-v"])
