"""Kata Containers' guest image as the root (issue 44 item 6): the host's checks.

The guest boots from BUILD/tests/vm/kata.img (harness/kata_image.py: Kata
4.1.0's layout), attached as Kata's drivers attach it (QEMU: an NVDIMM with
`readonly=on` and `unarmed=on`; Cloud Hypervisor: virtio-pmem, here QEMU's
virtio-pmem-pci) and mounted as its kernel mounts it (kernel-root.sh: what
init/do_mounts.c does), with and without `dax` in rootflags.

The expected values are the kernel's answers in the same boot (kata.sh):
the root's mountinfo line, its device by major:minor in sysfs (partition,
start, disk, queue/dax, namespace, the fsdax info block's data address),
statx and MAP_SYNC of a file in the image, the Cached growth of reading it,
the fs_dax tracepoints of mapping it, `ndctl list -N`. daxprobe's JSON must
say the same.
"""

import json
import os
import re

import scenarios as sc
from harness import kata_image
from harness.guest import TestBedError

MiB = 1 << 20
PMD = 2 * MiB
STATX_ATTR_DAX = 0x00200000

# Kata 4.1.0 src/runtime/virtcontainers/hypervisor.go, GetKernelRootParams
# (ext4, NVDIMM root device): root, rootflags (with " ro" in its value), rootfstype.
KATA_ROOT = "/dev/pmem0p1"


def kata_cmdline(kata):
    """The kernel command line Kata's runtime gives its guest (and the test
    bed's switch that makes the initramfs mount it as the kernel would)."""
    if not kata:
        return ""
    flags = "dax,data=ordered,errors=remount-ro" if kata[1] else "data=ordered,errors=remount-ro"
    return f"root={KATA_ROOT} rootflags={flags} ro rootfstype=ext4 daxprobe.root=kernel"


def image_for_boot(vm_dir):
    """(path, size) of the built image after the cache's own check, or
    TestBedError naming the step."""
    info_path = os.path.join(vm_dir, "kata.json")
    image = os.path.join(vm_dir, "kata.img")
    step = "kata-image (harness/kata_image.py)"
    if not os.path.exists(info_path) or not os.path.exists(image):
        raise TestBedError(step, f"no {image} or {info_path} (meson compile -C BUILDDIR kata-image)")
    meta = json.load(open(info_path)).get("meta") or {}
    try:
        kata_image.check_image(image, meta)
    except kata_image.verified_cache.Invalid as e:
        raise TestBedError(step, f"{image}: {e}") from None
    return os.path.abspath(image), os.path.getsize(image)


ROOT_LINE = re.compile(r"^\d+ \d+ (\d+:\d+) / / (\S+) - (\S+) (\S+) (\S+)$")


def kernel_root(c, res):
    """The kernel's answers about the root, or None."""
    k = res.kv("kernel-root-dev.txt")
    lines = res.text("kernel-root-mountinfo.txt").splitlines()
    if not c.check(len(lines) == 1, f"one mountinfo line for /: {lines}"):
        return None
    m = ROOT_LINE.match(lines[0])
    if not c.check(m is not None, f"mountinfo line for /: {lines[0]!r}"):
        return None
    k.update(zip(("line_majmin", "mount_opts", "fstype", "source", "super_opts"), m.groups()))
    k["line"] = lines[0]
    f = res.kv("kernel-root-file.txt")
    attrs = f.get("attributes", "")
    k["file"] = f.get("path")
    k["file_dax"] = bool(int(attrs, 16) & STATX_ATTR_DAX) if attrs.startswith("0x") else None
    k["map_sync"] = f.get("map_sync") == "ok"
    k["map_sync_text"] = f.get("map_sync")
    kv = res.kv("cached.txt")
    k["cached_delta_kb"] = int(kv["delta_kb"]) if "delta_kb" in kv else None
    k["trace"] = {n: int(v) for n, v in res.kv("kernel-fs-dax.txt").items()}
    # The filesystem's first byte in physical memory, modulo 2 MiB: the
    # info block's data address (the pfn's resource) plus the partition's start.
    k["pmd_offset"] = ((int(k["pfn_resource"], 16) + int(k.get("start_sectors", 0)) * 512) % PMD
                       if k.get("pfn_resource") else None)
    return k


