#!/usr/bin/env python3
"""Unit test of the sharing comparison's pure parts (no VM): the
smaps_rollup parser (appliance_host), the host totals and the break-even
N (sharing_stats), the series names (sharing.py), and that the table, the
SVG and the invariants render a result document. Expected values are worked
out by hand here, not by the code under test."""

import os
import sys
import xml.etree.ElementTree as ET

import appliance_host as host
import appliance_parse as parse
import sharing
import sharing_report as report
import sharing_stats as stats

HERE = os.path.dirname(os.path.abspath(__file__))

# Captured from a running QEMU of the sweep (virtio-pmem+noforce, N=4).
ROLLUP = """55a846bd0000-7ffc3a57a000 ---p 00000000 00:00 0                          [rollup]
Rss:              419504 kB
Pss:              311893 kB
Pss_Dirty:        294544 kB
Pss_Anon:         294544 kB
Pss_File:          17349 kB
Shared_Clean:     124948 kB
Private_Dirty:    294544 kB
Anonymous:        294544 kB
AnonHugePages:    270336 kB
FilePmdMapped:     30720 kB
Swap:                  0 kB
"""

# What appliance.sh's dma_facts wrote in an nvdimm-dax guest (6.1, QEMU 7.2).
PCI_DMA = """0000:00:00.0 0x8086:0x1237 class=0x060000 dma_mask_bits=32 driver=
0000:00:01.1 0x8086:0x7010 class=0x010180 dma_mask_bits=32 driver=
0000:00:02.0 0x1af4:0x1003 class=0x078000 dma_mask_bits=64 driver=virtio-pci
"""
VIRTIO = ("virtio0 device=0x0003 features="
          "0100000000000000000000000000110010000000100000000000000000000000\n")

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def expect_error(fn, what):
    try:
        fn()
    except ValueError:
        return
    failures.append(f"{what}: no ValueError")


def point(series, n, anon_each, cache_mib, variant=None, append=""):
    """A point of N guests with the same anonymous memory each (kB)."""
    variant = variant or series.split("+")[0]
    dax = variant in stats.DAX_VARIANTS
    guests = [{"qemu_rollup": {"Anonymous": anon_each, "Pss": anon_each + 1000,
                               "Rss": anon_each + 2000},
               "guest": {"root_verdict": "dax_active" if dax else None,
                         "queue_dax": "1" if dax else None,
                         "swiotlb_mb": 0, "error": None, "meminfo": {"MemTotal": 190000},
                         "workload": {"command": {"exit_status": 0}}},
               "block_ro": "0" if variant == "virtio-pmem" else "1",
               "root_mount": "36 25 259:0 / /mnt/root ro,relatime shared:1 - ext4 /dev/pmem0 "
                             + ("ro,dax=always" if dax else "ro,noload"),
               "first_report_s": 10.0 + i} for i in range(n)]
    return {"series": series, "variant": variant, "append": append,
            "n": n, "shared_page_cache": {"bytes": cache_mib << 20}, "image_unchanged": True,
            "guests": guests}


def check_rollup():
    r = host.parse_smaps_rollup(ROLLUP)
    check(r["Anonymous"] == 294544 and r["Pss"] == 311893 and r["Rss"] == 419504,
          f"smaps_rollup fields: {r}")
    check(r["AnonHugePages"] == 270336, "AnonHugePages")
    check("55a846bd0000-7ffc3a57a000" not in str(r), "the range line is not a field")
    expect_error(lambda: host.parse_smaps_rollup("Rss: 1 kB\n"), "not a rollup")
    expect_error(lambda: host.parse_smaps_rollup(""), "empty rollup")


