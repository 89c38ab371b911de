"""Host checks of the devdax scenario's media error (issue 35 on QEMU's
NVDIMM, every kernel): a software machine check at a physical address of
/dev/dax0.0 (guest/scenarios/devdax.sh says why it reaches the region's
list), then `daxprobe check`.

The kernel's answers in the same guest: the region's badblocks file and
`ndctl list -N --media-errors` before and after the injection, the bus's
commands (no clear_error on QEMU), and `ndctl clear-errors` run anyway.
daxprobe must report the namespace's damaged bytes of /dev/dax0.0 as
ndctl's sectors times 512, warn (the verdict and exit code stay), and,
since this bus cannot clear them, print no clear-errors but say so; the
kernel must then agree: clear-errors fails and the list stays."""

import json

import nfit_ars_checks as ars
import scenarios as sc  # used at call time (scenarios imports this module)

SECTOR = 512
DEV = "namespace0.0"
CHAR = "/dev/dax0.0"


def expect_kernel_list(c, res, facts):
    """The injection reached the region's list at the address injected."""
    log = res.text("commands.log")
    c.eq(sc.command_rc(log, "mce-inject sw"), 0, "the injection's debugfs writes")
    c.eq(sc.command_rc(log, "kernel-answers --wait-list"), 0,
         "the region notified a non-empty badblocks list")
    c.eq(ars.ndctl_errors(res, "media-errors-before.json"), [], "ndctl: no media errors before")
    offset = int(facts.get("offset", -1))
    want = [(offset // SECTOR, 4096 // SECTOR)]
    c.eq(ars.ndctl_errors(res, "media-errors-after-mce.json"), want,
         f"ndctl: {DEV}'s media errors are the 4 KiB at byte {offset} of {CHAR}")
    region, dax = (int(facts.get(k, "0"), 16) for k in ("region_resource", "dax_resource"))
    first = (dax - region + offset) // SECTOR
    c.eq(res.text("region-badblocks-after-mce.txt").split(), [str(first), "8"],
         "region0/badblocks: the injected address, in sectors of the region")
    return want


def expect_no_clear(c, res, ref, facts):
    """No clear_error on this bus: daxprobe offers no clear-errors and says
    why; the kernel agrees (ndctl fails, the lists stay)."""
    c.check("clear_error" not in facts.get("commands", "").split(),
            f"the bus cannot clear errors (ndbus0/commands: {facts.get('commands')!r})")
    c.eq(res.text("clear-cmds.txt").strip(), "", "check.json prints no ndctl clear-errors")
    rc = sc.command_rc(res.text("commands.log"), "ndctl clear-errors")
    c.check(rc not in (None, 0), f"the kernel: `ndctl clear-errors {DEV}` fails here (rc {rc})")
    c.eq(ars.ndctl_errors(res, "media-errors-after-clear.json"), ref,
         "ndctl: the media errors stay after clear-errors")
    c.eq(res.text("region-badblocks-after-clear.txt"), res.text("region-badblocks-after-mce.txt"),
         "region0/badblocks unchanged by clear-errors")
    after = json.loads(res.text("check-after.json") or "null")
    ns = ars.by_dev(after, DEV)
    if c.check(ns is not None, f"the second check reports {DEV}"):
        c.eq(ns.get("media_errors"), [{"offset": o * SECTOR, "length": n * SECTOR} for o, n in ref],
             "the second check: the same media errors")


def check_devdax_mce(c, res):
    facts = res.kv("mce-facts.txt")
    if not facts and not res.live:
        return  # a fixture captured before the scenario injected the error
    # The status encoding is AMD's legacy bank 4 (devdax.sh): QEMU's TCG max CPU.
    c.eq((facts.get("vendor"), facts.get("smca")), ("AuthenticAMD", "no"),
         "the guest CPU decodes MCEs as AMD without SMCA (mce-facts.txt)")
    ref = expect_kernel_list(c, res, facts)
    offset = int(facts.get("offset", -1))
    ns = ars.by_dev(res.check, DEV)
    if not c.check(ns is not None, f"daxprobe reports {DEV}"):
        return
    c.eq(ns.get("media_errors"), [{"offset": o * SECTOR, "length": n * SECTOR} for o, n in ref],
         f"{DEV} media_errors (bytes of {CHAR}) vs ndctl's sectors")
    c.eq(ns.get("badblock_count"), sum(n for _, n in ref), f"{DEV} badblock_count vs ndctl")
    v = ns.get("verdict") or {}
    c.eq((v.get("code"), v.get("severity")), ("dax_capable", "warning"), f"{DEV} verdict")
    ranges = ", ".join(f"{o * SECTOR}-{(o + n) * SECTOR - 1}" for o, n in ref)
    c.check(any(e.get("check") == "media_errors" and e.get("result") == f"bytes {ranges} of {CHAR}"
                for e in v.get("evidence") or []),
            f"{DEV}: evidence names bytes {ranges} of {CHAR}: {v.get('evidence')}")
    c.check(any("ndbus0 cannot clear media errors" in w for w in v.get("warnings") or []),
            f"{DEV}: a warning says the bus cannot clear them: {v.get('warnings')}")
    c.check(not v.get("remedy"), f"{DEV}: no remedy where none works: {v.get('remedy')!r}")
    expect_no_clear(c, res, ref, facts)
    # device-DAX maps listed ranges anyway: a load fails only on poisoned
    # media, which a software machine check under QEMU does not make.
    c.check(any("device-DAX does not check the list" in w for w in v.get("warnings") or []),
            f"{DEV}: the warning does not promise a fault: {v.get('warnings')}")
    if "mce-load.txt" in res.files or res.live:
        load = res.text("mce-load.txt")
        c.check(res.kv("mce-load.txt").get("rc") == "0" and f"{offset:08x}:" in load,
                f"the kernel: a load at byte {offset} of {CHAR} succeeds under QEMU: {load!r}")
    # A software injection runs no severity grading: nothing for memory_failure().
    c.check("Memory failure" not in res.text("dmesg.txt"),
            "the kernel logged no memory_failure() for the injected pfn")
