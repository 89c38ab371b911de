#include "collector/wal_readers.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace daxprobe::collector
{

std::vector<int> walReaders(const std::string &dbPath, const std::string &procLocks)
{
    std::vector<int> pids;
    struct stat st {
    };
    if (::stat((dbPath + "-shm").c_str(), &st) < 0)
        return pids;
    std::ifstream in(procLocks);
    std::string line;
    // "1: POSIX  ADVISORY  READ 1234 00:2d:5678 123 123" (-> for waiters: skipped)
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string id, kind, mode, rw, file;
        long long pid = 0, start = -1;
        if (!(f >> id >> kind >> mode >> rw >> pid >> file >> start) || kind != "POSIX")
            continue;
        unsigned maj = 0, min = 0;
        unsigned long long ino = 0;
        if (std::sscanf(file.c_str(), "%x:%x:%llu", &maj, &min, &ino) != 3)
            continue;
        if (ino != st.st_ino || maj != major(st.st_dev) || min != minor(st.st_dev))
            continue;
        if (start < 123 || start > 127 || pid == ::getpid())
            continue;
        if (std::find(pids.begin(), pids.end(), pid) == pids.end())
            pids.push_back(static_cast<int>(pid));
    }
    return pids;
}

} // namespace daxprobe::collector
