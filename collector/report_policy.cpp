#include "collector/report_policy.h"

#include <set>

#include <spdlog/spdlog.h>

namespace daxprobe::collector
{

Result<std::vector<bool>> storeReports(Store &store, MetricsRegistry &metrics,
                                       std::span<const ReportWrite> batch, std::int64_t wallNow)
{
    if (batch.empty())
        return std::vector<bool>{};
    std::uint64_t lostBefore = store.filesLost();
    auto stored = store.addReports(batch, wallNow);
    noteWal(store, metrics);
    if (store.filesLost() != lostBefore) {
        metrics.noteStoreFileLost();
        // Which reports went depends on which file did: all of them with the
        // database; with its log alone, at most those since the last checkpoint.
        spdlog::error("the store or its log was deleted or replaced under the collector: "
                      "reports acknowledged before may be gone with it (since the last "
                      "checkpoint if only the log went, all if the database did); the file at "
                      "its path is open now");
    }
    if (!stored) {
        std::set<std::string_view> vms;
        for (const auto &w : batch)
            if (vms.insert(*w.vm).second)
                metrics.noteStoreError(*w.vm);
        spdlog::error("store {} report(s) of {} VM(s) (first: {} {}/{}): {}; not acknowledged, "
                      "acks withheld until they are stored (the agents keep them)",
                      batch.size(), vms.size(), *batch[0].vm, batch[0].report->stream,
                      batch[0].report->seq, stored.error().describe());
        return stored;
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
        const std::string &vm = *batch[i].vm;
        const protocol::ReportRecord &r = *batch[i].report;
        if (!(*stored)[i]) {
            spdlog::debug("{}: report {}/{} already stored", vm, r.stream, r.seq);
            continue;
        }
        // `--log-level debug` follows every stream (the VM scenario does).
        if (spdlog::should_log(spdlog::level::debug))
            spdlog::debug("{}: stored report {}/{} ({}, {})", vm, r.stream, r.seq, r.reason,
                          r.codes.verdict);
        metrics.update(vm, [&](VmMetrics &m) {
            MetricsRegistry::applyReport(m, r.codes, wallNow);
            m.noteAgentDropped(r.stream, r.droppedReports);
            m.guest = guestMemoryOf(r.reportText);
        });
    }
    return stored;
}

void noteWal(Store &store, MetricsRegistry &metrics)
{
    const WalCheckpointer *c = store.checkpointer();
    if (!c)
        return;
    auto st = c->stats();
    if (!metrics.setWal(c->logBytes(), st.capBytes, st.pinned, st.pinnedRefusals))
        return;
    if (st.pinned)
        spdlog::error("a reader ({}) holds a read transaction that pins the store's write-ahead "
                      "log at its cap of {} KiB: commits stop and nothing is acknowledged until "
                      "it ends (daxprobe_collector_wal_pinned)",
                      st.pinnedBy.empty() ? "process unknown" : st.pinnedBy, st.capBytes >> 10);
    else
        spdlog::warn("the write-ahead log is no longer pinned: commits resume");
}

void noteIdentity(Store &store, const std::string &vm, const std::string &socket,
                  const protocol::AgentIdentity &id, std::int64_t wallNow)
{
    if (auto r = store.noteVm(vm, socket, id, wallNow); !r)
        spdlog::error("{}: note identity: {}", vm, r.error().describe());
}

} // namespace daxprobe::collector
