"""Host-side memory readings of a running QEMU and of its image files.

- /proc/PID/smaps_rollup: Rss, Pss, Anonymous (QEMU's own memory, guest RAM
  included: the guest's page cache is anonymous memory here).
- /proc/PID/smaps by file path: the resident part of a backing file's mapping
  (the NVDIMM / virtio-pmem file, mapped shared).
- The host page cache held by a file: cachestat(2) (Linux 6.5+) or, without
  it, mincore(2) over a fresh read-only mapping. This host is a plain non-DAX
  host, where both are safe (the guest-side warning about cachestat on DAX
  files does not apply).
"""

import ctypes
import errno
import mmap
import os

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
_libc.syscall.restype = ctypes.c_long
SYS_cachestat = 451  # x86_64
PAGE = os.sysconf("SC_PAGE_SIZE")


class _Range(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]


class _Cachestat(ctypes.Structure):
    _fields_ = [("nr_cache", ctypes.c_uint64), ("nr_dirty", ctypes.c_uint64),
                ("nr_writeback", ctypes.c_uint64), ("nr_evicted", ctypes.c_uint64),
                ("nr_recently_evicted", ctypes.c_uint64)]


def _kv_kb(lines):
    out = {}
    for line in lines:
        parts = line.split()
        if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
            out[parts[0][:-1]] = int(parts[1])
    return out


def parse_smaps_rollup(text):
    """The text of /proc/PID/smaps_rollup -> {Rss, Pss, Anonymous, ...} in kB
    (the first line is the address range, not a field)."""
    lines = text.splitlines()
    if not lines or "[rollup]" not in lines[0]:
        raise ValueError(f"not an smaps_rollup: {lines[0] if lines else 'empty'!r}")
    return _kv_kb(lines[1:])


def smaps_rollup(pid):
    """{Rss, Pss, Anonymous, ...} in kB."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return parse_smaps_rollup(f.read())


def read_ahead_kb(path):
    """The read_ahead_kb of the block device holding `path` (a partition's
    is its disk's), or None when the file is not on a block device (tmpfs,
    overlay): the host's readahead sets how much of the image a read pulls
    into the host page cache."""
    st = os.stat(path)
    dev = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    for queue in (os.path.join(dev, "queue"), os.path.join(dev, "..", "queue")):
        try:
            with open(os.path.join(queue, "read_ahead_kb")) as f:
                return int(f.read())
        except FileNotFoundError:
            continue
    return None


def smaps_of_files(pid, paths):
    """{path: {Size, Rss, Pss, Private_Dirty, Shared_Dirty, ...} kB, summed over
    every mapping of that file}; files QEMU does not map are absent."""
    want = {os.path.realpath(p): p for p in paths}
    out = {}
    current = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split(None, 5)
            if len(head) >= 5 and "-" in head[0] and ":" not in head[0]:
                path = head[5].strip() if len(head) == 6 else ""
                current = want.get(path)
                if current is not None:
                    out.setdefault(current, {})
                continue
            if current is not None:
                for k, v in _kv_kb([line]).items():
                    out[current][k] = out[current].get(k, 0) + v
    return out


def _cachestat(fd):
    rng, cs = _Range(0, 0), _Cachestat()
    rc = _libc.syscall(SYS_cachestat, fd, ctypes.byref(rng), ctypes.byref(cs), 0)
    if rc != 0:
        raise OSError(ctypes.get_errno(), "cachestat")
    return cs.nr_cache * PAGE, cs.nr_dirty * PAGE


def _mincore(fd, size):
    if size == 0:
        return 0
    length = (size + PAGE - 1) // PAGE * PAGE
    addr = _libc.mmap(None, length, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "mmap")
    try:
        vec = ctypes.create_string_buffer(length // PAGE)
        if _libc.mincore(addr, length, vec) != 0:
            raise OSError(ctypes.get_errno(), "mincore")
        return sum(b & 1 for b in vec.raw) * PAGE
    finally:
        _libc.munmap(addr, length)


def page_cache(path):
    """{bytes, dirty_bytes (cachestat only), size, source} for one file."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        size = os.fstat(fd).st_size
        try:
            cached, dirty = _cachestat(fd)
            return {"bytes": cached, "dirty_bytes": dirty, "size": size, "source": "cachestat"}
        except OSError as e:
            if e.errno not in (errno.ENOSYS, errno.EPERM, errno.EOPNOTSUPP):
                raise
        return {"bytes": _mincore(fd, size), "dirty_bytes": None, "size": size,
                "source": "mincore"}
    finally:
        os.close(fd)


def drop_cache(path):
    """Write a fresh copy back and drop it from the host page cache, so every
    boot starts with its image cold (fadvise only drops clean pages)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
