"""Host checks for issue 35's bad-block scenarios (badblocks-ext4, -xfs).

The kernel's answers in the same guest: xfs_io's fiemap places the file
(badblocks-fiemap.txt), xfs_io's fsmap names every block's owner
(badblocks-fsmap.txt: the method daxprobe reports and the special owners), the disk's badblocks file before and after, a read
of the damaged page (EIO or not), the nd bus's commands (clear_error or
not). daxprobe must name the file and the offset the kernel's placement
gives, name the range no file holds as such, and say whether a write can
clear the poison as the bus does; its remedy, run in the guest, must leave
the file readable, and the list without the file's range where the bus can
clear it (QEMU's NVDIMM cannot: there the kernel must refuse the rewrite).
`daxprobe profile --path` on the file must stop at the poisoned page, not
die of SIGBUS. daxprobe's own rewrite is checked where clears_poison holds:
badblocks-virtio-pmem (badblocks-ext4 in the virtio-pmem boot, whose bus
has no control function)."""

import re

import scenarios as sc  # the shared helpers; used at call time (scenarios imports this module)

DAMAGED = "/mnt/pmem/data/damaged"
OFFSET = 65536  # the injected sectors are bytes 65536-69631 of the file


def kernel_first_sector(c, res):
    """The file's first sector on the device, as xfs_io's fiemap gives it."""
    m = re.search(r"^\s*0: \[0\.\.\d+\]:\s+(\d+)\.\.", res.text("badblocks-fiemap.txt"), re.M)
    if not c.check(m is not None, f"badblocks-fiemap.txt has no first extent: {res.text('badblocks-fiemap.txt')!r}"):
        return None
    return int(m.group(1))


# xfs_io's fsmap: "\t6: 259:0 [4160..6207]: inode 4100 data 0..2047 2048" (512-byte
# units on the device; the file's range), a special owner in place of "inode ...".
FSMAP_LINE = re.compile(r"^\s*\d+: \d+:\d+ \[(\d+)\.\.(\d+)\]: (.+) (\d+)$")
FSMAP_INODE = re.compile(r"^inode (\d+) (?:data )?(\d+)\.\.(\d+)$")
# xfs_io's names of GETFSMAP's special owners -> daxprobe's (agent/REPORT.md)
SPECIAL_NAMES = {"free space": "free space", "journalling log": "journal (log)",
                 "static fs metadata": "static fs metadata", "per-AG metadata": "per-AG metadata",
                 "inode btree": "inode btree", "inodes": "inodes"}


def kernel_owners(c, res, sector, count):
    """What the kernel's fsmap says of the sectors [sector, sector+count): each
    overlapping record's owner, an inode's as (inode, offset of `sector` in
    its file in bytes)."""
    lines = [FSMAP_LINE.match(line) for line in res.text("badblocks-fsmap.txt").splitlines()]
    c.check(any(lines), f"badblocks-fsmap.txt has records: {res.text('badblocks-fsmap.txt')[:300]!r}")
    out = []
    for m in lines:
        if not m or int(m.group(1)) >= sector + count or int(m.group(2)) < sector:
            continue
        ino = FSMAP_INODE.match(m.group(3))
        out.append((ino.group(1), (int(ino.group(2)) + sector - int(m.group(1))) * 512)
                   if ino else m.group(3))
    return out


def expect_owners_xfs(c, res, bb, want):
    """XFS: the kernel's own GETFSMAP answer (xfs_io -c 'fsmap -d'): the method
    is getfsmap where it names an owner for every bad sector (rmapbt), the
    file's sectors are its inode's at its offset, the free range is free."""
    owners = {int(s): kernel_owners(c, res, int(s), int(n)) for s, n in want}
    named = all(o and "unknown" not in o for o in owners.values())
    c.eq((bb.get("walk") or {}).get("method"), "getfsmap" if named else "fiemap",
         f"the method vs the kernel's fsmap owners {owners!r}")
    inj = res.kv("badblocks-injected.txt")
    c.eq(owners.get(int(inj.get("sector", "-1"))),
         [(res.text("badblocks-inode.txt").strip(), OFFSET)],
         "the kernel's fsmap: the file's inode owns the damaged sectors at its offset")
    special = [{"sector": s, "count": 8, "owner": SPECIAL_NAMES.get(o[0], o[0])}
               for s, o in sorted(owners.items()) if len(o) == 1 and isinstance(o[0], str)]
    c.eq(bb.get("special"), special, "bad sectors in free space or metadata, named as the kernel's fsmap")


