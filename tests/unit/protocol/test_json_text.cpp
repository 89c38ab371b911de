#include <catch2/catch.hpp>

#include <cerrno>
#include <variant>

#include "protocol/json_text.h"
#include "protocol/schema.h"

using namespace daxprobe::protocol;
using nlohmann::json;

namespace
{

bool valid(std::string_view text, std::size_t depth = 32)
{
    return validateJson(text, depth).has_value();
}

// The validator's verdict must be nlohmann's (the DOM the rest of the
// project parses stored text with) on every text.
void sameAsNlohmann(const std::string &text)
{
    INFO("text: " << json(text).dump(-1, ' ', true, json::error_handler_t::replace));
    CHECK(valid(text, 1024) == json::accept(text));
}

} // namespace

TEST_CASE("validateJson accepts what nlohmann accepts, and only that", "[protocol][json-text]")
{
    const char *texts[] = {
        // plain values and whitespace
        "{}",
        "[]",
        "0",
        "-0",
        "1.5",
        "1e5",
        "1E+5",
        "-1.25e-3",
        "true",
        "false",
        "null",
        "\"s\"",
        " \t\r\n{ \"a\" : [ 1 , 2 ] } \n",
        "{\"a\":{\"b\":[{},[],\"\"]}}",
        "\xEF\xBB\xBF{}", // a BOM, which nlohmann skips
        // syntax errors
        "",
        " ",
        "{",
        "}",
        "[1,]",
        "{\"a\":1,}",
        "{,}",
        "[,1]",
        "{\"a\" 1}",
        "{\"a\":}",
        "{1:2}",
        "{'a':1}",
        "[1 2]",
        "01",
        "-",
        "-01",
        "1.",
        ".5",
        "1e",
        "1e+",
        "+1",
        "0x10",
        "NaN",
        "Infinity",
        "tru",
        "nul",
        "truex",
        "{} {}",
        "{}x",
        "[1]]",
        "\xEF\xBB{}",
        "/* c */ {}",
        "{\"a\":1}\x00",
        // strings: escapes, control characters, surrogates
        "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
        "\"\\u0041\\u00e9\\uFFFF\"",
        "\"\\u0000\"",
        "\"\\x41\"",
        "\"\\u12\"",
        "\"\\u12G4\"",
        "\"\\ud83d\\ude00\"",
        "\"\\ud83d\"",
        "\"\\ud83dx\"",
        "\"\\ud83d\\u0041\"",
        "\"\\ude00\"",
        "\"\\ude00\\ud83d\"",
        "\"a\tb\"",
        "\"a\nb\"",
        "\"\x01\"",
        "\"\x7f\"",
        "\"unterminated",
        "\"\\",
        // UTF-8: valid, overlong, surrogates, beyond U+10FFFF, truncated
        "\"\xc3\xa9\"",
        "\"\xe2\x82\xac\"",
        "\"\xf0\x9f\x98\x80\"",
        "\"\xf4\x8f\xbf\xbf\"",
        "\"\xc0\xaf\"",
        "\"\xc1\xbf\"",
        "\"\xe0\x80\xaf\"",
        "\"\xf0\x80\x80\xaf\"",
        "\"\xed\xa0\x80\"",
        "\"\xed\x9f\xbf\"",
        "\"\xf4\x90\x80\x80\"",
        "\"\xf5\x80\x80\x80\"",
        "\"\xff\"",
        "\"\x80\"",
        "\"\xc3\"",
        "\"\xe2\x82\"",
        "\"\xf0\x9f\x98\"",
        "\xc3\xa9",
        // numbers that overflow a double, and some that do not
        "1e308",
        "1e309",
        "-1e309",
        "1e-400",
        "1.7976931348623157e308",
        "1.8e308",
        "18446744073709551616",
        "-9223372036854775809",
        "0.0000e99999",
    };
    for (const char *t : texts)
        sameAsNlohmann(t);
    sameAsNlohmann(std::string("\"a\0b\"", 5)); // NUL inside a string
    // nlohmann ends the input at a NUL byte: after a whole value, the rest is ignored.
    sameAsNlohmann(std::string("{\"a\":1}\0garbage", 15));
    sameAsNlohmann(std::string("{\"a\":1} \0{", 10));
    sameAsNlohmann(std::string("{\"a\":1\0}", 9));
    sameAsNlohmann(std::string("\0{}", 3));
    sameAsNlohmann(std::string("1\0", 2));
    sameAsNlohmann(std::string(308, '9')); // a finite integer as a double
    sameAsNlohmann(std::string(309, '9')); // overflows
    sameAsNlohmann("[" + std::string(400, '9') + "]");
    sameAsNlohmann("1" + std::string(400, '0') + "e-300"); // finite after all
}

