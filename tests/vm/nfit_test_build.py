#!/usr/bin/env python3
"""The kernel's NVDIMM test bus (nfit_test, tools/testing/nvdimm) for a
guest kernel, built from Debian's own packages (issue 36).

For the kernel guest_kernel.py unpacked (its kernel.json): `apt-get download`
linux-source-X.Y, linux-headers-KVER and the -common and linux-kbuild
packages it depends on, all at the image's exact version, into a scratch
folder (never installed); unpack the headers, and only the four source
folders the test build compiles (streamed out of the source package's
tarball); apply nfit-test/*.patch; build with
`make -C HEADERS M=SOURCE/tools/testing/nvdimm` without debug info. Two fixes make Debian's
headers build out of /usr/src: their Makefile includes the -common one by
an absolute /usr/src path (rewritten to the scratch copy), and the test
Kbuild's `-I$(srctree)/drivers/...` points into the headers, which lack
those folders (KCFLAGS adds the source's).

The nine modules are a verified artefact in the machine's cache
(verified_cache.py): NAME = nfit-test-KVER-VERSION-PATCHES.tar, checked
when written and on every read (exactly the nine, each one's vermagic the
kernel's, the patches' digest the tree's). Then a module tree for the
guest: the kernel's own modules (symlinks) with the production copies of
the nine replaced by the test ones under extra/ (where ndctl's test suite
insists they live), depmod'ed; and kernel-nfit.json, the kernel info
mkinitramfs.py builds the nfit_test guest's initramfs from.

A build that fails writes the info with "available": false and the reason:
the nfit_test scenarios then FAIL as a test bed failure, never skip.
"""

import argparse
import contextlib
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from harness import guest_kernel, verified_cache
from harness.verified_cache import Invalid

HERE = os.path.dirname(os.path.abspath(__file__))
PATCH_DIR = os.path.join(HERE, "nfit-test")

# What tools/testing/nvdimm's Kbuild builds for Debian's config (DAX is
# built in, so no dax.ko): the production modules these replace, and the two
# test modules.
REPLACED = ["libnvdimm", "nfit", "nd_pmem", "nd_btt", "nd_e820", "dax_pmem", "device_dax"]
TEST_ONLY = ["nfit_test", "nfit_test_iomap"]
MODULES = REPLACED + TEST_ONLY
# The source folders the test build compiles (its Kbuild's ../../../drivers/...).
SOURCE_DIRS = ["tools/testing/nvdimm", "drivers/nvdimm", "drivers/acpi/nfit", "drivers/dax"]

# The guest loads these, in ndctl's test order (test/core.c nfit_test_init:
# the test bus, then the drivers udev would load for its devices).
LOAD = ["virtio_pci", "virtio_console", "crc32c_generic", "crc32c_intel", "ext4", "xfs",
        "nfit_test", "nd_pmem", "nd_btt", "dax_pmem", "device_dax"]


def log(msg):
    print(f"nfit_test_build: {msg}", flush=True)


@contextlib.contextmanager
def phase(name):
    """Logs the step's wall time and its children's CPU time: where a build
    on a loaded machine spends its minutes."""
    t0, c0 = time.monotonic(), os.times()
    yield
    c1 = os.times()
    cpu = c1.children_user + c1.children_system - c0.children_user - c0.children_system
    log(f"{name}: {time.monotonic() - t0:.1f} s wall, {cpu:.1f} s CPU")


def patches():
    return sorted(glob.glob(os.path.join(PATCH_DIR, "*.patch")))


def patches_digest():
    h = hashlib.sha256()
    for p in patches():
        h.update(os.path.basename(p).encode() + b"\0" + open(p, "rb").read())
    return h.hexdigest()


def run(cmd, **kw):
    p = subprocess.run(cmd, text=True, capture_output=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])}... failed ({p.returncode}): "
                           f"{(p.stderr or p.stdout).strip()[-1500:]}")
    return p.stdout


def vermagic_of(path):
    return run(["/usr/sbin/modinfo", "-F", "vermagic", path]).strip().split()[0]


def check_modules(path, meta):
    """The artefact holds exactly MODULES, each built for meta's kernel,
    with the patches this tree has."""
    try:
        return _check_modules(path, meta)
    except RuntimeError as e:  # tar or modinfo could not read it
        raise Invalid(str(e)) from None


