"""virtio-fs (QEMU 7.2's virtiofsd, no DAX window): the kernel's answers in
the guest (issue 34)."""

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


def check_virtiofs(c, res):
    kernel_answers(c, res)
