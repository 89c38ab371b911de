"""Build the guest initramfs (an uncompressed newc cpio) for the VM test bed.

Contents: busybox-static and its applet links, the kernel modules daxprobe's
scenarios need (with everything modules.dep says they need), ndctl, cxl, daxctl,
mkfs.ext4, mkfs.xfs, each dynamic binary with every library ldd lists and the
loader, plus tests/vm/guest/ (the /init script and the scenario snippets).

daxprobe itself comes from the guest package (daxprobe_*.deb, built by the
meson target `debs`), unpacked with `dpkg-deb -x`: the program (its libraries
as ldd lists them for that very file, each one it links directly checked
to come from a package its Depends names), the boot check script and the
initramfs-tools local-bottom script, installed where initramfs-tools puts it
(/scripts/local-bottom/, with the ORDER file its mkinitramfs writes). So every
scenario runs what the package ships, never a loose build-tree binary.

The archive is left uncompressed on purpose: under TCG the kernel's gunzip of
~8 MB costs more than QEMU copying ~30 MB into guest RAM.

Writes a Makefile-style depfile listing every host file copied, so Meson/ninja
rebuild the image when ndctl, a library or busybox is upgraded.
"""

import argparse
import json
import os
import re
import shutil
import stat
import subprocess
import sys

# Modules the scenarios load; their dependencies come from modules.dep.
# busybox modprobe ignores softdeps, so /init loads crc32c before ext4 itself.
MODULES = [
    "virtio", "virtio_ring", "virtio_pci", "virtio_console", "virtio_blk",
    "nfit", "libnvdimm", "nd_pmem", "nd_btt", "dax_pmem", "device_dax", "virtio_pmem",
    "crc32c_generic", "crc32c-intel", "ext4", "xfs", "kmem", "virtiofs", "erofs",
    # CXL type-3 pmem (loaded by the CXL scenarios only): cxl_core and
    # cxl_port are built into Debian's 6.1, 6.12 and 7.2 kernels.
    "cxl_acpi", "cxl_pci", "cxl_mem", "cxl_port", "cxl_pmem",
    # a software machine check at an NVDIMM address: the nfit driver's MCE
    # decoder puts it on the region's bad-block list (devdax, issue 35)
    "mce-inject",
]
# Gone from newer kernels (7.x: crc32c is a library ext4 and xfs link
# directly): shipped where they exist.
OPTIONAL_MODULES = {"crc32c_generic", "crc32c_intel"}

BINARIES = {
    # destination in the guest: host path
    "/usr/bin/ndctl": "/usr/bin/ndctl",
    "/usr/bin/cxl": "/usr/bin/cxl",  # ndctl's package: CXL regions, `cxl list`
    "/usr/bin/daxctl": "/usr/bin/daxctl",
    "/usr/sbin/mkfs.ext4": "/usr/sbin/mkfs.ext4",
    "/usr/sbin/mkfs.xfs": "/usr/sbin/mkfs.xfs",
    # erofs-utils: an EROFS image made in the guest (issue 34)
    "/usr/bin/mkfs.erofs": "/usr/bin/mkfs.erofs",
    # the kernel's own answer beside daxprobe's: statx -r, mmap -S (MAP_SYNC),
    # chattr +x / lsattr (FS_XFLAG_DAX)
    "/usr/sbin/xfs_io": "/usr/sbin/xfs_io",
    # ext4's owners on disk (icheck, testb) beside GETFSMAP (issue 35)
    "/usr/sbin/debugfs": "/usr/sbin/debugfs",
    # util-linux's: runs a check as an unprivileged user (busybox's cannot
    # change the uid)
    "/usr/bin/setpriv": "/usr/bin/setpriv",
}

CONFIG_FILES = ["/etc/mke2fs.conf"]

# Libraries daxprobe dlopen()s rather than links (ldd cannot see them):
# libpmem only for the MAP_SYNC check on a DAX mount (the package
# recommends it).
DLOPENED = ["libpmem.so.1"]

# What the guest takes from the guest package: path in the package -> path in
# the guest. The local-bottom script goes where initramfs-tools copies it.
PACKAGE_FILES = {
    "usr/bin/daxprobe": "/usr/bin/daxprobe",
    "usr/libexec/daxprobe/daxprobe-init-hook.sh": "/usr/libexec/daxprobe/daxprobe-init-hook.sh",
    "usr/share/initramfs-tools/scripts/local-bottom/daxprobe": "/scripts/local-bottom/daxprobe",
}
GUEST_PACKAGE = "daxprobe_*.deb"


