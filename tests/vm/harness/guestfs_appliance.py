"""Build libguestfs's real appliance with daxprobe in it (issue 44, item 7).

Debian 12's libguestfs (1.48) and supermin (5.2) build their appliance from
the `supermin.d` folder the package ships; anything more goes in as another
tarball beside Debian's. This step does what libguestfs does on its first
launch (lib/appliance.c: `supermin --build --copy-kernel -f ext2 --host-cpu
x86_64 SUPERMIN_D -o APPLIANCE_D`), with two inputs of the test bed:

- the kernel: the suite's Debian 12 guest kernel (guest_kernel.py, never
  installed on the host) through SUPERMIN_KERNEL and SUPERMIN_MODULES;
- daxprobe: `usr/bin/daxprobe` out of the guest package (BUILD/deb), as
  `daxprobe.tar.gz` in a copy of Debian's supermin.d (symlinks to its files);
  with it the test bed's static `kernel-answers` (KERNEL_ANSWERS: statx's
  DAX attribute as the kernel gives it, for the test's expected values; the
  appliance has no tool that shows it).

The result is a libguestfs "fixed appliance" (kernel, initrd, root,
README.fixed: guestfs-internals(1)) in OUT/appliance: LIBGUESTFS_PATH=that
folder boots it as libguestfs boots its cached one, without running supermin
on every launch. Beside it OUT/nvdimm.img, the same root for an fsdax NVDIMM:
`ndctl write-infoblock -m fsdax -M dev -a 2M` gives the file an info block
(since Linux 4.15 fs-dax needs struct pages; the raw root as an NVDIMM
panics at boot: "DAX unsupported by block device") and the root image goes at
its data offset. tests/vm/guestfs_hv.py moves the root there at boot.

Everything is built in the build folder (no cache): supermin takes about a
minute here, and its output is checked before it is published (README.fixed
last, so a folder without it is never an appliance).

Writes OUT/guestfs.json (always): {available, reason, step, ...facts}, read
by the test and the bench (a failed step is a test bed failure, never a
skip: tests/vm/README.md).
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

from .pmem_file import ext2_uuid, pfn_info

DEBIAN_SUPERMIN_D = "/usr/lib/x86_64-linux-gnu/guestfs/supermin.d"
MIB = 1 << 20
KERNEL_ANSWERS = "/usr/lib/daxprobe-test/kernel-answers"


class StepFailed(Exception):
    def __init__(self, step, reason):
        super().__init__(reason)
        self.step = step


def run(cmd, step, **kw):
    p = subprocess.run(cmd, text=True, capture_output=True, **kw)
    if p.returncode != 0:
        raise StepFailed(step, f"{' '.join(cmd)} exited {p.returncode}: "
                         f"{(p.stderr or p.stdout).strip()[-1500:]}")
    return p


def daxprobe_tarball(deb_dir, kernel_answers, dest):
    """supermin.d's tarball of daxprobe: usr/bin/daxprobe from the guest
    package. Its libraries are the appliance's own: every one ldd names on
    the host must come from a package the appliance holds (checked after
    the build: daxprobe --version runs in the root)."""
    debs = sorted(glob.glob(os.path.join(deb_dir, "daxprobe_*.deb")))
    if len(debs) != 1:
        raise StepFailed("daxprobe.tar.gz", f"want one daxprobe_*.deb in {deb_dir}, found {debs} "
                         "(meson compile -C BUILDDIR debs)")
    with tempfile.TemporaryDirectory() as tmp:
        run(["dpkg-deb", "-x", debs[0], tmp], "daxprobe.tar.gz")
        prog = os.path.join(tmp, "usr", "bin", "daxprobe")
        if not os.path.isfile(prog):
            raise StepFailed("daxprobe.tar.gz", f"{debs[0]} has no usr/bin/daxprobe")
        with tarfile.open(dest, "w:gz") as tar:
            tar.add(prog, arcname="usr/bin/daxprobe")
            tar.add(kernel_answers, arcname=KERNEL_ANSWERS.lstrip("/"))
        return debs[0]


def supermin_d(out, tarball):
    """Debian's supermin.d, one symlink per file, and daxprobe.tar.gz."""
    d = os.path.join(out, "supermin.d")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    names = sorted(os.listdir(DEBIAN_SUPERMIN_D))
    for name in names:
        os.symlink(os.path.join(DEBIAN_SUPERMIN_D, name), os.path.join(d, name))
    shutil.copy(tarball, os.path.join(d, "daxprobe.tar.gz"))
    return d, names


