"""virtio-fs (QEMU 7.2's virtiofsd, no DAX window): the kernel's answers in
the guest, which daxprobe's report must agree with (issue 34)."""

MiB = 1 << 20
STATX_ATTR_DAX = 0x200000
SHARED_FILES = {"data.bin": 32 * MiB}


def kernel_answers(c, res):
    """The guest kernel's own view (guest/scenarios/virtiofs.sh): {key: value}."""
    kv = res.kv("kernel-virtiofs.txt")
    c.check(kv.get("mount_dax", "0") != "0",
            f"the kernel accepted -o dax on virtio-fs without a DAX window: {kv}")
    c.eq(kv.get("mount_dax_inode"), "0", "mount -o dax=inode exit status")
    c.eq(kv.get("mount_plain"), "0", "plain mount exit status")
    c.check(" /mnt/virtiofs " in kv.get("mountinfo", "") and "daxprobe-share" in kv.get(
        "mountinfo", ""), f"mountinfo has the share: {kv.get('mountinfo')!r}")
    delta = int(kv.get("cached_delta_kb", "0"))
    want = SHARED_FILES["data.bin"] // 1024
    c.check(delta >= want * 9 // 10,
            f"Cached grew by {delta} kB reading {want} kB: the guest's page cache holds it")
    attrs = res.kv("kernel-data.txt").get("attributes", "")
    c.check(attrs.startswith("0x") and not int(attrs, 16) & STATX_ATTR_DAX,
            f"statx of data.bin: attributes {attrs!r}, want STATX_ATTR_DAX clear")
    return kv


def daxprobe_answers(c, res, kv):
    """daxprobe's report in the same guest, against the kernel's answers."""
    doc = res.check
    if doc is None:
        return  # scenarios.check_no_nvdimm said so
    mounts = [m for m in doc.get("mounts") or [] if m.get("mount_point") == "/mnt/virtiofs"]
    if not c.check(len(mounts) == 1, "the report has the virtio-fs mount (mountinfo has it)"):
        return
    m = mounts[0]
    c.eq((m.get("fstype"), m.get("source")), ("virtiofs", "daxprobe-share"),
         "the mount's fstype and source (mountinfo)")
    kernel_dax = bool(int(res.kv("kernel-data.txt").get("attributes", "0x0"), 16)
                      & STATX_ATTR_DAX)
    c.eq((m.get("statx_dax") or {}).get("dax"), kernel_dax, "statx_dax.dax vs the kernel's statx")
    c.eq((m.get("map_sync") or {}).get("ran"), False, "no MAP_SYNC test file in the share")
    v = m.get("verdict") or {}
    c.eq(v.get("code"), "virtiofs_page_cache", "the virtio-fs mount's verdict")
    c.check("dax=always" not in (v.get("remedy") or ""),
            f"the remedy names dax=always, which the kernel refused: {v.get('remedy')!r}")
    files = [f for f in doc.get("files") or [] if f.get("path") == "/mnt/virtiofs/data.bin"]
    if c.check(len(files) == 1, "the report has --path data.bin"):
        f = files[0]
        c.eq(f.get("statx_dax"), kernel_dax, "data.bin statx_dax vs the kernel's statx")
        # Not DAX, so residency is measured, not "not applicable". Its value
        # is not the Cached growth: daxprobe's own open dropped those pages.
        c.check((f.get("residency") or {}).get("method") in ("mincore", "cachestat"),
                f"data.bin residency measured: {f.get('residency')!r}")


def check_virtiofs(c, res):
    kv = kernel_answers(c, res)
    daxprobe_answers(c, res, kv)
