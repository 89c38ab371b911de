#!/usr/bin/env python3
"""The agent when the kernel's device events are refused to it (issue 35).

What really refuses them: a seccomp filter on socket()'s address family,
as systemd's RestrictAddressFamilies= installs (packaging/daxprobe-agent.service
has RestrictAddressFamilies=AF_UNIX). A new user and network namespace does
not: bind() to NETLINK_KOBJECT_UEVENT group 1 needs no capability
(NL_CFG_F_NONROOT_RECV), as `unshare -Urn` shows on this kernel. So the
agent runs here under the same filter (socket() of any family but AF_UNIX
fails with EAFNOSUPPORT) and must say so in its documented warning, then
keep its timers: the periodic report, and the badblocks poll that stands in
for the uevents (a bad block written to the tree's badblocks file is noticed).

usage: agent_netlink_refused.py DAXPROBE [CASE...]
       agent_netlink_refused.py --restricted PROGRAM [ARG...]  (the filter, then exec)
"""
import ctypes
import errno
import os
import platform
import shutil
import socket
import struct
import subprocess
import sys
import tempfile

import blackbox as bb
from blackbox import check

# seccomp_data: nr at 0, arch at 4, args[0] at 16 (its low half, little endian).
ARCHES = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}  # AUDIT_ARCH, __NR_socket
LD_ABS, JEQ, RET = 0x20, 0x15, 0x06
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2


def restrict_to_af_unix():
    """socket() of a family other than AF_UNIX fails with EAFNOSUPPORT."""
    arch, nr = ARCHES[platform.machine()]
    prog = [(LD_ABS, 0, 0, 4), (JEQ, 0, 5, arch), (LD_ABS, 0, 0, 0), (JEQ, 0, 3, nr),
            (LD_ABS, 0, 0, 16), (JEQ, 1, 0, socket.AF_UNIX),
            (RET, 0, 0, RET_ERRNO | errno.EAFNOSUPPORT), (RET, 0, 0, RET_ALLOW)]
    code = ctypes.create_string_buffer(b"".join(struct.pack("=HBBI", *i) for i in prog))

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Fprog(len(prog), ctypes.cast(code, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if (libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or
            libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0):
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def restricted_exec(argv):
    try:
        restrict_to_af_unix()
    except OSError as e:
        print(f"no seccomp filter: {e}", file=sys.stderr)
        sys.exit(77)
    # The filter is what it claims: netlink refused, unix sockets still fine.
    try:
        socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 15).close()
        sys.exit("the filter let socket(AF_NETLINK) through")
    except OSError as e:
        if e.errno != errno.EAFNOSUPPORT:
            raise
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
    os.execv(argv[0], argv)


def case_seccomp():
    if platform.machine() not in ARCHES:
        bb.skip(f"no socket() filter written for {platform.machine()}")
    probe = subprocess.run([sys.executable, os.path.abspath(__file__), "--restricted", "/bin/true"],
                           capture_output=True, text=True)
    if probe.returncode == 77:
        bb.skip(probe.stderr.strip())
    check(probe.returncode == 0, f"the filter: {probe.stderr[-500:]}")
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "root")
        shutil.copytree(os.path.join(bb.FIXTURES, "fsdax-xfs"), root, symlinks=True)
        sock = os.path.join(tmp, "agent.sock")
        agent = bb.Proc([sys.executable, os.path.abspath(__file__), "--restricted", DAXPROBE,
                         "agent", "--listen", sock, "--root", root, "--no-active",
                         "--interval", "1"], "agent (AF_UNIX only)")
        agent.wait_log(lambda l: "kernel device events not watched (socket NETLINK_KOBJECT_UEVENT: "
                       "Address family not supported by protocol)" in l,
                       "the netlink-refused warning")
        # Its timers: the periodic report, and the badblocks poll instead of uevents.
        agent.wait_log(lambda l: "report 2 queued (interval" in l, "a periodic report")
        with open(os.path.join(root, "sys/block/pmem0/badblocks"), "w") as f:
            f.write("4096 8\n")
        agent.wait_log(lambda l: "change noticed (/sys/block/pmem0/badblocks changed)" in l,
                       "the new bad block, noticed by the poll")
        check(agent.alive(), f"the agent exited:\n{agent.log()}")


CASES = {"seccomp": case_seccomp}

if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--restricted":
        restricted_exec(sys.argv[2:])
    DAXPROBE = sys.argv[1]
    sys.exit(bb.main(CASES, sys.argv[2:]))
