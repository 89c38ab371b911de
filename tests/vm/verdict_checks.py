"""Host checks for the issue-8 scenarios: mount history, per-file DAX,
virtio-pmem. Each compares daxprobe's document with the kernel's own answer
in the same guest: statx's attributes word and MAP_SYNC through xfs_io
(kernel-NAME.txt, /init's kernel_view), the kernel log, `ndctl list`."""

import collector_scenario
import scenarios as sc  # the shared helpers; used at call time (scenarios imports this module)

STATX_ATTR_DAX = 0x00200000


def kernel_file(c, res, name):
    """The kernel's answer about one file: {path, dax, map_sync, xflags}."""
    kv = res.kv(f"kernel-{name}.txt")
    attrs = kv.get("attributes", "")
    if not c.check(attrs.startswith("0x"), f"kernel-{name}.txt: statx attributes {kv!r}"):
        return None
    return {"path": kv.get("path"), "dax": bool(int(attrs, 16) & STATX_ATTR_DAX),
            "map_sync": kv.get("map_sync") == "ok", "xflags": kv.get("xflags", "")}


def expect_file_as_kernel(c, res, name, dax, map_sync=None):
    """daxprobe's files[] entry for the file agrees with the kernel's statx,
    and both say `dax`; the kernel's MAP_SYNC answer is `map_sync` (default:
    as `dax`; virtio-pmem refuses it on DAX files)."""
    k = kernel_file(c, res, name)
    if k is None:
        return None
    c.eq(k["dax"], dax, f"kernel: STATX_ATTR_DAX of {k['path']}")
    c.eq(k["map_sync"], dax if map_sync is None else map_sync, f"kernel: MAP_SYNC on {k['path']}")
    f = sc.file_entry(res.check, k["path"])
    if c.check(f is not None, f"files[] entry for {k['path']}"):
        c.eq(f.get("statx_dax"), k["dax"], f"daxprobe statx_dax of {k['path']} vs the kernel's")
        # Residency: none on DAX (never measured by cachestat there: it crashes
        # 6.12); never more than the file's size.
        r = f.get("residency") or {}
        resident = r.get("resident_bytes")
        c.check(isinstance(resident, int) and resident <= (f.get("size") or 0),
                f"{k['path']} resident_bytes {resident!r} <= size {f.get('size')!r}")
        if dax:
            c.eq((r.get("method"), resident), ("not_applicable", 0), f"{k['path']} residency on DAX")
        elif sc.kernel_release(res):
            want = "cachestat" if sc.kernel_release(res) >= (6, 5) else "mincore"
            c.eq(r.get("method"), want, f"{k['path']} residency method")
    return k


def history(m):
    return (m or {}).get("kmsg_history") or []


def expect_history(c, m, text, attempt):
    """`text` is in the mount's history (with its attempt's outcome), never in
    the lines of the mount in place now."""
    c.check(any(text in h.get("message", "") and h.get("attempt") == attempt for h in history(m)),
            f"kmsg_history has {text!r} ({attempt}): {history(m)}")
    c.check(not any(text in line for line in m.get("kmsg") or []),
            f"the current mount's kmsg has no {text!r}: {m.get('kmsg')}")
    c.check("earlier mount attempt" in sc.evidence_text(m), "evidence shows the earlier attempt")


def expect_raw_plain_mount(c, res):
    """A raw namespace mounted without dax: the device cannot DAX (a problem),
    but the mount was not 'mounted with dax'."""
    if not sc.expect_document(c, res, 1, "problems_found"):
        return None
    m = sc.expect_mount_verdict(c, res, "device_cannot_dax")
    if m is None:
        return None
    c.eq(m.get("dax_option"), None, "the mount has no dax option")
    summary = (m.get("verdict") or {}).get("summary", "")
    c.check("mounted with dax" not in summary, f"summary does not claim a dax mount: {summary!r}")
    c.check("ndctl create-namespace" in sc.remedy_text(m), f"remedy: {sc.remedy_text(m)!r}")
    k = expect_file_as_kernel(c, res, "testfile", False)
    if k is not None:
        c.eq((m.get("map_sync") or {}).get("ok"), k["map_sync"], "daxprobe MAP_SYNC vs the kernel's")
    return m


