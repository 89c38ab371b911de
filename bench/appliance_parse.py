"""Turn what one appliance guest shipped (guest/scenarios/appliance.sh) into
plain numbers: meminfo, the workload's profile, the boot steps, the kernel's
initcall times. Pure functions of the shipped text."""

import json
import re

SWIOTLB = re.compile(r"software IO TLB: mapped \[mem [^\]]*\] \((\d+)MB\)")
INITCALL = re.compile(r"initcall (\S+) \[(\S+)\] returned (-?\d+) after (\d+) (usecs|msecs)")

FALLBACK_SOURCE = ("fallback (this daxprobe has no `profile -- CMD`): busybox time -v "
                   "(rusage of the workload and its children), meminfo before/after, "
                   "fs_dax tracepoints counted by hist triggers (system-wide)")


def kv_kb(text):
    """'Key:   123 kB' or 'key 123' lines -> {key: int}."""
    out = {}
    for line in text.splitlines():
        parts = line.replace(":", " ").split()
        if len(parts) >= 2 and re.fullmatch(r"-?\d+", parts[1]):
            out[parts[0]] = int(parts[1])
    return out


def steps(text):
    """steps.log ('UPTIME label...') -> [(uptime, label)]."""
    out = []
    for line in text.splitlines():
        head, _, label = line.partition(" ")
        try:
            out.append((float(head), label))
        except ValueError:
            continue
    return out


def step_time(step_list, prefix):
    for t, label in step_list:
        if label.startswith(prefix):
            return t
    return None


def initcalls(dmesg, modules=None):
    """initcall_debug lines of module inits -> {module: microseconds}."""
    out = {}
    for m in INITCALL.finditer(dmesg):
        mod, n, unit = m.group(2), int(m.group(4)), m.group(5)
        if modules is None or mod in modules:
            out[mod] = out.get(mod, 0) + (n * 1000 if unit == "msecs" else n)
    return out


def swiotlb_mb(dmesg):
    """The bounce buffer the kernel set aside (0 if none): x86 sets up 64 MB
    of SWIOTLB when memory may exist above 4 GiB, as a hotplug range does."""
    m = SWIOTLB.search(dmesg)
    return int(m.group(1)) if m else 0


VIRTIO_F_ACCESS_PLATFORM = 33


def dma_facts(files):
    """What appliance.sh's dma_facts wrote -> {pci: [{slot, id, class,
    dma_mask_bits, driver}], virtio: [{name, device, access_platform}],
    swiotlb_used_slabs}; None for what the guest did not write."""
    pci = []
    for line in files.get("pci-dma.txt", "").splitlines():
        slot, ident, *kv = line.split()
        f = dict(x.split("=", 1) for x in kv if "=" in x)
        pci.append({"slot": slot, "id": ident, "class": f.get("class"),
                    "dma_mask_bits": int(f["dma_mask_bits"]) if f.get("dma_mask_bits") else None,
                    "driver": f.get("driver") or None})
    virtio = []
    for line in files.get("virtio-features.txt", "").splitlines():
        name, *kv = line.split()
        f = dict(x.split("=", 1) for x in kv if "=" in x)
        bits = f.get("features", "")
        virtio.append({"name": name, "device": f.get("device"),
                       "access_platform": (bits[VIRTIO_F_ACCESS_PLATFORM] == "1"
                                           if len(bits) > VIRTIO_F_ACCESS_PLATFORM else None)})
    used = files.get("swiotlb-used", "").strip()
    return {"pci": pci or None, "virtio": virtio or None,
            "swiotlb_used_slabs": int(used) if used.isdigit() else None}


VM_FAULT_FALLBACK = 0x800
HIST_ENTRY = re.compile(r"\{ result:\s*(-?\w+) \} hitcount:\s*(\d+)")


