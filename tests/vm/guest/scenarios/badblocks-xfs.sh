# As badblocks-ext4 (whose helpers this uses), on XFS -o dax=always: a file's
# sectors only.
. /daxprobe-vm/scenarios/badblocks-ext4.sh

scenario_prepare() { badblocks_prepare xfs dax=always; }
