#!/bin/sh
# Prints what a guest's sysfs shows of its virtio-serial ports, for
# fixtures/guest-vports.txt (the udev rule test builds a fake sysfs from it).
# Boot it as rdinit= appended to the test initramfs, with two ports:
# org.daxprobe.agent.0 and org.qemu.guest_agent.0 (see test_udev_rule.py).
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
modprobe virtio_pci 2>/dev/null; modprobe virtio_console 2>/dev/null
echo CAPTURE-BEGIN
for p in /sys/class/virtio-ports/vport*; do
  d=$(readlink -f $p)
  echo "PORT $p -> $(readlink $p) real=$d"
  echo "SUBSYSTEM $(readlink $d/subsystem)"
  echo "DEVICE $(readlink $d/device)"
  for a in name dev uevent; do echo "ATTR $a:"; cat $d/$a | sed 's/^/  | /'; done
  ls -la $d | sed 's/^/  ls /'
done
echo CAPTURE-END
poweroff -f
