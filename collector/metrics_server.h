#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "collector/metrics.h"

namespace daxprobe::collector
{

struct HttpLimits {
    std::size_t maxConnections = 8; // served at once; the rest wait in the kernel backlog
    int requestTimeoutMs = 5000;    // the whole request, reading and writing, not per read
    std::size_t maxBodyBytes = 4096;
    std::size_t maxRequestBytes = 64 * 1024; // request line, headers and body together
};

// GET /metrics over HTTP (cpp-httplib parses and answers), with every
// resource an HTTP client controls bounded: `maxConnections` worker threads
// each accept one connection and serve one request on it, so the server never
// holds more than that many fds however many clients connect (guests keep
// theirs); a request has `requestTimeoutMs` in all and `maxRequestBytes`.
class MetricsServer
{
  public:
    // listen: HOST:PORT (port 0: any free port; HOST may be [v6]).
    static Result<std::unique_ptr<MetricsServer>>
    start(const std::string &listen, HttpLimits limits, MetricsRegistry &metrics);
    ~MetricsServer();
    MetricsServer(const MetricsServer &) = delete;
    MetricsServer &operator=(const MetricsServer &) = delete;

    int port() const { return port_; }

  private:
    MetricsServer(HttpLimits limits, MetricsRegistry &metrics);
    void worker();
    void serve(int fd);

    struct Http;
    HttpLimits limits_;
    MetricsRegistry &metrics_;
    std::unique_ptr<Http> http_;
    UniqueFD listen_, stop_;
    int port_ = 0;
    std::atomic<std::size_t> active_{0};
    std::vector<std::thread> workers_;
};

} // namespace daxprobe::collector
