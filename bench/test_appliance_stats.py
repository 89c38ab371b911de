#!/usr/bin/env python3
"""Unit test of the appliance comparison's arithmetic (appliance_stats.py)
over a captured result (tests/fixtures/appliance/result.json, a real run of
bench/appliance.py). Means and sample standard deviations are checked
against Python's statistics module, the memory breakdown against the raw
readings, read here by their own paths through the run records."""

import json
import math
import os
import statistics
import sys

import appliance_parse as parse
import appliance_report
import appliance_stats as stats

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(os.path.dirname(HERE), "tests", "fixtures", "appliance", "result.json")
# What one nvdimm-dax guest shipped (the fallback profile), dmesg cut to the
# initcall and SWIOTLB lines.
GUEST = os.path.join(os.path.dirname(FIXTURE), "guest-nvdimm-dax")

# metric -> how to read it from a raw run record, independently of run_metrics
RAW = {
    "first_report_s": lambda r: r["host"]["first_report_s"],
    "shutdown_s": lambda r: r["host"]["shutdown_s"],
    "workload_s": lambda r: r["guest"]["workload"]["command"]["wall_seconds"],
    "qemu_peak_rss_kb": lambda r: r["host"]["qemu_peak_rss_kb"],
    "qemu_pss_kb": lambda r: r["host"]["qemu_rollup"]["Pss"],
    "guest_cached_kb": lambda r: r["guest"]["meminfo"]["Cached"],
    "guest_memavailable_kb": lambda r: r["guest"]["meminfo"]["MemAvailable"],
    "faults_minor": lambda r: r["guest"]["workload"]["command"]["faults"]["minor"],
}

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def close(a, b):
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _line_value(text, label):
    for line in text.splitlines():
        if line.strip().startswith(label):
            return line.rsplit(":", 1)[1].strip()
    raise KeyError(label)


def check_parse():
    """The guest's raw files -> numbers, against values read off the text here."""
    files = {}
    for name in os.listdir(GUEST):
        with open(os.path.join(GUEST, name)) as f:
            files[name] = f.read()
    cmd = parse.workload_profile(files)["command"]
    check("fallback" in cmd["faults"]["source"], "the fallback is labelled as such")
    tv = files["fallback-time.txt"]
    check(cmd["faults"]["minor"] == int(_line_value(tv, "Minor (reclaiming a frame)")), "minor")
    check(cmd["faults"]["major"] == int(_line_value(tv, "Major (requiring I/O)")), "major")
    check(cmd["exit_status"] == int(_line_value(tv, "Exit status")), "exit status")
    pte_hits = int(_line_value(files["fallback-hist-dax_pte_fault_done.txt"], "Hits"))
    pmd_hits = int(_line_value(files["fallback-hist-dax_pmd_fault_done.txt"], "Hits"))
    check(cmd["faults"]["dax_pte"] == pte_hits, f"dax_pte {cmd['faults']['dax_pte']} != {pte_hits}")
    # Every PMD fault of this run carried VM_FAULT_FALLBACK (result 2048 = 0x800).
    check(cmd["faults"]["dax_pmd_fallback"] == pmd_hits and cmd["faults"]["dax_pmd"] == pmd_hits,
          f"pmd {cmd['faults']['dax_pmd']} / fallback {cmd['faults']['dax_pmd_fallback']}")
    wall = float(files["fallback-uptime-after.txt"]) - float(files["fallback-uptime-before.txt"])
    check(close(cmd["wall_seconds"], round(wall, 3)), "wall seconds")
    cb = int(_line_value(files["fallback-meminfo-before.txt"], "Cached").split()[0])
    ca = int(_line_value(files["fallback-meminfo-after.txt"], "Cached").split()[0])
    check(cmd["page_cache"]["cached_kb_delta"] == ca - cb, "Cached delta")
    check(parse.hist_counts("{ result:       2304 } hitcount:          3\n"
                            "{ result:        256 } hitcount:          5\n") == (8, 3),
          "hist: FALLBACK|NOPAGE counts as a fallback, NOPAGE not")
    inits = parse.initcalls(files["dmesg.txt"], {"nfit", "nd_pmem"})
    for mod in ("nfit", "nd_pmem"):
        line = [x for x in files["dmesg.txt"].splitlines() if f"[{mod}] returned" in x][0]
        check(inits.get(mod) == int(line.split(" after ")[1].split()[0]), f"initcall {mod}")
    check(parse.swiotlb_mb(files["dmesg.txt"]) == 64 and parse.swiotlb_mb("") == 0, "swiotlb")
    st = parse.steps(files["steps.log"])
    check(parse.step_time(st, "root-mounted") is not None, "steps: root-mounted")


