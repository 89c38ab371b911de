"""Host-side checks of the nfit_test scenario (the kernel's NVDIMM test
bus, issue 36): daxprobe's DIMMs field by field against `ndctl list
-BDRNiMH` in the same guest (ndctl-full.json, taken after the setup and the
injections), and the verdicts the test bus's states call for."""

import pmd_layout_checks

# ndctl list -D's flag fields and the kernel's nfit/flags words.
NDCTL_FLAGS = {
    "flag_failed_save": "save_fail",
    "flag_failed_restore": "restore_fail",
    "flag_failed_flush": "flush_fail",
    "flag_failed_arm": "not_armed",
    "flag_failed_map": "map_fail",
    "flag_smart_event": "smart_event",
}
# The words daxprobe reports that ndctl shows no flag for.
UNLISTED = {"smart_notify"}


def ndctl_dimms(listing):
    out = {}
    for bus in listing if isinstance(listing, list) else [listing or {}]:
        for d in bus.get("dimms", []) if isinstance(bus, dict) else []:
            out[d["dev"]] = dict(d, bus=bus.get("dev"))
    return out


def compare_dimms(c, res):
    ref = ndctl_dimms(res.json("ndctl-full.json"))
    got = {d.get("dev"): d for d in (res.check or {}).get("dimms") or []}
    c.check(len(ref) == 6, f"ndctl lists the test bus's 6 DIMMs: {sorted(ref)}")
    c.eq(sorted(got), sorted(ref), "DIMMs daxprobe reports vs ndctl")
    for dev, r in sorted(ref.items()):
        g = got.get(dev)
        if g is None:
            continue
        for field in ("bus", "id", "handle"):
            c.eq(g.get(field), r.get(field), f"{dev} {field} vs ndctl")
        want = sorted(w for k, w in NDCTL_FLAGS.items() if r.get(k))
        c.eq(sorted(set(g.get("flags") or []) - UNLISTED), want, f"{dev} flags vs ndctl")
    # nfit/dirty_shutdown is the count the driver read when the DIMM was
    # registered: ndctl's health before anything was injected
    # (ndctl-full-before.json). The live count is in "health".
    before = ndctl_dimms(res.json("ndctl-full-before.json"))
    for dev, r in sorted(before.items()):
        count = (r.get("health") or {}).get("shutdown_count")
        if count is None or dev not in got:
            continue
        c.eq(got[dev].get("dirty_shutdown"), count, f"{dev} dirty_shutdown vs ndctl's "
             "shutdown_count at boot")
    compare_health(c, ref, got, "after inject-smart -f nmem1, -U nmem2")
    return ref, got


# ndctl list -H's fields daxprobe reports under each DIMM's "health".
HEALTH_FIELDS = ("health_state", "life_used_percentage", "temperature_celsius",
                 "controller_temperature_celsius", "shutdown_state", "shutdown_count")


def compare_health(c, ref, got, when):
    """Each DIMM's SMART health, field by field, against ndctl's in the same
    guest; a DIMM ndctl shows no health for is "not available"."""
    for dev, r in sorted(ref.items()):
        h = (got.get(dev) or {}).get("health") or {}
        want = r.get("health")
        if want is None:
            c.check(h.get("available") is False and h.get("reason"),
                    f"{dev} ({when}): ndctl has no health, daxprobe says not available: {h}")
            continue
        c.check(h.get("available") is True, f"{dev} ({when}): health available: {h}")
        for field in HEALTH_FIELDS:
            c.eq(h.get(field), want.get(field), f"{dev} health {field} vs ndctl ({when})")


def check_unsafe_shutdown(c, res):
    """scenario_after: an unsafe shutdown injected on nmem0 after the checks
    remembered its count; the next check names what is on nmem0, the one
    after it remembers the new count."""
    ref = ndctl_dimms(res.json("ndctl-full-after.json"))
    after = res.json("check-after.json") or {}
    got = {d.get("dev"): d for d in after.get("dimms") or []}
    compare_health(c, ref, got, "after inject-smart -U nmem0")
    remembered = res.json("shutdowns-remembered.json") or {}
    nmem0 = got.get("nmem0") or {}
    c.eq(remembered.get(nmem0.get("id")), 42, "the count remembered for nmem0 (by its id)")
    c.eq((ref.get("nmem0", {}).get("health") or {}).get("shutdown_count"), 43,
         "ndctl: nmem0's count after the injection")
    v = nmem0.get("verdict") or {}
    c.eq((v.get("code"), v.get("severity")), ("dimm_unsafe_shutdown", "problem"),
         "nmem0's verdict after the rise")
    for name in ("region0", "region1", "namespace0.0", "namespace1.0", "/mnt/pmem"):
        c.check(name in (v.get("summary") or ""), f"the rise names {name}: {v.get('summary')}")
    c.check("application's own tools" in (v.get("remedy") or ""), f"remedy: {v.get('remedy')}")
    c.eq((after.get("verdict") or {}).get("code"), "problems_found", "overall after the rise")
    c.eq(res.text("check-after.rc").strip(), "1", "exit code after the rise")
    again = {d.get("dev"): d for d in (res.json("check-again.json") or {}).get("dimms") or []}
    c.eq(((again.get("nmem0") or {}).get("verdict") or {}).get("code"), "dimm_ok",
         "the check after that: the count is remembered, no new rise")


