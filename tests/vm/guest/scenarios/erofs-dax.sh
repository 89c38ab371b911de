# EROFS on an fsdax namespace, mounted -o dax (issue 34): an image made by
# mkfs.erofs with its defaults from three files: small (all of it fits in
# the inode's block), tail (two 4 KiB blocks and a tail) and whole (four
# whole 4 KiB blocks). The kernel's answer per file: xfs_io's statx -r
# (STATX_ATTR_DAX) and fiemap -v (the inline flag). After the check, the
# remedy it printed is run as printed (SOURCE_DIR: the tree the image was
# made from), then the kernel's answers and the check again.

EROFS_SRC=/tmp/erofs-src
EROFS_FILES="small tail whole"

# erofs_kernel_view WHEN: erofs-WHEN-statx-F.txt and erofs-WHEN-fiemap-F.txt
erofs_kernel_view() {
    for f in $EROFS_FILES; do
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
}