def find_guest_deb(deb_dir):
    """The one guest package in deb_dir, or a RuntimeError saying how to build it."""
    import glob
    found = sorted(glob.glob(os.path.join(deb_dir, GUEST_PACKAGE)))
    if len(found) != 1:
        what = "no" if not found else f"{len(found)} ({', '.join(map(os.path.basename, found))})"
        raise RuntimeError(f"{what} guest package {GUEST_PACKAGE} in {deb_dir}: the VM guests are "
                           f"built from it; build it with `meson compile -C BUILDDIR debs` "
                           f"(packaging/build-debs.sh)")
    return found[0]


def unpack_deb(deb, dest):
    """`dpkg-deb -x` into a fresh dest; returns dest."""
    if not os.path.isfile(deb):
        raise RuntimeError(f"guest package {deb} does not exist: build it with "
                           f"`meson compile -C BUILDDIR debs` (packaging/build-debs.sh)")
    shutil.rmtree(dest, ignore_errors=True)
    p = subprocess.run(["dpkg-deb", "-x", deb, dest], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"dpkg-deb -x {deb} failed: {p.stderr.strip()}")
    return dest


def _owners(paths):
    """{path: the Debian package owning it} for library paths, in one dpkg
    query (usrmerge: a file may be listed under /lib or /usr/lib); and
    {package: the names it provides} for those packages."""
    alts = {}
    for p in paths:
        for a in (p, p[4:] if p.startswith("/usr/") else "/usr" + p, os.path.realpath(p)):
            alts.setdefault(a, p)
    r = subprocess.run(["dpkg-query", "-S"] + list(alts), capture_output=True, text=True)
    owners = {}
    for line in r.stdout.splitlines():
        pkgs, _, path = line.partition(": ")
        if path in alts:
            owners.setdefault(alts[path], pkgs.split(",")[0].split(":")[0].strip())
    provides = {}
    if owners:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Provides}\n"]
                           + sorted(set(owners.values())), capture_output=True, text=True)
        for line in r.stdout.splitlines():
            name, _, prov = line.partition(" ")
            provides[name] = {re.split(r"[\s(]", x.strip(), 1)[0] for x in prov.split(",") if x.strip()}
    return owners, provides


def check_depends(deb, binary):
    """Each library the packaged program links directly (ELF NEEDED) must come
    from a package the .deb's Depends names (or one it provides): the guest
    then holds what an install of the package brings, and a missing Depends
    fails here."""
    fields = subprocess.run(["dpkg-deb", "-f", deb, "Depends"], capture_output=True,
                            text=True, check=True).stdout
    depends = {re.split(r"[\s(:]", alt.strip(), 1)[0]
               for dep in fields.split(",") for alt in dep.split("|") if alt.strip()}
    dyn = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True,
                         check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    paths = {}
    for line in subprocess.run(["ldd", binary], capture_output=True, text=True).stdout.splitlines():
        m = re.match(r"^\s*(\S+) => (/\S+) \(0x", line)
        if m:
            paths[m.group(1)] = m.group(2)
        # The loader has no "=>": a NEEDED entry once libstdc++ is linked in.
        m = re.match(r"^\s*(/\S+) \(0x", line)
        if m:
            paths[os.path.basename(m.group(1))] = m.group(1)
    owners, provides = _owners([paths[n] for n in needed if n in paths])
    for soname in needed:
        owner = owners.get(paths.get(soname))
        if owner is None or not ({owner} | provides.get(owner, set())) & depends:
            raise RuntimeError(f"{os.path.basename(deb)}: /usr/bin/daxprobe needs {soname} "
                               f"({paths.get(soname, 'not found')}, package {owner}), "
                               f"which its Depends ({', '.join(sorted(depends))}) does not name")


# The demo's image (README line 1) takes the same files from the build and
# source trees instead, so the first command never waits for the package
# build's second compile. Every test takes them from the package.
BUILD_TREE_FILES = {
    "usr/libexec/daxprobe/daxprobe-init-hook.sh": "packaging/daxprobe-init-hook.sh",
    "usr/share/initramfs-tools/scripts/local-bottom/daxprobe":
        "packaging/initramfs-tools/scripts/local-bottom/daxprobe",
}


def stage_build_tree(program, source_root, dest):
    """PACKAGE_FILES laid out under dest as the package has them, from the
    build tree's `program` and the source tree's scripts; returns dest."""
    shutil.rmtree(dest, ignore_errors=True)
    sources = {"usr/bin/daxprobe": program}
    sources.update({rel: os.path.join(source_root, src) for rel, src in BUILD_TREE_FILES.items()})
    for rel, src in sources.items():
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, rel))
    return dest


