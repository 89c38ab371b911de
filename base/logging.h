#pragma once

#include <string>
#include <sys/types.h>

namespace daxprobe
{

// systemd connects a service's stderr to the journal and names that stream in
// $JOURNAL_STREAM ("DEV:INODE", systemd.exec(5)). True when the stream
// described by (dev, ino) is that one: a program whose stderr was redirected
// elsewhere (a pipe, a file) does not match and keeps plain stderr.
bool isJournalStream(const char *journalStreamEnv, dev_t dev, ino_t ino);

// The program's default spdlog logger on stderr. When stderr is the journal,
// each line carries its syslog priority as a "<N>" prefix, which journald
// stores as PRIORITY= (so `journalctl -p warning` works), and no timestamp.
// Returns true when logging to the journal.
bool setupLogging(const std::string &name);

} // namespace daxprobe
