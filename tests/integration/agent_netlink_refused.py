#!/usr/bin/env python3
"""The agent when the kernel's device events are refused to it (issue 35).

What really refuses them: a seccomp filter on socket()'s address family,
as systemd's RestrictAddressFamilies= installs (packaging/daxprobe-agent.service
has RestrictAddressFamilies=AF_UNIX). So the agent runs here under the same
filter (socket() of any family but AF_UNIX fails with EAFNOSUPPORT) and must
say so in its documented warning, then keep its timers: the periodic report,
and the badblocks poll that stands in for the uevents (a bad block written
to the tree's badblocks file is noticed).

What withholds them without refusing: a network namespace owned by a user
namespace other than the initial one (`unshare -Urn`, rootless containers).
bind() to group 1 succeeds there (NL_CFG_F_NONROOT_RECV), but
lib/kobject_uevent.c broadcasts only into network namespaces of the initial
user namespace. The namespace cases run the agent under unshare(1) and
assert the warning where nothing can arrive (and its badblocks poll), and
where events do arrive no warning and a uevent provoked on the host
(`echo change > /sys/block/DEV/uevent`) noticed: as root on the host, in a
new network namespace of the initial user namespace (`unshare -n`), and in a
new user namespace that keeps the host's network (`unshare -Ur`; -r maps
root, so the agent can make its socket in the test's directory).

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


NOT_WATCHED = "kernel device events not watched ("
USERNS_WARNING = "kernel device events not watched (network namespace owned by user namespace "


def provokable_disk():
    """A disk whose uevent file root can write: `change` makes the kernel
    send one uevent for it (lib/kobject_uevent.c kobject_synth_uevent)."""
    if os.geteuid() != 0:
        bb.skip("needs root (unshare -n, and a uevent provoked on a host disk)")
    for d in sorted(os.listdir("/sys/block")):
        if os.access(f"/sys/block/{d}/uevent", os.W_OK):
            return d
    bb.skip("no disk in /sys/block to provoke a uevent on")


def agent_in(prefix, tmp, what):
    """The agent under `prefix` (unshare ...), on a copy of fsdax-xfs, once
    it has queued its start report (the uevent watch is set up by then)."""
    probe = subprocess.run(prefix + ["true"], capture_output=True, text=True)
    if probe.returncode != 0:
        bb.skip(f"{' '.join(prefix)} refused here: {probe.stderr.strip()}")
    root = os.path.join(tmp, "root")
    shutil.copytree(os.path.join(bb.FIXTURES, "fsdax-xfs"), root, symlinks=True)
    agent = bb.Proc(prefix + [DAXPROBE, "agent", "--listen", os.path.join(tmp, "agent.sock"),
                              "--root", root, "--no-active", "--interval", "3600"], what)
    agent.wait_log(lambda l: "report 1 queued (start" in l, "the start report")
    return agent, root


def events_arrive(prefix, what):
    disk = provokable_disk()
    with tempfile.TemporaryDirectory() as tmp:
        agent, _ = agent_in(prefix, tmp, what)
        with open(f"/sys/block/{disk}/uevent", "w") as f:
            f.write("change")
        agent.wait_log(lambda l: "change noticed (" in l and f"uevent change block {disk}" in l,
                       f"the uevent provoked on {disk}")
        check(not any(NOT_WATCHED in l for l in agent.log().splitlines()),
              f"a warning though events arrive:\n{agent.log()}")


def case_host():
    events_arrive([], "agent (the host's namespaces)")


def case_netns():
    events_arrive(["unshare", "-n"], "agent (unshare -n)")


def case_userns():
    events_arrive(["unshare", "-Ur"], "agent (unshare -Ur)")


def case_userns_netns():
    provokable_disk()  # root, like the others: the same agent, only the namespaces differ
    with tempfile.TemporaryDirectory() as tmp:
        agent, root = agent_in(["unshare", "-Urn"], tmp, "agent (unshare -Urn)")
        warned = [l for l in agent.log().splitlines() if USERNS_WARNING in l]
        check(len(warned) == 1 and "not the initial one: the kernel sends it no uevents" in warned[0],
              f"one warning naming the user namespace:\n{agent.log()}")
        # Its fallback: the badblocks poll, which without uevents also rescans.
        with open(os.path.join(root, "sys/block/pmem0/badblocks"), "w") as f:
            f.write("4096 8\n")
        agent.wait_log(lambda l: "change noticed (/sys/block/pmem0/badblocks changed)" in l,
                       "the new bad block, noticed by the poll")


CASES = {"seccomp": case_seccomp, "host": case_host, "netns": case_netns,
         "userns": case_userns, "userns-netns": case_userns_netns}

if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--restricted":
        restricted_exec(sys.argv[2:])
    DAXPROBE = sys.argv[1]
    sys.exit(bb.main(CASES, sys.argv[2:]))