def check_dma():
    d = parse.dma_facts({"pci-dma.txt": PCI_DMA, "virtio-features.txt": VIRTIO,
                         "swiotlb-used": "0\n"})
    check([(p["id"], p["dma_mask_bits"], p["driver"]) for p in d["pci"]]
          == [("0x8086:0x1237", 32, None), ("0x8086:0x7010", 32, None),
              ("0x1af4:0x1003", 64, "virtio-pci")], f"pci {d['pci']}")
    # bit 32 (VERSION_1) set, bit 33 (ACCESS_PLATFORM) clear
    check(d["virtio"] == [{"name": "virtio0", "device": "0x0003", "access_platform": False}],
          f"virtio {d['virtio']}")
    check(d["swiotlb_used_slabs"] == 0, "slabs in use")
    on = VIRTIO.replace("10000000100", "11000000100", 1)
    check(parse.dma_facts({"virtio-features.txt": on})["virtio"][0]["access_platform"] is True,
          "ACCESS_PLATFORM set")
    none = parse.dma_facts({})
    check(none == {"pci": None, "virtio": None, "swiotlb_used_slabs": None}, f"nothing: {none}")
    line = report.dma_line([{"dma": d}])
    check("mask < 64 bits: none" in line and "ACCESS_PLATFORM: none" in line, line)


def check_totals():
    t = stats.point_totals(point("blk", 2, 100_000, 60, "blk"))
    # 2 x 100000 kB anon + 60 MiB = 61440 kB of page cache, once
    check(t == {"n": 2, "anon_kb": 200_000, "pss_kb": 202_000, "rss_kb": 204_000,
                "cache_kb": 61_440, "total_kb": 261_440}, f"point_totals {t}")
    bad = point("blk", 2, 1, 1, "blk")
    bad["guests"].pop()
    expect_error(lambda: stats.point_totals(bad), "a guest record missing")


def rows(intercept, slope, ns=(1, 2, 4, 8)):
    return [{"n": n, "total_kb": intercept + slope * n} for n in ns]


def check_break_even():
    # blk 300 + 250 N, dax 400 + 180 N: cross at N = 100 / 70 = 1.4286;
    # at N = 1 DAX is 580 vs 550 (above), at 2 it is 760 vs 800 (below).
    be = stats.break_even(rows(400, 180), rows(300, 250))
    check(be["measured_n"] == 2, f"measured break-even {be['measured_n']}, want 2")
    check(abs(be["model_n"] - 100 / 70) < 1e-9, f"model break-even {be['model_n']}")
    check(abs(be["dax_fit"]["slope_kb"] - 180) < 1e-9
          and abs(be["dax_fit"]["intercept_kb"] - 400) < 1e-9, f"fit {be['dax_fit']}")
    # DAX cheaper from the first guest: 250 + 200 N vs 300 + 250 N.
    be = stats.break_even(rows(250, 200), rows(300, 250))
    check(be["measured_n"] == 1, f"cheaper at once: measured {be['measured_n']}")
    # (250 - 300) / (250 - 200): the lines cross at N = -1, before the first guest.
    check(be["model_n"] is not None and abs(be["model_n"] - (-1)) < 1e-9,
          f"cheaper at once: model {be['model_n']}, want -1")
    # DAX dearer per guest: never.
    be = stats.break_even(rows(250, 300), rows(300, 250))
    check(be["measured_n"] is None and be["model_n"] is None, f"never: {be}")
    # Equal is not below.
    be = stats.break_even(rows(300, 250), rows(300, 250))
    check(be["measured_n"] is None, f"equal lines: measured {be['measured_n']}")
    # Below at N = 2 but above again at 4 and 8: the break-even is where it stays below.
    dax = [{"n": 1, "total_kb": 600}, {"n": 2, "total_kb": 650}, {"n": 4, "total_kb": 1300},
           {"n": 8, "total_kb": 1900}]
    be = stats.break_even(dax, rows(300, 200))  # blk 500, 700 (above), 1100, 1900 (equal)
    check(be["measured_n"] is None, f"never stays below: {be['measured_n']}")
    blk = rows(300, 200)
    blk[3]["total_kb"] = 2000
    be = stats.break_even(dax, blk)  # 1900 < 2000 at N = 8 only
    check(be["measured_n"] == 8, f"below from 8: {be['measured_n']}")
    # Only the N measured in both count.
    be = stats.break_even(rows(400, 180, (1, 2, 4)), rows(300, 250, (2, 4, 8)))
    check(be["ns"] == [2, 4] and be["measured_n"] == 2, f"common N: {be}")
    check(stats.fit_line(rows(1, 1, (4,))) is None, "one point has no fit")


