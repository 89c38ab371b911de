"""Host checks for issue 34's EROFS scenario (erofs-dax, in the
fsdax-ext4-nodax boot).

The kernel's answers in the same guest, per file: xfs_io's statx -r
(STATX_ATTR_DAX) and fiemap -v (FIEMAP_EXTENT_DATA_INLINE). daxprobe's
census must count the files and name exactly the ones the kernel says are
not DAX, with the reason its fiemap gives; the mount's warning must name
them, and its remedy, run in the guest as printed, must leave every file
DAX (the kernel's answer again) and the check after it without a warning.
Last, an image made with mkfs.erofs -zlz4: the census names as compressed
exactly the files the kernel's statx (STATX_ATTR_COMPRESSED) and fiemap
(FIEMAP_EXTENT_ENCODED) say are, and no noinline_data remedy is given."""

import json
import re

import scenarios as sc  # the shared helpers; used at call time (scenarios imports this module)

STATX_ATTR_COMPRESSED = 0x4
STATX_ATTR_DAX = 0x00200000
FIEMAP_EXTENT_ENCODED = 0x8
FIEMAP_EXTENT_DATA_INLINE = 0x200
FILES = ("small", "tail", "whole")
LZ4_FILES = ("text", "zeros", "noise")
MNT = "/mnt/pmem"


def kernel_files(c, res, when, files=FILES):
    """{path: (dax, inline, compressed)} as the kernel answered, at WHEN
    (before or after the remedy, lz4)."""
    out = {}
    for f in files:
        statx = res.text(f"erofs-{when}-statx-{f}.txt")
        m = re.search(r"^stat\.attributes = (0x[0-9a-fA-F]+)", statx, re.M)
        if not c.check(m is not None, f"kernel ({when}): no statx attributes for {f}: {statx!r}"):
            return None
        attrs = int(m.group(1), 16)
        flags = [int(x.group(1), 16) for x in re.finditer(
            r"^\s*\d+: \[.*\s(0x[0-9a-fA-F]+)\s*$", res.text(f"erofs-{when}-fiemap-{f}.txt"), re.M)]
        inline = any(fl & FIEMAP_EXTENT_DATA_INLINE for fl in flags)
        compressed = bool(attrs & STATX_ATTR_COMPRESSED) or any(fl & FIEMAP_EXTENT_ENCODED for fl in flags)
        out[f"{MNT}/{f}"] = (bool(attrs & STATX_ATTR_DAX), inline, compressed)
    return out


def expect_census(c, m, kernel, what):
    """The mount's census counts and names as the kernel answered."""
    census = m.get("census") or {}
    not_dax = {p for p, (dax, _, _) in kernel.items() if not dax}
    c.eq(census.get("files"), len(kernel), f"{what}: census files")
    c.eq(census.get("files_seen"), len(kernel), f"{what}: census files_seen")
    c.eq(census.get("sampled"), None, f"{what}: census not sampled (fewer files than its bound)")
    c.eq(census.get("dax_files"), len(kernel) - len(not_dax), f"{what}: census dax_files")
    c.eq(census.get("stopped_early"), None, f"{what}: census complete")
    named = {e.get("path"): e.get("reason") for e in census.get("exceptions") or []}
    c.eq(set(named), not_dax, f"{what}: census exceptions vs the kernel's not-DAX files")
    for p in not_dax & set(named):
        _, inline, compressed = kernel[p]
        want = "compressed" if compressed else "inline_tail" if inline else "unknown"
        c.eq(named[p], want, f"{what}: reason for {p} (kernel: inline {inline}, compressed {compressed})")
    return not_dax