def add_package(img, deb, root):
    """The guest package's files (PACKAGE_FILES) from its unpacked tree `root`;
    the image depends on the .deb, not on the unpacked copies. deb None: root
    is a stage_build_tree() copy (the demo) and no Depends are checked."""
    for rel, dest in PACKAGE_FILES.items():
        src = os.path.join(root, rel)
        if not os.path.isfile(src):
            raise RuntimeError(f"the guest package {os.path.basename(deb or root)} lacks /{rel}")
        if rel == "usr/bin/daxprobe":
            if deb:
                check_depends(deb, src)
            add_dynamic(img, dest, src)
        else:
            img.add_file(dest, src, 0o755)
    # initramfs-tools' mkinitramfs runs the scripts of a phase in the order its
    # ORDER file lists (cache_run_scripts), each re-reading /conf/param.conf.
    img.add_data("/scripts/local-bottom/ORDER",
                 b'/scripts/local-bottom/daxprobe "$@"\n'
                 b"[ -e /conf/param.conf ] && . /conf/param.conf\n")
    if deb:
        real_root = os.path.realpath(root)
        img.deps = {d for d in img.deps if not d.startswith(real_root + os.sep)}
        img.deps.add(os.path.realpath(deb))


class Image:
    """Collects entries (path -> (kind, data/target, mode)) and writes newc."""

    def __init__(self):
        self.entries = {}
        self.deps = set()

    def add_dir(self, path, mode=0o755):
        path = path.strip("/")
        parts = path.split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i])
            if p and p not in self.entries:
                self.entries[p] = ("dir", None, mode)

    def add_file(self, dest, src, mode=None):
        dest = dest.strip("/")
        self.add_dir(os.path.dirname(dest))
        real = os.path.realpath(src)
        self.deps.add(real)
        if mode is None:
            mode = stat.S_IMODE(os.stat(real).st_mode)
        self.entries[dest] = ("file", real, mode)

    def add_data(self, dest, data, mode=0o644):
        dest = dest.strip("/")
        self.add_dir(os.path.dirname(dest))
        self.entries[dest] = ("data", data, mode)

    def add_symlink(self, dest, target):
        dest = dest.strip("/")
        self.add_dir(os.path.dirname(dest))
        self.entries[dest] = ("symlink", target, 0o777)

    def write_tree(self, root):
        """The entries as files under `root` (a root filesystem for mkfs -d)."""
        for name in sorted(self.entries):
            kind, val, mode = self.entries[name]
            path = os.path.join(root, name)
            if kind == "dir":
                os.makedirs(path, exist_ok=True)
                os.chmod(path, mode)
            elif kind == "symlink":
                os.symlink(val, path)
            else:
                with open(path, "wb") as f:
                    if kind == "file":
                        with open(val, "rb") as src:
                            shutil.copyfileobj(src, f)
                    else:
                        f.write(val)
                os.chmod(path, mode)

    def write(self, out):
        ino = 1
        with open(out + ".tmp", "wb") as f:
            def header(name, mode, size, nlink=1):
                nonlocal ino
                name_b = name.encode() + b"\0"
                fields = [ino, mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, len(name_b), 0]
                ino += 1
                h = b"070701" + b"".join(b"%08X" % v for v in fields)
                f.write(h + name_b)
                f.write(b"\0" * ((4 - (len(h) + len(name_b)) % 4) % 4))

            def body(data):
                f.write(data)
                f.write(b"\0" * ((4 - len(data) % 4) % 4))

            for name in sorted(self.entries):
                kind, val, mode = self.entries[name]
                if kind == "dir":
                    header(name, stat.S_IFDIR | mode, 0, 2)
                elif kind == "symlink":
                    data = val.encode()
                    header(name, stat.S_IFLNK | 0o777, len(data))
                    body(data)
                else:
                    data = open(val, "rb").read() if kind == "file" else val
                    header(name, stat.S_IFREG | mode, len(data))
                    body(data)
            header("TRAILER!!!", 0, 0)
            # Pad to 512 like cpio(1); the kernel does not care, but tools do.
            pos = f.tell()
            f.write(b"\0" * ((512 - pos % 512) % 512))
        os.replace(out + ".tmp", out)


LDD_LINE = re.compile(r"^[ \t]*(?:\S+ => )?(/\S+) \(0x")