def expect_owners_ext4(c, res, bb):
    """ext4 keeps no reverse map: its GETFSMAP gives data in use an unknown
    owner (the fixture test shows the records), so the files come from the
    FIEMAP walk; GETFSMAP still names free space. The on-disk answer
    (debugfs, xfs_io's fsmap -d fails on ext4 with EINVAL): icheck gives the
    damaged block to the file's inode, testb finds the free range unused."""
    c.eq((bb.get("walk") or {}).get("method"), "fiemap", "ext4: the method")
    inj = res.kv("badblocks-injected.txt")
    text = res.text("badblocks-debugfs.txt")
    ino = res.text("badblocks-inode.txt").strip()
    c.check(re.search(rf"^{int(inj.get('sector', '0')) // 8}\s+{ino}$", text, re.M) is not None,
            f"debugfs icheck: the damaged block is inode {ino}'s: {text!r}")
    free_block = int(inj.get("free", "0")) // 8
    c.check(f"Block {free_block} not in use" in text, f"debugfs testb: block {free_block} is free: {text!r}")
    c.eq(bb.get("special"), [{"sector": int(inj.get("free", "0")), "count": 8, "owner": "free space"}],
         "ext4: GETFSMAP names the free range")


def expect_owners_as_kernel(c, res, bb, want):
    if "badblocks-fsmap.txt" not in res.files:
        c.check(not res.live, "the guest recorded badblocks-fsmap.txt")
        return  # a fixture from before GETFSMAP
    if res.kv("mount.txt").get("fstype") == "xfs":
        expect_owners_xfs(c, res, bb, want)
    else:
        expect_owners_ext4(c, res, bb)


def badblock_lines(res, name):
    return [line.split() for line in res.text(name).splitlines() if line.strip()]


def expect_read(c, res, name, fails):
    kv = res.kv(f"badblocks-read-{name}.txt")
    text = res.text(f"badblocks-read-{name}.txt")
    if fails:
        c.check(kv.get("rc") not in (None, "0") and "Input/output error" in text,
                f"the kernel: reading the damaged page {name} fails with EIO: {text!r}")
    else:
        c.eq(kv.get("rc"), "0", f"the kernel: reading the page {name} succeeds ({text!r})")


def check_badblocks(c, res, free_range):
    c.eq(res.kv("mount.txt").get("rc"), "0", "the dax mount")
    inj = res.kv("badblocks-injected.txt")
    first = kernel_first_sector(c, res)
    if first is None:
        return
    sector = first + OFFSET // 512
    c.eq(inj.get("sector"), str(sector), "the injected sector is the file's byte 65536")
    want = [[str(sector), "8"]]
    if free_range:
        want = sorted(want + [[inj.get("free"), "8"]], key=lambda line: int(line[0]))
    c.eq(badblock_lines(res, "badblocks-before.txt"), want, "the kernel's list after injection")
    expect_read(c, res, "before", fails=True)
    expect_profile_stops(c, res)
    if not sc.expect_document(c, res, 0, "dax_verified"):
        return
    # bad blocks do not make DAX fail (virtio-pmem refuses MAP_SYNC by design)
    if res.text("badblocks-bus-provider.txt").strip() == "ACPI.NFIT":
        sc.expect_dax_active(c, res)
    else:
        c.eq(sc.verdict_code(sc.pmem_mount(res.check)), "dax_active", "mount verdict")
    ns = sc.namespaces(res.check)
    c.eq([n.get("badblock_count") for n in ns], [8 * len(want)], "namespace badblock_count")
    m = sc.pmem_mount(res.check)
    bb = (m or {}).get("badblocks")
    if not c.check(isinstance(bb, dict), f"the mount's badblocks: {bb!r}"):
        return
    c.eq(sc.verdict_code(bb), "badblocks_in_files", "badblocks verdict")
    c.eq((bb.get("verdict") or {}).get("severity"), "warning", "badblocks severity")
    c.eq((bb.get("walk") or {}).get("complete"), True, "the walk saw every file")
    # nvdimm_clear_poison: a bus without a control function (virtio-pmem)
    # clears by dropping the sectors; ACPI NFIT needs the Clear Error DSM.
    provider = res.text("badblocks-bus-provider.txt").strip()
    c.check(provider != "", "the bus's provider was read")
    clears = provider != "ACPI.NFIT" or "clear_error" in res.text("badblocks-bus-commands.txt").split()
    c.eq(bb.get("clears_poison"), clears,
         f"clears_poison vs the bus ({provider}, commands "
         f"{res.text('badblocks-bus-commands.txt')!r})")
    rewrite = (f"dd if=/dev/zero of={DAMAGED} bs=4096 seek={OFFSET // 4096} count=1 "
               "conv=notrunc oflag=direct")
    c.eq(bb.get("files"), [{"path": DAMAGED,
                            "damaged": [{"offset": OFFSET, "length": 4096, "sector": sector}],
                            "rewrite": rewrite if clears else None}],
         "damaged files vs the kernel's fiemap")
    unowned = [{"sector": int(inj.get("free", "0")), "count": 8}] if free_range else []
    c.eq(bb.get("unowned"), unowned, "bad sectors no file holds (metadata or free space)")
    expect_owners_as_kernel(c, res, bb, want)
    if clears:
        expect_rewrite_clears(c, res, rewrite, want)
    else:
        expect_restore_by_copy(c, res, rewrite, want)


