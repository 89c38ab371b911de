# ext4 with 1 KiB blocks (what mkfs.ext4 picks on a small device) on fsdax:
# `mount -o dax` fails ("unsupported blocksize for DAX"), then the filesystem
# is mounted without dax. Remounting with dax cannot help: only a filesystem
# made again with 4 KiB blocks can do DAX.
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    run mkfs.ext4 -F -q -b 1024 $dev
    mount_dev ext4 $dev dax && echo "dax mount unexpectedly succeeded" >> $R/error.txt
    cp $R/mount.txt $R/mount-first.txt
    mount_dev ext4 $dev ""
    run dd if=/dev/zero of=$PMEM_MNT/testfile bs=1M count=2 conv=fsync
    DAXPROBE_ARGS="--path $PMEM_MNT/testfile"
    kernel_view testfile $PMEM_MNT/testfile
}

# refusal NAME MKFS... -- MOUNT_OPTS: the kernel's other "cannot DAX" causes,
# one after another on the same device: make the filesystem, try the dax
# mount, mount as the kernel allows (without the refused option when the
# mount failed) and run `daxprobe check --json` on that (refusal-NAME.json).
refusal() {
    name=$1; shift
    fstype=$1; shift
    mk=""
    while [ "$1" != "--" ]; do mk="$mk $1"; shift; done
    shift
    umount $PMEM_MNT 2>/dev/null
    run mkfs.$fstype $mk $dev
    if ! mount_dev $fstype $dev "$1"; then
        mount_dev $fstype $dev ""
    fi
    cp $R/mount.txt $R/refusal-$name.mount
    daxprobe check --json > $R/refusal-$name.json 2> $R/refusal-$name.stderr
    echo $? > $R/refusal-$name.rc
}

scenario_after() {
    dev=$(first_pmem)
    refusal inline-data ext4 -F -q -b 4096 -O inline_data -- dax
    refusal data-journal ext4 -F -q -b 4096 -- dax,data=journal
    refusal xfs-blocksize xfs -f -q -b size=1024 -m reflink=0 -- dax=always
    # A remount cannot change dax: the mount in place stays DAX. The kernel's
    # answer (its line, mountinfo, statx and MAP_SYNC of a file) and
    # daxprobe's report after the refused remount.
    umount $PMEM_MNT
    mkfs_dev ext4 $dev
    mount_dev ext4 $dev dax
    run dd if=/dev/zero of=$PMEM_MNT/remountfile bs=1M count=2 conv=fsync
    run mount -o remount,dax=never $PMEM_MNT
    grep " $PMEM_MNT " /proc/self/mountinfo > $R/remount-mountinfo.txt
    kernel_view remount $PMEM_MNT/remountfile
    daxprobe check --json --path $PMEM_MNT/remountfile > $R/refusal-remount.json \
        2> $R/refusal-remount.stderr
    echo $? > $R/refusal-remount.rc
}
