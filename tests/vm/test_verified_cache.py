#!/usr/bin/env python3
"""verified_cache with the test bed's own checks, on real files in a scratch
cache folder (no VM): a broken fsdax template (issue 30's `"size": 1`) is
never written, and one already in the cache is evicted, so the image step
builds it again; a changed or truncated artefact is evicted too.

debian_image.fsdax_template() itself with a planted template is the real
run: tests/vm/README.md ("A cache holds verified artefacts only")."""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import nfit_test_build
from debian_image import check_base, check_fsdax_template
from harness import verified_cache

FAILS = []
BACKING = 1024 << 20
OFFSET = 18 << 20  # what Debian 12's kernel chose for 1 GiB (pfn map=dev, 2 MiB align)
SIZE = BACKING - OFFSET


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


def template(path, dataoff=OFFSET, length=OFFSET):
    """A template as the setup boot leaves it: the namespace's first
    `length` bytes, its info block (struct nd_pfn_sb) 4 KiB in."""
    with open(path, "wb") as f:
        f.truncate(length)
        f.seek(4096)
        f.write(b"NVDIMM_PFN_INFO\0" + bytes(40) + struct.pack("<QQI", dataoff, SIZE >> 12, 2))


def meta(size=SIZE, offset=OFFSET):
    return {"kernel": "6.1.0-57-amd64", "backing": BACKING, "offset": offset, "size": size}


