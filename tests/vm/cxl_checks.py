"""Host checks for the CXL scenarios (issue 33; tests/vm/README.md, "CXL").

daxprobe's document is held to the kernel's own answers in the same guest:
`cxl list -vvv` (cxl-list.json) for the `cxl` section, `ndctl list -BRN`
for the nd bus, regions and namespaces (scenarios.compare_with_ndctl), xfs_io's
statx and MAP_SYNC for the files (kernel-NAME.txt), the kernel log for the
refusals. The codes each kernel must show are the contract between the test
bed and the reader (cxl-shared.md): every `code` anywhere inside
report["cxl"] counts, so its nesting may move without breaking these checks.
"""

import re

import collector_scenario
import scenarios as sc  # the shared helpers; used at call time (scenarios imports this module)
import verdict_checks as vc

CXL_CODES = {"cxl_region_ok", "cxl_ram_region", "cxl_no_region", "cxl_region_no_namespace",
             "cxl_memdev_missing", "cxl_commit_failed", "cxl_no_serial",
             "cxl_region_no_nd_region", "cxl_passthrough_uncommitted"}

# The shared boot's codes by guest kernel (major, minor): mem0's good region,
# the memdev never given a region, and what each kernel made of the region on
# the one-port host bridge of a memdev without a serial. On 6.1 that region
# is no candidate for a namespace (its writes would vanish): no
# cxl_region_no_namespace there.
SHARED_CODES = {
    (6, 1): {"cxl_region_ok", "cxl_no_region", "cxl_passthrough_uncommitted"},
    (6, 12): {"cxl_region_ok", "cxl_no_region", "cxl_region_no_namespace"},
    (7, 2): {"cxl_region_ok", "cxl_no_region", "cxl_no_serial"},
}

# The kernel's words behind a refusal, which its verdict must cite.
KERNEL_WORDS = {
    "cxl_memdev_missing": "Failed to get interrupt for event Info log",
    "cxl_commit_failed": "Failed to synchronize CPU cache state",
    "cxl_no_serial": "invalid or missing serial number",
}
# What each refusal's remedy must name (QEMU < 8's workarounds).
REMEDY_WORDS = {
    "cxl_memdev_missing": "pcie_ports=compat",
    "cxl_commit_failed": "hypervisor=off",
    "cxl_no_serial": "sn=",
    "cxl_passthrough_uncommitted": "cxl-rp",
}
# Never `dax_verified` with these.
PROBLEMS = {"cxl_memdev_missing", "cxl_commit_failed", "cxl_no_serial",
            "cxl_passthrough_uncommitted"}

MOUNTS = {"ext4": "/mnt/cxl-ext4", "xfs": "/mnt/cxl-xfs"}


# -- the report's verdicts --------------------------------------------------------

