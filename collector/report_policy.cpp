#include "collector/report_policy.h"

#include <set>

#include <spdlog/spdlog.h>

namespace daxprobe::collector
{

namespace
{

void logStoreError(MetricsRegistry &metrics, std::span<const ChannelReports> batch,
                   const Error &error)
{
    std::size_t reports = 0;
    std::set<std::string_view> vms;
    const protocol::ReportRecord *first = nullptr;
    for (const auto &part : batch) {
        if (vms.insert(*part.vm).second)
            metrics.noteStoreError(*part.vm);
        reports += part.reports.size();
        if (!first && !part.reports.empty())
            first = &part.reports.front().record;
    }
    spdlog::error("store {} report(s) of {} VM(s) (first: {} {}/{}): {}; not acknowledged, "
                  "acks withheld until they are stored (the agents keep them)",
                  reports, vms.size(), *batch[0].vm, first ? first->stream : "",
                  first ? first->seq : 0, error.describe());
}

void countStored(MetricsRegistry &metrics, const ChannelReports &part, std::int64_t wallNow)
{
    const std::string &vm = *part.vm;
    for (const auto &p : part.reports) {
        const protocol::ReportRecord &r = p.record;
        if (p.receipt != Receipt::Stored) {
            spdlog::debug("{}: report {}/{} already stored", vm, r.stream, r.seq);
            continue;
        }
        // `--log-level debug` follows every stream (the VM scenario does).
        if (spdlog::should_log(spdlog::level::debug))
            spdlog::debug("{}: stored report {}/{} ({}, {})", vm, r.stream, r.seq, r.reason,
                          r.summary.code);
        metrics.update(vm, [&](VmMetrics &m) {
            MetricsRegistry::applyReport(m, r.summary, wallNow);
            m.noteAgentDropped(r.stream, r.droppedReports);
            m.guest = guestMemoryOf(r.summary);
        });
    }
}

} // namespace

Result<void> storeReports(Store &store, MetricsRegistry &metrics,
                          std::span<const ChannelReports> batch, std::int64_t wallNow)
{
    if (batch.empty())
        return {};
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
        logStoreError(metrics, batch, stored.error());
        return stored;
    }
    for (const auto &part : batch)
        countStored(metrics, part, wallNow);
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
