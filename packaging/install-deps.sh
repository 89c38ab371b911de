#!/bin/sh
# Installs everything daxprobe needs to build, test and run its guest test
# bed on Debian 12, from Debian's own archive. Idempotent; needs root.
set -eu

if [ "$(id -u)" != 0 ]; then
    exec sudo "$0" "$@"
fi

packages="
    build-essential meson ninja-build pkg-config python3
    libfmt-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libexpected-dev catch2
    libpmem-dev
    libsqlite3-dev libcpp-httplib-dev
    clang libclang-rt-14-dev clang-format
    qemu-system-x86 busybox-static ndctl daxctl e2fsprogs xfsprogs erofs-utils kmod cpio xz-utils zstd socat sqlite3
    linux-perf strace vmtouch
    ccache debhelper lintian help2man bash-completion systemd udev prometheus libvirt-clients libxml2-utils
    mmdebstrap
    libguestfs-tools supermin
"

# supermin 5.2 (libguestfs's appliance, tests/vm/harness/guestfs_appliance.py)
# lstat()s the host's /lib/modules while it copies the guest kernel's modules
# under that name into the appliance root: a machine without a kernel of its
# own (a container) has none, and the build fails with "lstat: No such file
# or directory: /lib/modules". No package owns the folder itself.
[ -d /lib/modules ] || mkdir -p /lib/modules

missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "install-deps: all packages present"
    exit 0
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# dpkg's unpacking, not the download, is the time on a fresh machine
# (download 21 s, install 298 s); without an fsync per file it took 256 s
# (bench/fresh_machine.sh; bench/README.md at 0db4c71). A crash mid-install
# can leave a package to reinstall, as after any interrupted apt run.
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io $missing
