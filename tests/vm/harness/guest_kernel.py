"""Fetch and unpack Debian's guest kernel for the VM test bed.

Never installs anything on the host: `apt-get download` the package that
`apt-cache depends linux-image-amd64` names into a cache folder, unpack
it into the build folder, run `depmod -b` (the package ships no modules.dep) and
pull the ELF vmlinux out of the bzImage so QEMU can boot it through PVH (saves
the ~3 s of in-guest XZ decompression under TCG).

Writes an info JSON (always, also when the kernel cannot be had: then
"available" is false and "reason" says why, so the tests can exit 77 with that
reason instead of failing the build of the whole project).
"""

import argparse
import fcntl
import glob
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

from . import verified_cache
from .verified_cache import Invalid


def default_cache():
    """Where downloaded guest packages are kept: one folder per machine, not per
    clone, so a fresh clone (CI) finds what an earlier one fetched."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.environ.get("DAXPROBE_VM_CACHE") or os.path.join(base, "daxprobe-vm")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


# Module trees no test guest loads from (no NIC, GPU, sound or radio is
# emulated, and the guests have no network): left out of the unpacked kernel
# and, through dpkg's path-exclude, of the Debian images' roots. 210 MB of
# Debian 12's 383 MB of modules: each image holds its root three times, and a
# machine that ran out of disk under the suite could not finish it.
UNUSED_MODULE_TREES = [
    "drivers/net", "drivers/gpu", "drivers/media", "drivers/infiniband", "drivers/iio",
    "drivers/staging", "drivers/hwmon", "drivers/comedi", "drivers/mtd", "drivers/target",
    "sound", "net",
]

# apt options that point apt at a private configuration (set by --suite): the
# host's own sources, lists and caches are never touched.
APT_OPTS = []


def host_archive_uri():
    """The Debian archive URI the host's own sources use (a mirror, a proxy),
    so another suite comes from the same place; deb.debian.org otherwise."""
    uris = []
    for path in glob.glob("/etc/apt/sources.list.d/*.sources"):
        for line in open(path, errors="replace"):
            if line.startswith("URIs:"):
                uris += line.split(":", 1)[1].split()
    if os.path.exists("/etc/apt/sources.list"):
        for line in open("/etc/apt/sources.list", errors="replace"):
            f = line.split()
            if f and f[0] == "deb":
                uris += [w for w in f[1:] if "://" in w][:1]
    for u in uris:
        if u.rstrip("/").endswith("/debian"):
            return u.rstrip("/")
    return "http://deb.debian.org/debian"


def private_apt(cache, suite):
    """apt options for `suite` in a folder of its own under the cache; runs
    `apt-get update` there when it has no package lists yet."""
    base = os.path.abspath(os.path.join(cache, f"apt-{suite}"))
    for d in ("lists/partial", "cache/archives/partial"):
        os.makedirs(os.path.join(base, d), exist_ok=True)
    src = os.path.join(base, "sources.list")
    keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
    opts = ["-o", f"Dir::Etc::sourcelist={src}", "-o", "Dir::Etc::sourceparts=/dev/null",
            "-o", f"Dir::State::Lists={base}/lists", "-o", f"Dir::Cache={base}/cache",
            "-o", "Acquire::Languages=none"]
    # One writer at a time: ninja runs a suite's kernel and its Debian layers
    # side by side, and apt-get fails rather than waits on its lists' lock
    # (a new machine's Debian 13 base lost its head start to that).
    with open(os.path.join(base, "update.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with open(src, "w") as f:
            f.write(f"deb [signed-by={keyring}] {host_archive_uri()} {suite} main\n")
        # Packages, or Packages.lz4 where apt keeps its lists compressed
        # (Acquire::GzipIndexes, as on this project's machines).
        if not glob.glob(os.path.join(base, "lists", "*_Packages*")):
            try:
                run(["apt-get"] + opts + ["update", "-qq"])
            except subprocess.CalledProcessError as e:
                raise RuntimeError(f"apt-get update for {suite} failed: {e.stderr.strip()}")
    return opts


def resolve_package(meta):
    out = run(["apt-cache"] + APT_OPTS + ["depends", meta]).stdout
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("Depends:") and "linux-image-" in line:
            return line.split(":", 1)[1].strip()
    raise RuntimeError(f"apt-cache depends {meta} names no linux-image package:\n{out}")


def split_parts(package):
    """The packages a split image package (Debian 14: linux-image-V is a
    metapackage) ships its files in: linux-binary-V (vmlinuz), linux-modules-V,
    linux-base-V (config, System.map); none for a monolithic one (12, 13)."""
    kver = package[len("linux-image-"):]
    out = run(["apt-cache"] + APT_OPTS + ["depends", package]).stdout
    parts = []
    for line in out.splitlines():
        f = line.strip().split(":", 1)
        if len(f) == 2 and f[0].endswith("Depends"):
            dep = f[1].strip()
            if dep in (f"linux-{k}-{kver}" for k in ("binary", "modules", "base")):
                parts.append(dep)
    return parts


def check_deb(package, archive=False):
    """A cached kernel package is `package` (dpkg-deb reads its control);
    with archive, also its sha256 is one the archive's Packages list gives
    it (apt-cache show: ~0.7 CPU-s, so only for a .deb without a manifest;
    apt-get download checks that hash itself)."""
    def check(path, meta):
        p = subprocess.run(["dpkg-deb", "-f", path, "Package"], capture_output=True, text=True)
        if p.returncode != 0 or p.stdout.strip() != package:
            raise Invalid(f"dpkg-deb -f: {(p.stdout + p.stderr).strip()[:200]!r}, want {package}")
        if not archive:
            return "dpkg-deb reads its control: " + package
        show = subprocess.run(["apt-cache"] + APT_OPTS + ["show", package], capture_output=True,
                              text=True)
        known = {l.split(":", 1)[1].strip() for l in show.stdout.splitlines()
                 if l.startswith("SHA256:")}
        digest = verified_cache.sha256(path)
        if digest not in known:
            raise Invalid(f"sha256 {digest[:16]}... is none the archive lists for {package} "
                          f"({len(known)} known)")
        return f"dpkg-deb reads its control: {package}; sha256 as in the archive's Packages"
    return check


def fetch_deb(package, cache):
    """`package`'s .deb from the cache (verified) or the archive."""
    os.makedirs(cache, exist_ok=True)
    # One download per package at a time, whichever build tree asks.
    with verified_cache.locked(os.path.join(cache, package + ".deb")):
        for deb in sorted(glob.glob(os.path.join(cache, f"{package}_*.deb")), reverse=True):
            if verified_cache.load(deb, check_deb(package), "guest kernel package",
                                   adopt_check=check_deb(package, archive=True)):
                return deb
        # Into a folder of its own, then published: a download cut short never
        # has the cache's name. apt drops privileges to _apt for downloads; a
        # root-owned folder just produces a warning and an unsandboxed download.
        with tempfile.TemporaryDirectory(prefix=".download-", dir=cache) as tmp:
            try:
                run(["apt-get"] + APT_OPTS + ["download", package], cwd=tmp)
            except subprocess.CalledProcessError as e:
                raise RuntimeError(f"apt-get download {package} failed: {e.stderr.strip()}")
            found = glob.glob(os.path.join(tmp, f"{package}_*.deb"))
            if len(found) != 1:
                raise RuntimeError(f"apt-get download {package} left {found} in {tmp}")
            deb = os.path.join(cache, os.path.basename(found[0]))
            verified_cache.publish(found[0], deb, check_deb(package, archive=True),
                                   "guest kernel package")
        return deb


