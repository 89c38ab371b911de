#pragma once

#include <optional>
#include <string_view>

namespace daxprobe
{

// A command in the plain shape hosts send for ping, info, check, metrics and
// report: {"execute":"NAME"} with an optional scalar "id" and optionally
// "arguments":{} or null, keys in any order, JSON whitespace anywhere.
struct SimpleCommand {
    std::string_view name; // [a-z0-9_-], 1-64 characters
    std::string_view id;   // the id as JSON text, exactly as a DOM dump prints it; empty: none
};

// Recognises that shape without building a JSON document (the general parser
// costs most of a ping's CPU in the agent, ~10x what the port's I/O does).
// Declines anything else, including valid JSON it is not sure to read exactly
// as the general path does (escapes, other keys, duplicates, non-canonical
// numbers): the caller then takes the general path, so this only ever saves
// work. The fuzz target checks the two agree on every input.
std::optional<SimpleCommand> scanSimpleCommand(std::string_view line);

} // namespace daxprobe