def add_dynamic(img, dest, src):
    img.add_file(dest, src)
    p = subprocess.run(["ldd", src], capture_output=True, text=True)
    if p.returncode != 0:
        if "not a dynamic executable" in (p.stdout + p.stderr):
            return
        raise RuntimeError(f"ldd {src} failed: {p.stderr.strip()}")
    for line in p.stdout.splitlines():
        if "=> not found" in line:
            raise RuntimeError(f"ldd {src}: {line.strip()}")
        m = LDD_LINE.match(line)
        if m:
            lib = m.group(1)
            img.add_file(lib, lib)


def find_library(soname):
    """The host path of `soname` as the loader would find it (ldconfig's cache)."""
    p = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=True)
    for line in p.stdout.splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.split(" ")[0] == soname and "x86-64" in name:
            return path
    raise RuntimeError(f"{soname} not found by ldconfig -p (daxprobe dlopen()s it)")


def parse_modules_dep(moddir):
    deps = {}
    paths = {}
    with open(os.path.join(moddir, "modules.dep")) as f:
        for line in f:
            if ":" not in line:
                continue
            mod, rest = line.split(":", 1)
            name = os.path.basename(mod).split(".ko")[0].replace("-", "_")
            paths[name] = mod
            deps[name] = rest.split()
    return deps, paths


XZ_SUFFIX = re.compile(r"\.ko\.xz\b")


def add_module_file(img, dest_dir, moddir, rel):
    """One module into the image. Debian 13's kernel ships .ko.xz, which busybox
    modprobe cannot load: those go in decompressed, as .ko (modules.dep is
    rewritten to match). Debian 12's plain .ko files are copied as they are."""
    src = os.path.join(moddir, rel)
    if rel.endswith(".ko.xz"):
        import lzma
        img.deps.add(os.path.realpath(src))
        img.add_data(f"{dest_dir}/{rel[:-3]}", lzma.decompress(open(src, "rb").read()))
        return
    if rel.endswith((".zst", ".gz")):
        raise RuntimeError(f"compressed module {rel}: busybox modprobe cannot load it")
    img.add_file(f"{dest_dir}/{rel}", src, 0o644)


def add_modules(img, info, modules=MODULES):
    moddir = info["modules_dir"]
    kver = info["version"]
    deps, paths = parse_modules_dep(moddir)
    builtin = set()
    bpath = os.path.join(moddir, "modules.builtin")
    if os.path.exists(bpath):
        for line in open(bpath):
            builtin.add(os.path.basename(line.strip()).split(".ko")[0].replace("-", "_"))
    wanted = set()
    for m in modules:
        name = m.replace("-", "_")
        if name in builtin:
            continue
        if name not in paths:
            if name in OPTIONAL_MODULES:
                continue
            raise RuntimeError(f"module {m} is neither in modules.dep nor built in ({kver})")
        wanted.add(paths[name])
        wanted.update(deps[name])
    for rel in sorted(wanted):
        add_module_file(img, f"/lib/modules/{kver}", moddir, rel)
    # Only the entries we ship, so busybox modprobe and libkmod agree.
    lines = []
    with open(os.path.join(moddir, "modules.dep")) as f:
        for line in f:
            if line.split(":", 1)[0] in wanted:
                lines.append(XZ_SUFFIX.sub(".ko", line))
    img.add_data(f"/lib/modules/{kver}/modules.dep", "".join(lines).encode())
    for extra in ("modules.builtin", "modules.order", "modules.builtin.modinfo"):
        p = os.path.join(moddir, extra)
        if os.path.exists(p):
            img.add_file(f"/lib/modules/{kver}/{extra}", p, 0o644)


def add_busybox(img):
    bb = shutil.which("busybox") or "/bin/busybox"
    img.add_file("/bin/busybox", bb, 0o755)
    out = subprocess.run([bb, "--list-full"], capture_output=True, text=True, check=True).stdout
    for applet in out.split():
        if applet == "bin/busybox":
            continue
        img.add_symlink(applet, "/bin/busybox")


