#include "probes/readers/dimm_smart.h"

#include <cstdarg>
#include <cstdio>
#include <map>

#include "base/unique_library.h"

namespace daxprobe
{

namespace
{

// libndctl's types, opaque here: the library is loaded only where a DIMM is,
// and its -dev package is no build dependency. The signatures are
// libndctl.h's (LIBNDCTL_3 and _14 symbol versions, ndctl 64 and later).
struct Ctx;
struct Bus;
struct Dimm;
struct Cmd;
using LogFn = void (*)(Ctx *, int, const char *, int, const char *, const char *, va_list);

// libndctl.h's ND_SMART_* flag and health bits.
constexpr unsigned kHealthValid = 1u << 0;
constexpr unsigned kUsedValid = 1u << 2;
constexpr unsigned kMediaTempValid = 1u << 3;
constexpr unsigned kCtrlTempValid = 1u << 4;
constexpr unsigned kShutdownCountValid = 1u << 5;
constexpr unsigned kShutdownStateValid = 1u << 10;
constexpr unsigned kNonCritical = 1u << 0;
constexpr unsigned kCritical = 1u << 1;
constexpr unsigned kFatal = 1u << 2;

struct LibNdctl {
    UniqueLibrary lib;
    int (*newCtx)(Ctx **);
    Ctx *(*unref)(Ctx *);
    void (*setLogFn)(Ctx *, LogFn);
    Bus *(*busFirst)(Ctx *);
    Bus *(*busNext)(Bus *);
    Dimm *(*dimmFirst)(Bus *);
    Dimm *(*dimmNext)(Dimm *);
    const char *(*devname)(Dimm *);
    Cmd *(*newSmart)(Dimm *);
    int (*submit)(Cmd *);
    int (*firmwareStatus)(Cmd *);
    void (*cmdUnref)(Cmd *);
    unsigned (*flags)(Cmd *);
    unsigned (*health)(Cmd *);
    unsigned (*mediaTemp)(Cmd *);
    unsigned (*ctrlTemp)(Cmd *);
    unsigned (*lifeUsed)(Cmd *);
    unsigned (*shutdownState)(Cmd *);
    unsigned (*shutdownCount)(Cmd *);
};

template <typename F> Result<void> bind(const UniqueLibrary &lib, const char *name, F &out)
{
    auto f = lib.function<F>(name);
    if (!f)
        return tl::unexpected(f.error());
    out = *f;
    return {};
}

Result<LibNdctl> loadNdctl(const std::string &soname)
{
    auto lib = UniqueLibrary::open(soname);
    if (!lib)
        return tl::unexpected(lib.error());
    LibNdctl n{};
    for (auto r :
         {bind(*lib, "ndctl_new", n.newCtx), bind(*lib, "ndctl_unref", n.unref),
          bind(*lib, "ndctl_set_log_fn", n.setLogFn), bind(*lib, "ndctl_bus_get_first", n.busFirst),
          bind(*lib, "ndctl_bus_get_next", n.busNext),
          bind(*lib, "ndctl_dimm_get_first", n.dimmFirst),
          bind(*lib, "ndctl_dimm_get_next", n.dimmNext),
          bind(*lib, "ndctl_dimm_get_devname", n.devname),
          bind(*lib, "ndctl_dimm_cmd_new_smart", n.newSmart),
          bind(*lib, "ndctl_cmd_submit", n.submit),
          bind(*lib, "ndctl_cmd_get_firmware_status", n.firmwareStatus),
          bind(*lib, "ndctl_cmd_unref", n.cmdUnref),
          bind(*lib, "ndctl_cmd_smart_get_flags", n.flags),
          bind(*lib, "ndctl_cmd_smart_get_health", n.health),
          bind(*lib, "ndctl_cmd_smart_get_media_temperature", n.mediaTemp),
          bind(*lib, "ndctl_cmd_smart_get_ctrl_temperature", n.ctrlTemp),
          bind(*lib, "ndctl_cmd_smart_get_life_used", n.lifeUsed),
          bind(*lib, "ndctl_cmd_smart_get_shutdown_state", n.shutdownState),
          bind(*lib, "ndctl_cmd_smart_get_shutdown_count", n.shutdownCount)})
        if (!r)
            return tl::unexpected(r.error());
    n.lib = std::move(*lib);
    return n;
}

// libndctl's log goes into ours (docs/conventions.md, 2): its last line
// becomes the failure's text instead of a line on the check's stderr.
thread_local std::string lastNdctlLog;

void keepLog(Ctx *, int, const char *, int, const char *fn, const char *format, va_list args)
{
    char buf[256];
    std::vsnprintf(buf, sizeof buf, format, args);
    lastNdctlLog = std::string(fn ? fn : "libndctl") + ": " + buf;
    while (!lastNdctlLog.empty() && lastNdctlLog.back() == '\n')
        lastNdctlLog.pop_back();
}

// One DIMM's SMART command, read as ndctl's util_dimm_health_to_json does.
void readSmart(const LibNdctl &n, Dimm *dimm, DimmHealth &h)
{
    Cmd *cmd = n.newSmart(dimm);
    if (!cmd) {
        h.skip("not available: the DIMM has no SMART command");
        return;
    }
    lastNdctlLog.clear();
    int rc = n.submit(cmd);
    int fw = rc == 0 ? n.firmwareStatus(cmd) : 0;
    if (rc != 0 || fw != 0) {
        h.fail(rc != 0 ? "SMART command failed: " + std::to_string(rc)
                       : "SMART command: firmware status " + std::to_string(fw));
        if (!lastNdctlLog.empty())
            h.text += " (" + lastNdctlLog + ")";
        n.cmdUnref(cmd);
        return;
    }
    unsigned flags = n.flags(cmd);
    if (flags & kHealthValid)
        h.healthState = smartHealthState(n.health(cmd));
    if (flags & kUsedValid)
        h.lifeUsedPercent = n.lifeUsed(cmd);
    if (flags & kMediaTempValid)
        h.mediaTemperature = decodeSmartTemperature(n.mediaTemp(cmd));
    if (flags & kCtrlTempValid)
        h.controllerTemperature = decodeSmartTemperature(n.ctrlTemp(cmd));
    if (flags & kShutdownStateValid)
        h.shutdownDirty = n.shutdownState(cmd) != 0;
    if (flags & kShutdownCountValid)
        h.shutdownCount = n.shutdownCount(cmd);
    h.observe();
    n.cmdUnref(cmd);
}

} // namespace

double decodeSmartTemperature(unsigned raw)
{
    double t = static_cast<double>(raw & 0x7fffu) / 16.0;
    return (raw & 0x8000u) ? -t : t;
}

std::string smartHealthState(unsigned health)
{
    if (health & kFatal)
        return "fatal";
    if (health & kCritical)
        return "critical";
    if (health & kNonCritical)
        return "non-critical";
    return "ok";
}

std::optional<MissingLibrary> readDimmHealth(std::vector<NdDimm> &dimms, const std::string &soname)
{
    if (dimms.empty())
        return std::nullopt;
    auto failAll = [&](const std::string &why) {
        for (auto &d : dimms)
            d.health.fail(why);
    };
    auto n = loadNdctl(soname);
    if (!n) {
        // Said once, by the report (Facts::missingLibraries), not per DIMM.
        failAll("not read: " + soname + " could not be loaded");
        return missingLibndctl(soname, n.error().describe());
    }
    Ctx *ctx = nullptr;
    if (int rc = n->newCtx(&ctx); rc != 0 || !ctx) {
        failAll("ndctl_new failed: " + std::to_string(rc));
        return std::nullopt;
    }
    n->setLogFn(ctx, keepLog);
    std::map<std::string, NdDimm *> byDev;
    for (auto &d : dimms)
        byDev[d.dev] = &d;
    for (Bus *bus = n->busFirst(ctx); bus; bus = n->busNext(bus))
        for (Dimm *dimm = n->dimmFirst(bus); dimm; dimm = n->dimmNext(dimm)) {
            const char *dev = n->devname(dimm);
            if (auto it = byDev.find(dev ? dev : ""); it != byDev.end())
                readSmart(*n, dimm, it->second->health);
        }
    for (auto &d : dimms)
        if (d.health.state == EvidenceState::NotRun)
            d.health.fail("libndctl does not list " + d.dev);
    n->unref(ctx);
    return std::nullopt;
}

} // namespace daxprobe
