# Kata Containers' guest image as its root (kata-* scenarios, scenarios.py):
# the kernel's own answers about the root it mounted, then daxprobe's check.
# The root is read-only: the file read here is in the image
# (harness/kata_image.py READ_FILE).
KATA_FILE=/kata/read-32m.bin

scenario_prepare() {
    DAXPROBE_ARGS="--path $KATA_FILE"
    # daxprobe's own fault profile of a read-only mapping of the same file
    # (profile.json), against the tracepoints counted below.
    DAXPROBE_PROFILE="--path $KATA_FILE"
    # The root's mountinfo line and the device behind its major:minor.
    awk '$5 == "/"' /proc/self/mountinfo > $R/kernel-root-mountinfo.txt
    majmin=$(awk '$5 == "/" {print $3}' /proc/self/mountinfo)
    sys=$(readlink -f /sys/dev/block/$majmin)
    {
        echo "majmin=$majmin"
        echo "name=${sys##*/}"
        if [ -e /dev/root ]; then echo "dev_root_exists=yes"; else echo "dev_root_exists=no"; fi
        if [ -e $sys/partition ]; then
            disk=$(basename $(dirname $sys))
            echo "partition=$(cat $sys/partition)"
            echo "start_sectors=$(cat $sys/start)"
        else
            disk=${sys##*/}
        fi
        echo "disk=$disk"
        echo "disk_ro=$(cat /sys/block/$disk/ro)"
        echo "queue_dax=$(cat /sys/block/$disk/queue/dax)"
        # The disk's device is the fsdax info block's (pfnN.M), which names
        # its namespace; its resource is where the data starts in physical
        # memory: the filesystem's first byte is that plus the partition's start.
        holder=$(readlink -f /sys/block/$disk/device)
        case "${holder##*/}" in
            pfn*)
                echo "pfn=${holder##*/}"
                echo "pfn_resource=$(cat $holder/resource)"
                echo "pfn_mode=$(cat $holder/mode)"
                echo "pfn_align=$(cat $holder/align)"
                echo "namespace=$(cat $holder/namespace)" ;;
            *)  echo "namespace=${holder##*/}" ;;
        esac
        region=$(basename $(dirname $holder))
        echo "region=$region"
        echo "region_ro=$(cat /sys/bus/nd/devices/$region/read_only)"
    } > $R/kernel-root-dev.txt
    ndctl list -N > $R/kernel-ndctl-N.json 2>&1
    ndctl list -DR > $R/kernel-ndctl-DR.json 2>&1

    # statx and MAP_SYNC of the file (read-only: an O_RDONLY file, PROT_READ).
    attrs=$(xfs_io -r -c 'statx -r' $KATA_FILE 2>&1 | awk '/^stat.attributes = / {print $3}')
    ms=$(xfs_io -r -c 'mmap -r -S 0 4096' $KATA_FILE 2>&1)
    if [ $? = 0 ] && [ -z "$ms" ]; then ms=ok; else ms="refused: $(echo $ms)"; fi
    printf 'path=%s\nattributes=%s\nmap_sync=%s\n' $KATA_FILE "$attrs" "$ms" > $R/kernel-root-file.txt

    # Cached growth on a read of the 32 MiB file.
    drop_caches
    before=$(meminfo_cached)
    cat $KATA_FILE > /dev/null
    after=$(meminfo_cached)
    printf 'file=%s\nbefore_kb=%s\nafter_kb=%s\ndelta_kb=%s\n' $KATA_FILE "$before" "$after" \
        $((after - before)) > $R/cached.txt

    # fs_dax tracepoints over a read of every page of a fresh mapping: each
    # 2 MiB fault's result (NOPAGE: a PMD mapping; FALLBACK: 4 KiB pages).
    T=/sys/kernel/tracing
    if [ -d $T/events/fs_dax ]; then
        echo 0 > $T/tracing_on
        echo > $T/trace
        echo 1 > $T/events/fs_dax/dax_pmd_fault_done/enable
        echo 1 > $T/tracing_on
        run xfs_io -r -c 'mmap -r 0 32m' -c 'mread 0 32m' $KATA_FILE
        echo 0 > $T/tracing_on
        echo 0 > $T/events/fs_dax/dax_pmd_fault_done/enable
        # Only the file's faults: the programs run from the DAX root fault too.
        ino=$(printf '%x' $(stat -c %i $KATA_FILE))
        grep "dax_pmd_fault_done: dev $majmin ino 0x$ino " $T/trace > $R/kernel-fs-dax-trace.txt
        {
            echo "pmd_fault_done=$(grep -c dax_pmd_fault_done $R/kernel-fs-dax-trace.txt)"
            echo "fallback=$(grep -c ' FALLBACK$' $R/kernel-fs-dax-trace.txt)"
            echo "nopage=$(grep -c ' NOPAGE$' $R/kernel-fs-dax-trace.txt)"
        } > $R/kernel-fs-dax.txt
        echo > $T/trace
    else
        echo "no_fs_dax_events=1" > $R/kernel-fs-dax.txt
    fi
}