def expect_profile_stops(c, res):
    """`daxprobe profile --path` over the file's DAX mapping: the poisoned page
    raises SIGBUS; the walk stops there (exit 1, its offset named), the
    process does not die of it (a shell's 135)."""
    if "badblocks-profile.rc" not in res.files:
        c.check(not res.live, "the guest recorded badblocks-profile.rc")
        return  # a fixture from before the guest ran the profile
    c.eq(res.rc("badblocks-profile.rc"), 1,
         f"profile of the damaged file: exit status ({res.text('badblocks-profile.stderr')[:300]!r})")
    files = (res.json("badblocks-profile.json") or {}).get("files") or [{}]
    c.eq((files[0].get("path"), files[0].get("sigbus_offset"), files[0].get("pages_touched")),
         (DAMAGED, OFFSET, OFFSET // 4096), "profile: (path, sigbus_offset, pages_touched)")


def expect_rewrite_clears(c, res, rewrite, before):
    """The printed rewrite, run in the guest: the file's range leaves the kernel's list."""
    c.eq(res.text("badblocks-rewrite.txt").splitlines(), [rewrite, "rc=0"], "the rewrite ran as printed")
    inj = res.kv("badblocks-injected.txt")
    c.eq(badblock_lines(res, "badblocks-after.txt"),
         [line for line in before if line[0] != inj.get("sector")],
         "the kernel's list after the rewrite: the file's range is gone")
    expect_read(c, res, "after", fails=False)
    expect_check_after(c, res, files=[])


def expect_restore_by_copy(c, res, rewrite, before):
    """A bus that cannot clear poison: the kernel refuses the rewrite (EIO), as
    daxprobe says (EFAULT through DAX on 6.1); the printed restore (a copy renamed over the file) reads."""
    lines = res.text("badblocks-rewrite.txt").splitlines()
    out = res.text("badblocks-rewrite.out")
    # 6.1 through DAX: the recovery write clears nothing and copies 0 bytes (EFAULT)
    c.check(len(lines) == 2 and lines[0] == rewrite and lines[1] != "rc=0"
            and ("Bad address" in out or "Input/output error" in out),
            f"the kernel refuses the rewrite on this bus: {lines!r} {res.text('badblocks-rewrite.out')!r}")
    c.eq(badblock_lines(res, "badblocks-after-rewrite.txt"), before, "the list after the refused rewrite")
    c.eq(res.kv("badblocks-cmp.txt").get("rc"), "0", "the restored file equals its backup")
    c.eq(badblock_lines(res, "badblocks-after.txt"), before,
         "the kernel's list after the restore: the sectors stay bad")
    expect_read(c, res, "after", fails=False)
    inj = res.kv("badblocks-injected.txt")
    expect_check_after(c, res, files=[], unowned_has=int(inj.get("sector", "0")))


def expect_check_after(c, res, files, unowned_has=None):
    doc = res.json("badblocks-check-after.json")
    c.eq(res.rc("badblocks-check-after.rc"), 0, "the check after the remedy: exit code")
    bb = (sc.pmem_mount(doc) or {}).get("badblocks")
    if bb is None:
        c.check(unowned_has is None, "the check after the remedy still sees bad sectors")
        return
    c.eq(bb.get("files"), files, "no damaged file after the remedy")
    if unowned_has is not None:
        c.check(any(r.get("sector") == unowned_has for r in bb.get("unowned") or []),
                f"the freed sectors are named metadata or free space: {bb.get('unowned')!r}")


def check_badblocks_ext4(c, res):
    check_badblocks(c, res, free_range=True)


def check_badblocks_xfs(c, res):
    # a free range since GETFSMAP (older fixtures: the file's only)
    check_badblocks(c, res, free_range="badblocks-fsmap.txt" in res.files)
