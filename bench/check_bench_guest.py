"""`check_bench.py guest`: the same comparison inside the test guest (QEMU
under TCG, Debian's 6.1 or 6.12 kernel, an fsdax namespace with ext4 -o dax
and one 32 MiB file on it). Boots an image built like the VM suite's (see
tests/vm/harness/mkinitramfs.py) plus run_rusage, findmnt, fincore and strace, and
bench/guest/bench-check.sh as its scenario."""

import json
import os
import shutil
import sys
import tempfile

import result_file
from harness import images, mkinitramfs
from harness.guest import Guest

HERE = os.path.dirname(os.path.abspath(__file__))

EXTRA_TOOLS = ["/usr/bin/findmnt", "/usr/bin/fincore", "/usr/bin/strace"]


def build_image(build, kernel, work):
    vm_dir = os.path.join(build, "tests", "vm")
    info, _ = images.guest_inputs(vm_dir, kernel)
    guest_dir = os.path.join(work, "guest")
    shutil.copytree(images.GUEST_DIR, guest_dir)
    shutil.copy(os.path.join(HERE, "guest", "bench-check.sh"),
                os.path.join(guest_dir, "scenarios", "bench-check.sh"))
    tools = {t: t for t in EXTRA_TOOLS if os.path.exists(t)}
    tools["/usr/bin/run_rusage"] = os.path.join(build, "bench", "run_rusage")
    saved = dict(mkinitramfs.BINARIES)
    mkinitramfs.BINARIES.update(tools)
    try:
        out = os.path.join(work, "initramfs.cpio")
        # daxprobe from the guest package, as in every VM test.
        deb = mkinitramfs.find_guest_deb(os.path.join(build, "deb"))
        mkinitramfs.build(info, deb, guest_dir, out)
    finally:
        mkinitramfs.BINARIES.clear()
        mkinitramfs.BINARIES.update(saved)
    return info, out


def rounds_of(lines):
    """bench.jsonl holds one line per command per round: the k-th line of
    each tag belongs to round k."""
    by_tag = {}
    for line in lines:
        r = json.loads(line)
        by_tag.setdefault(r["tag"], []).append(r)
    n = min(len(v) for v in by_tag.values())
    return [{tag: v[k] for tag, v in by_tag.items()} for k in range(n)], list(by_tag)


def run(args, summarize, print_table):
    from check_bench import parse_strace_total  # here: check_bench imports this module
    with tempfile.TemporaryDirectory(prefix="checkbench-vm-") as work:
        info, initrd = build_image(args.build, args.kernel, work)
        guest = Guest(info["vmlinux"], initrd, "bench-check", nvdimm=True,
                      extra_cmdline=f"daxprobe.bench_runs={args.runs}")
        with guest:
            guest.wait(600 + 20 * args.runs)
            files = guest.results()
    text = files.get("bench.jsonl", b"").decode()
    if not text.strip():
        sys.exit("the guest measured nothing: " + files.get("bench.stderr", b"").decode()[-2000:]
                 + files.get("commands.log", b"").decode()[-2000:])
    rounds, names = rounds_of(text.splitlines())
    counts = {n: parse_strace_total(files.get(f"strace-{n}.txt", b"").decode()) for n in names}
    figures = []
    for check in ("check", "check-active"):
        other = "check-active" if check == "check" else "check"
        sub = [{("check" if k == check else k): v for k, v in r.items() if k != other} for r in rounds]
        sub_counts = {("check" if k == check else k): v for k, v in counts.items() if k != other}
        sub_names = ["check"] + [n for n in names if n not in ("check", "check-active")]
        what = "check --no-active" if check == "check" else "check (MAP_SYNC check: libpmem loaded)"
        rows, per_peer, figs = summarize(sub, sub_counts, sub_names, what)
        figures += figs
        print_table(f"{what} vs peers, test guest ({info['version']}, TCG)", rows, per_peer,
                    len(rounds))
    print("syscalls per command: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    result_file.write(args.result or f"check-guest-{args.kernel}", figures,
                      conditions=f"guest kernel {info['version']} under TCG, host load "
                      f"{os.getloadavg()[0]:.1f}", results_dir=args.results_dir)
