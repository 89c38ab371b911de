"""Host checks that hold daxprobe's evidence to the kernel's own answers in
the same guest (issue 19): every evidence source it reports as usable or not
(kernel-sources.txt, /init's kernel_sources), the device-DAX modes against
`daxctl list`, and the scenarios of the kernel's other "cannot DAX" answers:
a devdax namespace given to the page allocator, ext4 with 1 KiB blocks and
the refusals ext4-1k-dax.sh triggers after it."""

import mce_checks
import scenarios as sc  # the shared helpers; used at call time (scenarios imports this module)
import verdict_checks as vc

# What daxctl list shows of a device; daxprobe's dax_devices must agree.
DAXCTL_FIELDS = ("chardev", "size", "align", "target_node", "mode", "state",
                 "online_memblocks", "total_memblocks", "movable")


def expect_dax_devices_as_daxctl(c, res, live):
    """Every device `daxctl list` shows, with every field it shows, is in
    daxprobe's dax_devices, and nothing else is. A `daxctl list` that failed
    is no reference ("no devices"): its exit status and stderr must be clean
    (fixtures captured before /init kept them have neither)."""
    rc = res.rc("daxctl-list.rc")
    # A live guest that took the references (ndctl's beside daxctl's) must
    # have a clean daxctl; the boot hook's scenarios take none.
    if rc is not None or (live and res.rc("ndctl-list.rc") is not None):
        if not c.check(rc == 0, f"the reference `daxctl list` exited {rc}: "
                       f"{res.text('daxctl-list.stderr')[:500]!r}"):
            return
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
    if not tp.get("usable") and "tracefs_mounted" in k:
        # Why, as the kernel's mount table and permissions say.
        why = ("tracefs not mounted" if k["tracefs_mounted"] == "no" else
               "not readable" if k.get("uid") != "0" else "no fs_dax tracepoints")
        c.check(why in (tp.get("reason") or ""),
                f"tracepoints' reason names {why!r} (tracefs mounted: {k['tracefs_mounted']}, "
                f"uid {k.get('uid')}): {tp.get('reason')!r}")
    perf = faults.get("perf") or {}
    c.eq(perf.get("usable"), k.get("perf") == "ok",
         f"perf usable vs the kernel's perf_event_open ({k.get('perf')}; {perf.get('reason')})")
    if not perf.get("usable") and "perf_event_paranoid" in k:
        level = k["perf_event_paranoid"]
        c.check(f"perf_event_paranoid={level}" in (perf.get("reason") or ""),
                f"perf's reason names perf_event_paranoid={level}: {perf.get('reason')!r}")
        if level == "3" and k.get("uid") != "0":
            c.check("CAP_SYS_ADMIN" in (perf.get("reason") or ""),
                    f"perf's reason: paranoid 3 wants CAP_SYS_ADMIN: {perf.get('reason')!r}")
    expect_perf_note_as_kernel(c, res, k)
    has_cachestat = k.get("cachestat") == "ok"
    # 6.12 and later refuse cachestat to a user who may not write the file
    # (EPERM for nobody on a root-owned one); daxprobe then uses mincore.
    refused = k.get("uid") not in (None, "0") and k.get("cachestat") == "error Operation not permitted"
    c.check(k.get("cachestat", "").split(" ")[0] in ("ok", "ENOSYS") or refused,
            f"cachestat(2) answered ok or ENOSYS (or EPERM to uid {k.get('uid')}): "
            f"{k.get('cachestat')!r}")
    for f in (res.check or {}).get("files") or []:
        method = (f.get("residency") or {}).get("method")
        if method in ("cachestat", "mincore"):
            c.eq(method == "cachestat", has_cachestat,
                 f"{f.get('path')}: residency by {method}, the kernel's cachestat: "
                 f"{k.get('cachestat')}")


def expect_perf_note_as_kernel(c, res, k):
    """Each `profile -- CMD` (profile_cmd, run with the same credentials as
    kernel-answers) counts user-mode faults only, and says so in perf_note,
    exactly when the kernel opens the counter only without kernel-mode
    events."""
    if "perf_kernel" not in k:
        return
    user_only = k.get("perf") == "ok" and k.get("perf_kernel") != "ok"
    for name in sorted(res.files):
        doc = res.json(name) if name.startswith("profile") and name.endswith(".json") else None
        faults = ((doc or {}).get("command") or {}).get("faults") or {}
        if faults.get("source") != "perf":
            continue
        note = faults.get("perf_note") or ""
        c.eq("user-mode faults only" in note, user_only,
             f"{name}: perf_note {note!r} vs the kernel (perf {k.get('perf')}, "
             f"with kernel-mode events {k.get('perf_kernel')})")