def expect_kernel_as_kata(c, res, k, attach, dax):
    """The boot is Kata's: what its guests' kernels show (real-clients.md)."""
    # `259:1 / / ro,relatime - ext4 /dev/root ro,...`: only the number names
    # the device; the node was the initramfs's and is gone.
    c.eq(k["line_majmin"], k.get("majmin"), "mountinfo's major:minor vs sysfs")
    c.check(k["line_majmin"].startswith("259:"), f"root on a blkext (259) number: {k['line']}")
    c.eq((k["mount_opts"], k["fstype"], k["source"]), ("ro,relatime", "ext4", "/dev/root"),
         f"the root's mountinfo line as on Kata ({k['line']})")
    c.check(k["super_opts"].startswith("ro"), f"super options read-only: {k['super_opts']}")
    c.eq(k.get("dev_root_exists"), "no", "no /dev/root node after the boot")
    c.eq(k.get("name"), KATA_ROOT[len("/dev/"):], "the kernel's name for the root's number")
    c.eq(k.get("partition"), "1", "partition number")
    c.eq(int(k.get("start_sectors", -1)) * 512, kata_image.ROOTFS_START_MIB * MiB,
         "partition start (Kata's rootfs_start)")
    # The info block as the kernel took it (ndctl list -N).
    nss = res.json("kernel-ndctl-N.json")
    nss = nss if isinstance(nss, list) else [nss] if nss else []
    ns = [n for n in nss if n.get("blockdev") == k.get("disk")]
    if c.check(len(ns) == 1, f"ndctl list -N: one namespace with blockdev {k.get('disk')}: {nss}"):
        c.eq((ns[0].get("mode"), ns[0].get("map"), ns[0].get("align")), ("fsdax", "mem", PMD),
             "ndctl: mode, map, align from the info block")
        c.eq(ns[0].get("dev"), k.get("namespace"), "ndctl's namespace vs sysfs")
    c.eq(k.get("pfn_mode"), "ram", "the pfn device's mode (map=mem)")
    if attach == "nvdimm":
        c.eq(k.get("region_ro"), "1", "Kata's NVDIMM region is read-only (readonly=on, unarmed=on)")
    # The rootflag decides, and the kernel says so in every way.
    c.eq("dax" in k["super_opts"].split(",") or "dax=always" in k["super_opts"].split(","),
         dax, f"dax in the root's super options ({k['super_opts']})")
    c.eq(k["file_dax"], dax, f"kernel: STATX_ATTR_DAX of {k['file']}")
    # virtio-pmem is asynchronous: MAP_SYNC refused even on DAX files.
    c.eq(k["map_sync"], dax and attach == "nvdimm", f"kernel: MAP_SYNC on {k['file']} "
         f"({k['map_sync_text']})")
    d = k["cached_delta_kb"]
    if c.check(d is not None, "Cached growth measured"):
        if dax:
            c.check(d < 4096, f"kernel: reading 32 MiB on DAX grew Cached by {d} kB (< 4 MiB)")
        else:
            c.check(d >= 30 * 1024, f"kernel: reading 32 MiB without DAX grew Cached by {d} kB "
                                    f"(>= 30 MiB)")
    t = k["trace"]
    if dax:
        # The file sits on a 2 MiB boundary of the filesystem (kata_image.py):
        # its 2 MiB faults map whole exactly when the filesystem does too.
        c.check(t.get("pmd_fault_done", 0) > 0, f"fs_dax: 2 MiB faults on the mapping: {t}")
        c.eq(t.get("nopage") == t.get("pmd_fault_done"), k["pmd_offset"] == 0,
             f"fs_dax: every 2 MiB fault maps whole exactly when the filesystem starts on "
             f"2 MiB (it starts {k['pmd_offset']} B off; {t})")
        c.eq(t.get("fallback") == t.get("pmd_fault_done"), k["pmd_offset"] != 0,
             f"fs_dax: every 2 MiB fault falls back exactly when the filesystem is off 2 MiB "
             f"({k['pmd_offset']} B; {t})")
    else:
        c.eq(t.get("pmd_fault_done"), 0, "fs_dax: no DAX fault without DAX")


def walk_verdicts(obj, path="$"):
    """(path, verdict) for every verdict object in the document."""
    if isinstance(obj, dict):
        v = obj.get("verdict")
        if isinstance(v, dict) and "code" in v:
            yield path, v
        for key, val in obj.items():
            yield from walk_verdicts(val, f"{path}.{key}")
    elif isinstance(obj, list):
        for i, val in enumerate(obj):
            yield from walk_verdicts(val, f"{path}[{i}]")


