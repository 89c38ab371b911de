#!/usr/bin/env python3
"""Build a real Debian guest (systemd as PID 1, udev, the guest's own kernel)
with the project's packages installed by apt: the `debian12-image` and
`debian13-image` targets of the VM suite.

Layers, because the first ones take minutes and change rarely:

  base  mmdebstrap of SUITE from the host's own Debian archive URI: systemd-sysv,
        udev, the kernel (linux-image-amd64), ndctl, mkfs tools and
        initramfs-tools, set up before the kernel's install makes the
        initramfs (--modules: Debian's MODULES=most, or an appliance's list),
        and without the kernel's UNUSED_MODULE_TREES (dpkg's path-exclude).
        Kept as a tarball in the machine's cache (DAXPROBE_VM_CACHE), keyed
        on the suite, the package list, the candidate versions of those
        packages in the suite's lists and that setup (mmdebstrap's
        essential hook). Each later layer ends as mmdebstrap's cleanup does
        (Chroot.apt_cleanup: no package lists, no downloaded packages).
  dracut (--initramfs dracut only) the base with Debian's dracut package in
        place of initramfs-tools (apt, from the suite's archive; never on the
        host, where it conflicts with initramfs-tools), DRACUT_CONF, and its
        initramfs made once without daxprobe; cached beside the base, keyed
        on the base and dracut's candidate version.
  image in OUT (the build folder), redone when the packages change: the
        layer unpacked; the initramfs without daxprobe (OUT/initrd-nohook.img,
        the boot-cost benchmark's reference; initramfs-tools' is the one the
        kernel's install made in the base), then
        `apt-get install ./daxprobe_*.deb` in the chroot, whose trigger
        remakes it with the hook (OUT/initrd.img). All of it runs on the host in the image's chroot, never
        in a TCG guest (~20 min there). Then: OUT/vmlinux (the ELF inside the
        image's own vmlinuz, booted through PVH), OUT/disk.img (ext4 root for
        virtio-blk; not in a dracut image, whose initramfs has no driver for
        it), OUT/pmem-root.img (the same root as XFS, for a root on an
        NVDIMM: a raw namespace starts at byte 0 of the backing file),
        OUT/pmem-fsdax-root.img (--fsdax-root: that XFS at the data offset of
        an fsdax namespace, whose info block the image's own kernel wrote in
        one boot, cached as a template), OUT/lsinitramfs.txt (lsinitramfs or
        lsinitrd), OUT/image.json. The collector's libraries are installed
        too, so that its .deb installs offline in the running guest.

The image carries one thing that is the test bed's, not Debian's:
daxprobe-testbed.service, a shell on the virtio-serial port
org.daxprobe.testbed.0 through which the host asks systemd, journalctl and
the kernel what happened (systemd_guest.py).

  debian_image.py --suite bookworm [--initramfs dracut] --deb-dir BUILD/deb --out DIR
                  [--pmem-root [--fsdax-root]] --stamp S
  debian_image.py --suite bookworm [--initramfs dracut] --layers-only --stamp S

--layers-only makes the cached layers and nothing else (no packages needed):
the suite's `-layers` targets, which ninja runs while the packages compile.
The image step finds them in the cache (or makes them itself when missing).
"""

import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

from harness import verified_cache
from harness.pmem_file import pfn_info
from harness.guest_kernel import (UNUSED_MODULE_TREES, default_cache, extract_vmlinux,
                                  host_archive_uri, private_apt)
from harness.verified_cache import Invalid

BASE_FORMAT = 1  # bump when the base's recipe changes in a way the key cannot see
DRACUT_FORMAT = 3  # the same for the dracut layer
PACKAGES = ["systemd-sysv", "udev", "kmod", "linux-image-amd64", "ndctl", "daxctl",
            "xfsprogs", "e2fsprogs", "libpmem1", "zstd", "procps"]
INITRAMFS_TOOLS = ["initramfs-tools", "dracut"]
TESTBED_PORT = "org.daxprobe.testbed.0"

MASKED_UNITS = ["e2scrub_reap.service", "e2scrub_all.timer", "getty-static.service"]

TESTBED_DEVICE = "dev-virtio\\x2dports-" + TESTBED_PORT.replace("-", "\\x2d") + ".device"
TESTBED_UNIT = f"""[Unit]
Description=daxprobe test bed: the host's shell on {TESTBED_PORT} (not part of daxprobe)
BindsTo={TESTBED_DEVICE}
After={TESTBED_DEVICE}
DefaultDependencies=no

[Service]
ExecStart=/usr/local/sbin/daxprobe-testbed /dev/virtio-ports/{TESTBED_PORT}
"""

TESTBED_RULE = f"""SUBSYSTEM=="virtio-ports", ATTR{{name}}=="{TESTBED_PORT}", \\
  TAG+="systemd", ENV{{SYSTEMD_WANTS}}+="daxprobe-testbed.service"
"""

