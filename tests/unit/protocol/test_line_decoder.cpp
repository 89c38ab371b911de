#include <catch2/catch.hpp>

#include "protocol/line_decoder.h"

using namespace daxprobe::protocol;
using Kind = LineDecoder::Frame::Kind;

TEST_CASE("lines split across reads are joined", "[protocol][decoder]")
{
    LineDecoder d(64);
    CHECK(d.feed("{\"exe").empty());
    CHECK(d.buffered() == 5);
    auto f = d.feed("cute\":\"ping\"}\r\n{\"a\"");
    REQUIRE(f.size() == 1);
    CHECK(f[0].kind == Kind::Line);
    CHECK(f[0].text == "{\"execute\":\"ping\"}");
    f = d.feed(":1}\n");
    REQUIRE(f.size() == 1);
    CHECK(f[0].text == "{\"a\":1}");
    CHECK(d.buffered() == 0);
}

TEST_CASE("one byte at a time", "[protocol][decoder]")
{
    LineDecoder d(64);
    std::string in = "{\"x\":1}\n{\"y\":2}\n";
    std::vector<LineDecoder::Frame> frames;
    for (char c : in)
        d.feed(std::string_view(&c, 1), frames);
    REQUIRE(frames.size() == 2);
    CHECK(frames[1].text == "{\"y\":2}");
}

TEST_CASE("blank lines are ignored", "[protocol][decoder]")
{
    LineDecoder d(64);
    CHECK(d.feed("\n\r\n  \n").empty());
}

TEST_CASE("oversize line is reported once, skipped, and decoding recovers", "[protocol][decoder]")
{
    LineDecoder d(8);
    auto f = d.feed("0123456789abcdef");
    REQUIRE(f.size() == 1);
    CHECK(f[0].kind == Kind::Oversize);
    CHECK(d.buffered() == 0);
    CHECK(d.skipping());
    f = d.feed(std::string(10000, 'x')); // never buffered
    CHECK(f.empty());
    CHECK(d.buffered() == 0);
    f = d.feed("tail\n{\"ok\":1}\n");
    REQUIRE(f.size() == 1);
    CHECK(f[0].text == "{\"ok\":1}");
}

TEST_CASE("a line of exactly the cap is accepted", "[protocol][decoder]")
{
    LineDecoder d(8);
    auto f = d.feed("12345678\n123456789\n");
    REQUIRE(f.size() == 2);
    CHECK(f[0].kind == Kind::Line);
    CHECK(f[1].kind == Kind::Oversize);
}

TEST_CASE("sentinel discards a partial line and resynchronises", "[protocol][decoder]")
{
    LineDecoder d(64);
    auto f = d.feed("garbage{\"half");
    CHECK(f.empty());
    f = d.feed("\xff{\"ok\":true}\n");
    REQUIRE(f.size() == 2);
    CHECK(f[0].kind == Kind::Resync);
    CHECK(f[0].dropped == 13);
    CHECK(f[1].text == "{\"ok\":true}");
}

TEST_CASE("sentinel ends skipping of an oversize line", "[protocol][decoder]")
{
    LineDecoder d(4);
    auto f = d.feed("toolongline\xff{}\n");
    REQUIRE(f.size() == 3);
    CHECK(f[0].kind == Kind::Oversize);
    CHECK(f[1].kind == Kind::Resync);
    CHECK(f[2].text == "{}");
}

TEST_CASE("reset forgets partial input", "[protocol][decoder]")
{
    LineDecoder d(64);
    d.feed("partial");
    d.reset();
    auto f = d.feed("{}\n");
    REQUIRE(f.size() == 1);
    CHECK(f[0].text == "{}");
}
