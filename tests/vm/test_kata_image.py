#!/usr/bin/env python3
"""Kata's image layout (harness/kata_image.py) without a VM: the info block
is the one Kata 4.1.0's nsdax.gpl.c writes (its checksum as measured on the
block Kata's tool made), a built image passes the cache's check, and each
broken part of it fails that check. Exit 0 pass, 1 fail, 77 skip."""

import os
import shutil
import struct
import sys
import tempfile

from harness import kata_image as k
from harness import verified_cache

# fletcher64 of the 4 KiB block Kata 4.1.0's nsdax wrote (`nsdax IMG 2097152
# 2097152`, compiled by hand from nsdax.gpl.c at tag 4.1.0): bytes 0x1ff8-0x1fff
# of its image, read with xxd (2026-12-06).
KATA_CHECKSUM = bytes.fromhex("303894e32b035b68")
# Its MBR #1 partition entry (parted 3.5, 128 MiB disk, partition 3 MiB to the
# last sector), bytes 0x1be-0x1cd (xxd -p).
KATA_MBR1_ENTRY = bytes.fromhex("000001308303e0ff0018000000e80300")


def main():
    for tool in ("mkfs.ext4", "e2fsck", "debugfs"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} not found (e2fsprogs)")
            return 77
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    ib = k.info_block()
    check(ib[-8:] == KATA_CHECKSUM, f"info block checksum {ib[-8:].hex()}, Kata's tool wrote "
                                    f"{KATA_CHECKSUM.hex()}")
    check(ib[:16] == b"NVDIMM_PFN_INFO\0", "signature")
    lay128 = k.layout(128)
    entry = k.mbr(lay128["fs_offset"] // 512, lay128["fs_size"] // 512)[0x1BE:0x1CE]
    check(entry == KATA_MBR1_ENTRY, f"MBR #1 entry {entry.hex()}, parted wrote "
                                    f"{KATA_MBR1_ENTRY.hex()}")

    with tempfile.TemporaryDirectory(prefix="kata-image-test-") as tmp:
        root = os.path.join(tmp, "root")
        os.makedirs(os.path.join(root, "kata"))
        with open(os.path.join(root, "hello"), "w") as f:
            f.write("hello\n")
        good = os.path.join(tmp, "good.img")
        lay = k.build_image(root, good)
        meta = {"layout": lay}
        try:
            k.check_image(good, meta)
        except verified_cache.Invalid as e:
            failures.append(f"the built image fails its own check: {e}")

        def broken(name, offset, data):
            path = os.path.join(tmp, name + ".img")
            shutil.copy(good, path)
            with open(path, "r+b") as f:
                f.seek(offset)
                f.write(data)
            try:
                k.check_image(path, meta)
                failures.append(f"{name}: accepted")
            except verified_cache.Invalid as e:
                print(f"{name}: refused: {e}")
            os.unlink(path)

        info = k.INFO_OFFSET
        broken("checksum", info + k.INFO_SIZE - 8, b"\0" * 8)
        broken("map=dev", info + 72, struct.pack("<I", 2))
        broken("dataoff-4M", info + 56, struct.pack("<Q", 4 << 20))
        broken("signature", info, b"NVDIMM_BTT_INFO\0")
        broken("mbr2-at-2M", lay["data_offset"] + 0x1BE + 8, struct.pack("<I", 4096))
        broken("mbr1-type", 0x1BE + 4, b"\x07")
        broken("stray-byte", 0x10000, b"\1")
        broken("ext4-1k", lay["fs_offset"] + 1024 + 0x18, struct.pack("<I", 0))
        broken("ext4-reserve", lay["fs_offset"] + 1024 + 0x08, struct.pack("<I", 0))
    for f in failures:
        print(f"FAIL: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
