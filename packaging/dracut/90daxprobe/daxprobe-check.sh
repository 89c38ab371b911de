#!/bin/sh
# dracut pre-pivot hook: the root is mounted on $NEWROOT. strict stops the
# boot (die: the emergency shell).
type die >/dev/null 2>&1 || . /lib/dracut-lib.sh

if ! DAXPROBE=/usr/bin/daxprobe /bin/sh /usr/libexec/daxprobe/daxprobe-init-hook.sh; then
    die "daxprobe: DAX is not in effect (daxprobe.mode=strict): see the lines above and /run/daxprobe/check.json"
fi
