#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "protocol/protocol_limits.h"

namespace daxprobe::protocol
{

using nlohmann::json;

// Error classes carried in {"error":{"class":...}} (PROTOCOL.md, "Errors").
namespace error_class
{
inline constexpr std::string_view kParseError = "ParseError";
inline constexpr std::string_view kMessageTooLarge = "MessageTooLarge";
inline constexpr std::string_view kInvalidMessage = "InvalidMessage";
inline constexpr std::string_view kCommandNotFound = "CommandNotFound";
inline constexpr std::string_view kInvalidParameter = "InvalidParameter";
inline constexpr std::string_view kCommandFailed = "CommandFailed";
} // namespace error_class

// Error::code values the decoder uses, so callers can pick the class.
// EBADMSG: not JSON / too deep / not an object; EMSGSIZE: too large;
// EPROTO: an object, but not a valid message.
std::string_view errorClassFor(const Error &error);

struct Message {
    enum class Kind { Command, Return, Error, Event };
    Kind kind = Kind::Command;
    std::string name; // "execute" or "event" name
    json payload;     // arguments (object, may be empty), return value, or event data
    json id;          // null when absent; any scalar the peer chose
    std::string errorClass, errorDesc;
    json timestamp; // events only: {"seconds","microseconds"}
};

// Nesting depth of a JSON text, found by a scan that honours strings, so a
// hostile "[[[[..." is refused before the recursive parser sees it. Up to a
// NUL outside a string: nlohmann takes it for the end of the input.
std::size_t jsonDepth(std::string_view text);

// One line -> a JSON object, within limits. Never throws.
Result<json> parseObject(std::string_view line, const Limits &limits);
// A parsed object -> a message of one of the four kinds. Never throws.
Result<Message> classify(const json &object);
// Both steps.
Result<Message> decode(std::string_view line, const Limits &limits);

// One message as one line, '\n' included. Never throws: invalid UTF-8 in
// strings is replaced, never passed on.
std::string encode(const json &message);

json makeCommand(std::string_view name, json arguments, json id);
json makeReturn(json value, const json &id);
json makeError(std::string_view cls, std::string_view desc, const json &id);
// timestamp in QMP's {"seconds","microseconds"} form, realtime clock.
json makeEvent(std::string_view name, json data);
json nowTimestamp();

} // namespace daxprobe::protocol