def check_summary():
    pts = ([point("blk", n, 250 << 10, 60, "blk") for n in (1, 2, 4)]
           + [point("nvdimm-dax", n, 280 << 10, 88) for n in (1, 2, 4)]
           + [point("nvdimm-dax+noforce", n, 220 << 10, 88, "nvdimm-dax", stats.NOFORCE)
              for n in (4, 1, 2)])
    result = {"points": pts, "ns": [1, 2, 4], "wall_seconds": 1.0,
              "environment": {"host_kernel": "k", "qemu": "q", "accel": "tcg", "host_cpus": 2,
                              "loadavg_start": [1, 1, 1], "loadavg_end": [2, 2, 2],
                              "read_ahead_kb": {"root": 8192}, "guest_kernel": "g",
                              "guest_memory": "256M", "pmem_size": "256M"}}
    s = stats.summarise(result)
    check(list(s["series"]) == ["blk", "nvdimm-dax", "nvdimm-dax+noforce"], f"{list(s['series'])}")
    check([r["n"] for r in s["series"]["nvdimm-dax+noforce"]] == [1, 2, 4], "sorted by N")
    be = s["break_even"]
    check("blk" not in be and be["nvdimm-dax"]["baseline"] == "blk"
          and be["nvdimm-dax+noforce"]["baseline"] == "blk", f"baselines {be}")
    # noforce: 220 MiB + 88 vs 250 + 60 at N = 1 (308 vs 310): below from N = 1;
    # per guest 220 vs 250 MiB, intercepts 88 vs 60 MiB: cross at 28 / 30 N.
    check(be["nvdimm-dax+noforce"]["measured_n"] == 1, f"noforce {be['nvdimm-dax+noforce']}")
    check(abs(be["nvdimm-dax+noforce"]["model_n"] - 28 / 30) < 1e-9, "noforce model")
    check(be["nvdimm-dax"]["measured_n"] is None and be["nvdimm-dax"]["model_n"] is None,
          "dearer per guest: never")
    result["summary"] = s
    doc = ET.fromstring(report.svg(result))
    ns = "{http://www.w3.org/2000/svg}"
    lines = doc.findall(f"{ns}polyline")
    check(len(lines) == 3, f"one line per series: {len(lines)}")
    check(len(doc.findall(f"{ns}circle")) == 9, "one marker per point")
    table = report.table(result)
    check("| 4 | 1060 | 1208 | 968 |" in table, f"host totals row for N = 4:\n{table}")
    head = {f["name"]: f for f in stats.headline(s)}
    total = head.get("nvdimm-dax+noforce: host total at N=4 (QEMU anon + the image's page "
                     "cache once)")
    check(total is not None and (total["value"], total["floor"]["value"], total["ratio"])
          == (968, 1060, round(968 / 1060, 3)), f"headline at N = 4: {total}")
    slope = head.get("nvdimm-dax+noforce: host memory per guest (fitted slope)")
    check(slope is not None and (slope["value"], slope["floor"]["value"]) == (220, 250),
          f"headline slope: {slope}")
    check([f["value"] for f in head.values() if "break-even" in f["name"]] == [None, 1],
          f"headline break-even: never, 1: {list(head)}")
    check(report.invariants(result) == [], f"invariants: {report.invariants(result)}")
    pts[4]["guests"][1]["guest"]["root_verdict"] = "not_dax"
    pts[0]["image_unchanged"] = False
    fails = report.invariants(result)
    check(len(fails) == 2 and any("modified" in f for f in fails)
          and any("nvdimm-dax N=2 #1" in f for f in fails), f"invariants: {fails}")
    # The kernel's answer, not daxprobe's: queue/dax 0 under a DAX verdict.
    pts[4]["guests"][1]["guest"]["root_verdict"] = "dax_active"
    pts[0]["image_unchanged"] = True
    pts[5]["guests"][0]["guest"]["queue_dax"] = "0"
    fails = report.invariants(result)
    check(len(fails) == 2 and all("nvdimm-dax N=4 #0" in f for f in fails)
          and any("queue/dax 0" in f for f in fails), f"invariants, kernel's DAX: {fails}")
    pts[5]["guests"][0]["guest"]["queue_dax"] = "1"
    # A break-even that was not computed.
    del result["summary"]["break_even"]["nvdimm-dax"]
    fails = report.invariants(result)
    check(len(fails) == 1 and "nvdimm-dax: no break-even" in fails[0], f"no break-even: {fails}")


