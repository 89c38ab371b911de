# EROFS on an fsdax namespace, mounted -o dax (issue 34): an image made by
# mkfs.erofs with its defaults from three files: small (all of it fits in
# the inode's block), tail (two 4 KiB blocks and a tail) and whole (four
# whole 4 KiB blocks). The kernel's answer per file: xfs_io's statx -r
# (STATX_ATTR_DAX) and fiemap -v (the inline flag). After the check, the
# remedy it printed is run as printed (SOURCE_DIR: the tree the image was
# made from), then the kernel's answers and the check again. Last, one
# image made with mkfs.erofs -zlz4 (compressed files are never DAX): the
# kernel's answers and a check on it; /proc/uptime around it for its cost.

EROFS_SRC=/tmp/erofs-src
EROFS_FILES="small tail whole"
EROFS_LZ4_SRC=/tmp/erofs-lz4-src
EROFS_LZ4_FILES="text zeros noise"

# erofs_kernel_view WHEN: erofs-WHEN-statx-F.txt and erofs-WHEN-fiemap-F.txt
erofs_kernel_view() {
    for f in ${2:-$EROFS_FILES}; do
        xfs_io -r -c 'statx -r' $PMEM_MNT/$f > $R/erofs-$1-statx-$f.txt 2>&1
        xfs_io -r -c 'fiemap -v' $PMEM_MNT/$f > $R/erofs-$1-fiemap-$f.txt 2>&1
    done
}

scenario_prepare() {
    run modprobe erofs
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    EROFS_DEV=$(first_pmem)
    rm -rf $EROFS_SRC
    mkdir -p $EROFS_SRC
    run dd if=/dev/urandom of=$EROFS_SRC/small bs=100 count=1
    run dd if=/dev/urandom of=$EROFS_SRC/tail bs=1000 count=9
    run dd if=/dev/urandom of=$EROFS_SRC/whole bs=4096 count=4
    run mkfs.erofs $EROFS_DEV $EROFS_SRC
    mount_dev erofs $EROFS_DEV dax
    erofs_kernel_view before
}

scenario_after() {
    # The first mkfs.erofs remedy in the document, with the tree for SOURCE_DIR.
    cmd=$(sed -n 's/^ *"remedy": "\(.*mkfs\.erofs.*\)",\{0,1\}$/\1/p' $R/check.json | head -n 1)
    cmd=$(echo "$cmd" | sed "s|SOURCE_DIR|$EROFS_SRC|")
    echo "$cmd" > $R/erofs-remedy.txt
    echo "+ $cmd" >> $R/commands.log
    if [ -n "$cmd" ]; then
        sh -c "$cmd" > $R/erofs-remedy.out 2>&1
        echo "rc=$?" >> $R/erofs-remedy.txt
    fi
    erofs_kernel_view after
    daxprobe check --json > $R/erofs-check-after.json 2> $R/erofs-check-after.stderr
    echo $? > $R/erofs-check-after.rc
    erofs_lz4
}

# erofs_lz4: text and zeros compress, noise (random, whole blocks) does not.
erofs_lz4() {
    cut -d' ' -f1 /proc/uptime > $R/erofs-lz4-uptime.txt
    run umount $PMEM_MNT
    rm -rf $EROFS_LZ4_SRC
    mkdir -p $EROFS_LZ4_SRC
    yes daxprobe | head -c 65536 > $EROFS_LZ4_SRC/text
    run dd if=/dev/zero of=$EROFS_LZ4_SRC/zeros bs=4096 count=8
    run dd if=/dev/urandom of=$EROFS_LZ4_SRC/noise bs=4096 count=4
    run mkfs.erofs -zlz4 $EROFS_DEV $EROFS_LZ4_SRC
    echo "rc=$?" > $R/erofs-lz4-mkfs.txt
    run mount -t erofs -o dax $EROFS_DEV $PMEM_MNT
    echo "rc=$?" > $R/erofs-lz4-mount.txt
    erofs_kernel_view lz4 "$EROFS_LZ4_FILES"
    daxprobe check --json > $R/erofs-lz4-check.json 2> $R/erofs-lz4-check.stderr
    echo $? > $R/erofs-lz4-check.rc
    cut -d' ' -f1 /proc/uptime >> $R/erofs-lz4-uptime.txt
}
