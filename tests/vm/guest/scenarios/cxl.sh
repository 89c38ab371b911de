# The shared CXL boot (harness/cxl_topology.py SHARED; tests/vm/README.md,
# "CXL"). Stage 1: a pmem region of the memdev with serial 0x1, on it fsdax
# ext4 (-o dax), fsdax XFS (-o dax=always, >= 300 MB) and a devdax namespace.
# Stage 2: a region of the memdev without a serial, alone on its host bridge
# (6.1: a passthrough port whose decoder is never committed: never written
# to, no namespace; 7.2: no nd region; 6.12: a region left without a
# namespace); the memdev with serial 0x3 never gets a region (its host
# bridge's one decoder is region0's). After the check: daxprobe's remedies for
# the memdev with serial 0x4, run as printed (cxl_remedies).
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
    printf 'lone=%s\nlone_region=%s\nlone_nd_region=%s\nunused=%s\nspare=%s\n' "$lone" \
        "$lone_region" "$([ -n "$lone_region" ] && nd_region_of $lone_region)" \
        "$(cxl_memdev 0x3)" "$(cxl_memdev 0x4)" >> $R/cxl-setup.txt
    cxl_reference
}

# What a person reads first: the human report of the same machine.
scenario_after() {
    daxprobe check $DAXPROBE_ARGS > $R/check-text.txt 2> $R/check-text.stderr
    cxl_remedies
    cxl_unused_refused
}

# Issue 33: the remedies daxprobe printed for the spare memdev (serial 0x4),
# each run verbatim, the kernel's answer, and daxprobe's next check.
cxl_remedies() {
    step "cxl remedy: region"
    spare=$(cxl_memdev 0x4) || return 1
    run_remedy cxl-region-remedy $R/check.json "cxl create-region" $spare
    region=$(cxl_region_of $spare)
    [ -n "$region" ] && cxl list -R -v -r $region > $R/cxl-remedy-regions.json 2>> $R/commands.log
    nd=$([ -n "$region" ] && nd_region_of $region)
    printf 'spare_region=%s\nspare_nd_region=%s\n' "$region" "$nd" >> $R/cxl-setup.txt
    # No --path: the files were checked above; these checks are about the CXL section.
    step "cxl check after the region"
    daxprobe check --json > $R/cxl-check-after-region.json 2> $R/cxl-check-after-region.stderr
    [ -n "$nd" ] || return 1
    step "cxl remedy: namespace"
    run_remedy cxl-namespace-remedy $R/cxl-check-after-region.json "ndctl create-namespace" $nd
    ndctl list -N -r $nd > $R/cxl-ndctl-remedy-namespaces.json 2>> $R/commands.log
    step "cxl check after the namespace"
    daxprobe check --json > $R/cxl-check-after-namespace.json 2> $R/cxl-check-after-namespace.stderr
}

# daxprobe offers no region for the memdev with serial 0x3 (its host bridge
# has no free decoder): the command it used to offer, and what the kernel
# made of it. Last, so that whatever it leaves changes no check above.
cxl_unused_refused() {
    step "cxl unused: refused"
    unused=$(cxl_memdev 0x3) || return 1
    dec=$(cxl_root_decoder $unused) || return 1
    cxl create-region -m -t pmem -d $dec -w 1 $unused > $R/cxl-unused-out.txt 2>&1
    echo $? > $R/cxl-unused.rc
    cxl_region_of $unused > $R/cxl-unused-region.txt
    cxl list -R > $R/cxl-unused-regions.json 2>> $R/commands.log
}
