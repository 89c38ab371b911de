# CXL with the CPU's hypervisor bit on (harness/cxl_topology.py NO_COMMIT):
# since 6.2 the region's commit fails ("Failed to synchronize CPU cache
# state"), and `cxl create-region` still exits 0.
. /daxprobe-vm/cxl-functions.sh

scenario_prepare() {
    cxl_load
    mem=$(cxl_memdev 0x1)
    region=$(cxl_make_region $mem)
    printf 'mem=%s\nregion=%s\n' "$mem" "$region" > $R/cxl-setup.txt
    cxl_reference
}
