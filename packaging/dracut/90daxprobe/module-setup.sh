#!/bin/bash
# dracut module: daxprobe's boot check, run once the root is mounted
# (pre-pivot), with daxprobe.mode=warn|strict|off from the kernel command line.

check() {
    require_binaries daxprobe /usr/libexec/daxprobe/daxprobe-init-hook.sh || return 1
    # Installed means wanted, as with initramfs-tools' hook (255 would leave it
    # out unless dracut.conf asked for it: no boot check, silently).
    return 0
}

depends() {
    return 0
}

installkernel() {
    # libnvdimm by name: ndctl's modprobe.d makes it an "install" command.
    instmods libnvdimm nfit nd_pmem nd_btt dax_pmem
}

install() {
    inst_binary daxprobe /usr/bin/daxprobe
    inst_simple /usr/libexec/daxprobe/daxprobe-init-hook.sh
    inst_hook pre-pivot 90 "$moddir/daxprobe-check.sh"
}
