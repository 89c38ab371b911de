# perf at perf_event_paranoid 2 for an unprivileged user (nobody): the kernel
# opens a page-fault counter only without kernel-mode events, so daxprobe's
# `profile -- CMD` counts user-mode faults only and must say so (perf_note)
# exactly when the kernel refuses the counter with kernel-mode events
# (kernel-answers' perf_kernel, same credentials).
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev xfs $dev
    mount_dev xfs $dev dax=always
    run dd if=/dev/zero of=$PMEM_MNT/testfile bs=1M count=8 conv=fsync
    PARANOID_WAS=$(cat /proc/sys/kernel/perf_event_paranoid)
    echo 2 > /proc/sys/kernel/perf_event_paranoid
    DAXPROBE_AS="/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups"
    DAXPROBE_ARGS="--path $PMEM_MNT/testfile"
}

scenario_after() {
    profile_cmd profile-user -- dd if=$PMEM_MNT/testfile of=/dev/null bs=1M
    echo "$PARANOID_WAS" > /proc/sys/kernel/perf_event_paranoid
}