def check_mount_history_ext4(c, res):
    c.check(res.kv("mount-first.txt").get("rc") not in (None, "0"),
            f"ext4 -o dax on a raw namespace fails: {res.kv('mount-first.txt')}")
    c.eq(res.kv("mount.txt").get("rc"), "0", "the plain mount afterwards")
    c.check("EXT4-fs (pmem0): DAX unsupported by block device" in res.text("dmesg.txt"),
            "kernel logged the refusal")
    m = expect_raw_plain_mount(c, res)
    if m is not None:
        expect_history(c, m, "DAX unsupported by block device", "failed")


def check_mount_history_xfs(c, res):
    c.eq(res.kv("mount-first.txt").get("rc"), "0", "XFS -o dax=always on raw mounts")
    c.eq(res.kv("mount.txt").get("rc"), "0", "the plain mount afterwards")
    c.check("dax=never" in res.text("mountinfo-first.txt"),
            f"the first mount fell back: {res.text('mountinfo-first.txt')!r}")
    c.check("Turning off DAX" in res.text("dmesg.txt"), "kernel logged 'Turning off DAX'")
    m = expect_raw_plain_mount(c, res)
    if m is not None:
        expect_history(c, m, "Turning off DAX", "unmounted")


def check_mount_history_fsdax(c, res):
    c.check("Turning off DAX" in res.text("dmesg.txt"), "the raw mount logged 'Turning off DAX'")
    c.eq(res.kv("mount.txt").get("rc"), "0", "the dax mount on fsdax")
    if sc.expect_document(c, res, 0, "dax_verified"):
        sc.expect_dax_active(c, res)
        m = sc.pmem_mount(res.check)
        if m is not None:
            expect_history(c, m, "Turning off DAX", "unmounted")
        k = expect_file_as_kernel(c, res, "testfile", True)
        if k is not None and m is not None:
            c.eq((m.get("map_sync") or {}).get("ok"), k["map_sync"], "daxprobe MAP_SYNC vs the kernel's")


def check_dax_inode(c, res):
    c.eq(res.kv("mount.txt").get("rc"), "0", "the per-file (dax=inode) mount")
    flagged = expect_file_as_kernel(c, res, "flagged", True)
    plain = expect_file_as_kernel(c, res, "plain", False)
    if flagged is not None:
        c.check("x" in flagged["xflags"], f"FS_XFLAG_DAX on the flagged file: {flagged['xflags']!r}")
    # One --path file is not DAX: a warning, not a problem.
    if not sc.expect_document(c, res, 0, "dax_verified"):
        return
    m = sc.expect_mount_verdict(c, res, "dax_per_file", "warning")
    if m is None:
        return
    v = m.get("verdict") or {}
    summary = v.get("summary", "")
    c.check("DAX: /mnt/pmem/daxdir/flagged" in summary, f"summary names the DAX file: {summary!r}")
    page_cache_part = summary.split("not DAX (page cache):", 1)[-1] if "not DAX" in summary else ""
    c.check("/mnt/pmem/plain" in page_cache_part and "flagged" not in page_cache_part,
            f"only the unflagged file is said to go through the page cache: {summary!r}")
    c.check(not any("flagged" in w for w in v.get("warnings") or []),
            f"no warning about the DAX file: {v.get('warnings')}")
    r = sc.remedy_text(m)
    c.check("dax=always" in r and "chattr +x" in r, f"both remedies: {r!r}")
    if plain is not None:
        # The mount's own probe is a new file in the (unflagged) root, like plain.
        c.eq((m.get("map_sync") or {}).get("ok"), plain["map_sync"],
             "daxprobe MAP_SYNC in the root vs the kernel's on the root's file")


def virtio_regions(doc):
    return [r for r in (doc or {}).get("regions") or [] if r.get("virtio_pmem")]


def expect_virtio_mount(c, m, k):
    """A DAX mount on virtio-pmem: dax_active, MAP_SYNC refused as the kernel
    refused it, and a warning naming the consequence."""
    c.eq(sc.verdict_code(m), "dax_active", f"{m.get('mount_point')} verdict")
    c.eq((m.get("statx_dax") or {}).get("dax"), True, "statx DAX")
    ms = m.get("map_sync") or {}
    c.eq(ms.get("ok"), False, "daxprobe: MAP_SYNC refused on virtio-pmem")
    c.eq(ms.get("is_pmem"), False, "libpmem is_pmem false on virtio-pmem")
    if k is not None:
        c.eq(ms.get("ok"), k["map_sync"], "daxprobe MAP_SYNC vs the kernel's")
    w = " ".join((m.get("verdict") or {}).get("warnings") or [])
    c.check("by design" in w and "fsync/msync" in w and "pmem_is_pmem" in w,
            f"the warning names the consequence: {w!r}")
    c.check("although" not in w, f"no 'refused although' warning: {w!r}")


