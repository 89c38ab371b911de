"""Kata Containers' guest image layout, built by the test bed's own code.

The layout is that of Kata 4.1.0 (tag 4.1.0, commit ddcb1ad8d23c),
tools/osbuilder/image-builder/image_builder.sh, read there; nothing of
Kata's is copied into this tree:

- `create_disk`: `parted -s -a optimal IMG -- mklabel msdos mkpart primary
  ext4 ${part_start}MiB -1s` (one partition to the last sector; rootfs_start=1);
- `format_loop`: `mkfs.ext4 -q -F -b 4096` and `tune2fs -m 3`
  (reserved_blocks_percentage), the root copied in, `fsck.ext4 -D -y`;
- the size: the root's content plus slack, plus dax_header_sz (2 MiB) and
  rootfs_start (1 MiB) less one (rootfs_end=-1), rounded up to
  IMAGE_SIZE_ALIGNMENT_MB (128);
- `set_dax_header`: a second disk of the full size whose partition starts at
  rootfs_start + dax_header_sz = 3 MiB (MBR #1), its first 2 MiB with the
  info block tools/osbuilder/image-builder/nsdax.gpl.c writes at 4 KiB
  (`nsdax IMG 2097152 2097152`), then the rootfs image (MBR #2, partition
  at 1 MiB) appended: | MBR #1 | DAX | MBR #2 | rootfs |.

nsdax.gpl.c fills a `struct nd_pfn_sb` (the kernel's drivers/nvdimm/pfn.h,
its format as the kernel reads it in nd_pfn_validate()): signature
"NVDIMM_PFN_INFO", uuid and parent_uuid zero, flags 0, version 0.2,
dataoff 2 MiB, npfns 0, mode PFN_MODE_RAM (1: ndctl's map=mem), start_pad
and end_trunc 0, align 2 MiB, the rest zero, and the fletcher64 checksum of
the 4 KiB block (nd_sb_checksum). `info_block()` below writes those fields
from that format.

Compared once, by hand (2026-12-06), with Kata's own tools: nsdax.gpl.c of
4.1.0 compiled in /tmp and run on a `parted`-made disk as set_dax_header
does (a 128 MiB disk): the first 2 MiB (MBR #1, the info block with its
checksum, the zeros between) and the MBR #2 sector are byte-identical to
this module's except in two places no kernel reads: bytes 0x000-0x04a,
parted's own x86 boot stub (BIOS code; parted is GPLv3 and nothing boots
through it, so this module leaves them zero), and the 4-byte disk
identifier at 0x1b8 (parted 3.5 draws it at random; fixed here, so the
image is reproducible). parted 3.5 writes the CHS fields with 4 heads and
32 sectors per track on these disks (measured; the kernel reads the LBA
fields only); this module writes the same.

The image is a verified artefact in the test bed's cache (verified_cache.py):
keyed on its content (every file of the root, the layout), checked when
written and on every read: both MBRs (signature, one partition, type 0x83,
its start and size), the info block field by field with its checksum, the
ext4 superblock at the partition (magic, 4 KiB blocks, the 3 % reserve, the
size filling the partition). The build step copies it to BUILD/tests/vm.
"""

import argparse
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from . import mkinitramfs, verified_cache

MiB = 1 << 20
KATA_RELEASE = "4.1.0"  # tag; commit ddcb1ad8d23cbb4323f86c209f132b89592902df
# image_builder.sh (4.1.0)
ROOTFS_START_MIB = 1
DAX_HEADER_MIB = 2
DAX_ALIGNMENT = 2 * MiB
PMD_BYTES = 2 * MiB
RESERVED_BLOCKS_PERCENT = 3
BLOCK_SIZE = 4096
IMAGE_SIZE_ALIGNMENT_MIB = 128
# nsdax.gpl.c: the info block's place (the kernel's SZ_4K), and its fields
PFN_SIG = b"NVDIMM_PFN_INFO\0"
INFO_OFFSET = 4096
INFO_SIZE = 4096
PFN_MODE_RAM = 1
# The fixed MBR disk identifier (parted draws one at random).
DISK_ID = 0x6B617461  # "kata"
# parted 3.5's CHS geometry on these disks (measured: see the module text)
CHS_HEADS, CHS_SECTORS = 4, 32