TEST_CASE("validateJson bounds nesting before descending", "[protocol][json-text]")
{
    CHECK(valid("[[[]]]", 3));
    auto deep = validateJson("[[[[]]]]", 3);
    REQUIRE_FALSE(deep);
    CHECK(deep.error().code == EBADMSG);
    CHECK_THAT(deep.error().message, Catch::Contains("nested"));
    CHECK_FALSE(valid("{\"a\":{\"b\":{\"c\":{}}}}", 3));
    // A hostile 100k-deep text is refused without recursing into it.
    std::string hostile(100000, '[');
    CHECK_FALSE(valid(hostile, 32));
    CHECK_FALSE(valid(hostile + std::string(100000, ']'), 5000)); // capped at 1024
    // Depth of the brackets inside strings does not count.
    CHECK(valid("[\"[[[[[[\"]", 1));
}

TEST_CASE("validateJson returns the value without the space around it", "[protocol][json-text]")
{
    auto v = validateJson("\xEF\xBB\xBF  {\"a\":1} \n", 4);
    REQUIRE(v);
    CHECK(*v == "{\"a\":1}");
    auto bad = validateJson("{\"a\":\"\xc0\xaf\"}", 4);
    REQUIRE_FALSE(bad);
    CHECK_THAT(bad.error().message, Catch::Contains("UTF-8"));
}

TEST_CASE("object and array readers walk validated text", "[protocol][json-text]")
{
    std::string key;
    std::string_view v;
    JsonObjectReader r(" { \"a\" : [1, {\"x\":\"}\"}] , \"b\\u0063\":\"q\\\"\" , \"a\":null } ");
    REQUIRE(r.next(key, v));
    CHECK(key == "a");
    CHECK(v == "[1, {\"x\":\"}\"}]");
    REQUIRE(r.next(key, v));
    CHECK(key == "bc"); // escapes decoded, as a DOM's keys are
    CHECK(jsonString(v) == "q\"");
    REQUIRE(r.next(key, v)); // a repeated key comes again: the caller keeps the last
    CHECK(key == "a");
    CHECK(jsonIsNull(v));
    CHECK_FALSE(r.next(key, v));
    CHECK_FALSE(r.next(key, v));

    std::vector<std::string_view> elements;
    JsonArrayReader a("[ \"x,y\" , [1,[2]] ,{}, -1.5e3 ]");
    for (std::string_view e; a.next(e);)
        elements.push_back(e);
    CHECK(elements == std::vector<std::string_view>{"\"x,y\"", "[1,[2]]", "{}", "-1.5e3"});

    // Not the expected kind, or cut short: nothing, and no read past the end.
    CHECK_FALSE(JsonObjectReader("[1]").next(key, v));
    CHECK_FALSE(JsonArrayReader("{}").next(v));
    CHECK_FALSE(JsonObjectReader("{\"a\":[1,2").next(key, v));
    CHECK_FALSE(JsonObjectReader("{\"a").next(key, v));
    CHECK_FALSE(JsonObjectReader("").next(key, v));
}

namespace
{
// Every value of the text, depth first, as the readers see them.
void walk(std::string_view v, const JsonSpans *spans, std::vector<std::string> &out)
{
    std::string key;
    std::string_view m;
    if (v.starts_with('{'))
        for (JsonObjectReader r(v, spans); r.next(key, m);) {
            out.push_back(key + "=" + std::string(m));
            walk(m, spans, out);
        }
    else if (v.starts_with('['))
        for (JsonArrayReader a(v, spans); a.next(m);) {
            out.push_back(std::string(m));
            walk(m, spans, out);
        }
}
} // namespace

TEST_CASE("readers jump over what the validator recorded and read the same",
          "[protocol][json-text]")
{
    std::string text =
        R"( {"a": [1, {"x": "}]\"", "y": [[], {}]}, "s]"], "b": {"c": {"d": [true]}},)"
        R"( "e": "{", "f": [ {"g" : [ "]" , 2 ] } ] } )";
    JsonSpans spans;
    auto value = validateJson(text, 32, &spans);
    REQUIRE(value);
    // Recorded: the top object's end is where the value ends.
    CHECK(spans.endOf(value->data()) == value->data() + value->size());
    std::vector<std::string> plain, jumped;
    walk(*value, nullptr, plain);
    walk(*value, &spans, jumped);
    CHECK(plain.size() == 18);
    CHECK(jumped == plain);
    // A copy of the text has other addresses: nothing found, the readers walk.
    std::string copy(*value);
    CHECK(spans.endOf(copy.data()) == nullptr);
    std::vector<std::string> fromCopy;
    walk(copy, &spans, fromCopy);
    CHECK(fromCopy == plain);

    // Beyond kMaxSpans containers, the rest are walked: still the same reading.
    std::string many = "[";
    for (std::size_t i = 0; i < JsonSpans::kMaxSpans + 100; ++i)
        many += i ? ",[{}]" : "[{}]";
    many += "]";
    REQUIRE(validateJson(many, 32, &spans));
    CHECK(spans.endOf(many.data()) == many.data() + many.size());
    CHECK(spans.endOf(many.data() + many.size() - 5) == nullptr); // the last [{}]: not kept
    std::vector<std::string> a, b;
    walk(many, nullptr, a);
    walk(many, &spans, b);
    CHECK(a.size() == 2 * (JsonSpans::kMaxSpans + 100));
    CHECK(a == b);
}