def check_same_cmdline_baseline():
    """With virtio-blk measured under swiotlb=noforce too, the noforce DAX
    series is compared with it, not with plain blk; the invariants insist."""
    pts = ([point("blk", n, 250 << 10, 60, "blk") for n in (1, 2)]
           + [point("blk+noforce", n, 240 << 10, 60, "blk", stats.NOFORCE) for n in (1, 2)]
           + [point("nvdimm-dax+noforce", n, 220 << 10, 88, "nvdimm-dax", stats.NOFORCE)
              for n in (1, 2)])
    result = {"points": pts}
    result["summary"] = stats.summarise(result)
    be = result["summary"]["break_even"]["nvdimm-dax+noforce"]
    check(be["baseline"] == "blk+noforce", f"baseline with the same cmdline: {be['baseline']}")
    # 220 vs 240 MiB per guest, 88 vs 60 MiB: the lines cross at 28 / 20 N.
    check(abs(be["model_n"] - 28 / 20) < 1e-9, f"model N against blk+noforce: {be['model_n']}")
    check(report.invariants(result) == [], f"invariants: {report.invariants(result)}")
    result["summary"]["break_even"]["nvdimm-dax+noforce"]["baseline"] = "blk"
    fails = report.invariants(result)
    check(len(fails) == 1 and "against blk+noforce" in fails[0], f"wrong baseline: {fails}")


def ksm_point(n, anon_each, pss_anon_each, cache_mib, scans=(10, 12), sharing=5000):
    p = point("blk-ksm", n, anon_each, cache_mib, "blk-ksm")
    for g in p["guests"]:
        g["qemu_rollup"]["Pss_Anon"] = pss_anon_each
    p["ksm"] = {"counters": {"full_scans": str(scans[1]), "pages_shared": "700",
                             "pages_sharing": str(sharing)},
                "full_scans_at_ready": scans[0], "ksmd_cpu_s": 3.5, "settle_s": 20.0,
                "settings": {"run": "1", "pages_to_scan": "1000"}}
    return p


def vfs_point(n, anon_each, shmem_each, daemon_each, cache_mib, series="virtiofs-auto"):
    p = point(series, n, anon_each, cache_mib, series)
    for g in p["guests"]:
        g["qemu_rss_shmem_kb"] = shmem_each
        g["virtiofsd_rollup"] = {"Anonymous": daemon_each, "Pss": 1, "Rss": 1}
        g["guest"].update(root_verdict=None, queue_dax=None)
        g["block_ro"] = None
        g["root_mount"] = ("36 25 0:30 / /mnt/root ro,relatime shared:1 - virtiofs "
                           "daxprobe-share rw")
    return p


def check_ksm_and_virtiofs_totals():
    """KSM: the host holds Pss_Anon (a merged page split among its sharers),
    not Anonymous. virtio-fs: QEMU's anonymous + its memfd RAM + its
    virtiofsd's anonymous, the shared folder's page cache once per host."""
    t = stats.point_totals(ksm_point(4, 300_000, 180_000, 50))
    # 4 x 180000 kB held + 50 MiB once = 51200 kB
    check((t["anon_kb"], t["cache_kb"], t["total_kb"]) == (720_000, 51_200, 771_200),
          f"KSM totals {t}")
    nopss = ksm_point(1, 1, 1, 1)
    del nopss["guests"][0]["qemu_rollup"]["Pss_Anon"]
    expect_error(lambda: stats.point_totals(nopss), "KSM without Pss_Anon")
    t = stats.point_totals(vfs_point(3, 40_000, 200_000, 5_000, 100))
    # 3 x (40000 + 200000 + 5000) + 100 MiB = 102400 kB, once (not 3 x)
    check((t["anon_kb"], t["cache_kb"], t["total_kb"]) == (735_000, 102_400, 837_400),
          f"virtio-fs totals {t}")


