#include "ndctl_topology.h"

#include <cstdarg>
#include <cstdio>

#include <daxctl/libdaxctl.h>
#include <ndctl/libndctl.h>
#include <uuid/uuid.h>

#include "text_util.h"

namespace daxprobe {

namespace {

// One owner for the library context (design rule: RAII per C handle).
struct NdctlCtx {
    ndctl_ctx *ctx = nullptr;
    NdctlCtx() = default;
    NdctlCtx(const NdctlCtx &) = delete;
    NdctlCtx &operator=(const NdctlCtx &) = delete;
    ~NdctlCtx()
    {
        if (ctx)
            ndctl_unref(ctx);
    }
};

// libndctl logs to stderr by default; our libraries stay quiet (design rule 5).
void quietLog(ndctl_ctx *, int, const char *, int, const char *, const char *, va_list) {}

const char *persistenceName(ndctl_persistence_domain d)
{
    switch (d) {
    case PERSISTENCE_NONE:
        return "none";
    case PERSISTENCE_MEM_CTRL:
        return "memory_controller";
    case PERSISTENCE_CPU_CACHE:
        return "cpu_cache";
    default:
        return "unknown";
    }
}

const char *mapName(ndctl_pfn_loc loc)
{
    switch (loc) {
    case NDCTL_PFN_LOC_RAM:
        return "mem";
    case NDCTL_PFN_LOC_PMEM:
        return "dev";
    default:
        return "";
    }
}

std::string uuidText(const uuid_t uu)
{
    if (uuid_is_null(uu))
        return {};
    char buf[40];
    uuid_unparse(uu, buf);
    return buf;
}

// /sys/block/<dev>/badblocks: "<sector> <count>" per line.
std::uint64_t blockBadblocks(const Root &root, const std::string &blockdev)
{
    if (blockdev.empty())
        return 0;
    auto text = root.readFile("sys/block/" + blockdev + "/badblocks", 1 << 20);
    if (!text)
        return 0;
    std::uint64_t total = 0;
    for (auto line : splitLines(*text)) {
        auto f = splitFields(line);
        if (f.size() == 2)
            if (auto n = parseU64(f[1]))
                total += *n;
    }
    return total;
}

NdNamespace readNamespace(const Root &root, ndctl_namespace *ndns, const std::string &region)
{
    NdNamespace ns;
    ns.dev = ndctl_namespace_get_devname(ndns);
    ns.region = region;
    uuid_t uu;
    ndctl_namespace_get_uuid(ndns, uu);
    ns.uuid = uuidText(uu);

    // Report the personality that is live, as ndctl list does: its size is the
    // usable capacity after the pfn/dax info block.
    ndctl_pfn *pfn = ndctl_namespace_get_pfn(ndns);
    ndctl_dax *dax = ndctl_namespace_get_dax(ndns);
    ndctl_btt *btt = ndctl_namespace_get_btt(ndns);
    if (pfn) {
        ns.mode = "fsdax";
        ns.map = mapName(ndctl_pfn_get_location(pfn));
        ns.size = ndctl_pfn_get_size(pfn);
        ns.align = ndctl_pfn_get_align(pfn);
        if (const char *b = ndctl_pfn_get_block_device(pfn))
            ns.blockdev = b;
        uuid_t puu;
        ndctl_pfn_get_uuid(pfn, puu);
        if (!uuid_is_null(puu))
            ns.uuid = uuidText(puu);
    } else if (dax) {
        ns.mode = "devdax";
        ns.map = mapName(ndctl_dax_get_location(dax));
        ns.size = ndctl_dax_get_size(dax);
        ns.align = ndctl_dax_get_align(dax);
        uuid_t duu;
        ndctl_dax_get_uuid(dax, duu);
        if (!uuid_is_null(duu))
            ns.uuid = uuidText(duu);
        if (daxctl_region *dr = ndctl_dax_get_daxctl_region(dax)) {
            daxctl_dev *dev;
            daxctl_dev_foreach(dr, dev)
            {
                if (daxctl_dev_get_size(dev) > 0) {
                    ns.chardev = daxctl_dev_get_devname(dev);
                    break;
                }
            }
        }
    } else if (btt) {
        ns.mode = "sector";
        ns.size = ndctl_btt_get_size(btt);
        if (const char *b = ndctl_btt_get_block_device(btt))
            ns.blockdev = b;
    } else {
        switch (ndctl_namespace_get_mode(ndns)) {
        case NDCTL_NS_MODE_RAW:
            ns.mode = "raw";
            break;
        case NDCTL_NS_MODE_FSDAX:
            ns.mode = "fsdax";
            break;
        case NDCTL_NS_MODE_DEVDAX:
            ns.mode = "devdax";
            break;
        case NDCTL_NS_MODE_SECTOR:
            ns.mode = "sector";
            break;
        default:
            ns.mode = "unknown";
        }
        ns.size = ndctl_namespace_get_size(ndns);
        if (const char *b = ndctl_namespace_get_block_device(ndns))
            ns.blockdev = b;
    }
    ns.badblockCount = blockBadblocks(root, ns.blockdev);
    return ns;
}

} // namespace

Topology readTopologyWithNdctl(const Root &root)
{
    Topology topo;
    NdctlCtx ctx;
    int rc = ndctl_new(&ctx.ctx);
    if (rc < 0 || !ctx.ctx) {
        topo.error = Error{-rc, "libndctl: ndctl_new"}.describe();
        return topo;
    }
    ndctl_set_log_fn(ctx.ctx, quietLog);
    topo.available = true;

    ndctl_bus *bus;
    ndctl_bus_foreach(ctx.ctx, bus)
    {
        NdBus b{ndctl_bus_get_devname(bus), ndctl_bus_get_provider(bus)};
        ndctl_region *region;
        ndctl_region_foreach(bus, region)
        {
            NdRegion r;
            r.dev = ndctl_region_get_devname(region);
            r.bus = b.dev;
            r.type = ndctl_region_get_type_name(region);
            r.size = ndctl_region_get_size(region);
            r.align = ndctl_region_get_align(region);
            r.availableSize = ndctl_region_get_available_size(region);
            r.persistenceDomain = persistenceName(ndctl_region_get_persistence_domain(region));
            int node = ndctl_region_get_numa_node(region);
            if (node >= 0)
                r.numaNode = node;
            badblock *bb;
            ndctl_region_badblock_foreach(region, bb) r.badblockCount += bb->len;

            ndctl_namespace *ndns;
            ndctl_namespace_foreach(region, ndns)
            {
                // Seeds and disabled namespaces are idle: ndctl list hides them too.
                if (!ndctl_namespace_is_active(ndns))
                    continue;
                topo.namespaces.push_back(readNamespace(root, ndns, r.dev));
            }
            topo.regions.push_back(std::move(r));
        }
        topo.buses.push_back(std::move(b));
    }
    return topo;
}

} // namespace daxprobe