def build(info, deb, guest_dir, out, *, modules=MODULES, tools=True, load=None, staged=None,
          kernel_answers=None):
    """Write the initramfs `out` with daxprobe from the guest package `deb`
    (or, deb None, from the stage_build_tree() folder `staged`); returns the
    Image (entries, host deps). modules: what to ship (plus modules.dep
    closure); tools: ndctl, daxctl, mkfs; load: the modules /init loads
    (default: its own list); kernel_answers: the static kernel_answers.cpp
    helper, when given."""
    img = Image()
    pkg_root = add_userland(img, deb, guest_dir, out + ".pkg", tools=tools, staged=staged,
                            kernel_answers=kernel_answers)
    add_modules(img, info, modules)
    if load is not None:
        img.add_data("/daxprobe-vm/modules.load", (" ".join(load) + "\n").encode())
    img.write(out)
    shutil.rmtree(pkg_root)  # only needed while writing
    return img


def add_userland(img, deb, guest_dir, pkg_dir, *, tools=True, staged=None, kernel_answers=None):
    """Everything but the kernel's modules: busybox, the tools, daxprobe from
    the guest package (unpacked into pkg_dir; deb None: the staged build-tree
    copy), the kernel-answers helper and tests/vm/guest/. Also the root
    filesystem of Kata's image (kata_image.py). Returns the unpacked package's
    folder, which the caller removes once the image is written."""
    for d in ("proc", "sys", "dev", "tmp", "run", "mnt", "results", "etc", "root"):
        img.add_dir(d)
    add_busybox(img)
    if tools:
        for dest, src in BINARIES.items():
            add_dynamic(img, dest, src)
    pkg_root = unpack_deb(deb, pkg_dir) if deb else staged
    add_package(img, deb, pkg_root)
    for soname in DLOPENED:
        lib = find_library(soname)
        add_dynamic(img, lib, lib)
    for c in CONFIG_FILES if tools else []:
        if os.path.exists(c):
            img.add_file(c, c, 0o644)
    # ndctl/daxctl/mkfs look these up; an empty mtab makes mkfs's check cheap.
    img.add_symlink("/etc/mtab", "/proc/self/mounts")
    img.add_data("/etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n")
    img.add_data("/etc/group", b"root:x:0:\n")
    if kernel_answers:
        img.add_file("/usr/bin/kernel-answers", kernel_answers, 0o755)

    guest = os.path.abspath(guest_dir)
    for dirpath, _, files in os.walk(guest):
        for fn in sorted(files):
            src = os.path.join(dirpath, fn)
            rel = os.path.relpath(src, guest)
            dest = "/init" if rel == "init" else f"/daxprobe-vm/{rel}"
            img.add_file(dest, src, 0o755 if rel == "init" else 0o644)
    # The few initramfs-tools functions the packaged local-bottom script uses
    # (it sources /scripts/functions): the test bed's stand-in, see the file.
    img.add_file("/scripts/functions", os.path.join(guest, "initramfs-tools-functions.sh"), 0o644)
    return pkg_root


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel-info", required=True)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--deb-dir",
                     help="where the meson target `debs` put the guest package daxprobe_*.deb")
    src.add_argument("--program",
                     help="the build tree's daxprobe (the demo); scripts from --source-root")
    ap.add_argument("--source-root", help="with --program: the source tree")
    ap.add_argument("--guest-dir", required=True, help="tests/vm/guest: init + scenarios")
    ap.add_argument("--out", required=True)
    ap.add_argument("--depfile")
    ap.add_argument("--kernel-answers", help="the static kernel_answers.cpp helper")
    args = ap.parse_args()

    info = json.load(open(args.kernel_info))
    if not info.get("available"):
        # Keep the build going; run_scenario.py reports the reason and exits 77.
        open(args.out, "wb").close()
        if args.depfile:
            open(args.depfile, "w").write(f"{args.out}:\n")
        print(info.get("reason", "guest kernel unavailable"), file=sys.stderr)
        return 0

    if args.program:
        staged = stage_build_tree(args.program, args.source_root, args.out + ".pkg")
        img = build(info, None, args.guest_dir, args.out, staged=staged,
                    kernel_answers=args.kernel_answers)
    else:
        # A kernel info may name its own modules and load order (the nfit_test
        # guest's: nfit_test_build.py).
        img = build(info, find_guest_deb(args.deb_dir), args.guest_dir, args.out,
                    modules=info.get("initramfs_modules", MODULES),
                    load=info.get("modules_load"), kernel_answers=args.kernel_answers)
    if args.depfile:
        with open(args.depfile, "w") as f:
            deps = sorted(img.deps)
            f.write(f"{args.out}: " + " ".join(d.replace(" ", "\\ ") for d in deps) + "\n")
    size = os.path.getsize(args.out)
    print(f"initramfs {args.out}: {len(img.entries)} entries, {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print(f"mkinitramfs: {e}", file=sys.stderr)
        sys.exit(1)
