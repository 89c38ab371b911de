#include <catch2/catch.hpp>

#include <cerrno>

#include "protocol/json_text.h"
#include "protocol/message.h"

using namespace daxprobe::protocol;

namespace
{
std::string stripNl(std::string s)
{
    REQUIRE(!s.empty());
    REQUIRE(s.back() == '\n');
    s.pop_back();
    return s;
}
} // namespace

TEST_CASE("command round trip", "[protocol][codec]")
{
    std::string line = encode(makeCommand("check", {{"paths", {"/mnt/a"}}}, 7));
    CHECK(line.find('\n') == line.size() - 1);
    auto m = decode(stripNl(line), Limits{});
    REQUIRE(m);
    CHECK(m->kind == Message::Kind::Command);
    CHECK(m->name == "check");
    CHECK(m->payload["paths"][0] == "/mnt/a");
    CHECK(m->id == 7);
}

TEST_CASE("command without arguments gets an empty object", "[protocol][codec]")
{
    auto m = decode(R"({"execute":"ping"})", Limits{});
    REQUIRE(m);
    CHECK(m->payload.is_object());
    CHECK(m->payload.empty());
    CHECK(m->id.is_null());
}

TEST_CASE("return, error and event round trips", "[protocol][codec]")
{
    auto r = decode(stripNl(encode(makeReturn({{"x", 1}}, "abc"))), Limits{});
    REQUIRE(r);
    CHECK(r->kind == Message::Kind::Return);
    CHECK(r->payload["x"] == 1);
    CHECK(r->id == "abc");

    auto e =
        decode(stripNl(encode(makeError(error_class::kCommandNotFound, "no such", 3))), Limits{});
    REQUIRE(e);
    CHECK(e->kind == Message::Kind::Error);
    CHECK(e->errorClass == "CommandNotFound");
    CHECK(e->errorDesc == "no such");
    CHECK(e->id == 3);

    auto v = decode(stripNl(encode(makeEvent("report", {{"seq", 1}}))), Limits{});
    REQUIRE(v);
    CHECK(v->kind == Message::Kind::Event);
    CHECK(v->name == "report");
    CHECK(v->payload["seq"] == 1);
    CHECK(v->timestamp["seconds"].is_number_integer());
    CHECK(v->timestamp["microseconds"].is_number_integer());
}

TEST_CASE("encode escapes newlines and replaces invalid UTF-8", "[protocol][codec]")
{
    std::string s = encode(json{{"event", "x"}, {"data", {{"t", "a\nb\xff\xfe"}}}});
    CHECK(s.find('\n') == s.size() - 1);
    CHECK(s.find('\xff') == std::string::npos);
    CHECK(decode(stripNl(s), Limits{}));
}

TEST_CASE("malformed input is refused with a class", "[protocol][codec]")
{
    Limits lim;
    struct Case {
        std::string line;
        std::string_view cls;
    };
    const Case cases[] = {
        {"not json", error_class::kParseError},
        {"{\"execute\":", error_class::kParseError},
        {"[1,2]", error_class::kParseError},
        {"\"ping\"", error_class::kParseError},
        {"42", error_class::kParseError},
        {"null", error_class::kParseError},
        {"{\"a\":\"\xc3\x28\"}", error_class::kParseError}, // invalid UTF-8
        {"{}", error_class::kInvalidMessage},
        {R"({"execute":42})", error_class::kInvalidMessage},
        {R"({"execute":""})", error_class::kInvalidMessage},
        {R"({"execute":"ping","arguments":[1]})", error_class::kInvalidMessage},
        {R"({"execute":"ping","arguments":"x"})", error_class::kInvalidMessage},
        {R"({"execute":"ping","id":{"a":1}})", error_class::kInvalidMessage},
        {R"({"execute":"ping","id":[1]})", error_class::kInvalidMessage},
        {R"({"execute":"ping","event":"x"})", error_class::kInvalidMessage},
        {R"({"error":"boom"})", error_class::kInvalidMessage},
        {R"({"error":{"class":1}})", error_class::kInvalidMessage},
        {R"({"event":7})", error_class::kInvalidMessage},
        {R"({"event":"x","data":[]})", error_class::kInvalidMessage},
    };
    for (const auto &c : cases) {
        INFO(c.line);
        auto m = decode(c.line, lim);
        REQUIRE_FALSE(m);
        CHECK(errorClassFor(m.error()) == c.cls);
    }
}

TEST_CASE("too large is refused before parsing", "[protocol][codec]")
{
    Limits lim{100, 8};
    std::string big = "{\"a\":\"" + std::string(200, 'x') + "\"}";
    auto m = decode(big, lim);
    REQUIRE_FALSE(m);
    CHECK(m.error().code == EMSGSIZE);
    CHECK(errorClassFor(m.error()) == error_class::kMessageTooLarge);
}

TEST_CASE("nesting depth is checked, strings do not count", "[protocol][codec]")
{
    Limits lim{1 << 20, 4};
    CHECK(jsonDepth(R"({"a":[{"b":[]}]})") == 4);
    CHECK(jsonDepth(R"({"a":"[[[[[[[[\"{{{{"})") == 1);
    // What follows a NUL is never parsed (the long fuzz run's find: the DOM
    // path refused what validateJson accepted).
    using namespace std::string_literals;
    std::string afterNul = "{}\0{{{{{{{{{{"s;
    CHECK(jsonDepth(afterNul) == 1);
    CHECK(decode(R"({"execute":"x"})"s + "\0[[[[[[[[[["s, lim));
    CHECK(validateJson(afterNul, lim.maxDepth));
    CHECK(decode(R"({"execute":"x","arguments":{"a":{"b":[1]}}})", lim));
    CHECK_FALSE(decode(R"({"execute":"x","arguments":{"a":{"b":[[1]]}}})", lim));
    std::string deep = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
    auto m = decode(deep, Limits{});
    REQUIRE_FALSE(m);
    CHECK(m.error().code == EBADMSG);
}
