#include "report_policy.h"

#include <spdlog/spdlog.h>

namespace daxprobe::collector
{

Result<bool> storeReport(Store &store, MetricsRegistry &metrics, const std::string &vm,
                         const protocol::ReportEnvelope &r, std::int64_t wallNow)
{
    auto stored = store.addReport(vm, r, wallNow);
    if (!stored) {
        metrics.noteStoreError(vm);
        spdlog::error("{}: store report {}/{}: {}; not acknowledged, acks withheld until it is "
                      "stored (the agent keeps it)",
                      vm, r.stream, r.seq, stored.error().describe());
        return stored;
    }
    if (!*stored) {
        spdlog::debug("{}: report {}/{} already stored", vm, r.stream, r.seq);
        return stored;
    }
    // One line per report: operators (and the VM test) follow the stream.
    spdlog::info("{}: stored report {}/{} ({}, {})", vm, r.stream, r.seq, r.reason,
                 verdictCode(r.report));
    metrics.update(vm, [&](VmMetrics &m) {
        MetricsRegistry::applyReport(m, r.report, wallNow);
        m.agentDropped = r.droppedReports;
    });
    return stored;
}

void noteIdentity(Store &store, const std::string &vm, const std::string &socket,
                  const protocol::AgentIdentity &id, std::int64_t wallNow)
{
    if (auto r = store.noteVm(vm, socket, id, wallNow); !r)
        spdlog::error("{}: note identity: {}", vm, r.error().describe());
}

} // namespace daxprobe::collector
