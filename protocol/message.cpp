#include "protocol/message.h"

#include <cerrno>
#include <ctime>

namespace daxprobe::protocol
{

std::string_view errorClassFor(const Error &error)
{
    switch (error.code) {
    case EMSGSIZE:
        return error_class::kMessageTooLarge;
    case EPROTO:
        return error_class::kInvalidMessage;
    default:
        return error_class::kParseError;
    }
}

std::size_t jsonDepth(std::string_view text)
{
    std::size_t depth = 0, deepest = 0;
    bool inString = false, escaped = false;
    for (char c : text) {
        if (inString) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                inString = false;
            continue;
        }
        switch (c) {
        case '\0':
            return deepest; // where nlohmann stops reading (validateJson too)
        case '"':
            inString = true;
            break;
        case '[':
        case '{':
            if (++depth > deepest)
                deepest = depth;
            break;
        case ']':
        case '}':
            if (depth > 0)
                --depth;
            break;
        default:
            break;
        }
    }
    return deepest;
}

Result<json> parseObject(std::string_view line, const Limits &limits)
{
    if (line.size() > limits.maxMessageBytes)
        return failf(EMSGSIZE, "message of {} bytes exceeds the limit of {}", line.size(),
                     limits.maxMessageBytes);
    if (std::size_t d = jsonDepth(line); d > limits.maxDepth)
        return failf(EBADMSG, "message nested {} deep exceeds the limit of {}", d, limits.maxDepth);
    json j = json::parse(line.begin(), line.end(), nullptr, false);
    if (j.is_discarded())
        return fail("message is not valid JSON", EBADMSG);
    if (!j.is_object())
        return fail("message is not a JSON object", EBADMSG);
    return j;
}

namespace
{

bool validId(const json &id)
{
    // Scalars only: an id is echoed back, so it must stay small.
    return id.is_null() || id.is_string() || id.is_number() || id.is_boolean();
}

} // namespace

Result<Message> classify(const json &o)
{
    Message m;
    if (auto it = o.find("id"); it != o.end()) {
        if (!validId(*it))
            return fail("\"id\" must be a string, number, boolean or null", EPROTO);
        m.id = *it;
    }

    const bool hasExecute = o.contains("execute"), hasReturn = o.contains("return"),
               hasError = o.contains("error"), hasEvent = o.contains("event");
    if (hasExecute + hasReturn + hasError + hasEvent != 1)
        return fail("message needs exactly one of \"execute\", \"return\", \"error\", \"event\"",
                    EPROTO);

    if (hasExecute) {
        const json &name = o.at("execute");
        if (!name.is_string() || name.get_ref<const std::string &>().empty())
            return fail("\"execute\" must be a non-empty string", EPROTO);
        m.kind = Message::Kind::Command;
        m.name = name.get<std::string>();
        m.payload = json::object();
        if (auto it = o.find("arguments"); it != o.end() && !it->is_null()) {
            if (!it->is_object())
                return fail("\"arguments\" must be an object", EPROTO);
            m.payload = *it;
        }
    } else if (hasReturn) {
        m.kind = Message::Kind::Return;
        m.payload = o.at("return");
    } else if (hasError) {
        const json &e = o.at("error");
        if (!e.is_object() || !e.contains("class") || !e.at("class").is_string())
            return fail("\"error\" must be an object with a string \"class\"", EPROTO);
        m.kind = Message::Kind::Error;
        m.errorClass = e.at("class").get<std::string>();
        if (auto it = e.find("desc"); it != e.end() && it->is_string())
            m.errorDesc = it->get<std::string>();
    } else {
        const json &name = o.at("event");
        if (!name.is_string() || name.get_ref<const std::string &>().empty())
            return fail("\"event\" must be a non-empty string", EPROTO);
        m.kind = Message::Kind::Event;
        m.name = name.get<std::string>();
        m.payload = o.value("data", json::object());
        if (!m.payload.is_object())
            return fail("\"data\" must be an object", EPROTO);
        m.timestamp = o.value("timestamp", json());
    }
    return m;
}

Result<Message> decode(std::string_view line, const Limits &limits)
{
    auto o = parseObject(line, limits);
    if (!o)
        return tl::unexpected(o.error());
    return classify(*o);
}

std::string encode(const json &message)
{
    // Compact dump has no raw newlines: control characters in strings are escaped.
    std::string s = message.dump(-1, ' ', false, json::error_handler_t::replace);
    s.push_back('\n');
    return s;
}

json makeCommand(std::string_view name, json arguments, json id)
{
    json m{{"execute", name}};
    if (!arguments.is_null())
        m["arguments"] = std::move(arguments);
    if (!id.is_null())
        m["id"] = std::move(id);
    return m;
}

json makeReturn(json value, const json &id)
{
    json m{{"return", std::move(value)}};
    if (!id.is_null())
        m["id"] = id;
    return m;
}

json makeError(std::string_view cls, std::string_view desc, const json &id)
{
    json m{{"error", {{"class", cls}, {"desc", desc}}}};
    if (!id.is_null())
        m["id"] = id;
    return m;
}

json nowTimestamp()
{
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return {{"seconds", static_cast<long long>(ts.tv_sec)},
            {"microseconds", static_cast<long long>(ts.tv_nsec / 1000)}};
}

json makeEvent(std::string_view name, json data)
{
    return {{"event", name}, {"data", std::move(data)}, {"timestamp", nowTimestamp()}};
}

} // namespace daxprobe::protocol
