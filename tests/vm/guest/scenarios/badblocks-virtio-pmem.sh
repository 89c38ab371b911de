# badblocks-ext4 on virtio-pmem: a bus without a control function, where a
# write clears poison, so daxprobe prints the rewrite and the guest runs it.
. /daxprobe-vm/scenarios/badblocks-ext4.sh
