// libFuzzer target: the agent's command handling (host bytes into the guest).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent_session.h"

using namespace daxprobe;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
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
