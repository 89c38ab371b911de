"""The appliance's images, built on the host without root mounts.

- The root filesystem: busybox plus real dynamically linked Debian programs
  with every library ldd lists (like the libguestfs appliance; the payload is
  whatever of PROGRAMS this host has, tens of MB), the fixed workload
  (appliance_workload.sh), an ld.so.cache; `mkfs.ext4 -d` turns the folder
  into an ext4 image with 4 KiB blocks (DAX needs block size = page size).
- One initramfs per root device, built with mkinitramfs.build: busybox,
  daxprobe from the guest package, guest/ (init + snippets) and only the modules that device needs,
  so the difference in size is what the nvdimm modules cost.
"""

import gzip
import hashlib
import json
import os
import shutil
import subprocess

from harness import images, mkinitramfs

HERE = os.path.dirname(os.path.abspath(__file__))

# Real programs, like an appliance's tools (each with its libraries).
PROGRAMS = [
    "/usr/bin/bash", "/usr/bin/perl", "/usr/bin/python3.11", "/usr/bin/gpg", "/usr/bin/ssh",
    "/usr/bin/curl", "/usr/bin/git", "/usr/bin/tar", "/usr/bin/xz", "/usr/bin/zstd",
    "/usr/bin/gzip", "/usr/bin/sqlite3", "/usr/bin/openssl", "/usr/sbin/xfs_repair",
    "/usr/sbin/e2fsck", "/usr/sbin/mkfs.ext4", "/usr/sbin/mkfs.xfs", "/usr/bin/ndctl",
    "/usr/bin/find", "/usr/bin/grep", "/usr/bin/sed", "/usr/bin/sort", "/usr/bin/diff",
    "/usr/bin/socat", "/usr/bin/strace", "/usr/bin/file", "/usr/bin/less", "/usr/bin/vim.basic",
]

# Modules every appliance initramfs loads in /init (serial ports, ext4); the
# root device's own modules are loaded by guest/scenarios/appliance.sh, timed.
BASE_MODULES = ["virtio", "virtio_ring", "virtio_pci", "virtio_console",
                "crc32c_generic", "crc32c-intel", "ext4"]
BASE_LOAD = ["virtio_pci", "virtio_console", "crc32c_generic", "crc32c_intel", "ext4"]
DEVICE_MODULES = {
    "blk": ["virtio_blk"],
    "nvdimm": ["nfit", "nd_pmem"],
    "virtio-pmem": ["virtio_pmem", "nd_pmem"],
    # bench/sharing.py only: EROFS on a read-only NVDIMM, a virtio-fs root
    "nvdimm-erofs": ["nfit", "nd_pmem", "erofs"],
    "virtiofs": ["virtiofs"],
}


def _usr(path):
    """Debian 12 is usrmerged: /lib, /lib64, /bin, /sbin live under /usr."""
    for top in ("/lib/", "/lib64/", "/bin/", "/sbin/"):
        if path.startswith(top):
            return "/usr" + path
    return path


def _copy(root, dest, src, manifest):
    dest = _usr(dest)
    target = os.path.join(root, dest.lstrip("/"))
    if os.path.exists(target):
        return
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copy2(os.path.realpath(src), target)
    manifest.append((dest, os.path.getsize(target)))


