# devdax namespace: a character device /dev/dax0.0, no filesystem.
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m devdax
    ls -l /dev/dax* >> $R/commands.log 2>&1
}
