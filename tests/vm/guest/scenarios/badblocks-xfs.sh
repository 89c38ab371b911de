# As badblocks-ext4 (whose helpers this uses), on XFS -o dax=always with
# rmapbt: GETFSMAP names the owners.
. /daxprobe-vm/scenarios/badblocks-ext4.sh

scenario_prepare() { badblocks_prepare xfs dax=always; }