# One command per line from the host; its output, then "@@RC <token> <status>".
# The port stays open for the shell's life: data arriving while a guest has
# it open but unread is lost when it closes.
TESTBED_SHELL = """#!/bin/sh
exec 3<>"$1"
while IFS= read -r line <&3; do
    token=${line%% *}
    /bin/sh -c "${line#* }" >&3 2>&1 </dev/null
    echo "@@RC $token $?" >&3
done
"""


# PID 1 (init=) of the one boot that turns a blank, label-less NVDIMM into an
# fsdax namespace: the kernel writes the namespace's info block; the host then
# puts the root filesystem at the data offset this prints (fsdax_template()).
FSDAX_SETUP = """#!/bin/sh
ndctl create-namespace -f -e namespace0.0 -m fsdax >/dev/console 2>&1
for d in /sys/bus/nd/devices/pfn*; do
    [ -n "$(cat "$d/namespace" 2>/dev/null)" ] || continue
    echo "@@FSDAX region=$(cat /sys/bus/nd/devices/region0/resource)" \\
        "data=$(cat "$d/resource") size=$(cat "$d/size")" >/dev/console
done
sync
echo o >/proc/sysrq-trigger
"""
FSDAX_FORMAT = 1  # bump when the template's recipe changes


def log(msg):
    print(f"debian_image: {msg}", flush=True)


# The build step under way: a failure names it (image.json "step"), and the
# tests fail with it (systemd_guest.image_inputs: a test bed failure).
STEP = ["start"]


def step(name):
    STEP[0] = name


class MachineFault(RuntimeError):
    """Not the test bed's failure but this machine's (e.g. not root): the
    tests skip with "machine fault: ..." (.ci/run accepts only those)."""


def run(cmd, **kw):
    p = subprocess.run(cmd, text=True, capture_output=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-3000:]}"
                           f"{p.stderr[-3000:]}")
    return p.stdout


def candidate_versions(cache, suite, packages):
    """{package: candidate version} from the suite's lists (a private apt
    configuration under the cache, updated once)."""
    opts = private_apt(cache, suite)
    out = run(["apt-cache"] + opts + ["policy"] + packages)
    versions, name = {}, None
    for line in out.splitlines():
        if line and not line.startswith(" "):
            name = line.rstrip(":")
        elif line.strip().startswith("Candidate:") and name:
            versions[name] = line.split(":", 1)[1].strip()
    kernel = run(["apt-cache"] + opts + ["depends", "linux-image-amd64"])
    versions["kernel"] = next((w for w in kernel.split() if w.startswith("linux-image-6")
                               or w.startswith("linux-image-7")), "?")
    return versions


def build_base(cache, suite, modules):
    initramfs = "initramfs-tools"
    packages = PACKAGES + [initramfs]
    versions = candidate_versions(cache, suite, packages)
    mirror = host_archive_uri()
    hook = " && ".join([initramfs_setup(modules), module_excludes()])
    key = hashlib.sha256(json.dumps([BASE_FORMAT, suite, mirror, packages, versions, modules, hook],
                                    sort_keys=True).encode()).hexdigest()[:16]
    tar = os.path.join(cache, f"debian-{suite}-{initramfs}-{modules}-{key}.tar")
    with verified_cache.locked(tar):
        if verified_cache.load(tar, check_base, f"{suite} base"):
            return tar, versions
        if not shutil.which("mmdebstrap"):
            raise RuntimeError("mmdebstrap not found (packaging/install-deps.sh)")
        log(f"building base {os.path.basename(tar)} with mmdebstrap (minutes)")
        t0 = time.monotonic()
        # force-confold: keep the essential hook's pre-seeded conffiles without
        # asking. The output's name ends in .tar: mmdebstrap picks the format by it.
        # Named per process: two build trees on one machine share the cache.
        tmp = tar[:-len(".tar")] + f".partial-{os.getpid()}.tar"
        try:
            run(["mmdebstrap", "--variant=minbase", "--include=" + ",".join(packages),
                 "--dpkgopt=force-confold", "--dpkgopt=force-confdef",
                 "--essential-hook=" + hook, suite, tmp, mirror])
            verified_cache.publish(tmp, tar, check_base, f"{suite} base", {"versions": versions})
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        log(f"base built in {time.monotonic() - t0:.0f} s")
        drop_older(cache, f"debian-{suite}-{initramfs}-*.tar", tar)  # one base per suite
        return tar, versions


def drop_older(cache, pattern, keep):
    """The cache keeps one tarball per layer: the one just made (another
    process's partial one is its own)."""
    for old in glob.glob(os.path.join(cache, pattern)):
        if old != keep and ".partial" not in old:
            verified_cache.evict(old, "replaced by " + os.path.basename(keep))