def templates(cache):
    final = os.path.join(cache, "fsdax-1-6.1.0-57-amd64-1024M.img")
    load = lambda m=None: verified_cache.load(final, check_fsdax_template, "fsdax template", m)

    # The template: the regex read size=1 of a longer number.
    tmp = final + ".partial"
    template(tmp)
    try:
        verified_cache.publish(tmp, final, check_fsdax_template, "fsdax template", meta(size=1))
        check(False, "a template whose data size is 1 B is refused when written")
    except RuntimeError as e:
        check("data size 1 B" in str(e), f"a template whose data size is 1 B is refused when "
                                          f"written ({e})")
    check(not os.path.exists(final) and not os.path.exists(tmp),
          "and nothing of it is left in the cache")

    # The same template cached by an older tree (no manifest, its facts in
    # KEY.json): evicted when read, so the caller builds it again.
    template(final)
    check(load(meta(size=1)) is None and not os.path.exists(final),
          "a cached template with data size 1 B is evicted when read")

    # A good one: written with its manifest, read back with its facts.
    template(tmp)
    verified_cache.publish(tmp, final, check_fsdax_template, "fsdax template", meta())
    doc = load()
    check(doc is not None and doc["meta"]["size"] == SIZE and doc["sha256"] ==
          verified_cache.sha256(final), "a good template is cached with its sha256 and read back")

    # Changed after it was written, where no content check looks (the page
    # map's area): the manifest's sha256 catches it.
    with open(final, "r+b") as f:
        f.seek(OFFSET - 1)
        f.write(b"x")
    check(load() is None and not os.path.exists(final)
          and not os.path.exists(verified_cache.manifest_path(final)),
          "a template changed in the cache is evicted (manifest and all)")

    # Adopted without a manifest only when it checks out: no info block.
    template(final, length=OFFSET)
    with open(final, "r+b") as f:
        f.seek(4096)
        f.write(bytes(16))
    check(load(meta()) is None, "a template without its info block is evicted")
    # Cut short (the file shorter than the data offset).
    template(final, length=OFFSET // 2)
    check(load(meta()) is None, "a template shorter than its data offset is evicted")


def tarballs(cache):
    """A layer: tar reads it to the end and it holds what the images use."""
    root = os.path.join(cache, "root")
    for d in ("boot", "usr/lib/systemd", "usr/bin", "usr/sbin"):
        os.makedirs(os.path.join(root, d))
    for f in ("boot/vmlinuz-6.1.0-57-amd64", "boot/initrd.img-6.1.0-57-amd64",
              "usr/lib/systemd/systemd", "usr/bin/ndctl", "usr/sbin/mkfs.xfs",
              "usr/sbin/update-initramfs"):
        with open(os.path.join(root, f), "wb") as fh:
            fh.write(os.urandom(300 << 10))
    final = os.path.join(cache, "debian-bookworm-initramfs-tools-list-0.tar")
    tmp = final + ".partial.tar"
    subprocess.run(["tar", "-cf", tmp, "-C", root, "."], check=True)
    verified_cache.publish(tmp, final, check_base, "base")
    check(verified_cache.load(final, check_base, "base") is not None, "a whole base is read back")
    # Cut short with its manifest: the size says so.
    with open(final, "r+b") as f:
        f.truncate(os.path.getsize(final) // 2)
    check(verified_cache.load(final, check_base, "base") is None, "a truncated base is evicted")
    # Cut short without a manifest (adoption): tar itself says so.
    subprocess.run(["tar", "-cf", final, "-C", root, "."], check=True)
    with open(final, "r+b") as f:
        f.truncate(os.path.getsize(final) // 2)
    check(verified_cache.load(final, check_base, "base") is None,
          "a truncated base without a manifest is not adopted")
    # Whole, but without the kernel's initramfs.
    os.unlink(os.path.join(root, "boot/initrd.img-6.1.0-57-amd64"))
    subprocess.run(["tar", "-cf", tmp, "-C", root, "."], check=True)
    try:
        verified_cache.publish(tmp, final, check_base, "base")
        check(False, "a base without an initramfs is refused when written")
    except RuntimeError as e:
        check("initramfs" in str(e), f"a base without an initramfs is refused when written ({e})")


def lock(cache):
    """A second build tree waits while one builds the same artefact: a real
    process holds the lock, ours gets it only once that one let go."""
    import threading
    path = os.path.join(cache, "debian-trixie-initramfs-tools-most-0.tar")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom harness import verified_cache\n"
         f"with verified_cache.locked({path!r}):\n"
         "    print('held', flush=True)\n    sys.stdin.readline()"],
        cwd=os.path.dirname(os.path.abspath(__file__)), stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True)
    check(holder.stdout.readline().strip() == "held", "another process holds the lock")
    entered = threading.Event()

    def build():
        with verified_cache.locked(path):
            entered.set()
    t = threading.Thread(target=build)
    t.start()
    check(not entered.wait(0.5), "ours does not get it meanwhile")
    holder.stdin.write("go\n")
    holder.stdin.flush()
    check(entered.wait(60), "ours gets it once the other let go")
    t.join(60)
    holder.wait(60)
    os.unlink(path + ".lock")


def fake_module(path, vermagic):
    """An ELF object whose .modinfo says `vermagic`: what modinfo reads."""
    d = os.path.dirname(path)
    src, obj, info = (os.path.join(d, n) for n in ("e.c", "e.o", "modinfo"))
    open(src, "w").write("")
    open(info, "wb").write(f"vermagic={vermagic} SMP mod_unload \0".encode())
    subprocess.run(["cc", "-c", src, "-o", obj], check=True)
    subprocess.run(["objcopy", "--add-section", f".modinfo={info}", obj, path], check=True)
    for p in (src, obj, info):
        os.unlink(p)


def nfit_modules(cache):
    """The nfit_test build: exactly the nine modules, each built for the
    kernel, with the tree's patches."""
    kver = "6.1.0-57-amd64"
    final = os.path.join(cache, f"nfit-test-{kver}-6.1.192-3-0.tar")
    tmp = final + ".partial"
    mods = os.path.join(cache, "mods")
    os.makedirs(mods)
    meta = {"kernel": kver, "version": "6.1.192-3", "patches": nfit_test_build.patches_digest()}
    chk = nfit_test_build.check_modules

    def pack(names, vermagic=kver):
        for n in os.listdir(mods):
            os.unlink(os.path.join(mods, n))
        for n in names:
            fake_module(os.path.join(mods, f"{n}.ko"), vermagic)
        subprocess.run(["tar", "-cf", tmp, "-C", mods] + [f"{n}.ko" for n in names], check=True)

    for what, names, vm in (("without nfit_test.ko", nfit_test_build.MODULES[:-2] +
                             nfit_test_build.MODULES[-1:], kver),
                            ("built for another kernel", nfit_test_build.MODULES,
                             "6.1.0-50-amd64")):
        pack(names, vm)
        try:
            verified_cache.publish(tmp, final, chk, "nfit_test modules", meta)
            check(False, f"modules {what} are refused when written")
        except RuntimeError as e:
            check(not os.path.exists(final), f"modules {what} are refused when written ({e})")
    pack(nfit_test_build.MODULES)
    verified_cache.publish(tmp, final, chk, "nfit_test modules", meta)
    check(verified_cache.load(final, chk, "nfit_test modules") is not None,
          "the nine modules for the kernel are cached and read back")
    # Built with other patches than the tree has now: evicted, built again.
    mpath = verified_cache.manifest_path(final)
    doc = json.load(open(mpath))
    doc["meta"]["patches"] = "0" * 64
    json.dump(doc, open(mpath, "w"))
    check(verified_cache.load(final, chk, "nfit_test modules") is None
          and not os.path.exists(final), "modules built with other patches are evicted")
    shutil.rmtree(mods)


with tempfile.TemporaryDirectory(prefix="dxcache-") as cache:
    templates(cache)
    tarballs(cache)
    nfit_modules(cache)
    lock(cache)
    left = sorted(n for n in os.listdir(cache) if n != "root")
    check(left == [], f"nothing unverified left in the cache: {left}")
print(f"{len(FAILS)} failed")
sys.exit(1 if FAILS else 0)
