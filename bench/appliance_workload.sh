#!/usr/bin/bash
# The appliance's fixed workload (bench/appliance.py), run chrooted in the
# appliance root: every payload program's --version, a read of every
# library, a small script. Writes only to /tmp (a tmpfs); never fails. Run by
# the payload's bash: busybox sh would prefer its own applets to the real tools.
export HOME=/tmp LC_ALL=C
log=/tmp/workload.log
n=0
failed=0
while read -r p; do
    t0=$EPOCHREALTIME
    timeout 120 "$p" --version < /dev/null > /dev/null 2>&1 || failed=$((failed + 1))
    echo "version-time $p $t0 $EPOCHREALTIME" >> $log
    n=$((n + 1))
done < /appliance/programs.list
echo "versions $n nonzero_exit $failed" >> $log
find /usr/lib /usr/lib64 -type f -name '*.so*' > /tmp/libs.list
echo "libraries $(wc -l < /tmp/libs.list) bytes $(xargs cat < /tmp/libs.list | wc -c)" >> $log
echo "perl $(perl -e 'my $s = 0; $s += $_ for 1 .. 20000; print $s')" >> $log
echo "sqlite $(sqlite3 :memory: 'select 6 * 7' 2> /dev/null)" >> $log
echo "pipe $(find /usr/bin -type f | sort | xz -c | gzip -c | wc -c)" >> $log
exit 0