def check_tarball(path, required):
    """A layer's tarball is read to its end by tar and holds one kernel, its
    initramfs and `required` (what the image steps use)."""
    p = subprocess.run(["tar", "-tf", path], capture_output=True, text=True)
    if p.returncode != 0:
        raise Invalid(f"tar -tf failed ({p.returncode}): {p.stderr.strip()[:300]}")
    names = set(n.rstrip("/") for n in p.stdout.splitlines())
    kernels = [n for n in names if n.startswith("./boot/vmlinuz-")]
    initrds = [n for n in names if n.startswith("./boot/initrd.img-")]
    if len(kernels) != 1 or len(initrds) != 1:
        raise Invalid(f"want one kernel and one initramfs in boot/, found {kernels} {initrds}")
    for alternatives in required:
        if not any(n in names for n in alternatives):
            raise Invalid(f"{alternatives[0]} missing")
    return (f"tar read to the end: {len(names)} entries, {kernels[0][2:]}, "
            f"{initrds[0][2:]}, " + ", ".join(a[0][2:] for a in required))


BASE_REQUIRED = [("./usr/lib/systemd/systemd", "./lib/systemd/systemd"),
                 ("./usr/bin/ndctl",), ("./usr/sbin/mkfs.xfs", "./sbin/mkfs.xfs"),
                 ("./usr/sbin/update-initramfs", "./sbin/update-initramfs")]


def check_base(path, meta):
    return check_tarball(path, BASE_REQUIRED)


def check_dracut_layer(path, meta):
    return check_tarball(path, BASE_REQUIRED[:3] + [("./usr/bin/dracut",)])


def build_dracut_layer(cache, suite, base, versions):
    """The base with dracut instead of initramfs-tools and dracut's initramfs
    made once without daxprobe, cached: apt and that dracut run took 2-6
    minutes of every dracut image build, and change only with the base or
    dracut."""
    versions = dict(versions, **candidate_versions(cache, suite, ["dracut"]))
    key = hashlib.sha256(json.dumps([DRACUT_FORMAT, os.path.basename(base), versions["dracut"]],
                                    sort_keys=True).encode()).hexdigest()[:16]
    tar = os.path.join(cache, f"debian-{suite}-dracut-{key}.tar")
    with verified_cache.locked(tar):
        if verified_cache.load(tar, check_dracut_layer, f"{suite} dracut layer"):
            return tar, versions
        t0 = time.monotonic()
        root = tar[:-len(".tar")] + f".partial-{os.getpid()}"
        tmp = root + ".tar"
        remove_root(root)
        os.makedirs(root)
        try:
            run(["tar", "-xf", base, "-C", root, "--numeric-owner", "--xattrs"])
            configure(root)  # as the image's: the same inputs for the initramfs
            dracut_config(root)
            initrd = os.path.join(root, f"boot/initrd.img-{kernel_version(root)}")
            before = mtime(initrd)
            with Chroot(root) as ch:
                ch("apt-get", "update", "-q")
                # Its postinst's trigger makes the initramfs (with DRACUT_CONF).
                ch("apt-get", "install", "-y", "-q", "--no-install-recommends", "dracut")
                ch.apt_cleanup()
            expect_remade(initrd, before, "apt-get install dracut")
            run(["tar", "-cf", tmp, "-C", root, "--numeric-owner", "--xattrs", "."])
            verified_cache.publish(tmp, tar, check_dracut_layer, f"{suite} dracut layer",
                                   {"versions": versions})
        finally:
            remove_root(root)
            if os.path.exists(tmp):
                os.unlink(tmp)
        log(f"dracut layer {os.path.basename(tar)} built in {time.monotonic() - t0:.0f} s")
        drop_older(cache, f"debian-{suite}-dracut-*.tar", tar)
        return tar, versions


def remove_root(root):
    """Deletes a chroot tree if there is one; what a killed build left
    mounted in it is unmounted first, so nothing is deleted through /dev."""
    if not os.path.exists(root):
        return
    subprocess.run(["umount", "-R", "-l", *(os.path.join(root, d) for d in ("proc", "sys", "dev"))],
                   capture_output=True)
    shutil.rmtree(root)


def kernel_version(root):
    kvers = sorted(os.listdir(os.path.join(root, "lib/modules")))
    if len(kvers) != 1:
        raise RuntimeError(f"want one kernel in the image, found {kvers}")
    return kvers[0]


