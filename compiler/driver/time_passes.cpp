// time_passes — the --time-passes report (see time_passes.h).
#include "driver/time_passes.h"

#include <sys/resource.h>

#include <cstdio>
#include <vector>

namespace trlc {

namespace {

struct Entry {
    std::string name;
    int depth = 0;
    double cpu = 0, wall = 0;
    bool done = false;
};

bool g_on = false;

/* CPU seconds (user + system) of this process and its waited-for children (the
 * scheduler runs in a child process). */
double cpu_seconds() {
    double total = 0;
    for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
        struct rusage u;
        if (getrusage(who, &u) != 0) continue;
        total += static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                 static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
    }
    return total;
}
int g_depth = 0;
std::vector<Entry> g_entries;

}  // namespace

void set_time_passes(bool on) { g_on = on; }

bool time_passes_enabled() { return g_on; }

void print_time_passes(std::ostream &os) {
    char line[256];
    for (const Entry &e : g_entries) {
        if (!e.done) continue;
        std::snprintf(line, sizeof line, "trlc: time: %8.2f s cpu %8.2f s wall  %*s%s\n", e.cpu,
                      e.wall, 2 * e.depth, "", e.name.c_str());
        os << line;
    }
    g_entries.clear();
}

PassTimer::PassTimer(std::string name) {
    if (!g_on) return;
    slot_ = static_cast<int>(g_entries.size());
    g_entries.push_back({std::move(name), g_depth++, 0, 0, false});
    wall0_ = std::chrono::steady_clock::now();
    cpu0_ = cpu_seconds();
}

PassTimer::~PassTimer() {
    if (slot_ < 0 || slot_ >= static_cast<int>(g_entries.size())) return;
    Entry &e = g_entries[slot_];
    e.cpu = cpu_seconds() - cpu0_;
    e.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
    e.done = true;
    --g_depth;
}

}  // namespace trlc