# The file the scenario reads (Cached growth, fs_dax tracepoints): in the
# image, since the root is mounted read-only.
READ_FILE = "/kata/read-32m.bin"
READ_FILE_SIZE = 32 * MiB
# Marks the image's root: guest/init then runs as the image's own init.
ROOT_MARK = "/daxprobe-vm/root-image"


def fletcher64(block):
    """nd_fletcher64(block, len, le=1): 32-bit little-endian words."""
    lo, hi = 0, 0
    for (w,) in struct.iter_unpack("<I", block):
        lo = (lo + w) & 0xFFFFFFFF
        hi = (hi + lo) & 0xFFFFFFFF
    return (hi << 32) | lo


def info_block(dataoff=DAX_HEADER_MIB * MiB, align=DAX_ALIGNMENT):
    """The 4 KiB fsdax info block with the fields nsdax.gpl.c sets."""
    b = bytearray(INFO_SIZE)
    b[0:16] = PFN_SIG
    # uuid 16..32, parent_uuid 32..48, flags 48: zero
    struct.pack_into("<HHQQIIII", b, 52, 0, 2, dataoff, 0, PFN_MODE_RAM, 0, 0, align)
    struct.pack_into("<Q", b, INFO_SIZE - 8, fletcher64(bytes(b)))
    return bytes(b)


def parse_info_block(b):
    sig = bytes(b[0:16])
    (flags,) = struct.unpack_from("<I", b, 48)
    major, minor, dataoff, npfns, mode, start_pad, end_trunc, align = struct.unpack_from(
        "<HHQQIIII", b, 52)
    (checksum,) = struct.unpack_from("<Q", b, INFO_SIZE - 8)
    zeroed = bytearray(b)
    zeroed[INFO_SIZE - 8:] = bytes(8)
    return {"signature": sig, "uuid": bytes(b[16:32]), "parent_uuid": bytes(b[32:48]),
            "flags": flags, "version": (major, minor), "dataoff": dataoff, "npfns": npfns,
            "mode": mode, "start_pad": start_pad, "end_trunc": end_trunc, "align": align,
            "checksum": checksum, "checksum_ok": checksum == fletcher64(bytes(zeroed)),
            "rest_zero": not any(b[88:INFO_SIZE - 8])}


def chs(lba):
    c, rem = divmod(lba, CHS_HEADS * CHS_SECTORS)
    h, s = divmod(rem, CHS_SECTORS)
    s += 1
    if c > 1023:
        c, h, s = 1023, CHS_HEADS - 1, CHS_SECTORS
    return bytes([h, (s & 0x3F) | ((c >> 2) & 0xC0), c & 0xFF])


def mbr(start_lba, sectors):
    """An msdos label with one primary Linux partition, as parted makes it."""
    b = bytearray(512)
    struct.pack_into("<I", b, 0x1B8, DISK_ID)
    e = b"\x00" + chs(start_lba) + b"\x83" + chs(start_lba + sectors - 1)
    e += struct.pack("<II", start_lba, sectors)
    b[0x1BE:0x1CE] = e
    b[0x1FE:0x200] = b"\x55\xaa"
    return bytes(b)


def parse_mbr(b):
    parts = []
    for i in range(4):
        e = b[0x1BE + 16 * i:0x1CE + 16 * i]
        start, count = struct.unpack_from("<II", e, 8)
        if e[4] or count:
            parts.append({"type": e[4], "start": start, "sectors": count})
    return {"boot_signature": bytes(b[0x1FE:0x200]) == b"\x55\xaa", "partitions": parts}


def layout(image_mib, part_start_mib=ROOTFS_START_MIB):
    """Byte offsets of Kata's layout in an image of image_mib MiB.
    part_start_mib: the partition's start in the namespace (Kata: 1 MiB;
    2 for the by-hand experiment that keeps PMD mappings)."""
    ns = DAX_HEADER_MIB * MiB                # the namespace's data: MBR #2 there
    part = ns + part_start_mib * MiB         # the filesystem
    end = image_mib * MiB
    return {"image_size": end, "data_offset": ns, "partition_start": part_start_mib * MiB,
            "fs_offset": part, "fs_size": end - part}


