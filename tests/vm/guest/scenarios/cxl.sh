# The shared CXL boot (harness/cxl_topology.py SHARED; tests/vm/README.md,
# "CXL"). Stage 1: a pmem region of the memdev with serial 0x1, on it fsdax
# ext4 (-o dax), fsdax XFS (-o dax=always, >= 300 MB) and a devdax namespace.
# Stage 2: a region of the memdev without a serial, alone on its host bridge
# (6.1: a passthrough port whose decoder is never committed: never written
# to, no namespace; 7.2: no nd region; 6.12: a region left without a
# namespace); the memdev with serial 0x3 never gets a region.
# $R/cxl-setup.txt names what was made, for the host's checks.
. /daxprobe-vm/cxl-functions.sh

# Stage 1, each step only on the one before it (cxl-setup.txt says how far it got).
cxl_filesystems() {
    mem=$(cxl_memdev 0x1) || return 1
    echo "mem=$mem" > $R/cxl-setup.txt
    step "cxl region"
    region=$(cxl_make_region $mem) || return 1
    nd=$(nd_region_of $region) || return 1
    printf 'region=%s\nnd_region=%s\n' "$region" "$nd" >> $R/cxl-setup.txt
    step "cxl namespaces"
    ext4=$(cxl_namespace $nd fsdax 256M) || return 1
    xfs=$(cxl_namespace $nd fsdax 384M) || return 1
    devdax=$(cxl_namespace $nd devdax 256M) || return 1
    printf 'ext4=%s\nxfs=%s\ndevdax=%s\n' "$ext4" "$xfs" "$devdax" >> $R/cxl-setup.txt
    step "cxl ext4"
    cxl_mount ext4 /dev/$ext4 /mnt/cxl-ext4 dax ext4 || return 1
    step "cxl xfs"
    cxl_mount xfs /dev/$xfs /mnt/cxl-xfs dax=always xfs
}

scenario_prepare() {
    cxl_load
    cxl_filesystems
    DAXPROBE_ARGS="--path /mnt/cxl-ext4/testfile --path /mnt/cxl-xfs/testfile"
    step "cxl stage 2"
    lone=$(cxl_memdev 0x0)
    lone_region=$(cxl_make_region $lone)
    printf 'lone=%s\nlone_region=%s\nlone_nd_region=%s\nunused=%s\n' "$lone" "$lone_region" \
        "$([ -n "$lone_region" ] && nd_region_of $lone_region)" "$(cxl_memdev 0x3)" >> $R/cxl-setup.txt
    cxl_reference
}

# What a person reads first: the human report of the same machine.
scenario_after() {
    daxprobe check $DAXPROBE_ARGS > $R/check-text.txt 2> $R/check-text.stderr
}
