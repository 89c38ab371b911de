// The agent's fast path for plain commands must read exactly what the general
// parser reads, and its replies must be the bytes the general encoder prints.
#include <catch2/catch.hpp>

#include "agent/daemon/agent_session.h"
#include "agent/daemon/command_scan.h"
#include "protocol/message.h"

using namespace daxprobe;
using nlohmann::json;

namespace
{

// The general path's reading of a line: name and id as the dump prints it.
std::pair<std::string, std::string> general(std::string_view line)
{
    auto m = protocol::decode(line, protocol::kCommandLimits);
    REQUIRE(m);
    REQUIRE(m->kind == protocol::Message::Kind::Command);
    return {m->name, m->id.is_null() ? "" : m->id.dump()};
}

} // namespace

TEST_CASE("plain commands are read as the general parser reads them", "[agent][scan]")
{
    for (std::string_view line : {
             R"({"execute":"ping"})",
             R"({"execute":"ping","id":7})",
             R"({"id":7,"execute":"ping"})",
             R"( { "execute" : "check" , "id" : "a-1:b/c d" } )",
             R"({"execute":"info","id":-42,"arguments":{}})",
             R"({"execute":"metrics","arguments":null,"id":0})",
             R"({"arguments":{ },"execute":"report","id":true})",
             R"({"execute":"ping","id":null})",
             R"({"execute":"ping","id":123456789012345})",
         }) {
        INFO(line);
        auto fast = scanSimpleCommand(line);
        REQUIRE(fast);
        auto [name, id] = general(line);
        CHECK(fast->name == name);
        CHECK(fast->id == id);
    }
}

TEST_CASE("anything else is left to the general parser", "[agent][scan]")
{
    for (std::string_view line : {
             R"({"execute":"ping","id":7)",                 // unterminated
             R"({"execute":"ping"} x)",                     // trailing bytes
             R"({"execute":"ping","execute":"info"})",      // duplicate key
             R"({"execute":"ping","id":1,"id":2})",         // duplicate id
             R"({"execute":"p\u0069ng"})",                  // escape
             R"({"execute":"ping","id":"a\"b"})",           // escape in id
             R"({"execute":"ping","id":007})",              // not JSON
             R"({"execute":"ping","id":-0})",               // dumps as 0
             R"({"execute":"ping","id":1.0})",              // dumps as 1.0, keep general
             R"({"execute":"ping","id":1e3})",              // exponent
             R"({"execute":"ping","id":1234567890123456})", // 16 digits
             R"({"execute":"ping","id":[1]})",              // not a scalar
             R"({"execute":"ack","arguments":{"seq":1}})",  // arguments
             R"({"execute":"ping","extra":1})",             // another key
             R"({"execute":""})",                           // empty name
             R"({"execute":"Ping"})",                       // outside [a-z0-9_-]
             R"({"id":1})",                                 // no execute
             R"({"return":{}})",                            // not a command
             R"([])",
             "",
         }) {
        INFO(line);
        CHECK_FALSE(scanSimpleCommand(line));
    }
}

TEST_CASE("a return line is the bytes the general encoder prints", "[agent][scan]")
{
    json values[] = {json::object(), json{{"b", 1}, {"a", "x\ny"}}, 42, "t\xff"};
    json ids[] = {json(), 7, -3, "s-1", true, 1.5, "\x01\"\\"};
    for (const auto &v : values)
        for (const auto &id : ids) {
            INFO(v.dump(-1, ' ', false, json::error_handler_t::replace)
                 << " id " << id.dump(-1, ' ', false, json::error_handler_t::replace));
            std::string idText =
                id.is_null() ? "" : id.dump(-1, ' ', false, json::error_handler_t::replace);
            CHECK(AgentSession::encodeReturn(v, idText) ==
                  protocol::encode(protocol::makeReturn(v, id)));
        }
}

TEST_CASE("a session answers plain and general commands alike", "[agent][scan]")
{
    AgentSession s({"m", "h", "ab12", "t"}, AgentHooks{[] { return json::object(); }, {}});
    s.onConnect();
    s.consumed(s.output().size());
    s.onBytes("{\"execute\":\"ping\",\"id\":\"x\"}\n{\"execute\":\"ping\",\"id\":\"x\",\"z\":0}\n"
              "{\"execute\":\"nope\",\"id\":3}\n");
    CHECK(std::string(s.output()) ==
          "{\"id\":\"x\",\"return\":{}}\n{\"id\":\"x\",\"return\":{}}\n"
          "{\"error\":{\"class\":\"CommandNotFound\",\"desc\":\"unknown command 'nope'\"},"
          "\"id\":3}\n");
}
