#pragma once

// The one pmem guest the unit tests judge: an NFIT bus with region0 and its
// fsdax namespace0.0 (/dev/pmem0, 259:0, queue/dax set), mounted at
// /mnt/pmem as the test-bed guests mount it. Tests change the fields their
// case is about, then add what else it needs (live facts, kernel lines).
#include <string>

#include "probes/readers/facts.h"

namespace daxprobe::test
{

inline Facts pmemFacts(const std::string &fstype, const std::string &superOptions)
{
    Facts f;
    f.nfit.present = true;
    f.topology.observe();
    f.topology.buses.push_back({"ndbus0", "ACPI.NFIT", ""});
    f.topology.regions.push_back(
        {"region0", "ndbus0", "pmem", 536870912, 16777216, 0, "memory_controller", 0, 0});
    NdNamespace ns;
    ns.dev = "namespace0.0";
    ns.region = "region0";
    ns.mode = "fsdax";
    ns.size = 526385152;
    ns.align = 2 << 20;
    ns.blockdev = "pmem0";
    f.topology.namespaces.push_back(ns);
    f.blockdevs.push_back({"pmem0", 259, 0, true});
    MountEntry m;
    m.mountId = 30;
    m.major = 259;
    m.mountPoint = "/mnt/pmem";
    m.source = "/dev/pmem0";
    m.fstype = fstype;
    m.mountOptions = "rw,relatime";
    m.superOptions = superOptions;
    f.mounts.push_back(m);
    return f;
}

} // namespace daxprobe::test