def check_erofs_dax(c, res):
    c.eq(res.kv("mount.txt").get("rc"), "0", "mount -t erofs -o dax")
    kernel = kernel_files(c, res, "before")
    if kernel is None:
        return
    not_dax = {p for p, (dax, _, _) in kernel.items() if not dax}
    # The premise (mkfs.erofs's defaults): inlined data is not DAX, whole blocks are.
    c.eq(not_dax, {f"{MNT}/small", f"{MNT}/tail"}, "kernel: files not DAX with default mkfs.erofs")
    if not sc.expect_document(c, res, 0, "dax_verified"):
        return
    m = sc.expect_mount_verdict(c, res, "files_not_dax", "warning")
    if m is None:
        return
    v = m.get("verdict") or {}
    expect_census(c, m, kernel, "check")
    warned = " ".join(v.get("warnings") or [])
    for p in kernel:
        c.eq(p in warned, p in not_dax, f"the warning names {p} exactly when the kernel says it is not DAX")
    r = sc.remedy_text(m)
    c.check("mkfs.erofs -E noinline_data" in r and "mkfs.xfs" not in r and "mkfs.ext4" not in r,
            f"EROFS remedy only: {r!r}")

    # The remedy, run as printed.
    remedy = res.kv("erofs-remedy.txt")
    c.eq(remedy.get("rc"), "0", f"the printed remedy ran: {res.text('erofs-remedy.txt')!r} "
         f"{res.text('erofs-remedy.out')!r}")
    after = kernel_files(c, res, "after")
    if after is None:
        return
    c.eq({p for p, (dax, _, _) in after.items() if not dax}, set(), "kernel: every file DAX after the remedy")
    c.eq(res.rc("erofs-check-after.rc"), 0, "check after the remedy: exit code")
    doc = res.json("erofs-check-after.json")
    m2 = sc.pmem_mount(doc)
    if not c.check(m2 is not None, "check after the remedy: no mount entry"):
        return
    c.eq(sc.verdict_code(m2), "dax_active", "check after the remedy: mount verdict")
    c.eq((m2.get("verdict") or {}).get("warnings"), [], "check after the remedy: no warning")
    expect_census(c, m2, after, "after")
    check_erofs_lz4(c, res)


def check_erofs_lz4(c, res):
    """The -zlz4 image: compressed files named as never DAX, as the kernel says."""
    c.eq(res.kv("erofs-lz4-mkfs.txt").get("rc"), "0", "mkfs.erofs -zlz4 in the guest")
    c.eq(res.kv("erofs-lz4-mount.txt").get("rc"), "0", "mount -t erofs -o dax (lz4 image)")
    kernel = kernel_files(c, res, "lz4", LZ4_FILES)
    if kernel is None:
        return
    compressed = {p for p, (_, _, z) in kernel.items() if z}
    # The premise: the compressible files are stored compressed, and not DAX.
    c.eq(compressed, {f"{MNT}/text", f"{MNT}/zeros"}, "kernel: compressed files of the lz4 image")
    c.check(not any(kernel[p][0] for p in compressed), f"kernel: a compressed file is DAX: {kernel}")
    c.eq(res.rc("erofs-lz4-check.rc"), 0, "check of the lz4 image: exit code")
    m = sc.pmem_mount(res.json("erofs-lz4-check.json"))
    if not c.check(m is not None, "check of the lz4 image: no mount entry"):
        return
    c.eq(sc.verdict_code(m), "files_not_dax", "lz4 image: mount verdict")
    expect_census(c, m, kernel, "lz4")
    c.eq((m.get("census") or {}).get("not_dax", {}).get("compressed"), len(compressed),
         "lz4 image: census counts the compressed files")
    warned = " ".join((m.get("verdict") or {}).get("warnings") or [])
    c.check("never DAX" in warned and all(p in warned for p in compressed),
            f"lz4 image: the warning names the compressed files as never DAX: {warned!r}")
    c.check("noinline_data" not in json.dumps(m.get("verdict")),
            f"lz4 image: no noinline_data remedy for compressed files: {m.get('verdict')!r}")
    up = [float(x) for x in res.text("erofs-lz4-uptime.txt").split()]
    if len(up) == 2:
        print(f"erofs-lz4: {up[1] - up[0]:.1f} s of guest time")