TEST_CASE("scalar readers follow nlohmann's types", "[protocol][json-text]")
{
    CHECK(jsonString("\"\\ud83d\\ude00\\u00e9\"") == "\xf0\x9f\x98\x80\xc3\xa9");
    CHECK(jsonString("\"a\\u0000b\"") == std::string("a\0b", 3));
    CHECK_FALSE(jsonString("1"));
    CHECK_FALSE(jsonString("\"a\"x"));
    CHECK(jsonUnsigned("0") == 0u);
    CHECK(jsonUnsigned("18446744073709551615") == UINT64_MAX);
    // What nlohmann holds as a double or a signed integer is not unsigned.
    for (const char *v : {"18446744073709551616", "-1", "-0", "1.0", "1e3", "\"1\"", "", "01"}) {
        INFO(v);
        CHECK_FALSE(jsonUnsigned(v));
        if (json::accept(v))
            CHECK_FALSE(json::parse(v).is_number_unsigned());
    }
}

namespace
{

std::string line(const json &data)
{
    return json{{"event", "report"}, {"data", data}, {"timestamp", 1}}.dump();
}

bool sameMessage(const Message &a, const Message &b)
{
    return a.kind == b.kind && a.name == b.name && a.payload == b.payload && a.id == b.id &&
           a.errorClass == b.errorClass && a.errorDesc == b.errorDesc && a.timestamp == b.timestamp;
}

// The text path and the DOM path (decode + parseReportEvent) agree: the
// same reports taken with the same fields, the same reports refused, and
// any other line the same message.
void agree(const std::string &text)
{
    INFO("line: " << text);
    auto fast = decodeLine(text, Limits{});
    auto m = decode(text, Limits{});
    auto dom =
        m ? parseReportEvent(*m) : daxprobe::Result<ReportEnvelope>(daxprobe::fail("no message"));
    if (const ReportRecord *r = fast ? std::get_if<ReportRecord>(&*fast) : nullptr) {
        REQUIRE(dom);
        CHECK(r->stream == dom->stream);
        CHECK(r->seq == dom->seq);
        CHECK(r->reason == dom->reason);
        CHECK(r->droppedReports == dom->droppedReports);
        CHECK(json::parse(r->reportText) == dom->report);
        CHECK((r->metricsText.empty() ? json() : json::parse(r->metricsText)) == dom->metrics);
        return;
    }
    CHECK_FALSE(dom);
    if (fast) {
        REQUIRE(m);
        const Message &t = std::get<Message>(*fast);
        CHECK(sameMessage(t, *m));
        CHECK_FALSE((t.kind == Message::Kind::Event && t.name == kEventReport)); // read or refused
    } else if (m) { // refused by the text path: only a report event the DOM refuses too
        CHECK(m->kind == Message::Kind::Event);
        CHECK(m->name == kEventReport);
        CHECK(fast.error().code == EPROTO);
    }
}

} // namespace

