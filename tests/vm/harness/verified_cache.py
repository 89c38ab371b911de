"""The machine-wide cache of the VM test bed (DAXPROBE_VM_CACHE, default
~/.cache/daxprobe-vm) holds verified artefacts only: guest kernel packages,
Debian base tarballs, the dracut layer, fsdax templates.

Each artefact has a manifest beside it, NAME.verified.json: its size, its
sha256, what was checked and the artefact's own facts (`meta`, e.g. a
template's data offset). One artefact is written by `publish` and read by
`load`, nothing else:

- publish(tmp, path, check, what, meta): runs `check` on the new file, then
  renames the manifest and the artefact into place (each atomically, the
  manifest first); a file that fails its check is deleted and the build
  step fails, so a bad one is never cached (issue 30: a 1-byte fsdax
  template was, and six Debian tests skipped on that machine from then on).
- load(path, check, what): size and sha256 against the manifest, then the
  same `check` again; a file that fails is evicted (artefact and manifest
  deleted) and the caller builds it again. An artefact without a manifest
  (written by an older tree, or a crash between the two renames) is
  checked in full and adopted only if it passes.

`check(path, meta)` raises Invalid with the reason, or returns a short text
of what it verified (kept in the manifest).

Several build trees share the cache (a machine's clones, CI beside a
developer): `locked(path)` is held around "load, else build and publish",
so one builds and the others wait and then load what it made (seen here:
two trees ran mmdebstrap into one .partial.tar at once).
"""

import contextlib
import fcntl
import hashlib
import json
import os
import time

SUFFIX = ".verified.json"


class Invalid(Exception):
    """An artefact failed its check (the reason)."""


def log(msg):
    print(f"verified_cache: {msg}", flush=True)


def manifest_path(path):
    return path + SUFFIX


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _write_json(path, doc):
    tmp = f"{path}.{os.getpid()}.tmp"  # two build trees may adopt one artefact at once
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


@contextlib.contextmanager
def locked(path):
    """An exclusive lock on the artefact `path` (NAME.lock beside it) for
    the time it is loaded or built; released when the process dies."""
    with open(path + ".lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for another process's build of {os.path.basename(path)}")
            t0 = time.monotonic()
            fcntl.flock(lock, fcntl.LOCK_EX)
            log(f"{os.path.basename(path)}: waited {time.monotonic() - t0:.0f} s")
        yield


def evict(path, why):
    log(f"evicting {os.path.basename(path)}: {why}")
    for p in (manifest_path(path), path):
        if os.path.lexists(p):
            os.unlink(p)


def publish(tmp, path, check, what, meta=None):
    """`tmp` (just built) checked and moved to `path` with its manifest; the
    manifest. A file that fails its check is deleted: RuntimeError."""
    meta = meta or {}
    try:
        verified = check(tmp, meta)
    except Invalid as e:
        os.unlink(tmp)
        raise RuntimeError(f"{what}: the new {os.path.basename(path)} is not valid, not cached: "
                           f"{e}") from None
    doc = {"artefact": os.path.basename(path), "what": what, "size": os.path.getsize(tmp),
           "sha256": sha256(tmp), "verified": verified, "meta": meta,
           "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    _write_json(manifest_path(path), doc)
    os.replace(tmp, path)
    return doc


def load(path, check, what, meta=None, adopt_check=None):
    """The manifest of a cached artefact that passes its checks, or None
    (absent, or evicted now: the caller builds it again). An artefact
    without a manifest is checked with `adopt_check` (default: `check`)
    against `meta` (default: {})."""
    mpath = manifest_path(path)
    if not os.path.exists(path):
        if os.path.exists(mpath):
            os.unlink(mpath)  # a manifest whose artefact never arrived
        return None
    try:
        if os.path.exists(mpath):
            with open(mpath) as f:
                doc = json.load(f)
            size = os.path.getsize(path)
            if size != doc.get("size"):
                raise Invalid(f"size {size} B, the manifest says {doc.get('size')} B")
            digest = sha256(path)
            if digest != doc.get("sha256"):
                raise Invalid(f"sha256 {digest[:16]}..., the manifest says "
                              f"{str(doc.get('sha256'))[:16]}...")
            check(path, doc.get("meta") or {})
            log(f"{what}: {os.path.basename(path)} from the cache (verified: {doc['verified']})")
            return doc
        # No manifest: adopted only after the whole check.
        meta = meta or {}
        verified = (adopt_check or check)(path, meta)
        doc = {"artefact": os.path.basename(path), "what": what, "size": os.path.getsize(path),
               "sha256": sha256(path), "verified": verified, "meta": meta, "adopted": True,
               "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        _write_json(mpath, doc)
        log(f"{what}: {os.path.basename(path)} had no manifest; checked and adopted "
            f"({verified})")
        return doc
    except (Invalid, OSError, ValueError, KeyError) as e:
        evict(path, f"{what}: {e}")
        return None
