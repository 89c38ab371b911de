"""The arithmetic and the tables of bench/agent_bench.py (no VM here).

Round trips are in microseconds of host wall clock. Percentiles are
nearest-rank; "spread" is p10-p90 (and min-max in the JSON).
"""

import json
import math
import os
import re

import result_file


def percentile(xs, p):
    s = sorted(xs)
    if not s:
        return float("nan")
    k = min(len(s), max(1, math.ceil(p / 100 * len(s))))
    return s[k - 1]


def summary(xs):
    if not xs:
        return {"n": 0}
    return {"n": len(xs), "median": percentile(xs, 50), "p99": percentile(xs, 99),
            "p10": percentile(xs, 10), "p90": percentile(xs, 90),
            "min": min(xs), "max": max(xs)}


def ratio(a, b):
    return a / b if b else float("nan")


def kv_kb(text):
    """'Key:   123 kB' lines -> {Key: 123} (kB)."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
            out[parts[0][:-1]] = int(parts[1])
    return out


SMAPS_HEAD = re.compile(r"^[0-9a-f]+-[0-9a-f]+ (\S{4}) [0-9a-f]+ \S+ \d+\s*(.*)$")


def smaps_breakdown(text):
    """/proc/PID/smaps -> {mapping: {Rss, Pss, Private_Dirty, Private_Clean,
    Shared_Clean, Anonymous} kB} summed per file (its basename) or per
    pseudo-mapping ([heap], [stack], [anon] for unnamed)."""
    out = {}
    cur = None
    for line in text.splitlines():
        m = SMAPS_HEAD.match(line)
        if m:
            name = m.group(2).strip() or "[anon]"
            if name.startswith("/"):
                name = os.path.basename(name)
            cur = out.setdefault(name, {"Rss": 0, "Pss": 0, "Private_Dirty": 0,
                                        "Private_Clean": 0, "Shared_Clean": 0, "Anonymous": 0})
            continue
        parts = line.split()
        if cur is not None and len(parts) >= 2 and parts[0][:-1] in cur and parts[1].isdigit():
            cur[parts[0][:-1]] += int(parts[1])
    return out


def memory(files, name):
    """The guest's view of one process: status (VmRSS, VmHWM, RssAnon,
    RssFile), smaps_rollup and the smaps breakdown."""
    st = kv_kb(files.get(f"{name}.status", ""))
    rollup = kv_kb(files.get(f"{name}.smaps_rollup", ""))
    if not st:
        return None
    return {"status": {k: st.get(k) for k in ("VmRSS", "VmHWM", "RssAnon", "RssFile",
                                              "RssShmem", "VmSize")},
            "rollup": {k: rollup.get(k) for k in ("Rss", "Pss", "Private_Dirty",
                                                  "Private_Clean", "Shared_Clean", "Anonymous")},
            "breakdown": smaps_breakdown(files.get(f"{name}.smaps", ""))}


LOG_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\] \[[^]]*\] \[\w+\] (.*)$")


def startup_split(log_text, start_us, built_us):
    """From the agent's log (spdlog, ms resolution, the guest's UTC clock):
    exec -> 'agent on PORT' (process start: loading, CLI, identity, port
    lookup) and from there -> the first report built (the start check)."""
    import datetime
    for line in log_text.splitlines():
        m = LOG_TIME.match(line)
        if m and m.group(2).startswith("agent on "):
            t = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").replace(
                tzinfo=datetime.timezone.utc).timestamp() * 1e6
            return {"exec_to_listening_ms": (t - start_us) / 1000,
                    "listening_to_report_ms": (built_us - t) / 1000}
    return None


def cpu_per_ping(rounds, text):
    """cpu.txt lines 'ROUND KEY-start|end NS' (the guest process's schedstat)
    -> rounds[i]['cpu_us_per_ping'][KEY]: guest CPU per round trip, µs."""
    marks = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit():
            marks[(int(parts[0]), parts[1])] = int(parts[2])
    for i, rec in enumerate(rounds, 1):
        out = {}
        counts = dict(rec.get("cpu_pings", {}))
        # Idle intervals: CPU per second with nothing to do (µs per 1 s "ping").
        counts.update({f"{k}_idle": 1000 for k in counts})
        for key, n in counts.items():
            a, b = marks.get((i, f"{key}-start")), marks.get((i, f"{key}-end"))
            if a is not None and b is not None and n:
                out[key] = (b - a) / n / 1000
        rec["cpu_us_per_ping"] = out


def summarise(result):
    """Ratios and per-series summaries over every round of one run."""
    rounds = result["rounds"]
    series = {}
    for key in ("agent_ping", "qga_ping", "echo", "poll_echo", "agent_check", "qga_fsinfo"):
        xs = [x for r in rounds for x in r.get(key, [])]
        series[key] = summary(xs)
    med = {k: v.get("median", float("nan")) for k, v in series.items()}
    first = [r["first_report_ms"] for r in rounds if r.get("first_report_ms") is not None]
    split = [r["startup"] for r in rounds if r.get("startup")]
    per_round = [ratio(percentile(r["agent_ping"], 50), percentile(r["echo"], 50))
                 for r in rounds if r.get("agent_ping") and r.get("echo")]
    mem = [r["agent_memory"] for r in rounds if r.get("agent_memory")]
    cpu = {k: summary([r["cpu_us_per_ping"][k] for r in rounds
                       if k in r.get("cpu_us_per_ping", {})])
           for k in ("agent", "echo", "poll_echo", "agent_idle", "echo_idle", "poll_echo_idle")}
    return {
        "series_us": series,
        "ratios": {
            "agent_ping / echo": ratio(med["agent_ping"], med["echo"]),
            "poll_echo / echo": ratio(med["poll_echo"], med["echo"]),
            "agent_ping / echo, per round": per_round,
            "agent_ping / qga_ping": ratio(med["agent_ping"], med["qga_ping"]),
            "agent_check / qga_fsinfo": ratio(med["agent_check"], med["qga_fsinfo"]),
        },
        "first_report_ms": summary(first),
        "startup_ms": {k: summary([x[k] for x in split])
                       for k in ("exec_to_listening_ms", "listening_to_report_ms")},
        "guest_cpu_us_per_ping": cpu,
        "agent_rss_kb": summary([m["status"]["VmRSS"] for m in mem]),
        "agent_hwm_kb": summary([m["status"]["VmHWM"] for m in mem]),
    }


def goals(s):
    """The issue's goals against this run: (text, met) pairs."""
    r, fr = s["ratios"], s["first_report_ms"]
    hwm = s["agent_hwm_kb"].get("median", float("nan"))
    return [
        (f"ping <= 1.5x the echo: {r['agent_ping / echo']:.2f}x", r["agent_ping / echo"] <= 1.5),
        (f"check over the port faster than qemu-ga's fsinfo: "
         f"{r['agent_check / qga_fsinfo']:.2f}x", r["agent_check / qga_fsinfo"] < 1.0),
        (f"first report <= 50 ms after start: median {fr.get('median', float('nan')):.1f} ms",
         fr.get("median", float("inf")) <= 50),
        (f"agent RSS <= 2 MiB: peak {hwm / 1024:.2f} MiB", hwm <= 2048),
    ]


def headline(s):
    """The run's figures for bench/results (result_file), each against its
    floor in the same run: the echo on the same port, qemu-ga's fsinfo."""
    med = {k: v.get("median") for k, v in s["series_us"].items()}
    r = s["ratios"]

    def rnd(x, d=2):
        return None if x is None or math.isnan(x) else round(x, d)
    figures = [result_file.figure(
        "agent ping round trip", "µs", rnd(med["agent_ping"], 1),
        "a plain echo on the same port", rnd(med["echo"], 1), rnd(r["agent_ping / echo"]),
        "value / floor, medians", "<= 1.5")]
    if med.get("qga_fsinfo") is not None:
        figures.append(result_file.figure(
            "agent check over the port", "µs", rnd(med["agent_check"], 1),
            "qemu-ga guest-get-fsinfo", rnd(med["qga_fsinfo"], 1),
            rnd(r["agent_check / qga_fsinfo"]), "value / floor, medians", "<= 1"))
    figures.append(result_file.figure(
        "first report after the agent's exec", "ms", rnd(s["first_report_ms"].get("median"), 1),
        None, None, None, None, "<= 50"))
    return figures


def fmt_series(v):
    if not v.get("n"):
        return "| - | - | - | 0 |"
    return (f"| {v['median'] / 1000:.2f} | {v['p99'] / 1000:.2f} | "
            f"{v['p10'] / 1000:.2f}-{v['p90'] / 1000:.2f} | {v['n']} |")


LABELS = {
    "echo": "plain echo on org.daxprobe.agent.0 (the floor)",
    "poll_echo": "echo with the agent's poll loop (no JSON)",
    "agent_ping": "daxprobe agent `ping`",
    "qga_ping": "qemu-ga `guest-ping`",
    "agent_check": "daxprobe agent `check` (full check)",
    "qga_fsinfo": "qemu-ga `guest-get-fsinfo`",
}


def table(result):
    s = result["summary"]
    local = result.get("mode") == "local"
    where = "native, unix sockets" if local else "host wall, TCG guest"
    lines = [f"| round trip ({where}) | median ms | p99 ms | p10-p90 ms | n |",
             "|---|---|---|---|---|"]
    for k, label in LABELS.items():
        if s["series_us"][k].get("n"):
            if local and k == "echo":
                label = "plain echo on a unix socket (the floor)"
            lines.append(f"| {label} " + fmt_series(s["series_us"][k]))
    lines.append("")
    lines.append("| ratio (medians, one run) | value |")
    lines.append("|---|---|")
    for k, v in s["ratios"].items():
        if not isinstance(v, list) and math.isnan(v):
            continue
        val = ", ".join(f"{x:.2f}" for x in v) if isinstance(v, list) else f"{v:.2f}"
        lines.append(f"| {k} | {val} |")
    cpu = {k: v for k, v in s.get("guest_cpu_us_per_ping", {}).items() if v.get("n")}
    if cpu:
        lines.append("")
        lines.append("Guest CPU per round trip (schedstat of the guest process, median of rounds): "
                     + ", ".join(f"{k} {v['median']:.0f} µs" for k, v in cpu.items()
                                 if not k.endswith("_idle"))
                     + "; CPU in 1 s with no traffic: "
                     + ", ".join(f"{k[:-5]} {v['median']:.1f} ms" for k, v in cpu.items()
                                 if k.endswith("_idle")))
    fr = s["first_report_ms"]
    lines.append("")
    lines.append(f"First report after agent start (exec → report built, "
                 f"{'CLOCK_REALTIME' if local else 'guest clock'}): "
                 f"median {fr.get('median', float('nan')):.1f} ms, "
                 f"range {fr.get('min', float('nan')):.1f}-{fr.get('max', float('nan')):.1f} ms "
                 f"(n={fr.get('n', 0)})")
    su = s.get("startup_ms", {})
    if su.get("exec_to_listening_ms", {}).get("n"):
        lines.append(f"  of which exec → 'agent on' (process start, ms-resolution log): median "
                     f"{su['exec_to_listening_ms']['median']:.0f} ms; then → report built (the "
                     f"start check): median {su['listening_to_report_ms']['median']:.0f} ms")
    lines.append("")
    lines.append(memory_table(result))
    lines.append("")
    for text, met in goals(s):
        lines.append(f"- {'MET ' if met else 'NOT MET '} {text}")
    return "\n".join(lines)


def memory_table(result):
    mems = [("daxprobe agent", r["agent_memory"]) for r in result["rounds"][-1:]
            if r.get("agent_memory")]
    if result.get("qga_memory"):
        mems.append(("qemu-ga", result["qga_memory"]))
    if not mems:
        return "(no memory readings)"
    out = ["| process (last round) | VmRSS KiB | VmHWM KiB | RssAnon | RssFile | Pss | "
           "Private_Dirty |", "|---|---|---|---|---|---|---|"]
    for name, m in mems:
        st, ro = m["status"], m["rollup"]
        out.append(f"| {name} | {st['VmRSS']} | {st['VmHWM']} | {st['RssAnon']} | "
                   f"{st['RssFile']} | {ro.get('Pss')} | {ro.get('Private_Dirty')} |")
    for name, m in mems:
        top = sorted(m["breakdown"].items(), key=lambda kv: -kv[1]["Rss"])
        out.append("")
        out.append(f"{name}, Rss by mapping (KiB): " + ", ".join(
            f"{k} {v['Rss']}" + (f" (dirty {v['Private_Dirty']})" if v["Private_Dirty"] else "")
            for k, v in top if v["Rss"]))
    return "\n".join(out)


def load(path):
    with open(path) as f:
        return json.load(f)