class Chroot:
    """/proc, /sys and /dev of the host inside the image while packages are
    installed (as mmdebstrap does), always unmounted."""

    def __init__(self, root):
        self.root = root
        self.mounted = []

    def __enter__(self):
        for fs, args in (("proc", ["-t", "proc", "proc"]), ("sys", ["-t", "sysfs", "sys"]),
                         ("dev", ["--rbind", "/dev"])):
            target = os.path.join(self.root, fs)
            run(["mount"] + args + [target])
            self.mounted.append(target)
        return self

    def __call__(self, *cmd):
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive",
               "LC_ALL": "C.UTF-8", "HOME": "/root"}
        return run(["chroot", self.root] + list(cmd), env=env)

    def apt_cleanup(self):
        """What mmdebstrap's own cleanup leaves of apt after the base: no
        package lists, no downloaded packages, no binary caches (155 MB of
        each copy of the root; the guests install local .debs offline)."""
        self("apt-get", "clean")
        lists = os.path.join(self.root, "var/lib/apt/lists")
        for name in os.listdir(lists):
            path = os.path.join(lists, name)
            if name in ("lock", "partial"):
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)  # auxfiles
            else:
                os.unlink(path)

    def __exit__(self, *exc):
        for target in reversed(self.mounted):
            subprocess.run(["umount", "-R", "-l", target], capture_output=True)
        return False


def configure(root):
    """What a user would set up after debootstrap: an identity, a console
    login, no first-boot questions; plus the test bed's shell."""
    with open(os.path.join(root, "etc/hostname"), "w") as f:
        f.write("daxprobe-guest\n")
    # A fixed machine-id: no systemd-firstboot prompt on the console.
    with open(os.path.join(root, "etc/machine-id"), "w") as f:
        f.write(hashlib.md5(root.encode()).hexdigest() + "\n")
    with open(os.path.join(root, "etc/fstab"), "w") as f:
        f.write("# the root is mounted by the initramfs (root= on the kernel command line)\n")
    for path, text, mode in (
            ("usr/local/sbin/daxprobe-testbed", TESTBED_SHELL, 0o755),
            ("usr/local/sbin/daxprobe-testbed-fsdax", FSDAX_SETUP, 0o755),
            ("etc/systemd/system/daxprobe-testbed.service", TESTBED_UNIT, 0o644),
            ("etc/udev/rules.d/90-daxprobe-testbed.rules", TESTBED_RULE, 0o644)):
        p = os.path.join(root, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, mode)
    # Masked as an appliance would: units with nothing to do in these guests
    # that cost the most guest CPU of a TCG boot (systemd-analyze blame in the
    # Debian 12 guest, 2026-12-05, at load 8: e2scrub_reap 36 s, an lvs scan
    # for e2scrub's leftover snapshots, with multi-user.target waiting on it;
    # getty-static 15 s, gettys on tty2-6 of a guest with a serial console).
    for unit in MASKED_UNITS:
        link = os.path.join(root, "etc/systemd/system", unit)
        if not os.path.lexists(link):
            os.symlink("/dev/null", link)


# The guest's dracut configuration: not host-only (the chroot's host is not
# the guest's), but only the drivers a pmem root needs, as host-only would
# pick on the guest. Debian's default, a generic image with every driver,
# took 66 s to make here, this 25 s. In dracut.conf.d rather than on dracut's
# command line: apt's trigger (daxprobe ships an initramfs hook) runs dracut
# too, and makes the initramfs the guest boots.
DRACUT_CONF = """hostonly="no"
drivers="xfs nfit nd_pmem"
"""


def mtime(path):
    return os.stat(path).st_mtime_ns if os.path.exists(path) else None


def expect_remade(initrd, before, what):
    """The generator's trigger ran: the initramfs is newer than `before`."""
    if mtime(initrd) in (None, before):
        raise RuntimeError(f"{what} did not make the initramfs {initrd}")


# MODULES=list: an appliance's initramfs-tools, with only the modules its
# roots need (the test bed boots XFS on pmem, and ext4 on virtio-blk); the
# NVDIMM's modules are then in the initramfs only if daxprobe's hook puts
# them there. Debian's default, MODULES=most, copies most of the kernel's
# drivers: 68 s for each initramfs on this project's machine, 4 s with list.
APPLIANCE_MODULES = ["virtio_pci", "virtio_blk", "ext4", "xfs"]


def initramfs_setup(modules):
    """mmdebstrap's essential hook ($1: the root, before the packages are
    installed): initramfs-tools set up before the kernel's install makes the
    initramfs, so that it is made once and as the image's guest wants it.
    update_initramfs=no: the other packages' triggers do not remake it while
    the base is made (the image step turns it back on: a user's apt runs
    them). MODULES=list in conf.d (read after initramfs.conf) and the list in
    /etc/initramfs-tools/modules (made by initramfs-tools' postinst only when
    missing)."""
    conf = '"$1/etc/initramfs-tools'
    cmds = [f'mkdir -p {conf}/conf.d"', f'echo update_initramfs=no > {conf}/update-initramfs.conf"']
    if modules == "list":
        cmds += [f'echo MODULES=list > {conf}/conf.d/daxprobe-testbed-modules"',
                 f'printf "%s\\n" {" ".join(APPLIANCE_MODULES)} > {conf}/modules"']
    return " && ".join(cmds)


