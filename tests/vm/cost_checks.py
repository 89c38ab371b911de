"""The costs of DAX the report names (issue 44, item 4), against the
kernel's own numbers in the same guest: each namespace's size from sysfs
(ns-sizes.txt, written by guest/init beside `ndctl list`) and the usable
size and map `ndctl list -BRN` shows."""

STRUCT_PAGE = 64   # bytes per 4 KiB page (drivers/nvdimm/pfn_devs.c: MAX_STRUCT_PAGE_SIZE)
PAGE = 4096
ALIGN_SLACK = 2 << 20  # the info block's 8 KiB and the data's 2 MiB alignment


def ns_sizes(res):
    out = {}
    for line in res.text("ns-sizes.txt").splitlines():
        f = line.split()
        if len(f) == 2 and f[1].isdigit():
            out[f[0]] = int(f[1])
    return out


def expect_struct_pages(c, res, nss):
    """Every fsdax/devdax namespace ndctl lists with a map has a struct_pages
    entry: map=dev, the namespace's size minus ndctl's usable size (the
    kernel's numbers: at least its struct pages, at most 2 MiB more); map=mem,
    the namespace's size x 64 / 4096 in guest RAM. nss: ndctl's namespaces."""
    doc = res.check or {}
    nss = [n for n in nss if n.get("mode") in ("fsdax", "devdax") and n.get("map")]
    if not nss:
        return
    raw = ns_sizes(res)
    if not raw:
        # Results captured before guest/init recorded the sizes.
        c.notes.append("no ns-sizes.txt: struct_pages not compared with the kernel's sizes")
        return
    costs = {e.get("namespace"): e for e in doc.get("struct_pages") or []}
    for n in nss:
        dev, size = n.get("dev"), raw.get(n.get("dev"))
        e = costs.get(dev)
        if not c.check(e is not None and size is not None,
                       f"struct_pages entry and sysfs size for {dev}: {e}, {size}"):
            continue
        pages = size // PAGE * STRUCT_PAGE
        c.eq(e.get("map"), n.get("map"), f"{dev} struct_pages map")
        if n.get("map") == "dev":
            c.eq(e.get("where"), "namespace", f"{dev} struct pages live in the namespace")
            c.eq(e.get("bytes"), size - n.get("size"),
                 f"{dev} struct_pages bytes = sysfs size {size} - ndctl usable {n.get('size')}")
            c.check(pages <= e.get("bytes", 0) <= pages + ALIGN_SLACK,
                    f"{dev}: {e.get('bytes')} bytes hold {pages} bytes of struct pages")
            c.eq(e.get("source"), "kernel", f"{dev} struct_pages source")
        else:
            c.eq(e.get("where"), "guest_ram", f"{dev} struct pages live in guest RAM")
            c.eq(e.get("bytes"), pages, f"{dev} struct_pages bytes = {size} / 4096 x 64")
            c.eq(e.get("source"), "computed", f"{dev} struct_pages source")
