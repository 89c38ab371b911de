#include "probes/readers/gather.h"

#include "probes/readers/bad_owners.h"
#include "probes/readers/dax_census.h"
#include "probes/readers/dax_evidence.h"
#include "probes/readers/dimm_smart.h"
#include "probes/readers/libpmem_loader.h"
#include "probes/readers/root_facts.h"
#include "probes/readers/sysfs_topology.h"
#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

bool readOnly(const MountEntry &m)
{
    for (auto o : splitFields(m.mountOptions, ','))
        if (o == "ro")
            return true;
    return false;
}

// One mount of each device with bad blocks, its whole tree preferred (a
// bind mount shows only a subtree), and the owners of its bad sectors.
void scanBadblockMounts(const Root &root, Facts &facts, const WalkBounds &bounds)
{
    for (const auto &dev : readBadblockDevices(root, facts.topology)) {
        const MountEntry *best = nullptr;
        for (const auto &m : facts.mounts)
            if (m.major == dev.major && m.minor == dev.minor && (!best || best->root != "/"))
                best = &m;
        if (best)
            facts.badblockScans[best->mountPoint] =
                findBadblockOwners(best->mountPoint, dev, boundedBy(WalkLimits{}, bounds));
    }
}

} // namespace

Facts gatherFacts(const Root &root, const GatherOptions &options)
{
    Facts facts;
    // Topology first: it names the pmem block devices the root reads look at.
    if (options.live) {
        facts.topology = readTopologyFromSysfs(root);
        if (auto missing = readDimmHealth(facts.topology.dimms))
            facts.missingLibraries.push_back(std::move(*missing));
    }
    readRootFacts(root, facts, options.kmsg, options.faultProbes);
    if (!options.live)
        return facts;

    facts.faults.perf = options.faultProbes ? options.faultProbes->perf(root) : probePerf(root);
    for (const auto &m : facts.mounts) {
        if (!isDaxCandidate(facts, m))
            continue;
        MountLiveFacts live;
        bool writable = !readOnly(m);
        if (m.fstype == "virtiofs") {
            // The test file would land in the host's shared folder, and
            // MAP_SYNC is a promise virtio-fs never makes.
            live.mapSync.skip("virtio-fs: no test file in the host's shared folder");
        } else if (options.activeChecks && writable) {
            live.mapSync = mapSyncCheck(m.mountPoint, &live.statx);
        } else {
            live.mapSync.skip(!options.activeChecks ? "disabled (--no-active)" : "read-only mount");
        }
        // Without the test file, statx a file that is already there.
        if (!live.statx.observed()) {
            std::string file = findRegularFile(m.mountPoint, m.major, m.minor);
            if (!file.empty())
                live.statx = statxDax(file);
            else if (live.statx.state == EvidenceState::NotRun)
                live.statx.skip("no regular file found to examine");
        }
        live.census =
            takeDaxCensus(m.mountPoint, m.major, m.minor, boundedBy(CensusLimits{}, options.walk));
        facts.mountLive[m.mountPoint] = std::move(live);
    }
    // libpmem is loaded by the first MAP_SYNC check only: missing, say so once.
    if (LibPmem::sharedTried())
        if (const auto &pmem = LibPmem::shared(); !pmem)
            facts.missingLibraries.push_back(
                missingLibpmem(LibPmem::kSoname, pmem.error().describe()));
    scanBadblockMounts(root, facts, options.walk);
    for (const auto &path : options.paths) {
        FileFacts f;
        f.path = path;
        f.statx = statxDax(path);
        // DAX is established before residency is measured (see residency.h).
        f.residency = measureResidency(path, f.statx.observed() && f.statx.dax);
        facts.files.push_back(std::move(f));
    }
    return facts;
}

} // namespace daxprobe