def check_best_dax():
    """Every series is compared with the DAX series cheapest at its largest N."""
    pts = ([point("blk", n, 250 << 10, 60, "blk") for n in (1, 2, 4)]
           + [point("nvdimm-dax", n, 280 << 10, 88) for n in (1, 2, 4)]
           + [point("virtio-pmem", n, 200 << 10, 88, "virtio-pmem") for n in (1, 2, 4)]
           + [ksm_point(n, 250 << 10, 150 << 10, 60) for n in (1, 2, 4)]
           + [vfs_point(n, 30 << 10, 200 << 10, 4 << 10, 70) for n in (1, 2, 4)])
    result = {"points": pts}
    s = stats.summarise(result)
    # totals at N = 4: nvdimm-dax 1208 MiB, virtio-pmem 888: the best DAX.
    check(s["best_dax"] == "virtio-pmem", f"best DAX {s['best_dax']}")
    vs = s["vs_best_dax"]
    check(set(vs) == {"blk", "nvdimm-dax", "blk-ksm", "virtiofs-auto"}, f"compared: {set(vs)}")
    # blk-ksm 60 + 150 N against 88 + 200 N: below from N = 1, lines cross at
    # (60 - 88) / (200 - 150) < 1.
    check(vs["blk-ksm"]["measured_n"] == 1 and abs(vs["blk-ksm"]["model_n"] + 28 / 50) < 1e-9,
          f"blk-ksm vs best DAX {vs['blk-ksm']}")
    # virtio-fs 70 + 234 N: dearer per guest than 88 + 200 N, never below.
    check(vs["virtiofs-auto"]["measured_n"] is None and vs["virtiofs-auto"]["model_n"] is None,
          f"virtio-fs vs best DAX {vs['virtiofs-auto']}")
    be = s["break_even"]
    check(be["blk-ksm"]["baseline"] == "blk" and be["blk-ksm"]["measured_n"] == 1
          and be["virtiofs-auto"]["baseline"] == "blk", f"against blk: {be}")
    result["summary"] = s
    check(report.invariants(result) == [], f"invariants: {report.invariants(result)}")
    table = report.table(dict(result, ns=[1, 2, 4], wall_seconds=1.0, environment={
        "host_kernel": "k", "qemu": "q", "accel": "tcg", "host_cpus": 2,
        "loadavg_start": [1], "read_ahead_kb": {}, "guest_kernel": "g",
        "guest_memory": "256M", "pmem_size": "256M"}))
    check("against the best DAX series, virtio-pmem" in table and "pages_sharing 5000" in table,
          f"table:\n{table}")
    # What --check insists on: ksmd settled, KSM merged, a virtio-fs root ro.
    pts[9]["ksm"]["counters"]["full_scans"] = "11"
    pts[10]["ksm"]["counters"]["pages_sharing"] = "0"
    pts[12]["guests"][0]["root_mount"] = pts[12]["guests"][0]["root_mount"].replace(" ro,", " rw,")
    fails = report.invariants(result)
    check(len(fails) == 3 and "blk-ksm N=1: read after 11 full scans" in fails[0]
          and "blk-ksm N=2: KSM merged nothing" in fails[1]
          and "virtiofs-auto N=1 #0: virtio-fs root mounted" in fails[2], f"invariants: {fails}")
    del pts[11]["ksm"]
    check(any("blk-ksm N=4: no KSM reading" in f for f in report.invariants(result)),
          "a KSM point without its reading")


def check_series_names():
    check(sharing.parse_series("virtio-pmem+noforce") == ("virtio-pmem", stats.NOFORCE),
          "parse +noforce")
    check(sharing.parse_series("blk") == ("blk", ""), "parse blk")
    check(sharing.parse_series("nvdimm-erofs+noforce") == ("nvdimm-erofs", stats.NOFORCE),
          "parse nvdimm-erofs+noforce")
    check(len(sharing.DEFAULT_SERIES) == 10, f"ten series: {sharing.DEFAULT_SERIES}")
    for bad in ("nvdimm", "blk+force", "virtiofs", ""):
        expect_error(lambda b=bad: sharing.parse_series(b), f"series {bad!r}")
    for s in sharing.DEFAULT_SERIES:
        check(stats.series_name(*sharing.parse_series(s)) == s, f"round trip {s}")


check_rollup()
check_dma()
check_totals()
check_break_even()
check_summary()
check_same_cmdline_baseline()
check_series_names()
check_ksm_and_virtiofs_totals()
check_best_dax()
for f in failures:
    print(f"FAIL: {f}")
print(f"{'FAIL' if failures else 'ok'}: sharing stats ({len(failures)} failures)")
sys.exit(1 if failures else 0)
