#!/usr/bin/env python3
"""The CXL topologies' QEMU command lines are QEMU 7.2's (no VM booted).

Each property the harness writes on a -device or -object must be one that
`qemu-system-x86_64 -device TYPE,help` (resp. -object) lists, and QEMU must
accept the whole machine: started stopped (-S, no guest code runs) with the
topology and the test bed's virtio-serial ports, then told to quit over QMP.
A wrong property, a root port on a missing bridge or a window naming no host
bridge makes QEMU exit with an error.
"""

import functools
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from harness import cxl_topology
from harness.guest import Guest

QEMU = "qemu-system-x86_64"
TOPOLOGIES = {"SHARED": cxl_topology.SHARED, "NO_MEMDEV": cxl_topology.NO_MEMDEV,
              "NO_COMMIT": cxl_topology.NO_COMMIT}
# Every -device takes these; `-device TYPE,help` does not list them.
GENERIC = {"bus", "id"}


@functools.cache
def listed(kind, kind_type):
    out = subprocess.run([QEMU, f"-{kind}", f"{kind_type},help"], capture_output=True,
                         text=True, timeout=60).stdout
    return set(re.findall(r"^\s+([\w.-]+)=<", out, re.M))


def options(args):
    """(kind, type, [keys]) of each -device and -object in args."""
    for flag, spec in zip(args, args[1:]):
        if flag in ("-device", "-object"):
            kind_type, *fields = spec.split(",")
            yield flag[1:], kind_type, [f.split("=")[0] for f in fields]


class CxlCommandLine(unittest.TestCase):
    def guest_command(self, topo, run_dir):
        g = Guest("VMLINUX", "INITRD", "cxl", nvdimm=False, cxl=topo, workdir=run_dir)
        return g.command()

    def test_every_property_is_listed(self):
        for name, topo in TOPOLOGIES.items():
            for kind, kind_type, keys in options(topo.qemu_args("/run")):
                with self.subTest(topology=name, option=kind_type):
                    unknown = set(keys) - listed(kind, kind_type) - GENERIC
                    self.assertFalse(unknown, f"-{kind} {kind_type}: {unknown}")

    def test_qemu_accepts_the_machine(self):
        for name, topo in TOPOLOGIES.items():
            with self.subTest(topology=name), tempfile.TemporaryDirectory(prefix="dxcxl-") as d:
                cmd = self.guest_command(topo, d)
                # The guest's own line without its kernel (QEMU would load it):
                # the machine, CPU, memory, ports and the topology.
                i = cmd.index("-kernel")
                cmd = cmd[:i] + cmd[i + 6:] + ["-S", "-display", "none", "-qmp", "stdio"]
                cmd.remove("-nographic")
                cmd[cmd.index("-serial") + 1] = "none"
                # QEMU creates the (sparse) backing files in the run folder.
                run = subprocess.run(cmd, input='{"execute":"qmp_capabilities"}\n'
                                     '{"execute":"quit"}\n', capture_output=True, text=True,
                                     timeout=60, cwd=d)
                self.assertEqual(run.returncode, 0, f"{' '.join(cmd)}\n{run.stderr}")

    def test_workarounds_follow_the_switches(self):
        shared = self.guest_command(cxl_topology.SHARED, "/run")
        self.assertIn("max,hypervisor=off", shared)
        self.assertIn("pcie_ports=compat", shared[shared.index("-append") + 1])
        no_commit = self.guest_command(cxl_topology.NO_COMMIT, "/run")
        self.assertEqual(no_commit[no_commit.index("-cpu") + 1], "max")
        no_memdev = self.guest_command(cxl_topology.NO_MEMDEV, "/run")
        self.assertNotIn("pcie_ports=compat", no_memdev[no_memdev.index("-append") + 1])


if __name__ == "__main__":
    if shutil.which(QEMU) is None:
        print(f"SKIP: {QEMU} is not installed")
        sys.exit(77)
    unittest.main(verbosity=2)
