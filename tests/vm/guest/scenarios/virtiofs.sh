# virtio-fs: QEMU 7.2's virtiofsd shares a host folder (tag daxprobe-share,
# data.bin: 32 MiB; harness/virtiofsd.py), no NVDIMM. The kernel's answers
# go to $R/kernel-virtiofs.txt: each mount's exit status (-o dax must be refused
# without a DAX window, -o dax=inode accepted), the mountinfo line, and
# Cached around a cold read of data.bin (the guest's page cache holds it,
# until the next open: FUSE drops an inode's pages on open unless the
# daemon says keep_cache, which virtiofsd's cache=auto does not).
VFS_MNT=/mnt/virtiofs

vfs_mount() { # NAME [OPTIONS]: mount the share, record its exit status
    name=$1; shift
    run mount -t virtiofs "$@" daxprobe-share $VFS_MNT
    echo "mount_$name=$?" >> $R/kernel-virtiofs.txt
}

scenario_prepare() {
    run modprobe virtiofs
    mkdir -p $VFS_MNT
    : > $R/kernel-virtiofs.txt
    vfs_mount dax -o dax && run umount $VFS_MNT
    vfs_mount dax_inode -o dax=inode && run umount $VFS_MNT
    vfs_mount plain
    echo "mountinfo=$(grep ' - virtiofs ' /proc/self/mountinfo)" >> $R/kernel-virtiofs.txt
    drop_caches
    before=$(meminfo_cached)
    cat $VFS_MNT/data.bin > /dev/null
    after=$(meminfo_cached)
    echo "cached_delta_kb=$((after - before))" >> $R/kernel-virtiofs.txt
    kernel_view data $VFS_MNT/data.bin
    DAXPROBE_ARGS="--path $VFS_MNT/data.bin"
}
