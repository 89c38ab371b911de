"""Host checks that hold daxprobe's evidence to the kernel's own answers in
the same guest (issue 19): every evidence source it reports as usable or not
(kernel-sources.txt, /init's kernel_sources), the device-DAX modes against
`daxctl list`, and the scenarios of the kernel's other "cannot DAX" answers:
a devdax namespace given to the page allocator, ext4 with 1 KiB blocks and
the refusals ext4-1k-dax.sh triggers after it."""

import scenarios as sc  # the shared helpers; used at call time (scenarios imports this module)
import verdict_checks as vc

# What daxctl list shows of a device; daxprobe's dax_devices must agree.
DAXCTL_FIELDS = ("chardev", "size", "align", "target_node", "mode", "state",
                 "online_memblocks", "total_memblocks", "movable")


def expect_dax_devices_as_daxctl(c, res):
    """Every device `daxctl list` shows, with every field it shows, is in
    daxprobe's dax_devices, and nothing else is."""
    ref = res.json("daxctl-list.json") or []
    if isinstance(ref, dict):
        ref = [ref]
    got = {d.get("chardev"): d for d in (res.check or {}).get("dax_devices") or []}
    for d in ref:
        g = got.get(d.get("chardev"))
        if not c.check(g is not None, f"dax device {d.get('chardev')} (daxctl list) missing "
                       f"from daxprobe's dax_devices: {sorted(got)}"):
            continue
        for f in DAXCTL_FIELDS:
            if f in d or f in g:
                c.eq(g.get(f), d.get(f), f"dax device {d.get('chardev')} {f} vs daxctl list")
    c.eq(sorted(got), sorted(d.get("chardev") for d in ref), "dax devices vs daxctl list")


def expect_sources_as_kernel(c, res, live):
    """tracepoints usable exactly when events/fs_dax exists and its ids read
    (and the same events); perf usable exactly when the kernel opens a
    software counter for the same credentials; cachestat used exactly when
    the syscall exists."""
    k = res.kv("kernel-sources.txt")
    if not k:
        # Fixtures captured before the guest recorded it; a live guest must.
        c.check(not live, "the guest recorded no kernel-sources.txt")
        return
    faults = (res.check or {}).get("faults") or {}
    tp = faults.get("tracepoints") or {}
    kernel_events = sorted(k.get("fs_dax_events", "").split())
    kernel_tp = k.get("fs_dax_dir") == "yes" and bool(kernel_events)
    c.eq(tp.get("usable"), kernel_tp,
         f"tracepoints usable vs the kernel's events/fs_dax ({tp.get('reason')})")
    if kernel_tp:
        c.eq(sorted(tp.get("events") or []), kernel_events, "fs_dax events vs events/fs_dax")
    perf = faults.get("perf") or {}
    c.eq(perf.get("usable"), k.get("perf") == "ok",
         f"perf usable vs the kernel's perf_event_open ({k.get('perf')}; {perf.get('reason')})")
    has_cachestat = k.get("cachestat") == "ok"
    c.check(k.get("cachestat", "").split(" ")[0] in ("ok", "ENOSYS"),
            f"cachestat(2) answered ok or ENOSYS: {k.get('cachestat')!r}")
    for f in (res.check or {}).get("files") or []:
        method = (f.get("residency") or {}).get("method")
        if method in ("cachestat", "mincore"):
            c.eq(method == "cachestat", has_cachestat,
                 f"{f.get('path')}: residency by {method}, the kernel's cachestat: "
                 f"{k.get('cachestat')}")