def command_faults(c, res, name):
    """The faults of `profile -- CMD` in NAME.json, its exit status 0."""
    c.eq(res.rc(f"{name}.rc"), 0, f"{name}: daxprobe profile -- CMD exit status")
    faults = ((res.json(f"{name}.json") or {}).get("command") or {}).get("faults")
    c.check(faults is not None, f"{name}.json: a command's faults: "
            + res.text(f"{name}.stderr")[:500])
    return faults or {}


def kernel_sources(c, res):
    k = res.kv("kernel-sources.txt")
    c.check(bool(k), "the guest recorded kernel-sources.txt")
    return k


def check_tracefs_unmounted(c, res):
    """tracefs unmounted: the tracepoints are unusable, for that reason; the
    rest of the check is unchanged (DAX verified); the profile has no DAX
    fault counts and says why."""
    k = kernel_sources(c, res)
    c.eq((k.get("tracefs_mounted"), k.get("fs_dax_dir")), ("no", "no"),
         "the kernel: tracefs not mounted, no events/fs_dax")
    if sc.expect_document(c, res, 0, "dax_verified"):
        sc.expect_dax_active(c, res)
        tp = ((res.check.get("faults") or {}).get("tracepoints")) or {}
        c.eq(tp.get("usable"), False, "tracepoints usable")
        c.check("tracefs not mounted" in (tp.get("reason") or ""),
                f"tracepoints' reason: {tp.get('reason')!r}")
    f = sc.profile_of(c, res)
    if f is not None:
        faults = f.get("faults") or {}
        c.eq(f.get("dax"), True, "profiled file is DAX")
        c.eq((faults.get("dax_pmd"), faults.get("dax_pte")), (None, None),
             "no DAX fault counts without tracepoints")
        c.check(bool(faults.get("tracepoint_error")), f"profile says why: {faults}")
        c.eq((f.get("mapping") or {}).get("code"), "unknown", "profile mapping without tracepoints")


def expect_unprivileged(c, res):
    """The check ran as nobody (kernel-answers under the same setpriv) and
    produced a document; the pmem file is still DAX to that user."""
    k = kernel_sources(c, res)
    c.eq(k.get("uid"), "65534", "the kernel's answers were asked as nobody")
    doc = res.check
    if not c.check(doc is not None, "check.json (as nobody): "
                   + res.text("check.stderr")[:1000]):
        return k, None
    c.eq(doc.get("schema"), "daxprobe.check/1", "schema")
    c.eq(doc.get("exit_code"), res.rc("check.rc"), "document exit_code vs process exit code")
    f = sc.file_entry(doc, "/mnt/pmem/testfile")
    if c.check(f is not None, "files[] entry for --path /mnt/pmem/testfile"):
        c.eq(f.get("statx_dax"), True, "file statx_dax (as nobody)")
    return k, (doc.get("faults") or {})


def check_perf_paranoid(c, res):
    """perf_event_paranoid 3, nobody: the kernel refuses even a user-mode
    counter, so daxprobe says perf is unusable and why; tracefs (0700) is
    not readable for nobody either."""
    k, faults = expect_unprivileged(c, res)
    c.eq(k.get("perf_event_paranoid"), "3", "perf_event_paranoid during the check")
    c.check(k.get("perf", "ok") != "ok", f"the kernel refused perf to nobody at paranoid 3: "
            f"{k.get('perf')!r}")
    if faults is None:
        return
    perf, tp = faults.get("perf") or {}, faults.get("tracepoints") or {}
    c.eq(perf.get("usable"), False, "perf usable")
    c.check("CAP_SYS_ADMIN" in (perf.get("reason") or ""), f"perf's reason: {perf.get('reason')!r}")
    c.eq(tp.get("usable"), False, "tracepoints usable (tracefs is root's)")
    c.check("not readable" in (tp.get("reason") or ""), f"tracepoints' reason: {tp.get('reason')!r}")
    f = sc.profile_of(c, res)
    if f is not None:
        pf = f.get("faults") or {}
        c.check(pf.get("minor") is None and "Permission denied" in (pf.get("perf_error") or ""),
                f"profile of the file without perf: no count, and why: {pf}")
    pf = command_faults(c, res, "profile-user")
    c.check(pf.get("source") == "rusage" and "Permission denied" in (pf.get("perf_error") or ""),
            f"profile -- CMD without perf: rusage, and why: {pf}")