def expect_daxprobe_as_kernel(c, res, k, attach, dax):
    if not sc.expect_document(c, res, 0 if dax else 1,
                              "dax_verified" if dax else "problems_found"):
        return
    doc = res.check
    m = sc.pmem_mount(doc, "/")
    if not c.check(m is not None, f"a mounts[] entry for / in {[x.get('mount_point') for x in doc.get('mounts') or []]}"):
        return
    # The device by the kernel's number, tied to its disk and namespace.
    start = int(k.get("start_sectors", 0)) * 512
    c.eq(m.get("device"), k["line_majmin"], "/ device (mountinfo's major:minor)")
    c.eq(m.get("blockdev"), k.get("name"), "/ blockdev (the kernel's name for that number)")
    c.eq(m.get("disk"), k.get("disk"), "/ disk")
    c.eq(m.get("partition_start"), start, "/ partition_start (sysfs start x 512)")
    c.eq(m.get("namespace"), k.get("namespace"), "/ namespace")
    c.eq(m.get("queue_dax"), k.get("queue_dax") == "1", "/ queue_dax (the disk's queue/dax)")
    # 2 MiB mappings: the filesystem's first byte in physical memory.
    if c.check(k["pmd_offset"] is not None, "the kernel's pfn device for the root's disk"):
        want = k["pmd_offset"]
        c.eq(m.get("pmd_offset"), want, "/ pmd_offset (pfn resource + partition start, mod 2 MiB)")
        # Only a DAX mount maps 2 MiB at a time: there the offset gets a
        # warning; without DAX the page cache serves the file and the
        # remedy (rootflags=dax) comes first.
        warns = (m.get("verdict") or {}).get("warnings") or []
        if dax:
            c.eq(any("2 MiB" in w for w in warns), want != 0,
                 f"a mount warning naming 2 MiB exactly when pmd_offset is not 0: {warns}")
        elif want and not any("2 MiB" in w for w in warns):
            c.note(f"/ is not DAX: pmd_offset {m.get('pmd_offset')} without a 2 MiB warning")
    # The verdict and its remedy.
    v = m.get("verdict") or {}
    if dax:
        c.eq(v.get("code"), "dax_active", "/ verdict")
    else:
        c.eq((v.get("code"), v.get("severity")), ("dax_not_requested", "problem"), "/ verdict")
        r = sc.remedy_text(m)
        c.check("rootflags=dax" in r, f"/ remedy names the boot parameter rootflags=dax: {r!r}")
        c.check(not re.search(r"umount\s+/(\s|;|&|$)", r), f"/ remedy never umounts /: {r!r}")
    # The file, as the kernel says.
    f = sc.file_entry(doc, k["file"])
    if c.check(f is not None, f"files[] entry for {k['file']}"):
        c.eq(f.get("statx_dax"), k["file_dax"], f"daxprobe statx_dax of {k['file']} vs the kernel's")
    # daxprobe's fault profile of the same file (a read-only mapping, as
    # kata.sh's xfs_io read): DAX and 2 MiB faults as the tracepoints counted.
    prof = res.json("profile.json") or {}
    pf = [x for x in prof.get("files") or [] if x.get("path") == k["file"]]
    c.eq(res.rc("profile.rc"), 0, "daxprobe profile exit code")
    if c.check(len(pf) == 1, f"profile.json: one entry for {k['file']} "
                             f"(rc {res.rc('profile.rc')}: {res.text('profile.stderr')[-300:]})"):
        faults = pf[0].get("faults") or {}
        c.eq(pf[0].get("dax"), k["file_dax"], "profile: dax vs the kernel's statx")
        t = k["trace"]
        c.eq((faults.get("dax_pmd"), faults.get("dax_pmd_fallback")),
             (t.get("pmd_fault_done", 0), t.get("fallback", 0)),
             "profile: 2 MiB faults and fallbacks vs the fs_dax tracepoints of the same mapping")
        # The mapping as the tracepoints say: every 2 MiB fault fell back,
        # every one mapped whole, or no DAX at all.
        want = ("page_cache" if not k["file_dax"] else
                "fallback" if t.get("fallback") == t.get("pmd_fault_done") else
                "pmd" if t.get("nopage") == t.get("pmd_fault_done") else None)
        if want:
            c.eq((pf[0].get("mapping") or {}).get("code"), want, "profile: mapping code")
        # Off the grid, the cause is the partition's start, not the file.
        if want == "fallback" and (m.get("pmd_offset") or 0) != 0:
            advice = (pf[0].get("mapping") or {}).get("advice") or ""
            c.check("partition on a 2 MiB boundary" in advice,
                    f"profile: the advice names the partition's start: {advice!r}")
    ms = m.get("map_sync") or {}
    if ms.get("ran"):
        c.eq(ms.get("ok"), k["map_sync"], f"/ map_sync.ok vs the kernel's ({k['map_sync_text']})")
    else:
        c.note(f"daxprobe did not run MAP_SYNC on / (read-only): {ms}")
    c.eq((doc.get("nfit") or {}).get("present"), attach == "nvdimm",
         "an NFIT exactly for the NVDIMM (virtio-pmem has none)")
    # Read-only by design: Kata's not_armed DIMM under a read-only root is no problem.
    problems = [(p, v.get("code")) for p, v in walk_verdicts(doc) if v.get("severity") == "problem"]
    if dax:
        c.eq(problems, [], "no problem in a correctly configured Kata guest")
    else:
        c.check(all(p.startswith("$.mounts") or p == "$" for p, _ in problems),
                f"the only problems are the root mount's: {problems}")


def check_kata(c, res, attach, dax):
    k = kernel_root(c, res)
    if k is None:
        return
    expect_kernel_as_kata(c, res, k, attach, dax)
    expect_daxprobe_as_kernel(c, res, k, attach, dax)


def checker(attach, dax):
    def check(c, res):
        check_kata(c, res, attach, dax)
    check.__name__ = f"check_kata_{attach.replace('-', '_')}_{'dax' if dax else 'nodax'}"
    return check