def check_devdax_system_ram(c, res):
    log = res.text("commands.log")
    c.eq(sc.command_rc(log, "daxctl reconfigure-device"), 0, "daxctl reconfigure-device exit code")
    ref = res.json("daxctl-list.json") or []
    ref = ref if isinstance(ref, list) else [ref]
    c.check(any(d.get("mode") == "system-ram" for d in ref),
            f"daxctl list shows a system-ram device: {ref}")
    if not sc.expect_document(c, res, 1, "problems_found"):
        return
    nss = [n for n in sc.namespaces(res.check) if n.get("chardev")]
    if not c.check(nss, "a namespace with a dax device"):
        return
    v = nss[0].get("verdict") or {}
    c.eq(v.get("code"), "system_ram", "namespace verdict")
    c.check("not persistent" in v.get("summary", ""), f"summary says why: {v.get('summary')!r}")
    c.check("daxctl reconfigure-device --mode=devdax" in sc.remedy_text(nss[0]),
            f"remedy: {sc.remedy_text(nss[0])!r}")


def expect_refusal(c, res, name, words, remedy):
    """refusal-NAME.json: the mount's verdict is not DAX, quotes the kernel's
    line (`words`) and names `remedy`, not a remount."""
    doc = res.json(f"refusal-{name}.json")
    if not c.check(doc is not None, f"refusal-{name}.json: {res.text(f'refusal-{name}.stderr')[:500]}"):
        return
    c.check(words in res.text("dmesg.txt"), f"{name}: the kernel logged {words!r}")
    m = sc.pmem_mount(doc)
    if not c.check(m is not None, f"{name}: a mount entry for /mnt/pmem "
                   f"({res.kv(f'refusal-{name}.mount')})"):
        return
    c.check(sc.verdict_code(m) in ("dax_not_requested", "dax_silently_off"),
            f"{name}: mount verdict {sc.verdict_code(m)!r}")
    text = sc.evidence_text(m) + "\n" + "\n".join(
        h.get("message", "") for h in m.get("kmsg_history") or [])
    c.check(words in text, f"{name}: the evidence quotes {words!r}")
    c.check(remedy in sc.remedy_text(m), f"{name}: remedy names {remedy!r}: {sc.remedy_text(m)!r}")


def check_ext4_1k_dax(c, res):
    first = res.kv("mount-first.txt")
    c.check(first.get("rc") not in (None, "0"), f"ext4 -o dax with 1 KiB blocks must fail: {first}")
    c.check("unsupported blocksize for DAX" in res.text("dmesg.txt"),
            "kernel logged 'unsupported blocksize for DAX'")
    sc.expect_mount_ok(c, res)
    if sc.expect_document(c, res, 1, "problems_found"):
        sc.expect_fsdax_namespace(c, res)
        m = sc.pmem_mount(res.check)
        if c.check(m is not None, "no mount entry for /mnt/pmem"):
            c.eq(sc.verdict_code(m), "dax_not_requested", "mount verdict")
            r = sc.remedy_text(m)
            c.check("mkfs.ext4" in r and "-b 4096" in r, f"remedy makes 4 KiB blocks: {r!r}")
            c.check("back it up" in r, f"remedy says to back up first: {r!r}")
            c.check("unsupported blocksize for DAX" in sc.evidence_text(m),
                    "the evidence quotes the kernel's line")
            # The failed dax mount is history; the plain mount logged the
            # block size again (ext4 does at every mount on a DAX device).
            vc.expect_history(c, m, "DAX unsupported by block device", "failed")
            c.check(any("unsupported blocksize for DAX" in l for l in m.get("kmsg") or []),
                    f"the current mount's own line: {m.get('kmsg')}")
            k = vc.expect_file_as_kernel(c, res, "testfile", False)
            if k is not None:
                c.eq((m.get("map_sync") or {}).get("ok"), k["map_sync"],
                     "daxprobe MAP_SYNC vs the kernel's")
    expect_refusal(c, res, "inline-data", "Cannot use DAX on a filesystem that may contain "
                   "inline data", "-O ^inline_data")
    expect_refusal(c, res, "data-journal", "can't mount with both data=journal and dax",
                   "tune2fs -o ^journal_data")
    expect_refusal(c, res, "xfs-blocksize", "DAX not supported for blocksize", "-b size=4096")
    c.check("can't change dax mount option while remounting" in res.text("dmesg.txt"),
            "kernel logged the refused remount")
