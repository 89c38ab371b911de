#!/bin/sh
# The same VM as libvirt-domain-nvdimm.xml, as a plain QEMU command line: an
# NVDIMM with a 128 KiB label area on a shared backing file, and the daxprobe
# agent's virtio-serial port. Point the collector at the socket with
#   daxprobe-collector run --socket vm1=/run/daxprobe-vm1.sock
#
# Prepare the backing file first (its own copy per VM: QEMU does not lock it):
#   truncate -s 512M /var/lib/daxprobe-vm1-nvdimm.img
exec qemu-system-x86_64 \
    -machine pc,nvdimm=on,accel=kvm:tcg -cpu max -smp 1 \
    -m 1G,slots=2,maxmem=4G \
    -object memory-backend-file,id=nvmem0,share=on,mem-path=/var/lib/daxprobe-vm1-nvdimm.img,size=512M \
    -device nvdimm,id=nvdimm0,memdev=nvmem0,label-size=128K \
    -drive file=/var/lib/daxprobe-vm1.qcow2,if=virtio \
    -device virtio-serial \
    -chardev socket,path=/run/daxprobe-vm1.sock,server=on,wait=off,id=daxprobe0 \
    -device virtserialport,chardev=daxprobe0,name=org.daxprobe.agent.0 \
    -nographic "$@"