def main():
    result = json.load(open(FIXTURE))
    runs = result["runs"]
    summary = stats.summarise(runs)
    variants = sorted({r["variant"] for r in runs})
    check(set(summary) == set(variants), f"summary variants {list(summary)} != {variants}")
    check(any(len([r for r in runs if r["variant"] == v]) >= 2 for v in variants),
          "the fixture needs a variant with two or more runs to test the SD")

    for v in variants:
        vr = [r for r in runs if r["variant"] == v]
        for key, read in RAW.items():
            values = [read(r) for r in vr]
            cell = summary[v].get(key)
            check(cell is not None, f"{v} {key}: missing from the summary")
            if cell is None:
                continue
            check(cell["n"] == len(values), f"{v} {key}: n {cell['n']} != {len(values)}")
            check(close(cell["mean"], statistics.mean(values)),
                  f"{v} {key}: mean {cell['mean']} != statistics.mean {statistics.mean(values)}")
            if len(values) >= 2:
                check(close(cell["sd"], statistics.stdev(values)),
                      f"{v} {key}: sd {cell['sd']} != statistics.stdev {statistics.stdev(values)}")
            else:
                check(cell["sd"] is None, f"{v} {key}: sd of one value should be None")

        # The breakdown: QEMU anonymous memory + host page cache of the images.
        for r in vr:
            anon = r["host"]["qemu_rollup"]["Anonymous"]
            pc = r["host"]["page_cache"]
            image = [k for k in pc if k.endswith(".img")]
            cache_kb = sum(pc[k]["bytes"] for k in image) // 1024
            b = stats.memory_breakdown(r)
            check(b["qemu_anon_kb"] == anon, f"{v}: anon {b['qemu_anon_kb']} != {anon}")
            check(b["host_cache_kb"] == cache_kb, f"{v}: cache {b['host_cache_kb']} != {cache_kb}")
            check(b["host_total_kb"] == anon + cache_kb, f"{v}: total != anon + cache")
            check("initramfs" not in image and "vmlinux" not in image,
                  f"{v}: boot files counted as images")
        totals = [stats.memory_breakdown(r)["host_total_kb"] for r in vr]
        check(close(summary[v]["host_total_kb"]["mean"], statistics.mean(totals)),
              f"{v}: host_total mean")

    # The stored summary is what the arithmetic gives (the JSON a person reads).
    for v, cells in result["summary"].items():
        for key, cell in cells.items():
            check(close(cell["mean"], summary[v][key]["mean"]), f"stored {v} {key} mean differs")

    # Known values (the example in the statistics module's documentation).
    data = [2.75, 1.75, 1.25, 0.25, 0.5, 1.25, 3.5]
    check(close(stats.sample_sd(data), statistics.stdev(data)), "sample_sd of the doc example")
    check(stats.sample_sd([5.0]) is None, "sample_sd of one value")
    check(stats.ratio(summary, "qemu_pss_kb", variants[0], variants[0]) == 1.0, "ratio to itself")

    # The captured run satisfies the invariants; a mutated one must not.
    check(appliance_report.invariants(result) == [],
          f"invariants of the captured result: {appliance_report.invariants(result)}")
    bad = json.loads(json.dumps(result))
    dax = [r for r in bad["runs"] if r["variant"] in ("nvdimm-dax", "virtio-pmem")]
    if dax:
        dax[0]["guest"]["root_verdict"] = "dax_silently_off"
        check(appliance_report.invariants(bad) != [], "a DAX run without dax_active passes")
        grown = json.loads(json.dumps(result))
        d = [r for r in grown["runs"] if r["variant"] == dax[0]["variant"]][0]
        blk = [r for r in grown["runs"] if r["variant"] == "blk"][0]
        d["guest"]["workload"]["command"]["page_cache"]["cached_kb_delta"] = \
            blk["guest"]["workload"]["command"]["page_cache"]["cached_kb_delta"]
        check(appliance_report.invariants(grown) != [], "DAX with blk's Cached growth passes")
    # The headline bench/results gets: each variant against blk of the same run.
    head = {f["name"]: f for f in stats.headline(summary)}
    dax = head.get("nvdimm-dax: host total (QEMU anon + host page cache)")
    check(dax is not None and dax["floor"]["value"] == round(
        statistics.mean(stats.memory_breakdown(r)["host_total_kb"] for r in runs
                        if r["variant"] == "blk") / 1024, 1), f"headline floor: {dax}")
    check(dax is not None and dax["ratio"] == round(
        summary["nvdimm-dax"]["host_total_kb"]["mean"] / summary["blk"]["host_total_kb"]["mean"],
        3), f"headline ratio: {dax}")
    check(not any(f["name"].startswith("blk:") for f in head.values()), "blk is the floor only")
    check("±" in appliance_report.table(result), "the table shows mean ± SD")
    check_parse()
    check(appliance_report.svg(result).startswith("<svg"), "the plot is an SVG")

    for f in failures:
        print(f"FAIL: {f}")
    print(f"{len(failures)} failure(s) over {len(runs)} runs, {len(variants)} variants")
    return 1 if failures else 0


if __name__ == "__main__":
    if not os.path.exists(FIXTURE):
        print(f"SKIP: {FIXTURE} missing")
        sys.exit(77)
    sys.exit(main())
