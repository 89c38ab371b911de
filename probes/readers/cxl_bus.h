#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/evidence_state.h"
#include "base/root.h"

namespace daxprobe
{

// The CXL topology as /sys/bus/cxl shows it (Documentation/ABI/testing/
// sysfs-bus-cxl), walked as ndctl's libcxl walks it: from each root port
// down the device tree (rootN/portN/endpointN), the decoders in their
// ports, the regions under their root decoders. Every read goes through the
// Root by a plain path, so a capture records it and a replay reads it back
// (a symlink's target is never needed: what a link names is read through it).
struct CxlMemdev {
    std::string dev; // mem0
    std::optional<std::uint64_t> serial;
    std::uint64_t pmemSize = 0;
    std::uint64_t ramSize = 0;
    std::string endpoint; // endpoint2: its port in the CXL hierarchy, once cxl_mem bound it
};

struct CxlDport {
    unsigned id = 0;    // dportN: a host bridge's _UID under a root, a root port's number below
    std::string device; // the PCI device it is, when its uevent names one
};

struct CxlPort {
    std::string dev;    // root0, port1, endpoint2
    std::string kind;   // root, switch (a host bridge or a switch), endpoint
    std::string parent; // the port above; empty for a root
    std::vector<CxlDport> dports;
    std::optional<std::uint32_t>
        uid;            // a host bridge's ACPI _UID (the CEDT's and root's name for it)
    std::string memdev; // an endpoint's memory device
    std::optional<unsigned> decodersCommitted; // since 6.7
};

struct CxlDecoder {
    std::string dev;  // decoder1.0
    std::string port; // port1
    std::string kind; // root, switch, endpoint (its port's)
    std::string mode; // endpoint: ram, pmem, mixed, none
    std::optional<std::uint64_t> start, size, dpaSize;
    std::optional<unsigned> interleaveWays;
    std::vector<std::string> targets;     // target_list: dport ids
    std::string region;                   // the region it decodes for, if any
    bool capPmem = false, capRam = false; // root decoders: what the window may hold
};

struct CxlRegion {
    std::string dev;         // region0
    std::string rootDecoder; // decoder0.0, the window it was carved from
    std::string type;        // pmem, ram (the mode attribute, else its decoders' mode)
    std::optional<std::uint64_t> resource, size;
    std::optional<unsigned> interleaveWays, granularity;
    std::optional<bool> committed;    // the commit attribute (cxl list's decode_state)
    std::vector<std::string> targets; // endpoint decoders, by position
};

struct CxlNvdimmBridge {
    std::string dev;   // nvdimm-bridge0
    std::string ndBus; // ndbus0: the libnvdimm bus it registered
};

// Observed when /sys/bus/cxl/devices could be listed, or is absent (no CXL:
// an observed, empty bus); Failed with the error otherwise.
struct CxlBus : EvidenceOutcome {
    std::vector<CxlMemdev> memdevs;
    std::vector<CxlPort> ports;
    std::vector<CxlDecoder> decoders;
    std::vector<CxlRegion> regions;
    std::vector<CxlNvdimmBridge> bridges;

    bool empty() const { return memdevs.empty() && ports.empty() && bridges.empty(); }
    const CxlPort *port(const std::string &dev) const;
    const CxlDecoder *decoder(const std::string &dev) const;
};

CxlBus readCxlBus(const Root &root);

} // namespace daxprobe