def check_nfit_test(c, res):
    if not c.check(res.check is not None, "check.json is one JSON document:\n"
                   + res.text("check.json")[:2000]):
        return
    ref, got = compare_dimms(c, res)
    # Injected fatal health: a problem with its cause, naming what is on it.
    v = (got.get("nmem1") or {}).get("verdict") or {}
    c.eq((v.get("code"), v.get("severity")), ("dimm_health_fatal", "problem"), "nmem1 verdict")
    c.check("region0" in (v.get("summary") or ""), f"nmem1's summary names region0: {v}")
    check_remedies(c, res)
    check_one_page_at_a_time(c, res)
    check_unsafe_shutdown(c, res)
    # The failed DIMM (flags: not armed, save/restore/flush failed) makes its
    # region read-only, and daxprobe says why, without a reconfiguration.
    bad = [d for d in got.values() if "not_armed" in (d.get("flags") or [])]
    if c.check(len(bad) == 1, f"one not-armed DIMM: {[d.get('dev') for d in bad]}"):
        d = bad[0]
        c.eq((d.get("verdict") or {}).get("code"), "dimm_not_persistent", f"{d['dev']} verdict")
        ro = [r["region"] for r in d.get("regions") or [] if r.get("read_only")]
        c.check(ro, f"{d['dev']}: a read-only region: {d.get('regions')}")
        for ns in (res.check or {}).get("namespaces") or []:
            if ns.get("region") in ro:
                remedy = (ns.get("verdict") or {}).get("remedy")
                c.check(not remedy, f"{ns.get('dev')} on read-only {ns.get('region')}: no "
                        f"reconfiguration remedy, got {remedy!r}")


def as_list(listing):
    """ndctl list prints one object for one match, an array for several."""
    return listing if isinstance(listing, list) else [listing] if listing else []


def check_remedies(c, res):
    """Issue 36, part 3: the remedies daxprobe printed in this guest were run
    there (scenario_after) and the kernel shows what they promised."""
    namespaces = {n.get("dev"): n for n in (res.check or {}).get("namespaces") or []}
    small = namespaces.get("namespace3.0") or {}
    c.eq(small.get("size"), 4 << 20, "namespace3.0: the test bus's 4 MiB raw namespace")
    c.check(not (small.get("verdict") or {}).get("remedy"),
            f"namespace3.0: no reconfiguration offered, got {small.get('verdict')}")
    c.check(res.text("small-reconfig.rc").strip() not in ("", "0"),
            "ndctl refuses namespace3.0 as fsdax: rc " + res.text("small-reconfig.rc").strip())
    c.check("must be >= 16MiB" in res.text("commands.log"),
            "ndctl's reason: '--size=' must be >= 16MiB")
    # The device-DAX namespace made with 4 KiB alignment: its hint keeps devdax.
    dd = [n for n in namespaces.values() if n.get("mode") == "devdax" and n.get("align") == 4096]
    if not c.check(len(dd) == 1, f"one devdax namespace with align 4K: {sorted(namespaces)}"):
        return
    c.eq(res.text("realign-cmd.txt").strip(),
         f"ndctl create-namespace -f -e {dd[0]['dev']} -m devdax --align 2M",
         "the alignment hint, as run")
    after = [n for n in as_list(res.json("ndctl-region1-after.json")) if n.get("size")]
    c.eq([(n.get("mode"), n.get("align")) for n in after], [("devdax", 2 << 20)],
         "region1's namespace after the hint ran (ndctl list -N)")


def check_one_page_at_a_time(c, res):
    """A file allocated whole on 2 MiB stripes, written through its mapping:
    every 2 MiB write fault falls back in the device (nfit_test's pmem-dax.c),
    and daxprobe profile blames the device, not the layout."""
    doc = res.json("profile.json") or {}
    files = doc.get("files") or []
    if not c.check(len(files) == 1, "profile.json: one file:\n" + res.text("profile.json")[:1500]):
        return
    f = files[0]
    faults = f.get("faults") or {}
    # Each piece's first touch reads the unwritten extent (dax_pmd_load_hole:
    # the huge zero page, no fallback); its write fault is the one that falls back.
    pieces = (f.get("mapping") or {}).get("pmd_pieces")
    c.check(pieces and faults.get("dax_pmd_fallback") == pieces,
            f"a 2 MiB write fault per piece ({pieces}) fell back on nfit_test: {faults}")
    pmd_layout_checks.expect_fallback_cause(c, res, f, "device")
    dev = (f.get("mapping") or {}).get("device") or {}
    c.check((dev.get("provider") or "").startswith("nfit_test"), f"device provider: {dev}")