def build_appliance(out, sd, kernel):
    """supermin --build as libguestfs runs it, into OUT/appliance."""
    final = os.path.join(out, "appliance")
    tmp = final + ".tmp"
    for d in (final, tmp):
        shutil.rmtree(d, ignore_errors=True)
    env = dict(os.environ, SUPERMIN_KERNEL=kernel["bzimage"],
               SUPERMIN_MODULES=kernel["modules_dir"], SUPERMIN_KERNEL_VERSION=kernel["version"])
    t0 = time.monotonic()
    run(["supermin", "--build", "--copy-kernel", "-f", "ext2", "--host-cpu", "x86_64",
         sd, "-o", tmp], "supermin --build", env=env)
    secs = time.monotonic() - t0
    for f in ("kernel", "initrd", "root"):
        if not os.path.isfile(os.path.join(tmp, f)) or os.path.getsize(os.path.join(tmp, f)) == 0:
            raise StepFailed("supermin --build", f"no {f} in {tmp}")
    return tmp, final, secs


def root_facts(root):
    """The ext2 root's UUID and what debugfs sees of daxprobe in it."""
    p = run(["dumpe2fs", "-h", root], "the appliance root")
    facts = {}
    for line in p.stdout.splitlines():
        k, _, v = line.partition(":")
        if k in ("Filesystem UUID", "Block count", "Free blocks", "Block size"):
            facts[k] = v.strip()
    st = run(["debugfs", "-R", "stat /usr/bin/daxprobe", root], "the appliance root")
    if "Type: regular" not in st.stdout:
        raise StepFailed("the appliance root", "no /usr/bin/daxprobe in it (supermin.d tarball)")
    bs = int(facts["Block size"])
    return {"uuid": facts["Filesystem UUID"],
            "size": os.path.getsize(root),
            "used": (int(facts["Block count"]) - int(facts["Free blocks"])) * bs,
            "allocated": os.stat(root).st_blocks * 512}


def infoblock_dataoff(size):
    """The data offset `ndctl write-infoblock -m fsdax -M dev -a 2M` puts in
    a namespace of `size` bytes (read back with read-infoblock)."""
    w = subprocess.run(["ndctl", "write-infoblock", "-c", "-s", str(size), "-m", "fsdax",
                        "-M", "dev", "-a", "2M"], capture_output=True)
    if w.returncode != 0:
        raise StepFailed("ndctl write-infoblock", w.stderr.decode(errors="replace").strip())
    r = subprocess.run(["ndctl", "read-infoblock", "-j"], input=w.stdout, capture_output=True)
    if r.returncode != 0:
        raise StepFailed("ndctl read-infoblock", r.stderr.decode(errors="replace").strip())
    return json.loads(r.stdout)[0]["dataoff"]


def copy_sparse(src, dst, offset):
    """`src` into `dst` at `offset`, its holes left holes (SEEK_DATA)."""
    with open(src, "rb") as s, open(dst, "r+b") as d:
        end = os.fstat(s.fileno()).st_size
        pos = 0
        while pos < end:
            try:
                pos = os.lseek(s.fileno(), pos, os.SEEK_DATA)
            except OSError:
                break  # only holes left
            hole = os.lseek(s.fileno(), pos, os.SEEK_HOLE)
            s.seek(pos)
            while pos < hole:
                buf = s.read(min(hole - pos, 8 * MIB))
                d.seek(offset + pos)
                d.write(buf)
                pos += len(buf)


