"""Host-side checks of nfit-modes (issue 36): label-backed sector and raw
namespaces on the kernel's NVDIMM test bus, daxprobe's against `ndctl list
-BRN` in the same guest, field by field, every field required; then the
remedy daxprobe printed for each, run, and ndctl's view of it after."""

import nfit_checks
import scenarios as sc  # the shared helpers; used at call time (scenarios imports this module)

# The fields compared for each mode; sector_size only where the BTT sets it.
FIELDS = {
    "sector": ("mode", "size", "uuid", "sector_size", "blockdev", "region"),
    "raw": ("mode", "size", "uuid", "blockdev", "region"),
}


def check_nfit_modes(c, res):
    if not sc.expect_document(c, res, 1):
        return
    created = res.kv("modes-created.txt")
    _, ref_nss = sc.ndctl_objects(res.json("ndctl-list.json"))
    ref = {n["dev"]: n for n in ref_nss}
    got = {n.get("dev"): n for n in sc.namespaces(res.check)}
    for mode, region in (("sector", "region1"), ("raw", "region0")):
        dev = created.get(mode)
        if not c.check(dev in ref, f"ndctl lists the {mode} namespace made: {created}"):
            continue
        r, g = ref[dev], got.get(dev) or {}
        c.eq((r.get("mode"), r.get("region")), (mode, region), f"{dev}: ndctl's mode, region")
        c.check(r.get("uuid"), f"{dev}: label-backed, ndctl gives it a uuid: {r}")
        for field in FIELDS[mode]:
            c.eq(g.get(field), r.get(field), f"{dev} ({mode}) {field} vs ndctl")
        check_remedy(c, res, dev, g)


def check_remedy(c, res, dev, got):
    """The remedy, as check.json printed it and as run, and the kernel after."""
    remedy = (got.get("verdict") or {}).get("remedy") or ""
    c.eq(sc.verdict_code(got), "device_cannot_dax", f"{dev} verdict")
    c.check(remedy.startswith(f"ndctl create-namespace -f -e {dev} -m fsdax"),
            f"{dev}: the remedy makes it fsdax: {remedy!r}")
    c.eq(res.text(f"remedy-{dev}.txt").strip(), f"ndctl create-namespace -f -e {dev} -m fsdax",
         f"{dev}: the remedy as run")
    c.eq(res.text(f"remedy-{dev}.rc").strip(), "0", f"{dev}: the remedy's exit code")
    after = [n for n in nfit_checks.as_list(res.json(f"ndctl-after-{dev}.json")) if n.get("size")]
    c.eq([(n.get("dev"), n.get("mode")) for n in after], [(dev, "fsdax")],
         f"{dev} after its remedy ran (ndctl list -N -n {dev})")
    c.check(all(n.get("blockdev") for n in after), f"{dev}: a block device after: {after}")
