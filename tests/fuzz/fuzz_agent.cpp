// libFuzzer target: the agent's command handling (host bytes into the guest).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent/daemon/agent_session.h"
#include "agent/daemon/command_scan.h"
#include "protocol/message.h"

using namespace daxprobe;

namespace
{

// The fast scanner may only accept what the general parser reads the same
// way: a command, the same name, the same id (as its dump prints it).
void checkScanAgrees(std::string_view input)
{
    while (!input.empty()) {
        std::size_t nl = input.find('\n');
        std::string_view line = input.substr(0, nl);
        input.remove_prefix(nl == std::string_view::npos ? input.size() : nl + 1);
        auto fast = scanSimpleCommand(line);
        if (!fast)
            continue;
        auto m = protocol::decode(line, protocol::kCommandLimits);
        if (!m || m->kind != protocol::Message::Kind::Command || m->name != fast->name ||
            !m->payload.empty())
            __builtin_trap();
        std::string id = m->id.is_null() ? "" : m->id.dump();
        if (id != fast->id)
            __builtin_trap();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    checkScanAgrees(std::string_view(reinterpret_cast<const char *>(data), size));
    AgentSession s({"m", "h", "abcd", "fuzz"},
                   AgentHooks{[] {
                                  return nlohmann::json{{"verdict", {{"code", "dax_verified"}}}};
                              },
                              [] { return nlohmann::json::object(); }},
                   SessionOptions{.maxPending = 4, .maxOutputBytes = 1 << 16});
    s.produceReport("start");
    s.onConnect();
    s.onBytes(std::string_view(reinterpret_cast<const char *>(data), size));
    if (s.output().size() > (1 << 16) || s.queue().size() > 4)
        __builtin_trap();
    return 0;
}