def module_excludes():
    """mmdebstrap's essential hook, too: dpkg's path-exclude (as Debian's
    minimal images use it for documentation) keeps the kernel package's
    UNUSED_MODULE_TREES out of the root. The package is still installed by
    dpkg and its postinst's depmod sees what is there. Debian 12 ships its
    modules under /lib, Debian 13 under /usr/lib: dpkg's patterns' * matches
    a slash."""
    lines = [f"'path-exclude=*/modules/*/kernel/{t}/*'" for t in UNUSED_MODULE_TREES]
    return f'printf "%s\\n" {" ".join(lines)} > "$1/etc/dpkg/dpkg.cfg.d/daxprobe-testbed-modules"'


def lsinitramfs(ch, initramfs, kver, path):
    with open(path, "w") as f:
        f.write(ch("lsinitrd" if initramfs == "dracut" else "lsinitramfs",
                   f"/boot/initrd.img-{kver}"))


def dracut_config(root):
    os.makedirs(os.path.join(root, "etc/dracut.conf.d"), exist_ok=True)
    with open(os.path.join(root, "etc/dracut.conf.d/90-daxprobe-testbed.conf"), "w") as f:
        f.write(DRACUT_CONF)


def tree_size(root):
    return int(run(["du", "-sxb", root]).split()[0])