TEST_CASE("decodeLine agrees with the DOM on hostile lines", "[protocol][json-text]")
{
    json good{{"stream", "ab-12"},
              {"seq", 7},
              {"reason", "interval"},
              {"dropped_reports", 2},
              {"report", {{"verdict", {{"code", "dax_verified"}}}}},
              {"metrics", {{"x", 1}}}};
    agree(line(good));
    auto with = [&](const char *key, json v) {
        json d = good;
        d[key] = std::move(v);
        return line(d);
    };
    auto without = [&](const char *key) {
        json d = good;
        d.erase(key);
        return line(d);
    };
    // wrong types, out of range, missing
    for (const char *k : {"stream", "seq", "reason", "report", "metrics", "dropped_reports"}) {
        agree(with(k, json::array()));
        agree(with(k, "7"));
        agree(with(k, 1.5));
        agree(with(k, -3));
        agree(with(k, nullptr));
        agree(with(k, json::object()));
        agree(without(k));
    }
    agree(with("seq", 0));
    agree(with("seq", (1ULL << 53) + 1));
    agree(with("seq", UINT64_MAX));
    agree(with("stream", "UPPER"));
    agree(with("stream", std::string(65, 'a')));
    agree(with("reason", std::string(100, 'r') + "\t\xc3\xa9"));
    // huge numbers: beyond uint64 (a double to the DOM), and beyond a double
    agree(R"({"event":"report","data":{"stream":"ab","seq":18446744073709551616,"report":{}}})");
    agree(
        R"({"event":"report","data":{"stream":"ab","seq":1,"report":{},"dropped_reports":99999999999999999999}})");
    agree(R"({"event":"report","data":{"stream":"ab","seq":1,"report":{"x":1e999}}})");
    // duplicate keys: the last one counts, on both paths
    agree(
        R"({"event":"report","data":{"stream":"ab","seq":1,"seq":2,"report":{"a":1},"report":{"b":2}}})");
    agree(R"({"event":"report","data":{"stream":"ab","seq":1,"seq":"x","report":{}}})");
    agree(R"({"event":"report","data":{"stream":"ab","stream":"cd","seq":1,"report":{}}})");
    agree(R"({"event":"report","data":{"stream":"ab","stream":5,"seq":1,"report":{}}})");
    agree(
        R"({"event":"report","data":{"stream":"ab","seq":1,"report":{},"reason":"a","reason":"b"}})");
    agree(
        R"({"event":"report","data":{"stream":"ab","seq":1,"report":{},"metrics":1,"metrics":null}})");
    agree(R"({"event":"report","event":"greeting","data":{"stream":"ab","seq":1,"report":{}}})");
    agree(R"({"event":"greeting","event":"report","data":{"stream":"ab","seq":1,"report":{}}})");
    agree(R"({"event":"report","data":{},"data":{"stream":"ab","seq":1,"report":{}}})");
    // escaped keys and values mean what they decode to
    agree(R"({"ev\u0065nt":"r\u0065port","data":{"str\u0065am":"\u0061b","seq":1,"report":{}}})");
    // envelopes of other kinds, or that classify() refuses
    agree(R"({"event":"report","execute":"x","data":{"stream":"ab","seq":1,"report":{}}})");
    agree(R"({"event":"report","id":[1],"data":{"stream":"ab","seq":1,"report":{}}})");
    agree(R"({"event":"report","id":"x","data":{"stream":"ab","seq":1,"report":{}}})");
    agree(R"({"event":"report","data":[]})");
    agree(R"({"event":"report","data":null})");
    agree(R"({"event":"report"})");
    agree(R"({"event":5,"data":{"stream":"ab","seq":1,"report":{}}})");
    agree(R"({"return":{},"id":"ack"})");
    agree("[1]");
    // not JSON: invalid UTF-8 in the report, deep nesting, garbage
    agree("{\"event\":\"report\",\"data\":{\"stream\":\"ab\",\"seq\":1,\"report\":{\"a\":"
          "\"\xc0\xaf\"}}}");
    agree("{\"event\":\"report\",\"data\":{\"stream\":\"ab\",\"seq\":1,\"report\":" +
          std::string(40, '[') + std::string(40, ']') + "}}");
    agree("{\"event\":\"report\",\"data\":{\"stream\":\"ab\",\"seq\":1,\"report\":{}}");
    agree(std::string("{\"event\":\"report\"\0}", 19));
    agree(line(good) + std::string("\0{\"x\"", 5)); // nlohmann stops at the NUL
}

TEST_CASE("decodeLine keeps the agent's text and reads the codes", "[protocol][json-text]")
{
    std::string text = R"({"event":"report","data":{"stream":"ab","seq":3,"report":)"
                       R"({ "z" : 1, "verdict":{"code":"problems_found"},"mounts":[)"
                       R"({"verdict":{"code":"dax_active"}},{"verdict":{"code":7}},[],)"
                       R"({"verdict":{"code":"a b\u0001"}}]},"metrics":null}})";
    auto line = decodeLine(text, Limits{});
    REQUIRE(line);
    const auto *r = std::get_if<ReportRecord>(&*line);
    REQUIRE(r);
    // Byte for byte as sent: spacing and key order kept, nothing re-encoded.
    CHECK(r->reportText.starts_with("{ \"z\" : 1, \"verdict\""));
    CHECK(r->metricsText.empty());
    CHECK(r->summary.code == "problems_found");
    std::vector<std::string> codes;
    for (const auto &m : r->summary.mounts)
        codes.push_back(m.code);
    CHECK(codes == std::vector<std::string>{"dax_active", "unknown", "unknown", "a_b_"});

    auto big = decodeLine(std::string(100, ' '), Limits{50, 8});
    REQUIRE_FALSE(big);
    CHECK(big.error().code == EMSGSIZE);
    auto rule =
        decodeLine(R"({"event":"report","data":{"stream":"AB","seq":1,"report":{}}})", Limits{});
    REQUIRE_FALSE(rule);
    CHECK(rule.error().code == EPROTO);
    auto notJson = decodeLine("{\"event\":", Limits{});
    REQUIRE_FALSE(notJson);
    CHECK(notJson.error().code == EBADMSG);
}
