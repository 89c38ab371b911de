#include "agent/json_text.h"

#include "base/text_escape.h"

namespace daxprobe
{

namespace
{

nlohmann::json utf8Escaped(const nlohmann::json &j)
{
    if (j.is_string())
        return daxprobe::utf8Escaped(j.get_ref<const std::string &>());
    if (j.is_array()) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto &v : j)
            out.push_back(utf8Escaped(v));
        return out;
    }
    if (j.is_object()) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto &[k, v] : j.items())
            out[daxprobe::utf8Escaped(k)] = utf8Escaped(v);
        return out;
    }
    return j;
}

} // namespace

std::string jsonText(const nlohmann::json &j, int indent)
{
    try {
        return j.dump(indent);
    } catch (const nlohmann::json::type_error &) {
        // Invalid UTF-8 somewhere (rare): escape it and dump the copy.
        return utf8Escaped(j).dump(indent);
    }
}

} // namespace daxprobe
