"""Host-side readings of bench/sharing.py's newer series: KSM (its settings,
its counters, ksmd's CPU time) and the page cache of a folder that virtiofsd
shares (the ledger counts it once per host, like a shared image)."""

import os
import time

import appliance_host as host

KSM = "/sys/kernel/mm/ksm"
SETTINGS = ("run", "pages_to_scan", "sleep_millisecs", "merge_across_nodes", "smart_scan",
            "use_zero_pages")
COUNTERS = ("full_scans", "pages_shared", "pages_sharing", "pages_unshared", "pages_volatile")
# What the KSM series runs with: 1000 pages every 20 ms (~200 MB/s, about one
# core at most) so that 8 guests' RAM is scanned within a minute.
BENCH_SETTINGS = {"run": "1", "pages_to_scan": "1000", "sleep_millisecs": "20"}


def ksm_read(names):
    out = {}
    for name in names:
        with open(os.path.join(KSM, name)) as f:
            out[name] = f.read().strip()
    return out


def ksm_writable():
    """None when this user may write KSM's settings, else why not."""
    path = os.path.join(KSM, "run")
    if not os.path.exists(path):
        return f"{path} does not exist (a kernel without CONFIG_KSM)"
    if not os.access(path, os.W_OK):
        return f"{path} is not writable by uid {os.getuid()} (run the benchmark as root)"
    return None


def ksmd_cpu_s():
    """ksmd's utime + stime in seconds (/proc/PID/stat fields 14, 15)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() != "ksmd":
                    continue
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    raise RuntimeError("no ksmd thread in /proc")


class KsmOn:
    """KSM running with BENCH_SETTINGS for the span of a `with`; the
    settings found are put back after (run last, so ksmd stops first)."""

    def __enter__(self):
        self.saved = ksm_read(SETTINGS)
        self.cpu0 = ksmd_cpu_s()
        for name, value in BENCH_SETTINGS.items():
            self._write(name, value)
        self.settings = ksm_read(SETTINGS)
        return self

    def __exit__(self, *exc):
        for name in ("pages_to_scan", "sleep_millisecs", "run"):
            self._write(name, self.saved[name])
        return False

    @staticmethod
    def _write(name, value):
        with open(os.path.join(KSM, name), "w") as f:
            f.write(value)


def ksm_settled(scans_at_start, deadline, scans=2, poll_s=0.5):
    """Wait until ksmd's full_scans has advanced by `scans` past
    scans_at_start (every page of the guests seen twice: merged where it
    can be); returns the counters then. RuntimeError at the deadline."""
    while True:
        c = ksm_read(COUNTERS)
        if int(c["full_scans"]) >= scans_at_start + scans:
            return c
        if time.monotonic() >= deadline:
            raise RuntimeError(f"KSM did not settle: full_scans {c['full_scans']}, wanted "
                               f"{scans_at_start + scans} before the deadline")
        time.sleep(poll_s)  # polling a counter under a deadline, not a timed wait


def tree_files(root):
    """Every regular file under root (no symlinks followed), sorted."""
    out = []
    for d, _, names in os.walk(root):
        out += [p for p in (os.path.join(d, n) for n in names)
                if os.path.isfile(p) and not os.path.islink(p)]
    return sorted(out)


def tree_page_cache(root):
    """The host page cache of every file under root, summed: {bytes, size, files}."""
    files = tree_files(root)
    cached = [host.page_cache(p) for p in files]
    return {"bytes": sum(c["bytes"] for c in cached), "size": sum(c["size"] for c in cached),
            "files": len(files), "source": cached[0]["source"] if cached else None}


def drop_tree(root):
    for p in tree_files(root):
        host.drop_cache(p)


def tree_mtime(root):
    return max(os.lstat(p).st_mtime_ns for p in tree_files(root) + [root])


def status_kb(pid, field):
    """One kB field of /proc/PID/status (RssShmem: QEMU's memfd guest RAM)."""
    with open(f"/proc/{pid}/status") as f:
        return host._kv_kb(f.readlines()).get(field, 0)