def hist_counts(text):
    """A `hist:keys=result` trigger's output -> (events, of them FALLBACK);
    (None, None) when the guest had no such file (no tracefs)."""
    if text is None:
        return None, None
    total = fallback = 0
    for m in HIST_ENTRY.finditer(text):
        result, hits = int(m.group(1), 0), int(m.group(2))
        total += hits
        if result & VM_FAULT_FALLBACK:
            fallback += hits
    return total, fallback


def _time_v(text):
    """busybox `time -v` output -> {label: value string}."""
    out = {}
    for line in text.splitlines():
        label, sep, value = line.strip().rpartition(": ")
        if sep:
            out[label] = value.strip()
    return out


def _num(text, default=None):
    try:
        return float(text)
    except (TypeError, ValueError):
        return default


def fallback_profile(files):
    """The same shape as `daxprobe profile --json`'s "command", from the
    fallback's files."""
    tv = _time_v(files.get("fallback-time.txt", ""))
    mb, ma = kv_kb(files.get("fallback-meminfo-before.txt", "")), kv_kb(
        files.get("fallback-meminfo-after.txt", ""))
    pmd_done, pmd_fb = hist_counts(files.get("fallback-hist-dax_pmd_fault_done.txt"))
    pte_done, _ = hist_counts(files.get("fallback-hist-dax_pte_fault_done.txt"))
    t0, t1 = _num(files.get("fallback-uptime-before.txt")), _num(
        files.get("fallback-uptime-after.txt"))

    def rusage(label):
        v = tv.get(label)
        return int(v) if v is not None and v.isdigit() else None

    return {
        "argv": ["chroot", "/mnt/root", "/usr/bin/bash", "/appliance/workload.sh"],
        "exit_status": rusage("Exit status"),
        "wall_seconds": round(t1 - t0, 3) if t0 is not None and t1 is not None else None,
        "user_seconds": _num(tv.get("User time (seconds)")),
        "system_seconds": _num(tv.get("System time (seconds)")),
        "peak_rss_kb": rusage("Maximum resident set size (kbytes)"),
        "faults": {
            "source": FALLBACK_SOURCE,
            "minor": rusage("Minor (reclaiming a frame) page faults"),
            "major": rusage("Major (requiring I/O) page faults"),
            # As `daxprobe profile` counts them: every PMD fault tried.
            "dax_pmd": pmd_done,
            "dax_pmd_fallback": pmd_fb,
            "dax_pte": pte_done,
        },
        "page_cache": {
            "cached_kb_before": mb.get("Cached"),
            "cached_kb_after": ma.get("Cached"),
            "cached_kb_delta": _delta(mb, ma, "Cached"),
            "buffers_kb_delta": _delta(mb, ma, "Buffers"),
        },
    }


def _delta(before, after, key):
    if key in before and key in after:
        return after[key] - before[key]
    return None


def workload_profile(files):
    """{"mode": "profile"|"fallback"|"missing", "command": {...}, "error": ...}."""
    mode = files.get("profile-mode", "").strip()
    if mode == "profile":
        try:
            doc = json.loads(files.get("profile.json") or "null")
        except ValueError:
            doc = None
        if not isinstance(doc, dict) or not isinstance(doc.get("command"), dict):
            return {"mode": "profile", "command": None,
                    "error": f"profile.json has no command: {files.get('profile.stderr', '')[-300:]}"}
        cmd = dict(doc["command"])
        cmd.setdefault("faults", {}).setdefault("source", "daxprobe profile")
        return {"mode": "profile", "command": cmd}
    if mode == "fallback":
        return {"mode": "fallback", "command": fallback_profile(files)}
    return {"mode": "missing", "command": None, "error": "the guest did not run the workload"}


def root_mount_verdict(report, mountpoint="/mnt/root"):
    """The agent's verdict for the appliance root, from a report event's data."""
    doc = (report or {}).get("report") or {}
    for m in doc.get("mounts") or []:
        if m.get("mount_point") == mountpoint:
            v = m.get("verdict")
            return v.get("code") if isinstance(v, dict) else v
    return None
