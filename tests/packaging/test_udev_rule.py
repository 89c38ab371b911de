#!/usr/bin/env python3
"""The agent's udev rule, run by the real udev rule engine (`udevadm test`)
over a sysfs built from what the test guest's sysfs shows of its virtio ports
(fixtures/guest-vports.txt): the agent's port gets TAG systemd and
SYSTEMD_WANTS=daxprobe-agent.service, qemu-guest-agent's port does not, and
the /dev/virtio-ports symlink udev makes is the device the unit binds to.

Runs in a private mount namespace (root): the fake sysfs, /dev, /run and the
rules directory are mounted there only. Exit 77 when that is not possible."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def build_sysfs(capture, root):
    """Recreates each port's device directory, its attributes and the
    class/subsystem/device links exactly as captured."""
    ports, cur, attr = {}, None, None
    for line in open(capture):
        if line.startswith("#") or line.startswith("CAPTURE-"):
            continue
        m = re.match(r"PORT (\S+) -> (\S+) real=(\S+)", line)
        if m:
            cur = {"class": m[1], "link": m[2], "real": m[3], "attrs": {}, "links": {}}
            ports[cur["real"]] = cur
            continue
        m = re.match(r"(SUBSYSTEM|DEVICE) (\S+)", line)
        if m:
            cur["links"][m[1].lower()] = m[2]
            continue
        m = re.match(r"ATTR (\w+):", line)
        if m:
            attr = m[1]
            cur["attrs"][attr] = ""
            continue
        m = re.match(r"  \| (.*)", line)
        if m:
            cur["attrs"][attr] += m[1] + "\n"
    if not ports:
        raise SystemExit(f"{capture}: no PORT entries")
    for p in ports.values():
        real = root + p["real"][len("/sys"):]
        os.makedirs(real, exist_ok=True)
        for name, text in p["attrs"].items():
            with open(os.path.join(real, name), "w") as f:
                f.write(text)
        for name, target in p["links"].items():
            os.symlink(target, os.path.join(real, name))
        cls = root + p["class"][len("/sys"):]
        os.makedirs(os.path.dirname(cls), exist_ok=True)
        os.symlink(p["link"], cls)
    return ports


def udev_properties(sysroot, rulesdir, device):
    """`udevadm test` in a private mount namespace; its KEY=VALUE result."""
    script = f"""set -e
mount --make-rprivate /
mount -t tmpfs tmpfs /run
mkdir /run/hostdev
mount --bind /dev /run/hostdev
mount -t tmpfs tmpfs /dev
touch /dev/null
mount --bind /run/hostdev/null /dev/null
mount --bind {sysroot} /sys
mount -t tmpfs tmpfs /etc/udev/rules.d
mount --bind {rulesdir} /lib/udev/rules.d
exec udevadm test --action=add {device}
"""
    # sd-device refuses a /sys that is not sysfs unless told this is a test.
    env = dict(os.environ, SYSTEMD_DEVICE_VERIFY_SYSFS="0", SYSTEMD_LOG_LEVEL="info")
    r = subprocess.run(["unshare", "--mount", "sh", "-c", script], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"udevadm test {device} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    props = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^([A-Z_]+)=(.*)$", line)
        if m:
            props[m[1]] = m[2]
    return props


def unit_device_deps(unit):
    deps = {}
    for line in open(unit):
        m = re.match(r"^(BindsTo|After)=(.*)$", line.strip())
        if m:
            deps.setdefault(m[1], []).extend(m[2].split())
    return deps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rule", required=True, help="the udev rule file to test (as installed)")
    ap.add_argument("--unit", required=True, help="daxprobe-agent.service")
    ap.add_argument("--capture", required=True, help="fixtures/guest-vports.txt")
    a = ap.parse_args()
    if os.geteuid() != 0:
        skip("needs root for a private mount namespace (unshare --mount)")
    for tool in ("udevadm", "unshare", "systemd-escape"):
        if not shutil.which(tool):
            skip(f"{tool} not found (apt-get install udev util-linux systemd)")
    if not os.path.isdir("/lib/udev/rules.d"):
        skip("/lib/udev/rules.d missing (apt-get install udev)")

    with tempfile.TemporaryDirectory() as tmp:
        sysroot = os.path.join(tmp, "sys")
        ports = build_sysfs(a.capture, sysroot)
        # The system's own rules (50-udev-default.rules makes the
        # /dev/virtio-ports/NAME link) plus the rule under test.
        rulesdir = os.path.join(tmp, "rules.d")
        shutil.copytree("/lib/udev/rules.d", rulesdir)
        shutil.copy(a.rule, rulesdir)

        failures = []
        deps = unit_device_deps(a.unit)
        for real, p in sorted(ports.items()):
            name = p["attrs"]["name"].strip()
            props = udev_properties(sysroot, rulesdir, p["class"])
            wants = props.get("SYSTEMD_WANTS", "").split()
            tagged = ":systemd:" in props.get("TAGS", "")
            print(f"{p['class']} name={name}: SYSTEMD_WANTS={wants} TAGS={props.get('TAGS')} "
                  f"DEVLINKS={props.get('DEVLINKS')}")
            if name == "org.daxprobe.agent.0":
                if "daxprobe-agent.service" not in wants:
                    failures.append(f"{name}: SYSTEMD_WANTS lacks daxprobe-agent.service")
                if not tagged:
                    failures.append(f"{name}: no TAG systemd, so no device unit to bind to")
                link = f"/dev/virtio-ports/{name}"
                if link not in props.get("DEVLINKS", "").split():
                    failures.append(f"{name}: udev made no {link}")
                devunit = subprocess.run(["systemd-escape", "--path", "--suffix=device", link],
                                         capture_output=True, text=True, check=True).stdout.strip()
                for key in ("BindsTo", "After"):
                    if devunit not in deps.get(key, []):
                        failures.append(f"unit {key}= does not name {devunit} ({deps.get(key)})")
            elif "daxprobe-agent.service" in wants:
                failures.append(f"{name}: a port not ours starts the agent")
        if not any(p["attrs"]["name"].strip() != "org.daxprobe.agent.0" for p in ports.values()):
            failures.append("the capture has no other port to prove the rule is specific")
        for f in failures:
            print("FAIL:", f)
        sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
