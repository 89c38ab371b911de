#!/usr/bin/python3
"""libguestfs's QEMU, through a wrapper (LIBGUESTFS_HV names this file).

libguestfs 1.48 (lib/launch-direct.c) runs its hypervisor in two kinds of
ways: probes (`-help`, `-version`, `-machine help`, QMP queries), which pass
through to QEMU unchanged, and the appliance's boot (a command line with
`-kernel`). For the boot this wrapper

- stock (DAXPROBE_GUESTFS_MODE=stock): runs QEMU with libguestfs's own
  command line (the root a virtio-scsi disk, `snapshot=on`, `root=UUID=`);
- dax: moves the root to an fsdax NVDIMM, the 2016 recipe brought up to
  date: the `-drive ... id=appliance` and its scsi-hd device go, the file
  DAXPROBE_GUESTFS_NVDIMM (an `ndctl write-infoblock` fsdax info block, the
  appliance's root at its data offset: harness/guestfs_appliance.py) comes
  in as `-device nvdimm` on a private (`share=off`, so the guest's writes
  stay in QEMU as `snapshot=on` keeps them) memory-backend-file, the
  machine gets `nvdimm=on` and a hotplug range for it, and `root=UUID=X`
  becomes `root=/dev/pmem0` (supermin's init then mounts it with the option
  string `dax`). The UUID libguestfs asked for must be the ext2 UUID at the
  NVDIMM's data offset, or the boot is refused: the NVDIMM holds this root.
- nodax: the same NVDIMM, but `root=UUID=X` kept: supermin's init finds the
  root by its UUID on pmem0 and mounts it without `dax` (the option string
  comes only with `root=/dev/pmemN`; `rootflags=` is ignored), the
  "fsdax without the option" case (not in the suite: bench or by hand).

Either way QEMU runs as this process's child (not exec'd) so that its
peak RSS can be read from wait4: DAXPROBE_GUESTFS_RECORD, when set, is a
JSON file written when QEMU starts ({pid, argv}) and again when it exits
(+ rc, ru_maxrss_kb, wall_s). DAXPROBE_GUESTFS_APPEND: words added to
the kernel command line of the boot (either mode). SIGTERM/SIGINT/SIGHUP from libguestfs are
passed on to QEMU and the wrapper waits for it, so libguestfs's shutdown
(kill, then waitpid on this pid) still ends QEMU.
"""

import json
import os
import signal
import subprocess
import sys
import time

from harness.pmem_file import ext2_uuid, pfn_info

QEMU = "/usr/bin/qemu-system-x86_64"
MIB = 1 << 20


def log(msg):
    print(f"guestfs_hv: {msg}", file=sys.stderr, flush=True)


def opt_index(argv, opt, pred=lambda v: True):
    return [i for i in range(len(argv) - 1) if argv[i] == opt and pred(argv[i + 1])]


def move_root_to_nvdimm(argv, nvdimm, dax=True):
    """libguestfs's command line with the appliance root on `nvdimm`
    (mounted with supermin's `dax` unless dax is False)."""
    argv = list(argv)
    pfn = pfn_info(nvdimm)
    if pfn is None:
        raise SystemExit(f"guestfs_hv: {nvdimm} has no fsdax info block")
    dataoff = pfn["dataoff"]
    drives = opt_index(argv, "-drive", lambda v: "id=appliance" in v.split(","))
    devices = opt_index(argv, "-device", lambda v: "drive=appliance" in v.split(","))
    appends = opt_index(argv, "-append")
    mems = opt_index(argv, "-m")
    if len(drives) != 1 or len(devices) != 1 or len(appends) != 1 or len(mems) != 1:
        raise SystemExit(f"guestfs_hv: not libguestfs's command line as known (appliance drive "
                         f"{len(drives)}, its device {len(devices)}, -append {len(appends)}, "
                         f"-m {len(mems)}): {argv}")
    append = argv[appends[0] + 1].split()
    roots = [w for w in append if w.startswith("root=")]
    want = ext2_uuid(nvdimm, dataoff)
    if len(roots) != 1 or roots[0] != f"root=UUID={want}":
        raise SystemExit(f"guestfs_hv: libguestfs boots {roots}, the NVDIMM holds "
                         f"root=UUID={want}: not this appliance's root")
    if dax:
        argv[appends[0] + 1] = " ".join("root=/dev/pmem0" if w == roots[0] else w
                                        for w in append)
    ram = argv[mems[0] + 1]
    ram_mib = int(ram[:-1]) if ram[-1:] in "Mm" else int(ram)
    size = os.path.getsize(nvdimm)
    argv[mems[0] + 1] = f"{ram_mib}M,slots=2,maxmem={ram_mib * MIB + size + 128 * MIB}"
    machines = opt_index(argv, "-machine")
    if machines:
        argv[machines[0] + 1] += ",nvdimm=on"
    else:
        argv += ["-machine", "nvdimm=on"]
    for i in sorted(drives + devices, reverse=True):
        del argv[i:i + 2]
    argv += ["-object", f"memory-backend-file,id=guestfs-root,share=off,mem-path={nvdimm},"
             f"size={size}",
             "-device", "nvdimm,id=nvdimm-root,memdev=guestfs-root"]
    return argv


def write_record(path, doc):
    if not path:
        return
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(path + ".tmp", path)


def main():
    argv = sys.argv[1:]
    qemu = os.environ.get("DAXPROBE_GUESTFS_QEMU", QEMU)
    if "-kernel" not in argv:
        os.execv(qemu, [qemu] + argv)  # a probe
    mode = os.environ.get("DAXPROBE_GUESTFS_MODE", "stock")
    if mode in ("dax", "nodax"):
        argv = move_root_to_nvdimm(argv, os.environ["DAXPROBE_GUESTFS_NVDIMM"], mode == "dax")
    elif mode != "stock":
        raise SystemExit(f"guestfs_hv: DAXPROBE_GUESTFS_MODE={mode!r}: stock, dax or nodax")
    extra = os.environ.get("DAXPROBE_GUESTFS_APPEND", "").split()
    if extra:  # more kernel command line (swiotlb=noforce, rootflags=dax, ...)
        i = argv.index("-append") + 1
        argv[i] = f"{argv[i]} {' '.join(extra)}"
    record = os.environ.get("DAXPROBE_GUESTFS_RECORD")
    t0 = time.monotonic()
    proc = subprocess.Popen([qemu] + argv)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: proc.send_signal(s))
    doc = {"mode": mode, "pid": proc.pid, "argv": [qemu] + argv}
    write_record(record, doc)
    while True:
        try:
            _, status, ru = os.wait4(proc.pid, 0)
            break
        except InterruptedError:
            continue
    proc.returncode = os.waitstatus_to_exitcode(status)
    doc.update(rc=proc.returncode, ru_maxrss_kb=ru.ru_maxrss, wall_s=round(time.monotonic() - t0, 3))
    write_record(record, doc)
    return proc.returncode if proc.returncode >= 0 else 128 - proc.returncode


if __name__ == "__main__":
    sys.exit(main())
