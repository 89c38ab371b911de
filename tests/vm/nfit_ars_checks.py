"""Host checks of nfit-ars (issue 35 on the kernel's NVDIMM test bus, after
nfit-test in its boot): an unmounted fsdax and a devdax namespace, each with
8 sectors injected through ARS (`ndctl inject-error`, then a scrub).

The kernel's answers in the same guest: `ndctl list --media-errors` of each
namespace (sectors from the start of its data), the fsdax disk's badblocks
file, a direct read of the damaged sectors. daxprobe must report each
namespace's damaged byte ranges as ndctl's sectors times 512, and print
`ndctl clear-errors` for it; that remedy, run as printed, must empty the
kernel's lists and let the read succeed, and a second check must see no
bad blocks."""

import json

import scenarios as sc  # used at call time (scenarios imports this module)

SECTOR = 512
CLEAR_NOTE = ("   # the data in those ranges is lost already: it becomes unpredictable; "
              "restore it from a backup afterwards")


def ndctl_errors(res, name):
    """[(offset, length)] in sectors from `ndctl list -N -n NS --media-errors`."""
    doc = res.json(name)
    ns = doc[0] if isinstance(doc, list) and doc else doc or {}
    return [(b.get("offset"), b.get("length")) for b in ns.get("badblocks") or []]


def by_dev(doc, dev):
    return next((n for n in sc.namespaces(doc) if n.get("dev") == dev), None)


def expect_namespace_damage(c, res, dev, mode, device):
    """daxprobe's media errors of `dev` against ndctl's, and the remedy."""
    inj = res.kv("ars-injected.txt")
    ref = ndctl_errors(res, f"media-errors-{mode}-before.json")
    c.eq(ref, [(int(inj.get("block", -1)), int(inj.get("count", -1)))],
         f"ndctl: {dev}'s media errors are the injected sectors")
    ns = by_dev(res.check, dev)
    if not c.check(ns is not None, f"daxprobe reports {dev}"):
        return
    c.eq(ns.get("mode"), mode, f"{dev} mode")
    c.eq(ns.get("media_errors"), [{"offset": o * SECTOR, "length": n * SECTOR} for o, n in ref],
         f"{dev} media_errors (bytes of {device}) vs ndctl's sectors")
    c.eq(ns.get("badblock_count"), sum(n for _, n in ref), f"{dev} badblock_count vs ndctl")
    v = ns.get("verdict") or {}
    c.eq(v.get("severity"), "warning", f"{dev} severity")
    ranges = ", ".join(f"{o * SECTOR}-{(o + n) * SECTOR - 1}" for o, n in ref)
    c.check(any(e.get("check") == "media_errors" and e.get("result") == f"bytes {ranges} of {device}"
                for e in v.get("evidence") or []),
            f"{dev}: evidence names bytes {ranges} of {device}: {v.get('evidence')}")
    c.eq(v.get("remedy"), f"ndctl clear-errors {dev}{CLEAR_NOTE}", f"{dev} remedy")


def expect_cleared(c, res, devs):
    """The remedies, run as check.json printed them, and the kernel after."""
    if not c.check("clear-cmds.txt" in res.files or not res.live, "the guest ran the remedies"):
        return
    if "clear-cmds.txt" not in res.files:
        return  # a fixture from before the remedies ran
    cmds = sorted(f"ndctl clear-errors {d}" for d in devs)
    c.eq(res.text("clear-cmds.txt").splitlines(), cmds, "the remedies taken from check.json")
    log = res.text("commands.log")
    for cmd in cmds:
        c.check(f"+ {cmd}\n" in log and log.split(f"+ {cmd}\n", 1)[1].split("\n= ", 1)[1]
                .startswith("0"), f"the kernel: `{cmd}` succeeded")
    for mode in ("fsdax", "devdax"):
        c.eq(ndctl_errors(res, f"media-errors-{mode}-after.json"), [],
             f"ndctl: no {mode} media errors after the remedy")
    c.eq(res.text("badblocks-after.txt").strip(), "", "the disk's badblocks after the remedy")
    c.eq(res.kv("read-after.txt").get("rc"), "0",
         f"the kernel: the damaged sectors read after the remedy: {res.text('read-after.txt')!r}")
    after = json.loads(res.text("check-after.json") or "null")
    for d in devs:
        ns = by_dev(after, d)
        if c.check(ns is not None, f"the second check reports {d}"):
            c.eq((ns.get("badblock_count"), ns.get("media_errors"),
                  (ns.get("verdict") or {}).get("remedy")), (0, [], None),
                 f"the second check: {d} without bad blocks")


def check_nfit_ars(c, res):
    # exit 1: the boot's nfit-test DIMMs (fatal health, not armed) are problems
    if not sc.expect_document(c, res, 1, "problems_found"):
        return
    # nfit_test registers its buses itself: no ACPI table in this guest
    c.eq((res.check.get("nfit") or {}).get("present"), False, "nfit.present")
    inj = res.kv("ars-injected.txt")
    fs, dax, disk = inj.get("fsdax"), inj.get("devdax"), inj.get("disk")
    expect_namespace_damage(c, res, fs, "fsdax", f"/dev/{disk}")
    expect_namespace_damage(c, res, dax, "devdax", f"/dev/{inj.get('chardev')}")
    # The fsdax disk's own list is ndctl's (both relative to the data start),
    # and the pmem driver refuses the damaged sectors.
    c.eq([line.split() for line in res.text("badblocks-before.txt").splitlines()],
         [[inj.get("block"), inj.get("count")]], f"/sys/block/{disk}/badblocks after the scrub")
    read = res.text("read-before.txt")
    c.check(res.kv("read-before.txt").get("rc") not in (None, "0") and "Input/output error" in read,
            f"the kernel: reading the damaged sectors fails with EIO: {read!r}")
    expect_cleared(c, res, [fs, dax])
