#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/result.h"
#include "collector/ingest.h"

namespace daxprobe::collector
{

// One guest channel: a QEMU chardev unix socket (server=on) we connect to.
struct ChannelConfig {
    std::string name; // the VM's key in the store: host-chosen, never guest-claimed
    std::string socketPath;
    std::string pidfile;     // optional: QEMU's -pidfile, when SO_PEERCRED cannot tell
    bool discovered = false; // found in a watched directory (dropped when it goes away)
};

struct CollectorOptions {
    std::string stateDir;                           // collector.db lives here
    std::vector<ChannelConfig> sockets;             // --socket and config-file entries
    std::vector<std::string> watchDirs;             // libvirt-style channel directories
    std::string watchName = "org.daxprobe.agent.0"; // socket file name to pick up there
    std::string metricsListen = "127.0.0.1:9477";   // "" disables /metrics
    std::string procRoot = "/";                     // host /proc is read under this (tests)

    std::size_t maxRowsPerVm = 10000;
    std::size_t maxBytesPerVm = 64 << 20;
    std::size_t maxChannels = 1024; // guests served at once (--max-guests)
    int backoffInitialMs = 500;
    int backoffMaxMs = 30000;
    int penaltyMs = 60000; // wait after hanging up on a misbehaving guest
    int hostFactsIntervalMs = 30000;
    int hostFactsSpreadMs = 10000;       // first read after connecting: within this, per VM
    std::size_t readChunk = 64 * 1024;   // bytes read per wake per channel
    std::size_t maxMessagesPerWake = 16; // messages handled per wake per channel: fairness
    // Partial and queued lines of every guest together (one guest may pin
    // up to a message size, 1 MiB): past this, the guest holding the most
    // is hung up on (it resends after reconnecting, nothing is lost). Counts
    // line bytes; a growing string may reserve up to twice that.
    std::size_t maxBufferedBytes = 16 << 20;
    std::size_t maxOwedBytes = 64 * 1024; // acks owed to a guest that does not read them
    int storeRetryInitialMs = 500;        // after a store error: resync wait, doubling
    int storeRetryMaxMs = 30000;
    int syncAnswerTimeoutMs = 30000; // a resync's return never came: sync again
    int busyTimeoutMs = 50; // a locked database: fail fast, retry later, never stall the loop
    // /metrics: connections served at once (the rest wait in the kernel's
    // backlog, holding none of our fds), time for one request, body size.
    std::size_t httpMaxConnections = 8;
    int httpRequestTimeoutMs = 5000;
    std::size_t httpMaxBodyBytes = 4096;
    double bytesPerSecond = 1 << 20; // sustained rate per guest before throttling
    double burstBytes = 4 << 20;
    double messagesPerSecond = 50;
    double burstMessages = 500;
    IngestLimits ingest;
    bool handleSignals = true;
};

// Config file: one directive per line, '#' comments.
//   state-dir DIR | socket [NAME] PATH | pidfile NAME PATH | watch-dir DIR
//   watch-name NAME | metrics-listen HOST:PORT | max-rows N | max-bytes N
//   max-guests N | guest-rate N | guest-byte-rate N | log-level LEVEL
//   host-facts-interval SECONDS (1..86400: how often QEMU's memory is read)
// (log-level is stored in *logLevel when given, else it is an error).
Result<void> loadConfigFile(const std::string &path, CollectorOptions &options,
                            std::string *logLevel = nullptr);

// "NAME=PATH" or "PATH" (name = PATH). An empty name or path, or more than
// one '=' before a relative path (which would be the name?), is an error.
Result<ChannelConfig> parseSocketArg(const std::string &arg);

} // namespace daxprobe::collector
