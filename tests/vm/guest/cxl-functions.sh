# Helpers for the CXL scenarios (sourced by guest/scenarios/cxl*.sh; /init's
# run, step and $R are in scope). The guest names memdevs and regions in
# probe order, so a scenario finds its memdev by the serial number the host
# gave it (harness/cxl_topology.py) and never hard-codes memN or regionN.

# cxl_load: the CXL drivers, the root (cxl_acpi, which adds the nvdimm
# bridge) and the nvdimm drivers before the memdevs' (busybox has no udev).
cxl_load() {
    for m in cxl_acpi cxl_pmem cxl_mem cxl_pci; do
        run modprobe $m
    done
    nd_settle
}

# nd_settle: libnvdimm registers its devices asynchronously; reading a bus's
# wait_probe returns once they are probed (what libndctl does itself).
nd_settle() {
    for w in /sys/bus/nd/devices/ndbus*/wait_probe; do
        [ -r "$w" ] && cat "$w" > /dev/null
    done
}

# cxl_memdev SERIAL: the memdev whose serial is SERIAL (sysfs prints %#llx:
# 0x1, and 0 for a device without one); compared as numbers.
cxl_memdev() {
    for m in /sys/bus/cxl/devices/mem*; do
        s=$(cat $m/serial 2>/dev/null) || continue
        [ $((s)) = $(($1)) ] && { echo ${m##*/}; return 0; }
    done
    return 1
}

# cxl_root_decoder MEM: the root decoder (a CFMWS window) whose target is
# MEM's host bridge. The memdev sits below the PCI root bus pci0000:BB, where
# BB (hex) is the host bridge's _UID, which a root decoder's target_list names
# in decimal.
cxl_root_decoder() {
    bb=$(readlink -f /sys/bus/cxl/devices/$1 | sed -n 's,.*/pci0000:\([0-9a-f]*\)/.*,\1,p')
    [ -n "$bb" ] || return 1
    for d in /sys/bus/cxl/devices/decoder0.*; do
        [ "$(cat $d/target_list)" = "$((0x$bb))" ] && { echo ${d##*/}; return 0; }
    done
    return 1
}

# cxl_make_region MEM: a pmem region of all of MEM through its host bridge's
# window; prints the region's name, or fails. `cxl create-region` exits 0
# after a failed commit ("created 0 regions"), so the region must then be
# committed in sysfs.
cxl_make_region() {
    dec=$(cxl_root_decoder $1) || { echo "+ no root decoder for $1" >> $R/commands.log; return 1; }
    echo "+ cxl create-region -m -t pmem -d $dec -w 1 $1" >> $R/commands.log
    out=$(cxl create-region -m -t pmem -d $dec -w 1 $1 2>> $R/commands.log)
    rc=$?
    printf '%s\n= %s\n' "$out" $rc >> $R/commands.log
    nd_settle
    reg=$(echo "$out" | sed -n 's/.*"region":"\(region[0-9]*\)".*/\1/p' | head -n1)
    [ -n "$reg" ] && [ "$(cat /sys/bus/cxl/devices/$reg/commit 2>/dev/null)" = 1 ] || return 1
    echo $reg
}

# nd_region_of CXLREGION: the libnvdimm region cxl_pmem made of it (the same
# physical range), or nothing (7.2 makes none for a memdev without a serial).
nd_region_of() {
    start=$(cat /sys/bus/cxl/devices/$1/resource)
    for r in /sys/bus/nd/devices/region*; do
        [ "$(cat $r/resource 2>/dev/null)" = "$start" ] && { echo ${r##*/}; return 0; }
    done
    return 1
}

# cxl_namespace REGION MODE SIZE: a namespace there; prints its block device
# (fsdax) or character device (devdax) as ndctl reports it. Its struct pages
# in RAM (-M mem): QEMU emulates the CXL window as I/O memory, so writing
# them into the device took the three namespaces 5.6 s instead of 2.5 s.
cxl_namespace() {
    echo "+ ndctl create-namespace -r $1 -m $2 -s $3" >> $R/commands.log
    out=$(ndctl create-namespace -r $1 -m $2 -M mem -s $3 2>> $R/commands.log)
    rc=$?
    echo "$out" >> $R/commands.log
    echo "= $rc" >> $R/commands.log
    [ $rc = 0 ] || return 1
    echo "$out" | sed -n 's/.*"blockdev":"\([^"]*\)".*/\1/p; s/.*"chardev":"\([^"]*\)".*/\1/p' | head -n1
}

# cxl_mount FSTYPE DEV DIR OPTS NAME: mkfs and mount, the outcome in
# $R/mount-NAME.txt; a 2 MiB file in it with the kernel's view of it
# ($R/kernel-NAME.txt).
cxl_mount() {
    mkfs_dev $1 $2
    mkdir -p $3
    out=$(mount -t $1 -o $4 $2 $3 2>&1)
    rc=$?
    printf 'rc=%s\nfstype=%s\ndev=%s\nopts=%s\nmessage=%s\n' "$rc" "$1" "$2" "$4" "$out" > $R/mount-$5.txt
    echo "+ mount -t $1 -o $4 $2 $3 -> $rc: $out" >> $R/commands.log
    [ $rc = 0 ] || return 1
    run dd if=/dev/zero of=$3/testfile bs=1M count=2 conv=fsync
    kernel_view $5 $3/testfile
}

# cxl_reference: the kernel's CXL objects as `cxl list` shows them (every
# object, disabled ones and partitions too), after the scenario's setup.
cxl_reference() {
    cxl list -vvv > $R/cxl-list.json 2> $R/cxl-list.stderr
    echo $? > $R/cxl-list.rc
}

# cxl_region_of MEM: the region MEM's endpoint decoder decodes for, as sysfs
# says (`cxl list -R -m MEM` lists every region, not MEM's), or nothing.
cxl_region_of() {
    mem=$(readlink -f /sys/bus/cxl/devices/$1)
    for d in /sys/bus/cxl/devices/decoder*; do
        [ "$(readlink -f $d/../uport)" = "$mem" ] || continue
        r=$(cat $d/region 2>/dev/null)
        [ -n "$r" ] && { echo $r; return 0; }
    done
    return 1
}

# remedy_for JSON PREFIX WORD: the first remedy in daxprobe's JSON report JSON
# that starts with PREFIX and names WORD (a memdev, an nd region), as printed.
remedy_for() {
    grep -o "\"remedy\": \"$2 [^\"]*\b$3\b[^\"]*\"" $1 | head -n1 | sed 's/^"remedy": "//; s/"$//'
}

# run_remedy NAME JSON PREFIX WORD: that remedy run verbatim by a shell, as a
# person would paste it: $R/NAME-cmd.txt, its output $R/NAME-out.txt, its
# exit status $R/NAME.rc.
run_remedy() {
    cmd=$(remedy_for $2 "$3" $4)
    echo "$cmd" > $R/$1-cmd.txt
    echo "+ $cmd" >> $R/commands.log
    sh -c "$cmd" > $R/$1-out.txt 2>&1
    echo $? > $R/$1.rc
    nd_settle
}
