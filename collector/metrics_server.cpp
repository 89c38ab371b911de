#include "collector/metrics_server.h"

#include <arpa/inet.h>
#include <cerrno>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include <httplib.h>

namespace daxprobe::collector
{

namespace
{

std::int64_t steadyMs()
{
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

void addressOf(int fd, bool peer, std::string &ip, int &port)
{
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    int r = peer ? ::getpeername(fd, reinterpret_cast<sockaddr *>(&ss), &len)
                 : ::getsockname(fd, reinterpret_cast<sockaddr *>(&ss), &len);
    char host[NI_MAXHOST] = "", serv[NI_MAXSERV] = "";
    if (r == 0 && ::getnameinfo(reinterpret_cast<sockaddr *>(&ss), len, host, sizeof(host), serv,
                                sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
        ip = host;
        port = std::atoi(serv);
    }
}

// One connection with one deadline for the whole request (httplib's own
// socket stream has only a timeout per read, which a client sending a byte
// now and then never hits) and a cap on the bytes it may send.
class DeadlineStream : public httplib::Stream
{
  public:
    DeadlineStream(int fd, int stopFd, std::int64_t deadlineMs, std::size_t maxRead)
        : fd_(fd), stopFd_(stopFd), deadlineMs_(deadlineMs), left_(maxRead)
    {
    }

    bool is_readable() const override { return pos_ < len_ || wait(POLLIN); }
    bool is_writable() const override { return wait(POLLOUT); }

    ssize_t read(char *ptr, size_t size) override
    {
        if (pos_ == len_) {
            if (left_ == 0 || !wait(POLLIN))
                return -1;
            ssize_t n = ::recv(fd_, buf_, std::min(sizeof(buf_), left_), 0);
            if (n <= 0)
                return n;
            left_ -= static_cast<std::size_t>(n);
            pos_ = 0;
            len_ = static_cast<std::size_t>(n);
        }
        std::size_t n = std::min(size, len_ - pos_);
        std::memcpy(ptr, buf_ + pos_, n);
        pos_ += n;
        return static_cast<ssize_t>(n);
    }

    ssize_t write(const char *ptr, size_t size) override
    {
        std::size_t done = 0;
        while (done < size) {
            if (!wait(POLLOUT))
                return -1;
            ssize_t n = ::send(fd_, ptr + done, size - done, MSG_NOSIGNAL);
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                return -1;
            if (n > 0)
                done += static_cast<std::size_t>(n);
        }
        return static_cast<ssize_t>(done);
    }

    void get_remote_ip_and_port(std::string &ip, int &port) const override
    {
        addressOf(fd_, true, ip, port);
    }
    void get_local_ip_and_port(std::string &ip, int &port) const override
    {
        addressOf(fd_, false, ip, port);
    }
    socket_t socket() const override { return fd_; }

  private:
    // Until the fd is ready, the deadline passes or the server stops.
    bool wait(short events) const
    {
        for (;;) {
            std::int64_t left = deadlineMs_ - steadyMs();
            if (left <= 0)
                return false;
            pollfd p[2] = {{fd_, events, 0}, {stopFd_, POLLIN, 0}};
            int r = ::poll(p, 2, static_cast<int>(left));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0 || p[1].revents)
                return false;
            return (p[0].revents & (events | POLLHUP | POLLERR)) != 0;
        }
    }

    int fd_, stopFd_;
    std::int64_t deadlineMs_;
    std::size_t left_;
    char buf_[4096];
    std::size_t pos_ = 0, len_ = 0;
};

} // namespace

// process_request (protected) parses, routes and answers one request on any
// Stream; the accept loop and the stream are ours.
struct MetricsServer::Http : httplib::Server {
    bool serveOne(httplib::Stream &strm)
    {
        bool closed = false;
        return process_request(strm, true, closed, [](httplib::Request &) {});
    }
};

MetricsServer::MetricsServer(HttpLimits limits, MetricsRegistry &metrics)
    : limits_(limits), metrics_(metrics), http_(std::make_unique<Http>())
{
}

Result<std::unique_ptr<MetricsServer>>
MetricsServer::start(const std::string &listen, HttpLimits limits, MetricsRegistry &metrics)
{
    auto colon = listen.rfind(':');
    if (colon == std::string::npos)
        return failf(EINVAL, "metrics-listen '{}': expected HOST:PORT", listen);
    std::string host = listen.substr(0, colon), port = listen.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    if (limits.maxConnections == 0)
        limits.maxConnections = 1;

    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo *res = nullptr;
    if (int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res);
        rc != 0)
        return failf(EINVAL, "metrics-listen '{}': {}", listen, ::gai_strerror(rc));
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owner(res, ::freeaddrinfo);

    std::unique_ptr<MetricsServer> s(new MetricsServer(limits, metrics));
    int err = 0;
    for (addrinfo *ai = res; ai && !s->listen_; ai = ai->ai_next) {
        UniqueFD fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                             ai->ai_protocol));
        int one = 1;
        if (fd)
            ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (fd && ::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd.get(), 64) == 0)
            s->listen_ = std::move(fd);
        else
            err = errno;
    }
    if (!s->listen_)
        return failf(err, "metrics-listen '{}'", listen);
    std::string ip;
    addressOf(s->listen_.get(), false, ip, s->port_);
    s->stop_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!s->stop_)
        return failf(errno, "eventfd");

    MetricsRegistry *reg = &metrics;
    s->http_->Get("/metrics", [reg](const httplib::Request &, httplib::Response &res) {
        res.set_content(reg->render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    s->http_->set_payload_max_length(limits.maxBodyBytes);
    s->http_->set_keep_alive_max_count(1);
    metrics.setHttpConnections(0, limits.maxConnections);
    for (std::size_t i = 0; i < limits.maxConnections; ++i)
        s->workers_.emplace_back([p = s.get()] { p->worker(); });
    return s;
}

MetricsServer::~MetricsServer()
{
    if (stop_) {
        std::uint64_t one = 1;
        (void)!::write(stop_.get(), &one, sizeof(one));
    }
    for (auto &t : workers_)
        t.join();
}

void MetricsServer::worker()
{
    for (;;) {
        pollfd p[2] = {{listen_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
        if (::poll(p, 2, -1) < 0 && errno != EINTR)
            return;
        if (p[1].revents)
            return;
        // Every idle worker wakes; one gets the connection, the others EAGAIN.
        UniqueFD fd(::accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (!fd && (errno == EMFILE || errno == ENFILE)) {
            // Out of fds (guests took them): back off instead of spinning on
            // a listen socket that stays readable.
            pollfd s{stop_.get(), POLLIN, 0};
            (void)::poll(&s, 1, 100);
        }
        if (!fd)
            continue;
        serve(fd.get());
    }
}

void MetricsServer::serve(int fd)
{
    metrics_.setHttpConnections(++active_, limits_.maxConnections);
    DeadlineStream strm(fd, stop_.get(), steadyMs() + limits_.requestTimeoutMs,
                        limits_.maxRequestBytes + limits_.maxBodyBytes);
    (void)http_->serveOne(strm);
    metrics_.setHttpConnections(--active_, limits_.maxConnections);
}

} // namespace daxprobe::collector
