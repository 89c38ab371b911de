// libFuzzer target: the collector's ingestion of untrusted guest bytes, down
// to a real SQLite store (in memory).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collector/ingest.h"
#include "collector/store.h"

using namespace daxprobe;
using namespace daxprobe::collector;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    static auto store = Store::open(":memory:", StoreOptions{50});
    if (!store)
        __builtin_trap();
    IngestLimits limits;
    limits.message = {8192, 12};
    // Some stores fail (as a locked or full database would), so the held
    // state and its resync run under the fuzzer too.
    static const std::string vm = "fuzz";
    Ingestor ing(limits, IngestHooks{[](const protocol::AgentIdentity &id) {
                     (void)store->noteVm("fuzz", "/s", id, 1);
                 }});
    // As the collector commits: uncommitted() in one transaction, then afterCommit().
    auto commit = [&] {
        if (ing.uncommitted().empty())
            return;
        for (const auto &p : ing.uncommitted())
            if (p.record.seq % 5 == 4)
                return ing.afterCommit(fail("injected store error", 5));
        ChannelReports part{&vm, ing.uncommitted()};
        ing.afterCommit(store->addReports(std::span(&part, 1), 1));
    };
    ing.start(1);
    std::string_view in(reinterpret_cast<const char *>(data), size);
    // Arbitrary read boundaries, as a socket would produce them.
    while (!in.empty()) {
        std::size_t n = 1 + static_cast<unsigned char>(in[0]) % 97;
        n = n < in.size() ? n : in.size();
        ing.receive(in.substr(0, n));
        ing.process(1 + n % 3); // bounded turns, as the collector takes them
        commit();
        in.remove_prefix(n);
        if (ing.held())
            ing.resync(static_cast<std::int64_t>(n));
        (void)ing.takeOutput();
    }
    ing.process(SIZE_MAX);
    commit();
    (void)store->latest();
    return 0;
}