def check_perf_user_only(c, res):
    """perf_event_paranoid 2, nobody: the kernel opens a page-fault counter
    only without kernel-mode events; daxprobe says perf is usable and its
    profile says it counted user-mode faults only."""
    k, faults = expect_unprivileged(c, res)
    c.eq((k.get("perf_event_paranoid"), k.get("perf"), k.get("perf_kernel", "ok") != "ok"),
         ("2", "ok", True), "the kernel at paranoid 2: user-mode counter only")
    if faults is not None:
        c.eq((faults.get("perf") or {}).get("usable"), True, "perf usable")
    pf = command_faults(c, res, "profile-user")
    c.eq(pf.get("source"), "perf", "profile -- CMD: faults from perf")
    c.check("user-mode faults only" in (pf.get("perf_note") or ""),
            f"profile -- CMD: perf_note {pf.get('perf_note')!r}")


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
    # After devdax in the same boot, the region still lists its machine
    # check: kmem onlined those bytes as RAM, and daxprobe says so.
    ref = mce_checks.ars.ndctl_errors(res, "media-errors-system-ram.json")
    if ref:
        c.eq(nss[0].get("media_errors"), [{"offset": o * 512, "length": n * 512} for o, n in ref],
             "system-ram namespace media_errors vs ndctl's")
        c.check(any("page allocator hands those bytes out as RAM" in w
                    for w in v.get("warnings") or []),
                f"the warning says the listed bytes are RAM now: {v.get('warnings')}")


def expect_refusal(c, res, name, words, remedy, code):
    """refusal-NAME.json: the mount's verdict is `code` (dax_not_requested
    where the kernel refused the dax mount and the filesystem was mounted
    without it, dax_silently_off where it mounted with dax and turned it
    off), quotes the kernel's line (`words`) and names `remedy`, not a
    remount."""
    doc = res.json(f"refusal-{name}.json")
    if not c.check(doc is not None, f"refusal-{name}.json: {res.text(f'refusal-{name}.stderr')[:500]}"):
        return
    c.check(words in res.text("dmesg.txt"), f"{name}: the kernel logged {words!r}")
    m = sc.pmem_mount(doc)
    if not c.check(m is not None, f"{name}: a mount entry for /mnt/pmem "
                   f"({res.kv(f'refusal-{name}.mount')})"):
        return
    c.eq(sc.verdict_code(m), code, f"{name}: mount verdict")
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
    # ext4 refuses the dax mount (then mounted without it); XFS mounts and
    # turns DAX off.
    expect_refusal(c, res, "inline-data", "Cannot use DAX on a filesystem that may contain "
                   "inline data", "-O ^inline_data", "dax_not_requested")
    expect_refusal(c, res, "data-journal", "can't mount with both data=journal and dax",
                   "tune2fs -o ^journal_data", "dax_not_requested")
    expect_refusal(c, res, "xfs-blocksize", "DAX not supported for blocksize", "-b size=4096",
                   "dax_silently_off")
    expect_refused_remount(c, res)


def expect_refused_remount(c, res):
    """`mount -o remount,dax=never` on a DAX mount: the kernel refuses it and
    the mount stays DAX (its line, mountinfo, statx and MAP_SYNC of a file);
    daxprobe's report after it says what the kernel says."""
    c.check("can't change dax mount option while remounting" in res.text("dmesg.txt"),
            "kernel logged the refused remount")
    if "remount-mountinfo.txt" not in res.files:
        c.check(not res.live, "the guest recorded remount-mountinfo.txt")
        return  # a fixture from before the guest recorded the kernel's answer
    c.check(sc.command_rc(res.text("commands.log"), "mount -o remount,dax=never") not in (None, 0),
            "the kernel refused the remount (mount's exit status)")
    mi = res.text("remount-mountinfo.txt")
    c.check("dax" in mi and "dax=never" not in mi, f"the kernel's mountinfo: still dax: {mi!r}")
    k = vc.kernel_file(c, res, "remount")
    doc = res.json("refusal-remount.json")
    if k is None or not c.check(doc is not None, "refusal-remount.json: "
                                + res.text("refusal-remount.stderr")[:500]):
        return
    c.eq((k["dax"], k["map_sync"]), (True, True), "the kernel: the file is DAX, MAP_SYNC works")
    c.eq((doc.get("exit_code"), sc.verdict_code(doc)), (0, "dax_verified"),
         "after the refused remount: daxprobe's overall verdict")
    c.eq(res.rc("refusal-remount.rc"), doc.get("exit_code"), "exit status vs the document")
    m = sc.pmem_mount(doc)
    if c.check(m is not None, "after the refused remount: a mount entry for /mnt/pmem"):
        c.eq(sc.verdict_code(m), "dax_active", "after the refused remount: mount verdict")
        c.eq((m.get("map_sync") or {}).get("ok"), k["map_sync"], "daxprobe MAP_SYNC vs the kernel's")
    f = sc.file_entry(doc, k["path"])
    if c.check(f is not None, f"files[] entry for {k['path']}"):
        c.eq(f.get("statx_dax"), k["dax"], "daxprobe statx_dax vs the kernel's")
