#!/usr/bin/env python3
"""The operators' examples stay valid and in step with the collector:
- the alert rules pass `promtool check rules` and their unit tests
  (`promtool test rules`: each alert fires on what should trigger it, only);
- every daxprobe_* metric the rules and the Grafana dashboard use is one the
  README's metrics table documents (which a unit test keeps equal to the
  exposition), so a renamed metric cannot leave a dashboard silently empty;
- the libvirt domain passes libvirt's own schema (virt-xml-validate) and has
  the NVDIMM and the agent channel the no_nfit remedy sends people to.
Exit 77 when promtool or virt-xml-validate is missing."""
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def readme_metrics(readme):
    names, section = set(), False
    for line in readme.read_text().splitlines():
        if line.startswith("#"):
            section = line == "### Metrics"
        elif section:
            m = re.match(r"^\| `(daxprobe_[a-z_]+)`", line)
            if m:
                names.add(m[1])
    return names


def used_metrics(text):
    return set(re.findall(r"\bdaxprobe_[a-z_]+\b", text))


def main():
    src = Path(sys.argv[1])
    ex = src / "packaging" / "examples"
    missing = [t for t in ("promtool", "virt-xml-validate") if not shutil.which(t)]
    if missing:
        print(f"SKIP: {', '.join(missing)} not found (apt-get install prometheus libvirt-clients)")
        sys.exit(77)
    failures = []

    for args in (["check", "rules", "daxprobe-alerts.yml"],
                 ["test", "rules", "daxprobe-alerts.test.yml"],
                 ["check", "rules", "daxprobe-ledger-rules.yml"]):
        r = subprocess.run(["promtool", *args], cwd=ex, capture_output=True, text=True)
        print(f"promtool {' '.join(args)}: rc {r.returncode}\n{r.stdout}{r.stderr}")
        if r.returncode != 0:
            failures.append(f"promtool {' '.join(args)} failed")

    documented = readme_metrics(src / "README.md")
    if not documented:
        failures.append("README.md has no ### Metrics table")
    rules = (ex / "daxprobe-alerts.yml").read_text() + (ex / "daxprobe-ledger-rules.yml").read_text()
    dash = json.loads((ex / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    if not exprs:
        failures.append("the dashboard has no queries")
    for where, text in (("alert rules", rules), ("dashboard", "\n".join(exprs))):
        for name in sorted(used_metrics(text) - documented):
            failures.append(f"{where} use {name}, which /metrics does not serve (README table)")
    ids = [p["id"] for p in dash["panels"]]
    if len(ids) != len(set(ids)):
        failures.append("dashboard panel ids are not unique")

    xml = ex / "libvirt-domain-nvdimm.xml"
    r = subprocess.run(["virt-xml-validate", str(xml), "domain"], capture_output=True, text=True)
    print(f"virt-xml-validate: rc {r.returncode} {r.stdout}{r.stderr}")
    if r.returncode != 0:
        failures.append("the libvirt domain does not validate")
    dom = ET.parse(xml).getroot()
    nv = dom.find("./devices/memory[@model='nvdimm']")
    if nv is None or nv.find("./source/path") is None or nv.find("./target/label/size") is None:
        failures.append("the libvirt domain lacks <memory model='nvdimm'> with source, target, label")
    elif nv.get("access") != "shared":
        failures.append("the NVDIMM is not access='shared': guest writes would not reach the file")
    ch = dom.find("./devices/channel[@type='unix']/target[@name='org.daxprobe.agent.0']")
    if ch is None or ch.get("type") != "virtio":
        failures.append("the libvirt domain lacks the virtio channel org.daxprobe.agent.0")
    qemu = (ex / "qemu-nvdimm.sh").read_text()
    for needle in ("nvdimm=on", "-device nvdimm,", "share=on", "label-size=",
                   "name=org.daxprobe.agent.0"):
        if needle not in qemu:
            failures.append(f"qemu-nvdimm.sh lacks {needle}")

    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
