# fsdax, ext4 -o dax: a file with 8 of its sectors put on the disk's bad-block
# list (the list the pmem driver checks on every access), and 8 sectors no
# file holds. The kernel's answers: xfs_io's fiemap places the file, its
# fsmap names every block's owner, a read
# of its damaged page fails, the bus's commands say whether a write can
# clear poison. `daxprobe profile --path` on the file stops at the poisoned page. After the check, its remedy, then the kernel's list and a
# read again (badblocks_after).

# badblocks_prepare FSTYPE OPTS
badblocks_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    BB_DEV=$(first_pmem)
    BB_DISK=${BB_DEV#/dev/}
    # XFS with its reverse map (off by default in Debian 12's mkfs.xfs 6.1):
    # GETFSMAP then names each block's owner; ext4 has none.
    if [ "$1" = xfs ]; then
        run mkfs.xfs -f -q -d su=2m,sw=1,agcount=2 -m reflink=0,rmapbt=1 $BB_DEV
    else
        mkfs_dev $1 $BB_DEV
    fi
    mount_dev $1 $BB_DEV $2
    BB_FILE=$PMEM_MNT/data/damaged
    mkdir -p $PMEM_MNT/data
    run dd if=/dev/urandom of=$BB_FILE bs=1M count=1 conv=fsync
    cp $BB_FILE /tmp/badblocks-backup
    # The kernel's answer to "can this bus clear poison": its commands.
    cat /sys/bus/nd/devices/ndbus0/commands > $R/badblocks-bus-commands.txt 2>&1
    cat /sys/bus/nd/devices/ndbus0/provider > $R/badblocks-bus-provider.txt 2>&1
    # The kernel's placement of the file, in 512-byte units on the device:
    # " 0: [0..2047]: 264192..266239 2048 ..." (the first extent holds 1 MiB
    # or at least its first 128 KiB).
    xfs_io -r -c 'fiemap -v' $BB_FILE > $R/badblocks-fiemap.txt 2>&1
    first=$(awk '$1 == "0:" { split($3, a, "\\.\\."); print a[1] }' $R/badblocks-fiemap.txt)
    # bytes 65536-69631 of the file: its page 16
    sector=$((first + 128))
    echo "$sector 8" > /sys/block/$BB_DISK/badblocks
    # 8 sectors in the last MiB of the disk: no file is there
    free=$(( $(cat /sys/block/$BB_DISK/size) - 2048 ))
    echo "$free 8" > /sys/block/$BB_DISK/badblocks
    printf 'file=%s\nfirst=%s\nsector=%s\noffset=65536\nfree=%s\n' \
        "$BB_FILE" "$first" "$sector" "$free" > $R/badblocks-injected.txt
    cat /sys/block/$BB_DISK/badblocks > $R/badblocks-before.txt
    # The kernel's owners of every block (GETFSMAP, 512-byte units), and the
    # file's inode they name.
    xfs_io -r -c 'fsmap -d' $PMEM_MNT > $R/badblocks-fsmap.txt 2>&1
    stat -c %i $BB_FILE > $R/badblocks-inode.txt
    # ext4's on-disk answer (xfs_io's fsmap fails there): the damaged
    # block's inode, and whether the free range's block is in use.
    if [ "$1" = ext4 ]; then
        sync
        debugfs -R "icheck $((sector / 8))" $BB_DEV > $R/badblocks-debugfs.txt 2>&1
        debugfs -R "testb $((free / 8))" $BB_DEV >> $R/badblocks-debugfs.txt 2>&1
    fi
    read_page before
    # Touching the poisoned page through a DAX mapping raises SIGBUS: the
    # profile must stop there and say so, not die of it.
    daxprobe profile --path $BB_FILE --json > $R/badblocks-profile.json 2> $R/badblocks-profile.stderr
    echo $? > $R/badblocks-profile.rc
}

# read_page NAME: the kernel's answer: does a read of the damaged page fail?
read_page() {
    dd if=$BB_FILE of=/dev/null bs=4096 skip=16 count=1 > $R/badblocks-read-$1.txt 2>&1
    echo "rc=$?" >> $R/badblocks-read-$1.txt
}

# The remedy the check printed, run in the guest, then the kernel's list, a
# read and the check again. The rewrite (dd over the damaged page) is run
# whether printed or not: where daxprobe says the bus cannot clear poison,
# the kernel must refuse it (EIO). Without a rewrite, the printed restore:
# a copy (the backup) renamed over the file.
badblocks_after() {
    cmd=$(sed -n 's/^ *"rewrite": "\(.*\)",\{0,1\}$/\1/p' $R/check.json)
    [ -n "$cmd" ] || cmd="dd if=/dev/zero of=$BB_FILE bs=4096 seek=16 count=1 conv=notrunc oflag=direct"
    echo "$cmd" > $R/badblocks-rewrite.txt
    echo "+ $cmd" >> $R/commands.log
    sh -c "$cmd" > $R/badblocks-rewrite.out 2>&1
    echo "rc=$?" >> $R/badblocks-rewrite.txt
    cat /sys/block/$BB_DISK/badblocks > $R/badblocks-after-rewrite.txt
    if grep -q '"rewrite": null' $R/check.json; then
        run cp /tmp/badblocks-backup $BB_FILE.new && run mv $BB_FILE.new $BB_FILE
        cmp /tmp/badblocks-backup $BB_FILE > $R/badblocks-cmp.txt 2>&1
        echo "rc=$?" >> $R/badblocks-cmp.txt
    fi
    cat /sys/block/$BB_DISK/badblocks > $R/badblocks-after.txt
    read_page after
    daxprobe check --json > $R/badblocks-check-after.json 2> $R/badblocks-check-after.stderr
    echo $? > $R/badblocks-check-after.rc
}

scenario_prepare() { badblocks_prepare ext4 dax; }
scenario_after() { badblocks_after; }
