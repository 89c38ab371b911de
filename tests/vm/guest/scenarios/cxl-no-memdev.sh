# CXL without pcie_ports=compat (harness/cxl_topology.py NO_MEMDEV): on 6.12
# and later cxl_pci refuses QEMU 7.2's type-3 ("Failed to get interrupt for
# event Info log"): no memdev, no region, no nd bus.
. /daxprobe-vm/cxl-functions.sh

scenario_prepare() {
    cxl_load
    cxl_reference
}