def build_root(root, workload=os.path.join(HERE, "appliance_workload.sh")):
    """Fill the folder `root`; returns {programs, files, bytes, missing}."""
    if os.path.exists(root):
        shutil.rmtree(root)
    for d in ("usr/bin", "usr/sbin", "usr/lib", "usr/lib64", "etc", "dev", "proc", "sys",
              "tmp", "root", "appliance"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for top in ("bin", "sbin", "lib", "lib64"):
        os.symlink(f"usr/{top}", os.path.join(root, top))
    manifest, programs, missing = [], [], []
    for prog in PROGRAMS:
        if not os.path.exists(prog):
            missing.append(prog)
            continue
        _copy(root, prog, prog, manifest)
        programs.append(_usr(prog))
        p = subprocess.run(["ldd", prog], capture_output=True, text=True)
        for line in p.stdout.splitlines():
            if "=> not found" in line:
                raise RuntimeError(f"ldd {prog}: {line.strip()}")
            m = mkinitramfs.LDD_LINE.match(line)
            if m:
                _copy(root, m.group(1), m.group(1), manifest)
    bb = shutil.which("busybox") or "/bin/busybox"
    _copy(root, "/usr/bin/busybox", bb, manifest)
    applets = subprocess.run([bb, "--list-full"], capture_output=True, text=True,
                             check=True).stdout.split()
    for applet in applets:
        link = os.path.join(root, _usr("/" + applet).lstrip("/"))
        if not os.path.lexists(link):  # a real payload program wins over busybox
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink("/usr/bin/busybox", link)
    shutil.copy(workload, os.path.join(root, "appliance", "workload.sh"))
    with open(os.path.join(root, "appliance", "programs.list"), "w") as f:
        f.write("".join(p + "\n" for p in programs))
    with open(os.path.join(root, "etc", "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\n")
    with open(os.path.join(root, "etc", "ld.so.conf"), "w") as f:
        f.write("/usr/lib/x86_64-linux-gnu\n")
    if shutil.which("ldconfig"):
        subprocess.run(["ldconfig", "-r", root], check=True)
    return {"programs": programs, "missing": missing, "files": len(manifest),
            "bytes": sum(s for _, s in manifest)}


def make_ext4(root, image, payload_bytes):
    """`mkfs.ext4 -d`: no mount needed. Room for the payload plus a margin."""
    size_mb = ((payload_bytes * 5 // 4) >> 20) + 48
    size_mb += (-size_mb) % 4
    if os.path.exists(image):
        os.unlink(image)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-b", "4096", "-L", "appliance", "-d", root,
                    image, f"{size_mb}M"], check=True)
    return size_mb << 20


def make_erofs(root, image):
    """`mkfs.erofs -E noinline_data`: no file keeps its tail inline in the
    metadata, so every file can be DAX (with the defaults, inlined tails are
    not: /work/shared/cxl-testbed.md); uncompressed, for the same reason."""
    if os.path.exists(image):
        os.unlink(image)
    subprocess.run(["mkfs.erofs", "-E", "noinline_data", image, root], check=True,
                   capture_output=True)
    return os.path.getsize(image)


def gzip_size(path):
    """What the image would be gzipped (-6): the usual initramfs compression."""
    with open(path, "rb") as f:
        return len(gzip.compress(f.read(), compresslevel=6, mtime=0))


def build_initramfs(info, deb, out_dir, devices=("blk", "nvdimm", "virtio-pmem")):
    """One initramfs per root device; returns {device: {path, bytes, gzip_bytes,
    modules, module_bytes}}."""
    result = {}
    for dev in devices:
        mods = DEVICE_MODULES[dev]
        out = os.path.join(out_dir, f"initramfs-{dev}.cpio")
        img = mkinitramfs.build(info, deb, images.GUEST_DIR, out,
                                modules=BASE_MODULES + mods, tools=False, load=BASE_LOAD)
        kos = {name: os.path.getsize(src) for name, (kind, src, _) in img.entries.items()
               if kind == "file" and name.endswith(".ko")}
        result[dev] = {"path": out, "bytes": os.path.getsize(out), "gzip_bytes": gzip_size(out),
                       "modules": sorted(os.path.basename(k)[:-3].replace("-", "_") for k in kos),
                       "module_bytes": sum(kos.values())}
    # What each root device adds to what every appliance has (dependencies included).
    common = set.intersection(*(set(r["modules"]) for r in result.values()))
    for r in result.values():
        r["device_modules"] = sorted(set(r["modules"]) - common)
    return result


def input_key(info, deb):
    """Identifies the inputs of the root image and the prepared pmem files, so
    a later run reuses them (and redoes them when anything changed)."""
    h = hashlib.sha256()
    for p in sorted(PROGRAMS) + [os.path.join(HERE, "appliance_workload.sh"),
                                 os.path.join(HERE, "appliance_image.py"),
                                 os.path.join(images.GUEST_DIR, "scenarios", "appliance-setup.sh")]:
        if os.path.exists(p):
            st = os.stat(p)
            h.update(f"{p} {st.st_size} {st.st_mtime_ns}\n".encode())
    h.update(info["version"].encode())
    return h.hexdigest()[:16]


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