def check_virtio_pmem(c, res):
    c.eq(res.kv("mount.txt").get("rc"), "0", "ext4 -o dax on virtio-pmem")
    k = expect_file_as_kernel(c, res, "testfile", True, map_sync=False)
    if not sc.expect_document(c, res, 0, "dax_verified"):
        return
    doc = res.check
    c.eq((doc.get("nfit") or {}).get("present"), False, "no NFIT")
    c.eq([b.get("provider") for b in doc.get("buses") or []], ["virtio-pmem"], "bus providers")
    c.eq(len(virtio_regions(doc)), 1, "one virtio-pmem region")
    c.check(any("virtio-pmem" in w and "by design" in w for w in doc.get("warnings") or []),
            f"system warning about virtio-pmem: {doc.get('warnings')}")
    m = sc.pmem_mount(doc)
    if c.check(m is not None, "no mount entry for /mnt/pmem"):
        expect_virtio_mount(c, m, k)


def check_virtio_pmem_nvdimm(c, res):
    kn = expect_file_as_kernel(c, res, "nvdimm", True)
    kv = expect_file_as_kernel(c, res, "vpmem", True, map_sync=False)
    if not sc.expect_document(c, res, 0, "dax_verified"):
        return
    doc = res.check
    c.eq((doc.get("nfit") or {}).get("present"), True, "the NVDIMM's NFIT")
    c.eq(sorted(b.get("provider") for b in doc.get("buses") or []), ["ACPI.NFIT", "virtio-pmem"],
         "bus providers")
    vr = virtio_regions(doc)
    c.eq(len(vr), 1, "exactly one virtio-pmem region")
    warns = [w for w in doc.get("warnings") or [] if "virtio-pmem" in w]
    c.check(len(warns) == 1 and vr and warns[0].startswith(vr[0]["dev"] + " "),
            f"one system warning, naming the virtio-pmem region: {warns}")
    c.eq(len([n for n in sc.namespaces(doc) if n.get("mode") == "fsdax"]), 2, "two fsdax namespaces")
    nv = sc.pmem_mount(doc, "/mnt/pmem")
    if c.check(nv is not None, "no mount entry for /mnt/pmem"):
        c.eq(sc.verdict_code(nv), "dax_active", "NVDIMM mount verdict")
        c.eq((nv.get("map_sync") or {}).get("ok"), True, "MAP_SYNC on the NVDIMM")
        if kn is not None:
            c.eq((nv.get("map_sync") or {}).get("ok"), kn["map_sync"], "NVDIMM MAP_SYNC vs the kernel's")
        c.eq((nv.get("verdict") or {}).get("warnings"), [], "no warning on the NVDIMM mount")
    vp = sc.pmem_mount(doc, "/mnt/vpmem")
    if c.check(vp is not None, "no mount entry for /mnt/vpmem"):
        expect_virtio_mount(c, vp, kv)
    expect_host_backends(c, res)


def virtio_pmem_host(guest, log):
    """The collector's host facts of this VM: both backing files."""
    return collector_scenario.host_facts(guest, log, [guest.nvdimm_path, guest.vpmem_path])


def expect_host_backends(c, res):
    """The collector saw both backing files: the NVDIMM's and virtio-pmem's,
    shared (share=on: guest writes, and virtio-pmem's flushes, reach the file,
    which persists after the VM) but on no host pmem: page-cache durability."""
    facts = collector_scenario.host_backends(res)
    if not c.check(facts is not None,
                   f"collector query: one VM: {res.text('host/query.json')[:500]!r}"):
        return
    backends = facts[0]
    nv_path, vp_path = (res.text("host/backing").split() + ["", ""])[:2]
    got = sorted((b.get("device"), b.get("mem_path"), b.get("share"), b.get("persistence"),
                  b.get("mapped")) for b in backends)
    want = sorted([("nvdimm", nv_path, True, "page_cache", True),
                   ("virtio-pmem-pci", vp_path, True, "page_cache", True)])
    c.eq(got, want, "host facts: (device, backing file, share, persistence, mapped)")
