# CXL with the CPU's hypervisor bit on (harness/cxl_topology.py NO_COMMIT):
# since 6.2 the region's commit fails ("Failed to synchronize CPU cache
# state"), and `cxl create-region` still exits 0. The host's side: the
# real collector reads QEMU's command line and maps and must count the
# cxl-type3 device's backends (cxl_checks.cxl_host).
. /daxprobe-vm/cxl-functions.sh

scenario_prepare() {
    cxl_load
    mem=$(cxl_memdev 0x1)
    region=$(cxl_make_region $mem)
    printf 'mem=%s\nregion=%s\n' "$mem" "$region" > $R/cxl-setup.txt
    cxl_reference
}

scenario_after() { agent_for_host; }