def _check_modules(path, meta):
    if meta.get("patches") != patches_digest():
        raise Invalid(f"built with patches {str(meta.get('patches'))[:12]}..., the tree has "
                      f"{patches_digest()[:12]}...")
    names = run(["tar", "-tf", path]).split()
    want = sorted(f"{m}.ko" for m in MODULES)
    if sorted(names) != want:
        raise Invalid(f"holds {sorted(names)}, want {want}")
    with tempfile.TemporaryDirectory() as tmp:
        run(["tar", "-xf", path, "-C", tmp])
        for n in names:
            vm = vermagic_of(os.path.join(tmp, n))
            if vm != meta.get("kernel"):
                raise Invalid(f"{n}: vermagic {vm}, want {meta.get('kernel')}")
    return f"tar lists the {len(MODULES)} modules, vermagic {meta['kernel']}, patches as the tree's"


def source_package(version):
    """linux-source-X.Y for the kernel package version X.Y.Z-N."""
    return "linux-source-" + ".".join(version.split(".")[:2])


def packages(kver, version):
    """[(package, version)] the build needs: the headers, the -common and
    kbuild packages the headers depend on, and the source."""
    out = run(["apt-cache"] + guest_kernel.APT_OPTS + ["depends", f"linux-headers-{kver}"])
    deps = [line.split(":", 1)[1].strip() for line in out.splitlines()
            if line.strip().startswith("Depends:")]
    common = [d for d in deps if d.startswith("linux-headers-") and d.endswith("-common")]
    kbuild = [d for d in deps if d.startswith("linux-kbuild-")]
    if len(common) != 1 or len(kbuild) != 1:
        raise RuntimeError(f"linux-headers-{kver} depends on {deps}: want one -common and one "
                           f"linux-kbuild")
    names = [f"linux-headers-{kver}", common[0], kbuild[0], source_package(version)]
    return [(n, version) for n in names]


# linux-source's tarball streamed out of the package: never written whole,
# decompressed by xz's threads (Debian's tarball is multi-block), and only
# SOURCE_DIRS land on disk.
EXTRACT = ('set -o pipefail; dpkg-deb --fsys-tarfile "$1" | tar -xOf - "./usr/src/$2.tar.xz" | '
           'xz -T2 -dc | tar -xf - -C "$3" "${@:4}"')


def extract_source(deb, top, work):
    """SOURCE_DIRS of the linux-source package `deb` under work/top."""
    if deb is None:
        raise RuntimeError("apt-get download left no linux-source package")
    run(["bash", "-c", EXTRACT, "extract", deb, top, work] + [f"{top}/{d}" for d in SOURCE_DIRS])
    for d in SOURCE_DIRS:
        if not os.path.isdir(os.path.join(work, top, d)):
            raise RuntimeError(f"{os.path.basename(deb)} has no {top}/{d}")