def verdicts_in(obj):
    """Every verdict ({code, ...}) anywhere inside obj."""
    if isinstance(obj, dict):
        if isinstance(obj.get("code"), str):
            yield obj
        for v in obj.values():
            yield from verdicts_in(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from verdicts_in(v)


def cxl_verdicts(doc):
    return list(verdicts_in((doc or {}).get("cxl")))


def section(c, res):
    """report["cxl"], or None (and a failure)."""
    cxl = (res.check or {}).get("cxl")
    c.check(isinstance(cxl, dict), f"the report has a cxl section: {sorted(res.check or {})}")
    return cxl if isinstance(cxl, dict) else None


def expect_codes(c, res, want, optional=frozenset()):
    """The CXL codes in the report are `want` (and maybe `optional`); each
    refusal cites the kernel's words (which the guest's log must hold), names
    its workaround and is a problem."""
    verdicts = cxl_verdicts(res.check)
    got = {v["code"] for v in verdicts} & CXL_CODES
    c.eq(sorted(got - set(optional)), sorted(want), "CXL codes in report['cxl']")
    log = res.text("dmesg.txt")
    for code in want & KERNEL_WORDS.keys():
        c.check(KERNEL_WORDS[code] in log,
                f"test bed: the guest's kernel logged {KERNEL_WORDS[code]!r} ({code})")
    for v in verdicts:
        code = v["code"]
        words = KERNEL_WORDS.get(code)
        if words:
            c.check(words in sc.evidence_text({"verdict": v}),
                    f"{code} cites the kernel's {words!r}: {v.get('evidence')}")
        if code in REMEDY_WORDS:
            c.check(REMEDY_WORDS[code] in sc.remedy_text({"verdict": v}),
                    f"{code} remedy names {REMEDY_WORDS[code]!r}: {v.get('remedy')!r}")
        if code in PROBLEMS:
            c.eq(v.get("severity"), "problem", f"{code} severity")


def expect_overall(c, res):
    """A machine with CXL pmem never gets no_nfit (nor "no persistent
    memory"); the overall verdict and the exit code follow the severities."""
    doc = res.check
    if not c.check(doc is not None, "check.json is one JSON document:\n"
                   + res.text("check.json")[:2000] + res.text("check.stderr")[-1000:]):
        return False
    c.eq(doc.get("schema"), "daxprobe.check/1", "schema")
    c.eq(doc.get("exit_code"), res.rc("check.rc"), "document exit_code vs process exit code")
    c.check(sc.verdict_code(doc) != "no_nfit", "a machine with CXL pmem is never no_nfit")
    c.eq((doc.get("nfit") or {}).get("present"), False, "nfit.present (CXL has no NFIT)")
    problem = any(v.get("severity") == "problem" for v in verdicts_in(
        {k: v for k, v in doc.items() if k != "verdict"}))
    want = ("problems_found", 1) if problem else ("dax_verified", 0)
    c.eq((sc.verdict_code(doc), res.rc("check.rc")), want,
         "overall verdict and exit code, from the verdicts' severities")
    return True


def expect_text(c, res):
    """The human report of the same guest: no "no persistent memory", and no
    bare "NFIT absent" leading it (CXL has no NFIT by design)."""
    text = res.text("check-text.txt")
    if not c.check(text.strip(), "the human report (check-text.txt): "
                   + res.text("check-text.stderr")[:500]):
        return
    c.check("no persistent memory" not in text, "the human report says no persistent memory")
    bare = [ln for ln in text.splitlines() if " ".join(ln.split()) == "NFIT absent"]
    c.check(not bare, f"the human report leads with a bare 'NFIT absent': {bare}")
    c.check("CXL" in text, "the human report names CXL")


# -- the reference: cxl list -vvv -------------------------------------------------

def cxl_list_objects(listing):
    """memdevs, regions, and decoders as {name: object} from `cxl list -vvv`,
    whatever the nesting; root decoders are those under a "decoders:root*"
    key."""
    out = {"memdevs": {}, "regions": {}, "decoders": {}, "root_decoders": {}}

    def walk(obj, key=""):
        if isinstance(obj, dict) and "position" in obj:
            return  # a region's mapping: {position, memdev, decoder}
        if isinstance(obj, dict):
            # An endpoint names its memdev by nesting the memdev's object.
            if isinstance(obj.get("memdev"), str):
                out["memdevs"][obj["memdev"]] = obj
            elif isinstance(obj.get("decoder"), str):
                out["decoders"][obj["decoder"]] = obj
                if key.startswith("decoders:root"):
                    out["root_decoders"][obj["decoder"]] = obj
            elif isinstance(obj.get("region"), str) and "decode_state" in obj:
                out["regions"][obj["region"]] = obj
            for k, v in obj.items():
                walk(v, k)
        elif isinstance(obj, list):
            for v in obj:
                walk(v, key)

    walk(listing)
    return out


def number(v):
    """cxl list prints numbers, daxprobe may print a hex string (a serial)."""
    if isinstance(v, str):
        try:
            return int(v, 0)
        except ValueError:
            return v
    return v


def expect_cxl_as_kernel(c, res, cxl):
    """The cxl section against `cxl list -vvv` of the same guest: every
    memdev, region and decoder it lists, with its fields, and nothing else;
    the CEDT's windows are the root decoders."""
    c.eq(res.rc("cxl-list.rc"), 0, "the reference `cxl list -vvv` exit status: "
         + res.text("cxl-list.stderr")[:300])
    ref = cxl_list_objects(res.json("cxl-list.json") or [])
    c.eq(cxl.get("present"), True, "cxl.present")
    cedt = cxl.get("cedt") or {}
    c.eq((cedt.get("present"), cedt.get("checksum_ok")), (True, True), "CEDT present, checksum ok")
    roots = sorted(ref["root_decoders"].values(), key=lambda d: number(d.get("resource")) or 0)
    windows = sorted(cedt.get("cfmws") or [], key=lambda w: number(w.get("base")) or 0)
    c.eq([(number(w.get("base")), number(w.get("size"))) for w in windows],
         [(number(d.get("resource")), number(d.get("size"))) for d in roots],
         "CFMWS windows (base, size) vs cxl list's root decoders")
    pairs = (("memdevs", "memdev", (("serial", "serial"), ("pmem_size", "pmem_size"),
                                    ("ram_size", "ram_size"))),
             ("regions", "region", (("size", "size"), ("type", "type"),
                                    ("interleave_ways", "interleave_ways"),
                                    ("decode_state", "decode_state"))),
             ("decoders", "decoder", (("start", "resource"), ("size", "size"),
                                      ("region", "region"))))
    for kind, _, fields in pairs:
        got = {o.get("dev"): o for o in cxl.get(kind) or []}
        c.eq(sorted(got), sorted(ref[kind]), f"cxl {kind} vs cxl list")
        for name, r in ref[kind].items():
            g = got.get(name)
            if g is None:
                continue
            for ours, theirs in fields:
                # cxl list leaves out a zero size and a decoder's missing
                # region; what else it leaves out (a disabled decoder's range,
                # ndctl 76's region type) it does not know.
                if theirs not in r and not theirs.endswith("size") and theirs != "region":
                    continue
                want = r.get(theirs, 0 if theirs.endswith("size") else None)
                c.eq(number(g.get(ours)), number(want), f"cxl {kind} {name} {ours} vs cxl list")
            if kind == "decoders":
                c.eq(sorted(str(t) for t in g.get("targets") or []),
                     sorted(str(t.get("id")) for t in r.get("targets") or []),
                     f"cxl decoder {name} targets vs cxl list")


# -- the scenarios ----------------------------------------------------------------

def expect_setup(c, res, keys):
    """The test bed's own steps: each made what it names (a failed step is a
    failure, never a skip)."""
    setup = res.kv("cxl-setup.txt")
    for k in keys:
        c.check(setup.get(k), f"test bed: the guest made no {k} (cxl-setup.txt {setup}); "
                f"commands:\n{res.text('commands.log')[-2000:]}")
    return setup


def expect_cxl_mounts(c, res, setup):
    """ext4 and XFS on CXL fsdax namespaces, mounted with DAX: dax_active,
    and daxprobe's statx and MAP_SYNC are the kernel's (xfs_io)."""
    for name, point in MOUNTS.items():
        c.eq(res.kv(f"mount-{name}.txt").get("rc"), "0", f"test bed: the {name} -o dax mount")
        m = sc.pmem_mount(res.check, point)
        if not c.check(m is not None, f"no mount entry for {point}"):
            continue
        c.eq(m.get("blockdev"), setup.get(name), f"{point} blockdev")
        c.eq(sc.verdict_code(m), "dax_active", f"{point} verdict")
        c.check(m.get("queue_dax") in (True, 1), f"{point} queue_dax: {m.get('queue_dax')!r}")
        k = vc.expect_file_as_kernel(c, res, name, True)
        if k is not None:
            c.eq((m.get("map_sync") or {}).get("ok"), k["map_sync"],
                 f"{point}: daxprobe MAP_SYNC vs the kernel's")
            c.eq((m.get("statx_dax") or {}).get("dax"), k["dax"],
                 f"{point}: daxprobe statx vs the kernel's")


def expect_cxl_bus(c, res, setup):
    """The region cxl_pmem made is on a `CXL` nd bus, persistent at the
    memory controller (ndctl says so too), with the devdax namespace."""
    doc = res.check
    cxl_buses = {b.get("dev") for b in doc.get("buses") or [] if b.get("provider") == "CXL"}
    c.check(cxl_buses, f"an nd bus with provider CXL: {doc.get('buses')}")
    regions = {r.get("dev"): r for r in doc.get("regions") or []}
    r = regions.get(setup.get("nd_region"))
    if c.check(r is not None, f"nd region {setup.get('nd_region')} in the report: {sorted(regions)}"):
        c.check(r.get("bus") in cxl_buses, f"{r.get('dev')} on the CXL bus: {r.get('bus')}")
        c.eq(r.get("persistence_domain"), "memory_controller", f"{r.get('dev')} persistence_domain")
    ref, _ = sc.ndctl_objects(res.json("ndctl-list.json"))
    ref = {x.get("dev"): x for x in ref}
    c.eq((ref.get(setup.get("nd_region")) or {}).get("persistence_domain"), "memory_controller",
         "ndctl: the CXL region's persistence_domain")
    dd = [n for n in sc.namespaces(doc) if n.get("mode") == "devdax"]
    if c.check(len(dd) == 1, f"one devdax namespace: {dd}"):
        c.eq(dd[0].get("chardev"), setup.get("devdax"), "devdax chardev")
        c.eq(sc.verdict_code(dd[0]), "dax_capable", "devdax namespace verdict")


def expect_cxl_regions(c, cxl, setup):
    """Each CXL region names the nd region it became (none: null)."""
    got = {r.get("dev"): r for r in cxl.get("regions") or []}
    for reg, nd in ((setup.get("region"), setup.get("nd_region")),
                    (setup.get("lone_region"), setup.get("lone_nd_region") or None)):
        r = got.get(reg)
        if c.check(r is not None, f"cxl region {reg} in the report: {sorted(got)}"):
            c.eq(r.get("nd_region"), nd, f"cxl region {reg} nd_region")


def memdev_verdict(doc, dev):
    """The verdict report["cxl"] gives memdev `dev`, or None."""
    for m in ((doc or {}).get("cxl") or {}).get("memdevs") or []:
        if m.get("dev") == dev:
            return m.get("verdict")
    return None


def region_verdict(doc, dev):
    """The verdict report["cxl"] gives CXL region `dev`, or None."""
    for r in ((doc or {}).get("cxl") or {}).get("regions") or []:
        if r.get("dev") == dev:
            return r.get("verdict")
    return None


def expect_no_free_decoder(c, res, setup):
    """The memdev with serial 0x3 gets no create-region command: every
    decoder of a port on its path decodes a region already (cxl list says
    which), and the command it used to get makes no committed region."""
    unused = setup.get("unused")
    v = memdev_verdict(res.check, unused) or {}
    c.eq((v.get("code"), v.get("remedy")), ("cxl_no_region", None),
         f"{unused}: cxl_no_region without a command")
    taken = re.findall(r"(decoder\d+\.\d+) of (\w+): region (\w+)",
                       sc.evidence_text({"verdict": v}))
    ports = {p for _, p, _ in taken}
    if not c.check(len(ports) == 1, f"{unused}: the verdict names one full port: {v}"):
        return
    port = ports.pop()
    ref = cxl_list_objects(res.json("cxl-list.json") or [])["decoders"]
    # A decoder is named after its port's id: decoderN.M of portN or endpointN.
    prefix = "decoder" + re.sub(r"^\D+", "", port) + "."
    mine = {n: d.get("region") for n, d in ref.items() if n.startswith(prefix)}
    c.eq({d: r for d, _, r in taken}, mine,
         f"cxl list: {port}'s decoders and the region each decodes, as the verdict has them")
    c.check(all(mine.values()), f"cxl list: every decoder of {port} decodes a region: {mine}")
    c.check(any(f"decoder(s) of {port}" in w for w in v.get("warnings") or []),
            f"{unused}: the warning says why no region can be made: {v.get('warnings')}")
    if "cxl-unused.rc" not in res.files:
        c.check(not res.live, "the guest tried a region of the unused memdev")
        return
    regions = cxl_list_objects(res.json("cxl-unused-regions.json") or [])["regions"]
    known = {setup.get(k) for k in ("region", "lone_region", "spare_region")}
    new = {n for n, r in regions.items() if r.get("decode_state") == "commit"} - known
    said = f"cxl create-region said: {res.text('cxl-unused-out.txt')[-500:]}"
    c.check(not new, f"the kernel committed a region of {unused} after all: {sorted(new)}; {said}")
    c.eq(res.text("cxl-unused-region.txt").strip(), "",
         f"the region {unused}'s endpoint decoder decodes for; {said}")


def expect_cxl_remedies(c, res, setup):
    """daxprobe's two remedies for the memdev with serial 0x4, each run in
    the guest as printed: the kernel then shows a committed region and an
    fsdax namespace on it, and the next check no longer asks for them."""
    if "cxl-region-remedy.rc" not in res.files:
        c.check(not res.live, "the guest ran daxprobe's remedies (cxl-region-remedy.rc)")
        return
    spare, region, nd = setup.get("spare"), setup.get("spare_region"), setup.get("spare_nd_region")
    printed = (memdev_verdict(res.check, spare) or {}).get("remedy")
    ran = res.text("cxl-region-remedy-cmd.txt").strip()
    c.eq(ran, printed, f"the command run for {spare} is the one check.json printed")
    c.eq(res.rc("cxl-region-remedy.rc"), 0, "the create-region remedy's exit status: "
         + res.text("cxl-region-remedy-out.txt")[-800:])
    ref = cxl_list_objects(res.json("cxl-list.json") or [])["memdevs"].get(spare) or {}
    listing = res.json("cxl-remedy-regions.json")
    made = cxl_list_objects(listing or [])["regions"]
    c.eq({n: (r.get("decode_state"), r.get("size")) for n, r in made.items()},
         {region: ("commit", ref.get("pmem_size"))},
         f"cxl list -R -v -r {region}: committed, all of {spare}'s pmem")
    maps = [m.get("memdev") for r in made.values() for m in r.get("mappings") or []]
    c.eq(maps, [spare], f"cxl list -R -v -r {region}: its one memdev")
    after = res.json("cxl-check-after-region.json")
    c.eq(memdev_verdict(after, spare), None, f"the next check: no cxl_no_region for {spare}")
    v = region_verdict(after, region) or {}
    c.eq(v.get("code"), "cxl_region_no_namespace", f"the next check: {region} (nd {nd})")
    c.eq(res.text("cxl-namespace-remedy-cmd.txt").strip(), v.get("remedy"),
         f"the command run for nd {nd} is the one cxl-check-after-region.json printed")
    c.eq(res.rc("cxl-namespace-remedy.rc"), 0, "the create-namespace remedy's exit status: "
         + res.text("cxl-namespace-remedy-out.txt")[-800:])
    listing = res.json("cxl-ndctl-remedy-namespaces.json")
    nss = listing if isinstance(listing, list) else [listing] if listing else []
    c.eq([(n.get("mode"), bool(n.get("blockdev"))) for n in nss], [("fsdax", True)],
         f"ndctl list -N -r {nd}: one fsdax namespace with its block device")
    last = res.json("cxl-check-after-namespace.json")
    c.eq((region_verdict(last, region) or {}).get("code"), "cxl_region_ok",
         f"the check after the namespace: {region}")


def check_cxl(c, res):
    """The shared CXL boot, on each kernel."""
    setup = expect_setup(c, res, ("mem", "region", "nd_region", "ext4", "xfs", "devdax",
                                  "lone", "lone_region", "unused")
                         + (("spare", "spare_region", "spare_nd_region") if res.live else ()))
    rel = sc.kernel_release(res)
    if not c.check(rel in SHARED_CODES, f"a kernel this boot is measured on: {rel}"):
        return
    c.eq(bool(setup.get("lone_nd_region")), rel != (7, 2),
         f"an nd region of the memdev without a serial (none on 7.2): {setup}")
    if not expect_overall(c, res):
        return
    expect_cxl_mounts(c, res, setup)
    expect_cxl_bus(c, res, setup)
    expect_text(c, res)
    cxl = section(c, res)
    if cxl is not None:
        expect_cxl_as_kernel(c, res, cxl)
        expect_cxl_regions(c, cxl, setup)
        expect_no_free_decoder(c, res, setup)
        expect_cxl_remedies(c, res, setup)
    expect_codes(c, res, SHARED_CODES[rel])


def check_cxl_no_memdev(c, res):
    """Without pcie_ports=compat: the kernel refused the memdev."""
    c.eq(res.rc("cxl-list.rc"), 0, "the reference `cxl list -vvv` exit status")
    c.eq(cxl_list_objects(res.json("cxl-list.json") or [])["memdevs"], {},
         "cxl list: no memdev")
    if expect_overall(c, res):
        cxl = section(c, res)
        if cxl is not None:
            expect_cxl_as_kernel(c, res, cxl)
        expect_codes(c, res, {"cxl_memdev_missing"})


def cxl_host(guest, log):
    """The real collector on this VM: QEMU's cxl-type3 backends (guest.cxl)."""
    files = sorted(guest.cxl.backing_files(guest.dir))
    return collector_scenario.host_facts(guest, log, files)


def expect_cxl_host_backends(c, res):
    """The collector counts each cxl-type3 device's pmem backend as it counts
    an NVDIMM's (shared, mapped, page-cache durability on this host), and the
    ledger names each file's role: the pmem and its label area."""
    if "host/query.json" not in res.files:
        c.check(not res.live, "the host ran the collector (host/query.json)")
        return  # a fixture from before the host ran it
    facts = collector_scenario.host_backends(res)
    if not c.check(facts is not None,
                   f"collector query: one VM: {res.text('host/query.json')[:500]!r}"):
        return
    backends, files = facts
    paths = res.text("host/backing").split()
    pmem = sorted(p for p in paths if "/cxl-pmem" in p)
    c.check(len(pmem) >= 1 and len(pmem) == len(paths) // 2, f"the host's backing files: {paths}")
    c.eq(sorted((b.get("device"), b.get("mem_path"), b.get("share"), b.get("persistence"),
                 b.get("mapped")) for b in backends),
         [("cxl-type3", p, True, "page_cache", True) for p in pmem],
         "host facts: (device, backing file, share, persistence, mapped)")
    roles = {f.get("path"): f.get("role") for f in files}
    c.eq({p: roles.get(p) for p in paths},
         {p: "cxl-type3" if "/cxl-pmem" in p else "cxl-lsa" for p in paths},
         "ledger: each backing file's role")


def check_cxl_no_commit(c, res):
    """The hypervisor bit on: the region's commit failed while `cxl
    create-region` exited 0."""
    setup = expect_setup(c, res, ("mem",))
    c.eq(sc.command_rc(res.text("commands.log"), "cxl create-region"), 0,
         "cxl create-region exits 0 after a failed commit")
    c.check(not setup.get("region"), f"no committed region: {setup}")
    if expect_overall(c, res):
        cxl = section(c, res)
        if cxl is not None:
            expect_cxl_as_kernel(c, res, cxl)
        # The memdev is also left without a region: the reader may say so.
        expect_codes(c, res, {"cxl_commit_failed"}, optional={"cxl_no_region"})
    expect_cxl_host_backends(c, res)
