#!/usr/bin/env python3
"""The QEMU wrapper for libguestfs (guestfs_hv.py) on libguestfs 1.48's real
command line (recorded by the wrapper in a launch on this project's
machine), no VM: the root drive and its device go, the NVDIMM comes in,
`root=UUID=` becomes `root=/dev/pmem0`, and an NVDIMM holding another root
is refused. The NVDIMM file is made as the build makes it: ndctl
write-infoblock, then an ext2 superblock at its data offset."""

import os
import struct
import subprocess
import sys
import tempfile
import uuid

from guestfs_hv import move_root_to_nvdimm
from harness.pmem_file import ext2_uuid, pfn_info

# libguestfs 1.48.6's boot command line (lib/launch-direct.c), as recorded.
ARGV = ['-global', 'virtio-blk-pci.scsi=off', '-no-user-config', '-nodefaults', '-display', 'none',
        '-machine', 'accel=kvm:tcg', '-cpu', 'max,la57=off', '-m', '1280', '-no-reboot', '-rtc',
        'driftfix=slew', '-no-hpet', '-global', 'kvm-pit.lost_tick_policy=discard', '-kernel',
        'APP/kernel', '-initrd', 'APP/initrd', '-object', 'rng-random,filename=/dev/urandom,id=rng0',
        '-device', 'virtio-rng-pci,rng=rng0', '-device', 'virtio-scsi-pci,id=scsi', '-drive',
        'file=TMP/devnull1.img,cache=writeback,format=raw,id=hd0,if=none', '-device',
        'scsi-hd,drive=hd0', '-drive',
        'file=APP/root,snapshot=on,id=appliance,cache=unsafe,if=none,format=raw', '-device',
        'scsi-hd,drive=appliance', '-device', 'virtio-serial-pci', '-serial', 'stdio', '-chardev',
        'socket,path=TMP/guestfsd.sock,id=channel0', '-device',
        'virtserialport,chardev=channel0,name=org.libguestfs.channel.0', '-append',
        'panic=1 console=ttyS0 edd=off udevtimeout=6000 udev.event-timeout=6000 no_timer_check '
        'lpj=8384000 printk.time=1 cgroup_disable=memory usbcore.nousb cryptomgr.notests '
        'tsc=reliable 8250.nr_uarts=1 root=UUID=ROOTUUID selinux=0 quiet TERM=xterm']

fails = []


def check(cond, what):
    if not cond:
        fails.append(what)


def make_nvdimm(path, fs_uuid):
    with open(path, "wb") as f:
        f.truncate(130 << 20)
    subprocess.run(["ndctl", "write-infoblock", "-o", path, "-m", "fsdax", "-M", "dev", "-a", "2M"],
                   check=True, capture_output=True)
    off = pfn_info(path)["dataoff"]
    sb = bytearray(1024)
    struct.pack_into("<H", sb, 56, 0xEF53)
    sb[104:120] = uuid.UUID(fs_uuid).bytes
    with open(path, "r+b") as f:
        f.seek(off + 1024)
        f.write(sb)
    return off


def main():
    if not any(os.path.exists(os.path.join(d, "ndctl")) for d in ("/usr/bin", "/bin", "/usr/sbin")):
        print("SKIP: ndctl not found (packaging/install-deps.sh)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        nv = os.path.join(tmp, "nvdimm.img")
        root_uuid = "54f07355-3f26-4a68-a566-21252047d25a"
        make_nvdimm(nv, root_uuid)
        check(ext2_uuid(nv, pfn_info(nv)["dataoff"]) == root_uuid, "ext2_uuid reads the UUID back")
        argv = [a.replace("ROOTUUID", root_uuid) for a in ARGV]
        out = move_root_to_nvdimm(argv, nv)
        joined = " ".join(out)
        check("id=appliance" not in joined and "drive=appliance" not in joined,
              f"the root drive and its scsi-hd device are gone: {joined}")
        check("id=hd0" in joined and "scsi-hd,drive=hd0" in joined, "the -a /dev/null drive stays")
        app = out[out.index("-append") + 1].split()
        check([w for w in app if w.startswith("root=")] == ["root=/dev/pmem0"],
              f"one root=, /dev/pmem0: {app}")
        check(app[:3] == argv[argv.index("-append") + 1].split()[:3], "the rest of -append kept")
        mem = out[out.index("-m") + 1]
        maxmem = int(mem.split("maxmem=")[1])
        check(mem.startswith("1280M,slots=2,maxmem=") and
              maxmem >= (1280 << 20) + os.path.getsize(nv), f"-m {mem}: room for the NVDIMM")
        check(out[out.index("-machine") + 1] == "accel=kvm:tcg,nvdimm=on", "nvdimm=on")
        check(f"memory-backend-file,id=guestfs-root,share=off,mem-path={nv},"
              f"size={os.path.getsize(nv)}" in out, "a private memory backend on the file")
        check("nvdimm,id=nvdimm-root,memdev=guestfs-root" in out, "the nvdimm device")
        # Another root's UUID: refused, never booted from the wrong image.
        other = [a.replace("ROOTUUID", "00000000-1111-2222-3333-444444444444") for a in ARGV]
        try:
            move_root_to_nvdimm(other, nv)
            fails.append("an NVDIMM holding another root was accepted")
        except SystemExit as e:
            check("not this appliance's root" in str(e), f"refusal names why: {e}")
        # A command line it does not know (no appliance drive): refused.
        try:
            i = argv.index("file=APP/root,snapshot=on,id=appliance,cache=unsafe,if=none,format=raw")
            move_root_to_nvdimm(argv[:i - 1] + argv[i + 3:], nv)
            fails.append("a command line without the appliance drive was accepted")
        except SystemExit as e:
            check("not libguestfs's command line" in str(e), f"refusal names why: {e}")
    for f in fails:
        print(f"FAIL: {f}")
    print("PASS" if not fails else f"{len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
