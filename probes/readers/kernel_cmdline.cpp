#include "probes/readers/kernel_cmdline.h"

namespace daxprobe
{

std::optional<std::string> kernelParam(std::string_view cmdline, std::string_view key)
{
    std::optional<std::string> found;
    std::size_t i = 0;
    while (i < cmdline.size()) {
        while (i < cmdline.size() &&
               (cmdline[i] == ' ' || cmdline[i] == '\t' || cmdline[i] == '\n'))
            ++i;
        // One parameter: up to a blank outside double quotes (lib/cmdline.c next_arg).
        std::string word;
        bool quoted = false;
        for (; i < cmdline.size(); ++i) {
            char c = cmdline[i];
            if (c == '"') {
                quoted = !quoted;
                continue;
            }
            if (!quoted && (c == ' ' || c == '\t' || c == '\n'))
                break;
            word.push_back(c);
        }
        if (word.size() > key.size() && word.compare(0, key.size(), key) == 0 &&
            word[key.size()] == '=')
            found = word.substr(key.size() + 1);
        if (word == "--") // what follows is init's
            break;
    }
    return found;
}

} // namespace daxprobe
