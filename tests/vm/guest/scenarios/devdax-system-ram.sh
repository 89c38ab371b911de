# A devdax namespace handed to the page allocator: `daxctl reconfigure-device
# --mode=system-ram` binds kmem, and its memory comes online as system RAM.
# ndctl still says devdax; daxctl says system-ram: the memory is RAM now, not
# persistent, and /dev/dax0.0 is gone.
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m devdax
    run modprobe kmem
    grep MemTotal /proc/meminfo >> $R/commands.log
    run daxctl reconfigure-device --mode=system-ram --force dax0.0
    grep MemTotal /proc/meminfo >> $R/commands.log
    # after devdax in its boot: the region still lists devdax's machine check
    ndctl list -N -n namespace0.0 --media-errors > $R/media-errors-system-ram.json \
        2>> $R/commands.log
}
