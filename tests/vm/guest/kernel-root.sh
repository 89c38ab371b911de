#!/bin/sh
# PID 1 of the initramfs when the kernel command line says daxprobe.root=kernel
# (guest/init): what the kernel's init/do_mounts.c does for a root= block
# device, done from an initramfs because Debian's kernels build nfit,
# libnvdimm, nd_pmem and virtio_pmem as modules (Kata's guest kernel has them
# built in and needs no initramfs). As the kernel does (prepare_namespace,
# mount_root, mount_block_root, 6.1-7.2):
#   - the device is root='s /dev/NAME looked up in sysfs (its dev attribute,
#     MAJ:MIN), waited for as with rootwait;
#   - the node is /dev/root, made in the initramfs's own rootfs (never in a
#     devtmpfs), so it does not exist once the root is switched;
#   - mounted on /root with rootfstype=, flags MS_RDONLY unless rw (the
#     kernel's default root_mountflags) and rootflags= as the data string;
#   - then the new root becomes / and its /init runs (switch_root: mount
#     --move and chroot, as the kernel's init_mount(".", "/", MS_MOVE) and
#     init_chroot(".")).
# So the guest's mountinfo shows the line Kata's guests show:
#   NN NN 259:1 / / ro,relatime - ext4 /dev/root ro,...
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t sysfs sysfs /sys
say() { echo "DAXPROBE-STEP kernel-root: $*" > /dev/console; }
cmdline=$(cat /proc/cmdline)
arg() { for w in $cmdline; do case "$w" in "$1"=*) echo "${w#*=}"; return;; esac; done; }
flag=ro
for w in $cmdline; do case "$w" in ro) flag=ro ;; rw) flag=rw ;; esac; done
root=$(arg root)
fstype=$(arg rootfstype)
flags=$(arg rootflags)

# What Kata's guest kernel has built in (busybox modprobe ignores softdeps:
# crc32c before ext4); virtio_console for the results port of the root's init.
for m in virtio_pci virtio_console nfit nd_pmem nd_btt dax_pmem device_dax virtio_pmem \
         crc32c_generic crc32c_intel ext4; do
    modprobe $m 2>/dev/null
done

name=${root#/dev/}
i=0
while [ ! -r /sys/class/block/$name/dev ] && [ $i -lt 400 ]; do
    sleep 0.05; i=$((i + 1))
done
if [ ! -r /sys/class/block/$name/dev ]; then
    say "no block device $name for root=$root"
    poweroff -f
fi
majmin=$(cat /sys/class/block/$name/dev)
mknod /dev/root b ${majmin%:*} ${majmin#*:}
opts=$flag
[ -n "$flags" ] && opts="$opts,$flags"
if ! mount -t "$fstype" -o "$opts" /dev/root /root; then
    say "mount -t $fstype -o $opts /dev/root ($root, $majmin) failed"
    poweroff -f
fi
say "mounted $root ($majmin) as /dev/root -o $opts"
umount /sys
umount /proc
exec switch_root /root /init