def build(kver, version, work):
    """The nine modules in a tar under `work` (its path)."""
    debs = os.path.join(work, "debs")
    os.makedirs(debs)
    pkgs = packages(kver, version)
    log(f"apt-get download {' '.join(f'{n}={v}' for n, v in pkgs)}")
    with phase("download"):
        run(["apt-get"] + guest_kernel.APT_OPTS + ["download"] + [f"{n}={v}" for n, v in pkgs],
            cwd=debs)
    root = os.path.join(work, "root")
    source_deb = None
    with phase("unpack the headers"):
        for deb in glob.glob(os.path.join(debs, "*.deb")):
            if os.path.basename(deb).startswith("linux-source-"):
                source_deb = deb
            else:
                run(["dpkg-deb", "-x", deb, root])
    usr_src = os.path.join(root, "usr", "src")
    headers = os.path.join(usr_src, f"linux-headers-{kver}")
    mk = os.path.join(headers, "Makefile")
    text = open(mk).read()
    if "include /usr/src/" not in text:
        raise RuntimeError(f"{mk} does not include /usr/src/...: {text[:200]!r}")
    open(mk, "w").write(text.replace("include /usr/src/", f"include {usr_src}/"))
    top = source_package(version)  # also the tarball's top folder
    with phase("extract the source folders"):
        extract_source(source_deb, top, work)
    src = os.path.join(work, top)
    for p in patches():
        run(["patch", "-p1", "-d", src, "-i", p])
    nvdimm = os.path.join(src, "tools/testing/nvdimm")
    kcflags = f"-I{src}/drivers/nvdimm -I{src}/drivers/acpi/nfit"
    log(f"make -C {headers} M={nvdimm} KCFLAGS='{kcflags}'")
    with phase("make"):
        # CONFIG_DEBUG_INFO= : no -g (Debian's own modules carry no debug
        # info either): 18% less compile CPU and 12x smaller modules, the
        # same vermagic.
        p = subprocess.run(["make", "-j2", "-C", headers, f"M={nvdimm}", f"KCFLAGS={kcflags}",
                            "CONFIG_DEBUG_INFO="], text=True, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(f"make M=tools/testing/nvdimm failed ({p.returncode}): "
                           f"{(p.stderr + p.stdout).strip()[-2000:]}")
    found = {os.path.basename(k)[:-3]: k for k in glob.glob(f"{nvdimm}/**/*.ko", recursive=True)}
    if sorted(found) != sorted(MODULES):
        raise RuntimeError(f"the build made {sorted(found)}, want {sorted(MODULES)}")
    out = os.path.join(work, "nfit-test.tar")
    run(["tar", "-cf", out, "-C", work, "--transform", "s|.*/||"] +
        [os.path.relpath(found[m], work) for m in sorted(MODULES)])
    return out


def cached_modules(cache, kver, version):
    """The verified artefact's path: from the cache, else built and published."""
    name = f"nfit-test-{kver}-{version}-{patches_digest()[:12]}.tar"
    path = os.path.join(cache, name)
    meta = {"kernel": kver, "version": version, "patches": patches_digest()}
    os.makedirs(cache, exist_ok=True)
    with verified_cache.locked(path):
        if verified_cache.load(path, check_modules, "nfit_test modules", meta):
            return path
        with tempfile.TemporaryDirectory(prefix=".nfit-build-", dir=cache) as work:
            tar = build(kver, version, work)
            verified_cache.publish(tar, path, check_modules, "nfit_test modules", meta)
    return path


def module_tree(info, tar, outdir):
    """outdir/lib/modules/KVER: the kernel's modules as symlinks, less the
    production copies of REPLACED, plus the test modules in extra/; depmod'ed."""
    kver = info["version"]
    src = info["modules_dir"]
    dst = os.path.join(outdir, "lib", "modules", kver)
    if os.path.exists(outdir):
        shutil.rmtree(outdir)
    replaced = {m.replace("-", "_") for m in REPLACED}
    for dirpath, _, files in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        for fn in files:
            if fn.startswith("modules.") and fn not in ("modules.builtin", "modules.order",
                                                        "modules.builtin.modinfo"):
                continue  # depmod's outputs: made again below
            if re.sub(r"\.ko(\.xz)?$", "", fn).replace("-", "_") in replaced:
                continue
            os.makedirs(os.path.join(dst, rel), exist_ok=True)
            os.symlink(os.path.join(dirpath, fn), os.path.join(dst, rel, fn))
    extra = os.path.join(dst, "extra")
    os.makedirs(extra)
    run(["tar", "-xf", tar, "-C", extra])
    run([shutil.which("depmod") or "/usr/sbin/depmod", "-b", outdir, kver])
    return dst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel-info", required=True, help="guest_kernel.py's kernel.json")
    ap.add_argument("--outdir", required=True, help="where the guest's module tree goes")
    ap.add_argument("--info", required=True, help="the nfit_test guest's kernel info (out)")
    ap.add_argument("--cache", default=guest_kernel.default_cache())
    ap.add_argument("--suite", help="the Debian suite of the kernel (default: the host's)")
    args = ap.parse_args()

    out = {"available": False, "reason": ""}
    try:
        info = json.load(open(args.kernel_info))
        if not info.get("available"):
            raise RuntimeError(info.get("reason") or "guest kernel unavailable")
        if args.suite:
            guest_kernel.APT_OPTS[:] = guest_kernel.private_apt(args.cache, args.suite)
        version = run(["dpkg-deb", "-f", info["deb"], "Version"]).strip()
        tar = cached_modules(args.cache, info["version"], version)
        moddir = module_tree(info, tar, args.outdir)
        out = dict(info, modules_dir=os.path.abspath(moddir),
                   nfit_test={"modules": tar, "version": version, "patches": patches_digest()},
                   initramfs_modules=["virtio", "virtio_ring", "virtio_pci", "virtio_console",
                                      "crc32c_generic", "crc32c-intel", "ext4", "xfs"] + MODULES,
                   modules_load=LOAD)
        log(f"nfit_test for {info['version']} ({version}): {moddir}")
    except (RuntimeError, OSError, ValueError, KeyError, subprocess.CalledProcessError) as e:
        out["reason"] = f"nfit_test build: {e}"
        print(out["reason"], file=sys.stderr)
    with open(args.info, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    if not out["available"]:
        os.utime(args.info, (0, 0))  # older than its inputs: ninja tries again
    return 0


if __name__ == "__main__":
    sys.exit(main())
