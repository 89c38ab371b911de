# One boot of the appliance (bench/appliance.py): bring up the root device
# of daxprobe.variant (blk | nvdimm | nvdimm-dax | virtio-pmem | nvdimm-erofs |
# virtiofs, the last two for bench/sharing.py), mount it, run
# the fixed workload from it (under `daxprobe profile -- ...` when this
# daxprobe has it, else busybox `time -v` plus /proc/vmstat and the fs_dax
# tracepoints, labelled "fallback"), then `daxprobe agent` reports to the host
# until the host says "shutdown". steps.log has the guest uptime of each step.
DAXPROBE_REFERENCE=0
ROOT=/mnt/root

wait_for() {
    i=0
    while [ ! -e "$1" ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i + 1)); done
    [ -e "$1" ]
}

root_device() {
    case "$1" in
        blk) wait_for /dev/vda && echo /dev/vda ;;
        virtiofs) echo daxprobe-share ;;  # the tag (harness VIRTIOFS_TAG)
        *) i=0
           while [ -z "$(first_pmem)" ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i + 1)); done
           d=$(first_pmem) && wait_for "$d" && echo "$d" ;;
    esac
}

# The fs_dax tracepoints, counted by hist triggers keyed on the fault result
# (fallback only): exact counts, nothing written to the ring buffer and no
# trace text to parse, so counting costs the workload and the boot nothing.
DAX_EVENTS="dax_pmd_fault_done dax_pte_fault_done"
trace_on() {
    E=/sys/kernel/tracing/events/fs_dax
    [ -d $E ] || return 0
    for e in $DAX_EVENTS; do echo 'hist:keys=result' > $E/$e/trigger; done
}
trace_off() {
    E=/sys/kernel/tracing/events/fs_dax
    [ -d $E ] || return 0
    for e in $DAX_EVENTS; do
        cat $E/$e/hist > $R/fallback-hist-$e.txt
        echo '!hist:keys=result' > $E/$e/trigger
    done
}

run_workload() {
    set -- chroot $ROOT /usr/bin/bash /appliance/workload.sh
    if daxprobe profile --json -- true > /tmp/probe.json 2>/dev/null &&
        grep -q '"daxprobe.profile/1"' /tmp/probe.json && grep -q '"command"' /tmp/probe.json; then
        echo profile > $R/profile-mode
        daxprobe profile --json -- "$@" > $R/profile.json 2> $R/profile.stderr
        echo $? > $R/profile.rc
    else
        echo fallback > $R/profile-mode
        trace_on
        cat /proc/meminfo > $R/fallback-meminfo-before.txt
        cat /proc/vmstat > $R/fallback-vmstat-before.txt
        cut -d' ' -f1 /proc/uptime > $R/fallback-uptime-before.txt
        time -v -o $R/fallback-time.txt "$@"
        echo $? > $R/profile.rc
        cut -d' ' -f1 /proc/uptime > $R/fallback-uptime-after.txt
        cat /proc/vmstat > $R/fallback-vmstat-after.txt
        cat /proc/meminfo > $R/fallback-meminfo-after.txt
        trace_off
    fi
}

# Who could need the SWIOTLB bounce buffer (is swiotlb=noforce safe?): each
# PCI device's DMA mask and driver, each virtio device's feature bits (bit 33,
# ACCESS_PLATFORM, is the only way a virtio driver goes through the DMA API),
# and the bounce buffer's slabs in use after the workload.
dma_facts() {
    for d in /sys/bus/pci/devices/*; do
        drv=$(readlink $d/driver)
        echo "${d##*/} $(cat $d/vendor):$(cat $d/device) class=$(cat $d/class)" \
             "dma_mask_bits=$(cat $d/dma_mask_bits) driver=${drv##*/}"
    done > $R/pci-dma.txt
    for d in /sys/bus/virtio/devices/*; do
        echo "${d##*/} device=$(cat $d/device) features=$(cat $d/features)"
    done > $R/virtio-features.txt
    mount -t debugfs debugfs /sys/kernel/debug 2> /dev/null
    cat /sys/kernel/debug/swiotlb/io_tlb_used > $R/swiotlb-used 2> /dev/null
}

scenario_prepare() {
    variant=$(arg daxprobe.variant)
    echo "$variant" > $R/variant
    fstype=ext4
    case "$variant" in
        blk) mods="virtio_blk"; opts="" ;;
        nvdimm) mods="nfit nd_pmem"; opts="" ;;
        nvdimm-dax) mods="nfit nd_pmem"; opts="dax" ;;
        virtio-pmem) mods="virtio_pmem nd_pmem"; opts="dax" ;;
        # EROFS made with -E noinline_data (every file DAX), read-only by design
        nvdimm-erofs) mods="nfit nd_pmem erofs"; opts="dax"; fstype=erofs ;;
        virtiofs) mods="virtiofs"; opts="" ; fstype=virtiofs ;;
        *) echo "unknown variant '$variant'" > $R/error.txt; return 1 ;;
    esac
    step "root-modprobe $mods"
    for m in $mods; do run modprobe $m; done
    step "root-modprobed"
    dev=$(root_device $variant) || { echo "no root device for $variant" > $R/error.txt; return 1; }
    step "root-device $dev"
    case "$variant" in
        blk) ;;
        virtiofs) ;;  # no block device: read-only is the mount's ro (root-mountinfo)
        *) cat /sys/block/${dev#/dev/}/queue/dax > $R/queue-dax ;;
    esac
    [ "$variant" = virtiofs ] || cat /sys/block/${dev#/dev/}/ro > $R/block-ro
    mkdir -p $ROOT
    # A root shared read-only by several guests (bench/sharing.py): no
    # journal replay (ext4's noload), nothing written.
    if [ "$(arg daxprobe.ro)" = 1 ]; then
        case "$fstype" in ext4) opts="ro,noload${opts:+,$opts}" ;; *) opts="ro${opts:+,$opts}" ;; esac
    fi
    if [ -n "$opts" ]; then
        run mount -t $fstype -o $opts $dev $ROOT
    else
        run mount -t $fstype $dev $ROOT
    fi || { echo "mount of $dev failed" > $R/error.txt; return 1; }
    # The kernel's own answer about the root's DAX (sharing.py --check).
    grep " $ROOT " /proc/self/mountinfo > $R/root-mountinfo
    # The workload runs chrooted in the appliance: it needs /dev, /proc and a
    # scratch /tmp (tmpfs, so it writes nothing to the root).
    mount --bind /dev $ROOT/dev && mount -t proc proc $ROOT/proc && mount -t tmpfs tmpfs $ROOT/tmp
    step "root-mounted"
    run_workload
    step "workload-done"
    cat /proc/meminfo > $R/meminfo-after-workload.txt
    dma_facts
    cp $ROOT/tmp/workload.log $R/workload.log 2>/dev/null
}

scenario_after() {
    [ -n "$AGENT_PORT" ] || { echo "no org.daxprobe.agent.0 port" > $R/error.txt; return; }
    step "agent"
    daxprobe agent --device "$AGENT_PORT" --interval 3600 --recheck 0 > $R/agent.log 2>&1 &
    # The host bounds the wait (sharing.py: --timeout x N); an incremental
    # sweep keeps N=1's guest up through every later wave and ksmd's scans.
    wait_host 3600 > $R/host-said.txt
    step "shutdown"
    pid=$(pidof daxprobe)
    [ -n "$pid" ] && kill -TERM $pid
    wait
    umount $ROOT/tmp $ROOT/proc $ROOT/dev
    run umount $ROOT
    step "unmounted"
}