def build_nvdimm(out, root, uuid):
    """OUT/nvdimm.img: an fsdax info block (map=dev, align 2M) and the root
    at its data offset; the NVDIMM sized so that the data area holds it."""
    rsize = os.path.getsize(root)
    size = rsize
    while True:
        size = -(-size // (2 * MIB)) * 2 * MIB
        off = infoblock_dataoff(size)
        if size - off >= rsize:
            break
        size = rsize + off
    dest = os.path.join(out, "nvdimm.img")
    tmp = dest + ".tmp"
    if os.path.exists(tmp):
        os.unlink(tmp)
    with open(tmp, "wb") as f:
        f.truncate(size)
    run(["ndctl", "write-infoblock", "-o", tmp, "-m", "fsdax", "-M", "dev", "-a", "2M"],
        "ndctl write-infoblock")
    info = pfn_info(tmp)
    if not info or info["map"] != "dev" or info["dataoff"] != off:
        raise StepFailed("ndctl write-infoblock", f"{tmp}: info block {info}, want map dev, "
                         f"data at {off}")
    copy_sparse(root, tmp, off)
    got = ext2_uuid(tmp, off)
    if got != uuid:
        raise StepFailed("nvdimm.img", f"ext2 UUID at {off} is {got}, the root's is {uuid}")
    os.replace(tmp, dest)
    return {"path": os.path.abspath(dest), "size": size, "dataoff": off, "map": "dev",
            "align": 2 * MIB, "npfns": info["npfns"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel-info", required=True, help="the guest kernel's kernel.json")
    ap.add_argument("--deb-dir", required=True)
    ap.add_argument("--kernel-answers", required=True, help="the static kernel-answers program")
    ap.add_argument("--out", required=True, help="the folder: appliance/, nvdimm.img")
    ap.add_argument("--info", required=True, help="guestfs.json, written always")
    ap.add_argument("--depfile", help="what the appliance is made of, for ninja")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    info = {"available": False, "reason": "", "step": ""}
    try:
        kernel = json.load(open(args.kernel_info))
        if not kernel.get("available"):
            raise StepFailed("guest-kernel (guest_kernel.py)", kernel.get("reason") or "?")
        for tool in ("supermin", "guestfish", "ndctl", "dumpe2fs", "debugfs"):
            if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}") \
                    and not os.path.exists(f"/sbin/{tool}"):
                raise StepFailed("host tools", f"{tool} not found (packaging/install-deps.sh "
                                 "installs libguestfs-tools, supermin, ndctl, e2fsprogs)")
        if not os.path.isdir(DEBIAN_SUPERMIN_D):
            raise StepFailed("host tools", f"no {DEBIAN_SUPERMIN_D} (libguestfs0)")
        tarball = os.path.join(out, "daxprobe.tar.gz")
        deb = daxprobe_tarball(args.deb_dir, args.kernel_answers, tarball)
        sd, debian_files = supermin_d(out, tarball)
        tmp, final, secs = build_appliance(out, sd, kernel)
        root = root_facts(os.path.join(tmp, "root"))
        nvdimm = build_nvdimm(out, os.path.join(tmp, "root"), root["uuid"])
        with open(os.path.join(tmp, "README.fixed"), "w") as f:
            f.write("A libguestfs fixed appliance built by supermin --build from Debian's "
                    "supermin.d and daxprobe.tar.gz (tests/vm/harness/guestfs_appliance.py).\n")
        os.replace(tmp, final)
        info = {"available": True, "reason": "", "step": "",
                "appliance": final, "kernel": kernel["version"], "bzimage": kernel["bzimage"],
                "deb": os.path.abspath(deb), "supermin_d": sd,
                "supermin_d_files": debian_files + ["daxprobe.tar.gz"],
                "supermin_s": round(secs, 1), "root": root, "nvdimm": nvdimm,
                "libguestfs": subprocess.run(["dpkg-query", "-W", "-f", "${Version}",
                                              "libguestfs0"], capture_output=True,
                                             text=True).stdout,
                "supermin": subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "supermin"],
                                           capture_output=True, text=True).stdout}
        print(f"guestfs appliance: {final} (supermin {secs:.0f} s; root {root['used'] // MIB} "
              f"MiB used of {root['size'] // MIB}; NVDIMM {nvdimm['size'] // MIB} MiB, data at "
              f"{nvdimm['dataoff'] // MIB} MiB)")
    except (StepFailed, OSError, ValueError, KeyError) as e:
        info["step"] = getattr(e, "step", "guestfs-appliance")
        info["reason"] = str(e)
        print(f"guestfs appliance: {info['step']} failed: {e}", file=sys.stderr)
    if args.depfile:
        # Debian's supermin.d (an upgraded libguestfs), the host's packages
        # supermin copies the appliance from (dpkg's status: what libguestfs's
        # own `supermin --if-newer` looks at) and the package: rebuilt when they change.
        deps = [os.path.join(DEBIAN_SUPERMIN_D, n) for n in sorted(os.listdir(DEBIAN_SUPERMIN_D))] \
            if os.path.isdir(DEBIAN_SUPERMIN_D) else []
        deps += [p for p in ("/var/lib/dpkg/status",) if os.path.exists(p)]
        deps += sorted(glob.glob(os.path.join(args.deb_dir, "daxprobe_*.deb")))
        with open(args.depfile, "w") as f:
            f.write(args.info.replace(" ", "\\ ") + ": " +
                    " ".join(d.replace(" ", "\\ ") for d in deps) + "\n")
    with open(args.info + ".tmp", "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    os.replace(args.info + ".tmp", args.info)
    if not info["available"]:
        os.utime(args.info, (0, 0))  # older than its inputs: redone on the next build
    return 0


if __name__ == "__main__":
    sys.exit(main())
