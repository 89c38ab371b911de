#include "base/path_components.h"

#include <vector>

namespace daxprobe
{

void pushComponentsFront(std::deque<std::string> &todo, std::string_view path)
{
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t slash = path.find('/', start);
        if (slash == std::string_view::npos)
            slash = path.size();
        if (slash > start)
            parts.emplace_back(path.substr(start, slash - start));
        start = slash + 1;
    }
    todo.insert(todo.begin(), parts.begin(), parts.end());
}

} // namespace daxprobe
