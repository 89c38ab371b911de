#pragma once

#include <string>
#include <vector>

namespace daxprobe::collector
{

// The processes (other than this one) in a read transaction on the WAL
// database at `dbPath`: SQLite's readers hold a POSIX lock on one of the
// read-mark bytes of "<dbPath>-shm" (offsets 123 to 127, WAL_READ_LOCK),
// which /proc/locks lists with the holder's pid. Empty when none is seen
// (or /proc/locks cannot be read): the caller then says "a reader".
std::vector<int> walReaders(const std::string &dbPath,
                            const std::string &procLocks = "/proc/locks");

} // namespace daxprobe::collector