def make_xfs(root, image, size):
    """An XFS filesystem holding `root`, made without mounting it: mkfs.xfs's
    protofile (regular files, directories, symlinks, device nodes)."""
    lines = ["/dev/null", "0 0", "d--755 0 0"]

    def walk(d, depth):
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            st = os.lstat(p)
            perm = f"{st.st_mode & 0o777:03o}"
            suid = "u" if st.st_mode & 0o4000 else "-"
            sgid = "g" if st.st_mode & 0o2000 else "-"
            own = f"{st.st_uid} {st.st_gid}"
            if " " in name or not name.isprintable():
                continue
            if os.path.islink(p):
                lines.append(f"{name} l{suid}{sgid}{perm} {own} {os.readlink(p)}")
            elif os.path.isdir(p):
                lines.append(f"{name} d{suid}{sgid}{perm} {own}")
                walk(p, depth + 1)
                lines.append("$")
            elif os.path.isfile(p):
                lines.append(f"{name} -{suid}{sgid}{perm} {own} {p}")
            elif stat_is(st, "chr") or stat_is(st, "blk"):
                kind = "c" if stat_is(st, "chr") else "b"
                lines.append(f"{name} {kind}{suid}{sgid}{perm} {own} "
                             f"{os.major(st.st_rdev)} {os.minor(st.st_rdev)}")
            elif stat_is(st, "fifo"):
                lines.append(f"{name} p{suid}{sgid}{perm} {own}")
    walk(root, 0)
    lines.append("$")
    proto = image + ".proto"
    with open(proto, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(image, "wb") as f:
        f.truncate(size)
    run(["mkfs.xfs", "-q", "-f", "-m", "reflink=0", "-d", "su=2m,sw=1,agcount=2", "-p", proto,
         image])
    os.unlink(proto)


def copy_extents(src, dst, offset):
    """src's data into dst at `offset`, its holes left holes: mkfs.xfs writes
    only the blocks it uses, and a copy in bigger blocks (dd bs=4M
    conv=sparse) allocated 210 MB of zeros in each fsdax root."""
    with open(src, "rb") as s, open(dst, "r+b") as d:
        pos, end = 0, os.fstat(s.fileno()).st_size
        while pos < end:
            try:
                data = os.lseek(s.fileno(), pos, os.SEEK_DATA)
            except OSError:  # ENXIO: only a hole is left
                break
            pos = os.lseek(s.fileno(), data, os.SEEK_HOLE)
            while data < pos:
                data += os.copy_file_range(s.fileno(), d.fileno(), pos - data, data, offset + data)


def make_upgrade(deb, outdir):
    """The same package with a higher version (VERSION+upgrade1), for the
    upgrade in a running guest: what changes between versions is the
    maintainer scripts' path, not the payload."""
    import tempfile
    os.makedirs(outdir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dxdeb-") as tmp:
        tree = os.path.join(tmp, "tree")
        run(["dpkg-deb", "-R", deb, tree])
        control = os.path.join(tree, "DEBIAN", "control")
        text = open(control).read()
        fields = dict(l.split(":", 1) for l in text.splitlines() if l and l[0] != " ")
        package, version = fields["Package"].strip(), fields["Version"].strip()
        with open(control, "w") as f:
            f.write(text.replace(f"Version: {version}\n", f"Version: {version}+upgrade1\n"))
        run(["dpkg-deb", "-Zxz", "-b", tree,
             os.path.join(outdir, f"{package}_{version}+upgrade1_amd64.deb")])


def collector_dependencies(ch, deb):
    """Install, then purge, the collector in the chroot so that its libraries
    are in the image: the running guest has no network, and the lifecycle test
    installs the .deb there with apt. The .deb is built for the host's
    release: another release may lack its libraries (the reason, or None)."""
    try:
        ch("apt-get", "update", "-q")
        ch("apt-get", "install", "-y", "-q", "--no-install-recommends", deb)
        ch("dpkg", "--purge", "daxprobe-collector")
    except RuntimeError as e:
        return next((l for l in str(e).splitlines() if l.startswith("E:")), str(e))[:300]
    return None


# mkfs.xfs refuses a data section under 300 MB.
XFS_MIN_BYTES = 300 * 1000 * 1000


def check_fsdax_template(path, meta):
    """The template against its NVDIMM: the file ends at the data offset,
    holds the namespace's info block, which puts the data at that offset,
    and the data size is what an fsdax namespace of that NVDIMM leaves
    (all but the offset and at most 64 MiB of alignment), enough for XFS."""
    backing, offset, size = (meta.get(k) for k in ("backing", "offset", "size"))
    if not all(isinstance(v, int) for v in (backing, offset, size)):
        raise Invalid(f"no backing/offset/size in {meta}")
    if not 0 < offset < backing or os.path.getsize(path) != offset:
        raise Invalid(f"{os.path.getsize(path)} B long, data offset {offset} B, NVDIMM {backing} B")
    if not backing - offset - (64 << 20) <= size <= backing - offset or size < XFS_MIN_BYTES:
        raise Invalid(f"data size {size} B does not fit a {backing} B NVDIMM with its data at "
                      f"{offset} B (want {backing - offset - (64 << 20)}..{backing - offset} B, "
                      f"XFS needs {XFS_MIN_BYTES})")
    info = pfn_info(path)
    if info is None:
        raise Invalid("no fsdax info block (NVDIMM_PFN_INFO) 4 KiB in")
    if info["dataoff"] != offset:
        raise Invalid(f"its info block puts the data at {info['dataoff']} B, not {offset} B")
    return (f"info block with data offset {offset} B; data {size} B of a {backing} B NVDIMM "
            f"(>= {XFS_MIN_BYTES} B for XFS)")


def fsdax_template(cache, out, kver, backing):
    """A blank NVDIMM backing file of `backing` bytes made into an fsdax
    namespace by the image's own kernel and ndctl (one boot of the image with
    FSDAX_SETUP as init), cut at the namespace's data offset: (path, data
    offset, data size). Cached per machine, keyed on the kernel and size,
    checked against the NVDIMM when written and when read."""
    from harness.systemd_guest import SystemdGuest
    key = f"fsdax-{FSDAX_FORMAT}-{kver}-{backing >> 20}M"
    tmpl = os.path.join(cache, key + ".img")
    with verified_cache.locked(tmpl):
        # A template an older tree cached kept its facts in KEY.json (left
        # for such trees; once adopted, the manifest's are used).
        legacy = os.path.join(cache, key + ".json")
        legacy_meta = None
        if os.path.exists(legacy) and not os.path.exists(verified_cache.manifest_path(tmpl)):
            try:
                legacy_meta = json.load(open(legacy))
            except ValueError:
                pass  # not adopted: checked against no facts, evicted
        doc = verified_cache.load(tmpl, check_fsdax_template, "fsdax template", legacy_meta)
        if doc:
            return tmpl, doc["meta"]["offset"], doc["meta"]["size"]
        t0 = time.monotonic()
        blank = tmpl + f".partial-{os.getpid()}"
        try:
            with open(blank, "wb") as f:
                f.truncate(backing)
            guest = SystemdGuest(out, "fsdax-setup",
                                 cmdline="init=/usr/local/sbin/daxprobe-testbed-fsdax daxprobe.mode=off",
                                 agent_port=False, nvdimm_file=blank)
            with guest as g:
                m = g.wait_console(rb"@@FSDAX region=(0x[0-9a-f]+) data=(0x[0-9a-f]+) size=(\d+)$",
                                   600)
                g.wait_exit(120)
            offset, size = int(m.group(2), 16) - int(m.group(1), 16), int(m.group(3))
            if 0 < offset < backing:
                with open(blank, "r+b") as f:
                    f.truncate(offset)
            verified_cache.publish(blank, tmpl, check_fsdax_template, "fsdax template",
                                   {"kernel": kver, "backing": backing, "offset": offset,
                                    "size": size})
        finally:
            if os.path.exists(blank):
                os.unlink(blank)
        log(f"fsdax namespace template {key}: data at {offset} B, {size} B "
            f"({time.monotonic() - t0:.0f} s)")
        return tmpl, offset, size


def stat_is(st, kind):
    import stat
    return {"chr": stat.S_ISCHR, "blk": stat.S_ISBLK, "fifo": stat.S_ISFIFO}[kind](st.st_mode)


def build_layers(args):
    """The cached layers the image starts from: (tarball, package versions)."""
    if os.geteuid() != 0:
        raise MachineFault("building a Debian image needs root (chroot, device nodes)")
    step(f"the {args.suite} base (mmdebstrap)")
    base, versions = build_base(args.cache, args.suite, args.modules)
    if args.initramfs == "dracut":
        step(f"the {args.suite} dracut layer")
        base, versions = build_dracut_layer(args.cache, args.suite, base, versions)
    return base, versions


def build_image(args):
    t0 = time.monotonic()
    base, versions = build_layers(args)
    out = os.path.abspath(args.out)
    root = os.path.join(out, "root")
    step("unpacking the layer")
    remove_root(root)
    os.makedirs(root)
    run(["tar", "-xf", base, "-C", root, "--numeric-owner", "--xattrs"])
    configure(root)
    kver = kernel_version(root)
    step("apt-get install daxprobe in the image")
    guest_deb = glob.glob(os.path.join(args.deb_dir, "daxprobe_*.deb"))
    if len(guest_deb) != 1:
        raise RuntimeError(f"want one daxprobe_*.deb in {args.deb_dir}, found {guest_deb}")
    debdir = os.path.join(root, "root/debs")
    os.makedirs(debdir)
    for d in glob.glob(os.path.join(args.deb_dir, "daxprobe*.deb")):
        if "dbgsym" not in d:
            shutil.copy(d, debdir)
            make_upgrade(d, os.path.join(debdir, "upgrade"))
    collector_deb = glob.glob(os.path.join(debdir, "daxprobe-collector_*.deb"))
    with Chroot(root) as ch:
        t = time.monotonic()
        # The kernel's own install (initramfs-tools, with the base's MODULES)
        # or the dracut layer made one without daxprobe: the reference.
        initrd = os.path.join(root, f"boot/initrd.img-{kver}")
        if not os.path.exists(initrd):
            raise RuntimeError(f"the layer {os.path.basename(base)} has no {initrd}")
        if args.initramfs == "initramfs-tools":
            # Off while the base was made; a user's apt runs it.
            with open(os.path.join(root, "etc/initramfs-tools/update-initramfs.conf"), "w") as f:
                f.write("update_initramfs=yes\n")
        shutil.copy(initrd, os.path.join(out, "initrd-nohook.img"))
        lsinitramfs(ch, args.initramfs, kver, os.path.join(out, "lsinitramfs-nohook.txt"))
        log(f"initramfs without daxprobe: {time.monotonic() - t:.0f} s")
        t = time.monotonic()
        before = mtime(initrd)
        # As a user would: apt installs the package; its initramfs hook
        # triggers the initramfs generator (update-initramfs; dracut takes
        # that trigger too), which remakes the initramfs with daxprobe.
        ch("apt-get", "install", "-y", "-q", "--no-install-recommends",
           "/root/debs/" + os.path.basename(guest_deb[0]))
        expect_remade(initrd, before, "apt-get install daxprobe")
        log(f"apt-get install daxprobe + initramfs: {time.monotonic() - t:.0f} s")
        t = time.monotonic()
        step("the collector's libraries in the image")
        collector = "no daxprobe-collector .deb"
        if collector_deb:
            collector = collector_dependencies(ch, "/root/debs/" + os.path.basename(collector_deb[0]))
        log(f"daxprobe-collector's libraries: {collector or 'installed'} "
            f"({time.monotonic() - t:.0f} s)")
        lsinitramfs(ch, args.initramfs, kver, os.path.join(out, "lsinitramfs.txt"))
        installed = ch("dpkg-query", "-W", "-f", "${Package} ${Version}\n")
        ch.apt_cleanup()
    step("vmlinux and disk.img")
    shutil.copy(initrd, os.path.join(out, "initrd.img"))
    extract_vmlinux(os.path.join(root, f"boot/vmlinuz-{kver}"), os.path.join(out, "vmlinux"))
    size = tree_size(root)
    disk_size = (int(size * 1.3) + (256 << 20)) // (1 << 20) << 20
    disk = os.path.join(out, "disk.img")
    if os.path.exists(disk):
        os.unlink(disk)
    if args.initramfs != "dracut":  # its initramfs has no virtio_blk nor ext4
        run(["mkfs.ext4", "-q", "-F", "-b", "4096", "-L", "daxprobe-root", "-d", root, disk,
             f"{disk_size >> 20}M"])
    pmem, fsdax = os.path.join(out, "pmem-root.img"), os.path.join(out, "pmem-fsdax-root.img")
    step("the pmem roots")
    if args.pmem_root and not args.fsdax_root:
        # XFS needs 300 MB at least; 2 MiB multiples for the NVDIMM.
        make_xfs(root, pmem, max(disk_size + (256 << 20), 512 << 20) // (2 << 20) * (2 << 20))
    elif args.pmem_root:
        # The same XFS root twice: at byte 0 of a raw namespace's backing file
        # (pmem-root.img), and at the data offset of an fsdax namespace
        # (pmem-fsdax-root.img). XFS needs 300 MB at least. The fsdax backing
        # file leaves room for the namespace's page map (64 B per 4 KiB page)
        # and is rounded to 256 MiB so that the template's key rarely changes.
        want = max(disk_size + (256 << 20), 512 << 20)
        backing = (want + want // 32 + (64 << 20) + (256 << 20) - 1) // (256 << 20) * (256 << 20)
        step("the fsdax template (the setup boot)")
        tmpl, offset, pmem_size = fsdax_template(args.cache, out, kver, backing)
        step("the pmem roots")
        make_xfs(root, pmem, pmem_size)
        run(["cp", "--sparse=always", tmpl, fsdax])
        copy_extents(pmem, fsdax, offset)
        with open(fsdax, "r+b") as f:
            f.truncate(backing)
    info = {"suite": args.suite, "initramfs": args.initramfs, "kernel": kver,
            "modules": args.modules if args.initramfs == "initramfs-tools" else None,
            "base": os.path.basename(base), "candidates": versions,
            "packages": dict(line.split(" ", 1) for line in installed.splitlines() if line),
            "root_bytes": size, "disk_bytes": disk_size,
            "pmem_root": os.path.basename(pmem) if args.pmem_root else None,
            "pmem_root_bytes": os.path.getsize(pmem) if args.pmem_root else 0,
            "pmem_fsdax_root": os.path.basename(fsdax) if args.fsdax_root else None,
            "collector_unavailable": collector,
            "build_seconds": round(time.monotonic() - t0, 1)}
    with open(os.path.join(out, "image.json"), "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")
    shutil.rmtree(root)
    log(f"{args.suite} image ready in {out} ({info['build_seconds']} s, kernel {kver})")
    return info


def layers_only(args):
    """A head start, never the verdict: a failure here is printed and the
    image step meets it again and records it for the tests to say."""
    try:
        tar, _ = build_layers(args)
        note = os.path.basename(tar) + "\n"
    except (RuntimeError, OSError) as e:
        print(f"debian_image: {e}", file=sys.stderr)
        note = f"error: {e}\n"
    if args.stamp:
        with open(args.stamp, "w") as f:
            f.write(note)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", required=True, help="bookworm, trixie")
    ap.add_argument("--initramfs", default="initramfs-tools", choices=INITRAMFS_TOOLS)
    ap.add_argument("--modules", default="most", choices=["most", "list"],
                    help="initramfs-tools' MODULES in the base: Debian's default (most), "
                         "or an appliance's list (APPLIANCE_MODULES); a dracut layer "
                         "starts from that base")
    ap.add_argument("--deb-dir")
    ap.add_argument("--out")
    ap.add_argument("--layers-only", action="store_true",
                    help="only the cached layers (no --deb-dir, no --out)")
    ap.add_argument("--cache", default=default_cache())
    ap.add_argument("--pmem-root", action="store_true", help="also make pmem-root.img (XFS)")
    ap.add_argument("--fsdax-root", action="store_true",
                    help="with --pmem-root: also pmem-fsdax-root.img (one boot of the image "
                         "makes the namespace; cached)")
    ap.add_argument("--stamp", help="written last (the meson target's output)")
    args = ap.parse_args()
    if not args.layers_only and not (args.deb_dir and args.out):
        ap.error("--deb-dir and --out are required (or --layers-only)")
    os.makedirs(args.cache, exist_ok=True)
    if args.layers_only:
        return layers_only(args)
    os.makedirs(args.out, exist_ok=True)
    try:
        build_image(args)
    except (RuntimeError, OSError) as e:
        # The tests read the step and the reason and fail with them (or skip
        # on a fault of the machine); the build goes on.
        print(f"debian_image: {STEP[0]} failed: {e}", file=sys.stderr)
        with open(os.path.join(args.out, "image.json"), "w") as f:
            json.dump({"suite": args.suite, "error": str(e), "step": STEP[0],
                       "machine_fault": isinstance(e, MachineFault)}, f, indent=2)
        if args.stamp:
            open(args.stamp, "w").close()
            os.utime(args.stamp, (0, 0))
        return 0
    if args.stamp:
        with open(args.stamp, "w") as f:
            f.write(open(os.path.join(args.out, "image.json")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