def unpack(deb, outdir):
    """`dpkg-deb -x` without UNUSED_MODULE_TREES (tar's exclude patterns match
    at any depth: lib/modules/V/kernel/... and usr/lib/modules/V/kernel/...)."""
    # tar's complaints go to a file, not a pipe: a full disk makes thousands
    # of them, and a pipe nobody reads until the end would stall both.
    with tempfile.TemporaryFile() as err:
        tar = subprocess.Popen(["tar", "-x", "-C", outdir] +
                               [f"--exclude=kernel/{t}" for t in UNUSED_MODULE_TREES],
                               stdin=subprocess.PIPE, stderr=err)
        deb_rc = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], stdout=tar.stdin).returncode
        tar.stdin.close()
        if tar.wait() != 0 or deb_rc != 0:
            err.seek(0)
            raise RuntimeError(f"unpacking {deb} failed (dpkg-deb {deb_rc}, tar {tar.returncode}): "
                               f"{err.read(2000).decode(errors='replace').strip()}")


def extract_vmlinux(bzimage, dest):
    data = open(bzimage, "rb").read()
    # 6.1 compresses the payload with xz; 6.12 with zstd. Try each magic.
    xz_magic = b"\xfd7zXZ\x00"
    pos = data.find(xz_magic)
    while pos != -1:
        try:
            dec = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
            elf = dec.decompress(data[pos:])
            if elf[:4] == b"\x7fELF":
                break
        except lzma.LZMAError:
            pass
        pos = data.find(xz_magic, pos + 1)
    else:
        elf = None
    if elf is None:
        zstd_magic = b"\x28\xb5\x2f\xfd"
        pos = data.find(zstd_magic)
        if pos != -1 and shutil.which("zstd"):
            p = subprocess.run(["zstd", "-dc"], input=data[pos:], capture_output=True)
            if p.stdout[:4] == b"\x7fELF":
                elf = p.stdout
    if elf is None:
        raise RuntimeError(f"no xz/zstd ELF payload found in {bzimage}")
    with open(dest + ".tmp", "wb") as f:
        f.write(elf)
    os.replace(dest + ".tmp", dest)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default=default_cache(),
                    help="where downloaded .deb files are kept (default: $DAXPROBE_VM_CACHE "
                    "or ~/.cache/daxprobe-vm)")
    ap.add_argument("--outdir", required=True, help="where the package is unpacked")
    ap.add_argument("--vmlinux", required=True)
    ap.add_argument("--info", required=True)
    ap.add_argument("--meta", default="linux-image-amd64")
    ap.add_argument("--suite", help="another Debian suite (e.g. trixie), fetched through a "
                    "private apt configuration under the cache; default: the host's own")
    args = ap.parse_args()

    info = {"available": False, "reason": ""}
    try:
        cache = args.cache
        for tool in ("apt-cache", "apt-get", "dpkg-deb", "depmod"):
            if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}") \
                    and not os.path.exists(f"/sbin/{tool}"):
                raise RuntimeError(f"{tool} not found")
        if args.suite:
            APT_OPTS[:] = private_apt(cache, args.suite)
        try:
            package = resolve_package(args.meta)
            debs = [fetch_deb(p, cache) for p in [package] + split_parts(package)]
        except (RuntimeError, subprocess.CalledProcessError) as first:
            # A fresh machine may have no (or stale) package lists: update
            # them once, as root, and try again.
            if os.geteuid() != 0 and not args.suite:
                raise
            print(f"{first}; running apt-get update once", file=sys.stderr)
            run(["apt-get"] + APT_OPTS + ["update", "-qq"])
            package = resolve_package(args.meta)
            debs = [fetch_deb(p, cache) for p in [package] + split_parts(package)]
        kver = package[len("linux-image-"):]
        if os.path.exists(args.outdir):
            shutil.rmtree(args.outdir)
        os.makedirs(args.outdir)
        for deb in debs:
            unpack(deb, args.outdir)
        moddir = os.path.join(args.outdir, "lib", "modules", kver)
        if not os.path.isdir(moddir):
            moddir = os.path.join(args.outdir, "usr", "lib", "modules", kver)
        base = os.path.dirname(os.path.dirname(os.path.dirname(moddir)))
        depmod = shutil.which("depmod") or "/usr/sbin/depmod"
        run([depmod, "-b", base, kver])
        bzimage = os.path.join(args.outdir, "boot", f"vmlinuz-{kver}")
        if not os.path.exists(bzimage):  # Debian 14 keeps it beside the modules
            bzimage = os.path.join(moddir, "vmlinuz")
        extract_vmlinux(bzimage, args.vmlinux)
        info = {
            "available": True,
            "package": package,
            "deb": os.path.abspath(debs[0]),
            "debs": [os.path.abspath(d) for d in debs],
            "version": kver,
            "vmlinux": os.path.abspath(args.vmlinux),
            "bzimage": os.path.abspath(bzimage),
            "modules_dir": os.path.abspath(moddir),
        }
        print(f"guest kernel {kver}: {args.vmlinux}")
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        detail = getattr(e, "stderr", "") or ""
        info["reason"] = f"guest kernel unavailable: {e} {detail}".strip()
        print(info["reason"], file=sys.stderr)
        # Outputs must exist for the build to go on; the tests read the reason.
        open(args.vmlinux, "wb").close()
    with open(args.info, "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")
    if not info["available"]:
        # Outputs older than their inputs: ninja retries on the next build
        # (e.g. once the package lists are updated) instead of caching the miss.
        for p in (args.vmlinux, args.info):
            os.utime(p, (0, 0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
