"""A CXL type-3 persistent-memory topology for a test-bed guest, in QEMU 7.2's
syntax (issue 33; the measured facts: /work/shared/cxl-testbed.md).

A scenario states its topology as data: host bridges (pxb-cxl), each with
root ports (cxl-rp), each holding a memdev (cxl-type3 with a persistent
memory backend and a label area) or nothing; one CFMWS window (cxl-fmw) per
host bridge, in order. `qemu_args` turns it into QEMU's command line on a
q35 machine with cxl=on.

The two switches are the workarounds QEMU 7.2 needs on newer kernels, each
off in the scenario that shows the kernel's refusal:
  hypervisor_bit  on: since 6.2 a region's commit calls
                  cpu_cache_invalidate_memregion(), which x86 refuses under a
                  hypervisor ("Failed to synchronize CPU cache state")
  pcie_ports_compat  off: cxl_pci wants event interrupts QEMU 7.2's type-3
                  lacks ("Failed to get interrupt for event Info log")
"""

from dataclasses import dataclass

# Every label area the same small size: the kernel reads all of it through the
# emulated mailbox at each probe (the NVDIMMs' is 128K too).
LSA_SIZE = "128K"


@dataclass(frozen=True)
class Memdev:
    """A cxl-type3 device. serial None: QEMU's default, which the kernel
    reads as no serial number."""
    size: str = "256M"
    serial: int | None = None


@dataclass(frozen=True)
class HostBridge:
    """A pxb-cxl host bridge; each root port holds a memdev or nothing."""
    ports: tuple


@dataclass(frozen=True)
class CxlTopology:
    bridges: tuple
    window: str = "4G"  # each host bridge's CFMWS window
    hypervisor_bit: bool = False
    pcie_ports_compat: bool = True

    def memdevs(self):
        """(index, bridge index, port index, Memdev) in command-line order."""
        out = []
        for b, bridge in enumerate(self.bridges):
            for p, mem in enumerate(bridge.ports):
                if mem is not None:
                    out.append((len(out), b, p, mem))
        return out

    def backing_files(self, run_dir):
        """{path: size} of every memdev's pmem and label backend."""
        files = {}
        for i, _, _, mem in self.memdevs():
            files[f"{run_dir}/cxl-pmem{i}.raw"] = mem.size
            files[f"{run_dir}/cxl-lsa{i}.raw"] = LSA_SIZE
        return files

    def machine(self):
        windows = ",".join(f"cxl-fmw.{b}.targets.0=cxl.{b + 1},cxl-fmw.{b}.size={self.window}"
                           for b in range(len(self.bridges)))
        return f"q35,cxl=on,{windows}"

    def cpu(self):
        return "max" if self.hypervisor_bit else "max,hypervisor=off"

    def cmdline(self):
        return "pcie_ports=compat" if self.pcie_ports_compat else ""

    def qemu_args(self, run_dir):
        """The devices and backends (the machine and CPU: machine(), cpu())."""
        args, slot = [], 2
        for b, bridge in enumerate(self.bridges):
            # Bus numbers far enough apart for each bridge's root ports.
            args += ["-device", f"pxb-cxl,bus_nr={12 + 16 * b},bus=pcie.0,id=cxl.{b + 1}"]
            for p in range(len(bridge.ports)):
                args += ["-device", f"cxl-rp,port={p},bus=cxl.{b + 1},id=rp{b}-{p},"
                                    f"chassis=0,slot={slot}"]
                slot += 1
        files = self.backing_files(run_dir)
        for i, b, p, mem in self.memdevs():
            pmem, lsa = f"{run_dir}/cxl-pmem{i}.raw", f"{run_dir}/cxl-lsa{i}.raw"
            args += ["-object", f"memory-backend-file,id=cxl-mem{i},share=on,mem-path={pmem},"
                                f"size={files[pmem]}",
                     "-object", f"memory-backend-file,id=cxl-lsa{i},share=on,mem-path={lsa},"
                                f"size={files[lsa]}"]
            dev = f"cxl-type3,bus=rp{b}-{p},memdev=cxl-mem{i},lsa=cxl-lsa{i},id=cxl-pmem{i}"
            if mem.serial is not None:
                dev += f",sn={mem.serial:#x}"
            args += ["-device", dev]
        return args


# The shared `cxl` boot (tests/vm/README.md, "CXL"): cxl.1 with two root ports
# (a memdev with a region and filesystems; one never given a region: QEMU 7.2
# gives the host bridge one HDM decoder, and the first region holds it), cxl.2
# with one (6.1 treats it as a passthrough port; no serial number), cxl.3 with
# a memdev whose region and namespace daxprobe's remedies make (its second,
# empty root port keeps 6.1 from treating the bridge as a passthrough).
SHARED = CxlTopology(bridges=(
    HostBridge(ports=(Memdev(size="1G", serial=0x1), Memdev(serial=0x3))),
    HostBridge(ports=(Memdev(),)),
    HostBridge(ports=(Memdev(serial=0x4), None)),
))
# The small boots whose kernel command line or CPU differs (6.12 and later
# need no second root port): one memdev.
_SMALL = (HostBridge(ports=(Memdev(serial=0x1),)),)
NO_MEMDEV = CxlTopology(bridges=_SMALL, pcie_ports_compat=False)
NO_COMMIT = CxlTopology(bridges=_SMALL, hypervisor_bit=True)