def read_file_bytes():
    """32 MiB that mke2fs cannot store as holes (zeros would be sparse)."""
    return hashlib.shake_256(b"daxprobe kata read file").digest(READ_FILE_SIZE)


def check_image(path, meta):
    """verified_cache's check: the header, both partition tables and the
    ext4 superblock as Kata's builder leaves them."""
    bad = verified_cache.Invalid
    lay = meta.get("layout") or {}
    size = os.path.getsize(path)
    if not lay or size != lay.get("image_size"):
        raise bad(f"size {size} B, layout {lay}")
    if size % (IMAGE_SIZE_ALIGNMENT_MIB * MiB):
        raise bad(f"size {size} B is not a multiple of {IMAGE_SIZE_ALIGNMENT_MIB} MiB")
    with open(path, "rb") as f:
        head = f.read(DAX_HEADER_MIB * MiB)
        f.seek(lay["data_offset"])
        mbr2 = f.read(512)
        f.seek(lay["fs_offset"] + 1024)
        sb = f.read(1024)
    fs_sectors = lay["fs_size"] // 512
    for name, raw, start in (("MBR #1", head[:512], lay["fs_offset"] // 512),
                             ("MBR #2", mbr2, lay["partition_start"] // 512)):
        m = parse_mbr(raw)
        want = [{"type": 0x83, "start": start, "sectors": fs_sectors}]
        if not m["boot_signature"] or m["partitions"] != want:
            raise bad(f"{name}: {m}, want one partition {want}")
    ib = parse_info_block(head[INFO_OFFSET:INFO_OFFSET + INFO_SIZE])
    want = {"signature": PFN_SIG, "uuid": bytes(16), "parent_uuid": bytes(16), "flags": 0,
            "version": (0, 2), "dataoff": lay["data_offset"], "npfns": 0, "mode": PFN_MODE_RAM,
            "start_pad": 0, "end_trunc": 0, "align": DAX_ALIGNMENT, "checksum_ok": True,
            "rest_zero": True}
    got = {k: ib[k] for k in want}
    if got != want:
        raise bad(f"info block at 4 KiB: {got}, want {want}")
    if any(head[512:INFO_OFFSET]) or any(head[INFO_OFFSET + INFO_SIZE:]):
        raise bad("the 2 MiB header holds more than MBR #1 and the info block")
    magic, = struct.unpack_from("<H", sb, 0x38)
    blocks_lo, r_blocks_lo = struct.unpack_from("<II", sb, 0x04)
    log_block, = struct.unpack_from("<I", sb, 0x18)
    if magic != 0xEF53:
        raise bad(f"no ext4 superblock at the partition (magic {magic:#x})")
    if 1024 << log_block != BLOCK_SIZE:
        raise bad(f"ext4 block size {1024 << log_block}, want {BLOCK_SIZE}")
    if blocks_lo * BLOCK_SIZE != lay["fs_size"]:
        raise bad(f"ext4 has {blocks_lo} blocks, the partition {lay['fs_size']} B")
    if r_blocks_lo != blocks_lo * RESERVED_BLOCKS_PERCENT // 100:
        raise bad(f"ext4 reserves {r_blocks_lo} of {blocks_lo} blocks, want "
                  f"{RESERVED_BLOCKS_PERCENT} %")
    return (f"MBR #1 partition at {lay['fs_offset']} B, MBR #2 at {lay['partition_start']} B, "
            f"{fs_sectors} sectors each; info block NVDIMM_PFN_INFO 0.2 mode ram dataoff "
            f"{lay['data_offset']} align {DAX_ALIGNMENT} checksum ok; ext4 4 KiB blocks, "
            f"{RESERVED_BLOCKS_PERCENT} % reserved")


def tree_key(img):
    """The content key: every entry of the root (name, kind, mode, content)."""
    h = hashlib.sha256()
    for name in sorted(img.entries):
        kind, val, mode = img.entries[name]
        h.update(f"{name}\0{kind}\0{mode:o}\0".encode())
        if kind == "file":
            h.update(verified_cache.sha256(val).encode())
        elif kind == "data":
            h.update(hashlib.sha256(val).hexdigest().encode())
        else:
            h.update(str(val).encode())
    return h.hexdigest()


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return p


def build_image(root, out, part_start_mib=ROOTFS_START_MIB):
    """Kata's image of the folder `root` into `out`; returns the layout."""
    used = int(run(["du", "-s", "-B1", root]).stdout.split()[0])
    # image_builder.sh searches the smallest disk whose ext4 holds the root;
    # a quarter more than the content plus 16 MiB of metadata does here.
    need_mib = used * 5 // 4 // MiB + 16 + DAX_HEADER_MIB + ROOTFS_START_MIB - 1
    image_mib = -(-need_mib // IMAGE_SIZE_ALIGNMENT_MIB) * IMAGE_SIZE_ALIGNMENT_MIB
    lay = layout(image_mib, part_start_mib)
    fs = out + ".ext4"
    with open(fs, "wb") as f:
        f.truncate(lay["fs_size"])
    # format_loop: mkfs.ext4 -q -F -b 4096, tune2fs -m 3 (one step here), the
    # root copied in (-d instead of a loop mount), fsck.ext4 -D -y.
    run(["mkfs.ext4", "-q", "-F", "-b", str(BLOCK_SIZE), "-m", str(RESERVED_BLOCKS_PERCENT),
         "-d", root, fs])
    place_read_file(fs)
    p = subprocess.run(["e2fsck", "-f", "-D", "-y", fs], capture_output=True, text=True)
    if p.returncode not in (0, 1):  # 1: it optimised directories, as asked
        raise RuntimeError(f"e2fsck -f -D -y failed ({p.returncode}): {p.stdout[-500:]}")
    with open(out, "wb") as img:
        img.truncate(lay["image_size"])
        img.write(mbr(lay["fs_offset"] // 512, lay["fs_size"] // 512))
        img.seek(INFO_OFFSET)
        img.write(info_block(lay["data_offset"]))
        img.seek(lay["data_offset"])
        img.write(mbr(lay["partition_start"] // 512, lay["fs_size"] // 512))
        with open(fs, "rb") as src:
            pos = lay["fs_offset"]
            while chunk := src.read(MiB):
                if any(chunk):  # keep the image sparse
                    img.seek(pos)
                    img.write(chunk)
                pos += len(chunk)
    os.unlink(fs)
    return lay


def place_read_file(fs):
    """READ_FILE into the filesystem `fs`, its data on a 2 MiB boundary of
    the filesystem, where the kernel's allocator puts a large file that
    Kata's builder copies in through a loop mount (mke2fs -d's allocator
    takes the first free block: 3594 here, so that every 2 MiB fault fell
    back even with the partition at 2 MiB). The blocks before the boundary
    are marked used while debugfs writes the file, then freed."""
    out = run(["debugfs", "-R", "ffb 1", fs]).stdout
    first = int(out.split("Free blocks found:")[1].split()[0])
    per_pmd = PMD_BYTES // BLOCK_SIZE
    aligned = -(-first // per_pmd) * per_pmd
    with tempfile.TemporaryDirectory(prefix="kata-read-") as tmp:
        data = os.path.join(tmp, "read-file")
        with open(data, "wb") as f:
            f.write(read_file_bytes())
        os.chmod(data, 0o644)
        script = ""
        if aligned > first:
            script += f"setb {first} {aligned - first}\n"
        script += f"write {data} {READ_FILE}\n"
        if aligned > first:
            script += f"freeb {first} {aligned - first}\n"
        p = subprocess.run(["debugfs", "-w", "-f", "-", fs], input=script, capture_output=True,
                           text=True)
        if p.returncode != 0:
            raise RuntimeError(f"debugfs -w {fs} failed: {p.stderr.strip()}")
    stat = run(["debugfs", "-R", f"stat {READ_FILE}", fs]).stdout
    ext = stat.split("EXTENTS:")[-1].split()
    want = f"(0-{READ_FILE_SIZE // BLOCK_SIZE - 1}):{aligned}-{aligned + READ_FILE_SIZE // BLOCK_SIZE - 1}"
    if ext[:1] != [want]:
        raise RuntimeError(f"{READ_FILE} landed at {ext[:3]}, want one extent {want}")


def stage_root(img):
    """The root filesystem's entries: the initramfs's userland without the
    modules (the initramfs loaded them before it mounted this root), the
    file the scenario reads, the mark that makes guest/init the image's init."""
    img.add_data(ROOT_MARK, f"Kata {KATA_RELEASE} image layout (harness/kata_image.py)\n".encode())
    img.add_data("/daxprobe-vm/modules.load", b"\n")  # loaded before the root was mounted
    # READ_FILE itself is written by place_read_file (a directory here).
    img.add_dir(os.path.dirname(READ_FILE))
    img.add_data("/daxprobe-vm/read-file", f"{READ_FILE} {READ_FILE_SIZE} "
                 f"{hashlib.sha256(read_file_bytes()).hexdigest()}\n".encode())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--deb-dir", required=True)
    ap.add_argument("--guest-dir", required=True)
    ap.add_argument("--kernel-answers", required=True)
    ap.add_argument("--out", required=True, help="the image (BUILD/tests/vm/kata.img)")
    ap.add_argument("--info", required=True, help="its manifest copy (kata.json)")
    ap.add_argument("--depfile")
    ap.add_argument("--cache", default=os.environ.get(
        "DAXPROBE_VM_CACHE", os.path.expanduser("~/.cache/daxprobe-vm")))
    ap.add_argument("--part-start-mib", type=int, default=ROOTFS_START_MIB,
                    help="the partition's start in the namespace (Kata: 1; an experiment: 2)")
    args = ap.parse_args()

    os.makedirs(args.cache, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kata-image-") as tmp:
        img = mkinitramfs.Image()
        pkg = mkinitramfs.add_userland(img, mkinitramfs.find_guest_deb(args.deb_dir),
                                       args.guest_dir, os.path.join(tmp, "pkg"),
                                       kernel_answers=args.kernel_answers)
        stage_root(img)
        key = tree_key(img)[:16]
        name = f"kata-{KATA_RELEASE}-{key}"
        if args.part_start_mib != ROOTFS_START_MIB:
            name += f"-part{args.part_start_mib}m"
        cached = os.path.join(args.cache, name + ".img")
        what = f"Kata {KATA_RELEASE} image"
        with verified_cache.locked(cached):
            doc = verified_cache.load(cached, check_image, what)
            if doc is None:
                root = os.path.join(tmp, "root")
                img.write_tree(root)
                shutil.rmtree(pkg)
                new = cached + f".partial-{os.getpid()}"
                lay = build_image(root, new, args.part_start_mib)
                doc = verified_cache.publish(new, cached, check_image, what,
                                             {"layout": lay, "key": key,
                                              "read_file": READ_FILE,
                                              "read_file_size": READ_FILE_SIZE})
                print(f"kata_image: built {cached}: {doc['verified']}")
        # Older content's images: replaced by this one.
        for old in os.listdir(args.cache):
            if (old.startswith(f"kata-{KATA_RELEASE}-") and old.endswith(".img")
                    and old != os.path.basename(cached)
                    and old.endswith("m.img") == cached.endswith("m.img")):
                verified_cache.evict(os.path.join(args.cache, old), "replaced by " + name)
        tmp_out = args.out + ".tmp"
        run(["cp", "--sparse=always", cached, tmp_out])
        os.replace(tmp_out, args.out)
        with open(args.info, "w") as f:
            json.dump(dict(doc, image=os.path.abspath(args.out)), f, indent=1, sort_keys=True)
            f.write("\n")
        if args.depfile:
            with open(args.depfile, "w") as f:
                f.write(f"{args.out}: " + " ".join(sorted(d.replace(" ", "\\ ")
                                                          for d in img.deps)) + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print(f"kata_image: {e}", file=sys.stderr)
        sys.exit(1)
