#pragma once

#include <string>

#include "base/result.h"
#include "base/safe_files.h"
#include "base/unique_fd.h"

namespace daxprobe
{

// `agent --listen PATH` as root may, in a directory others can write
// (docs/conventions.md, 14; issue 45, item 3). Before the socket is bound:
// - a lock beside it (PATH.lock, flock) is taken, so two agents started
//   together cannot both take PATH; a lock held, or another user's lock
//   file, refuses the start;
// - a socket already at PATH is connected to: a live one (an agent still
//   running, or anyone's server) is refused, never unlinked; a dead one is
//   replaced only when it is the caller's own.
// At exit the owner removes the socket node it bound and the lock file it
// locked, each only if the name still holds that inode (removeCreated).
class ListenSocket
{
  public:
    static Result<ListenSocket> bind(const std::string &path);
    ListenSocket() = default;
    ListenSocket(ListenSocket &&) = default;
    ListenSocket &operator=(ListenSocket &&other) noexcept;
    ~ListenSocket();

    int fd() const { return fd_.get(); }
    explicit operator bool() const { return static_cast<bool>(fd_); }

  private:
    void removeOwn();

    std::string path_;
    UniqueFD fd_;
    ParentDir dir_; // the socket's directory, held: removed from there at exit
    FileId id_;     // the socket node bound, the only one removed
    UniqueFD lock_; // PATH.lock, flock()ed for the agent's life
    FileId lockId_;
};

} // namespace daxprobe
