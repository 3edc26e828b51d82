// time_passes — the --time-passes report (see time_passes.h).
#include "support/time_passes.h"

#include <cstdio>
#include <thread>
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
std::thread::id g_thread;  // the one whose timers are recorded
int g_depth = 0;
std::vector<Entry> g_entries;

}  // namespace

void set_time_passes(bool on) {
    g_on = on;
    g_thread = std::this_thread::get_id();
}

bool time_passes_enabled() { return g_on; }

void print_time_passes(std::ostream &os) {
    char line[256];
    for (const Entry &e : g_entries) {
        if (!e.done) continue;
        std::snprintf(line, sizeof line, "trlc: time: %8.2f s cpu %8.2f s wall  %*s%s\n", e.cpu, e.wall, 2 * e.depth,
                      "", e.name.c_str());
        os << line;
    }
    g_entries.clear();
}

PassTimer::PassTimer(std::string name) {
    if (!g_on || std::this_thread::get_id() != g_thread) return;
    slot_ = static_cast<int>(g_entries.size());
    g_entries.push_back({std::move(name), g_depth++, 0, 0, false});
    wall0_ = std::chrono::steady_clock::now();
    cpu0_ = std::clock();
}

PassTimer::~PassTimer() {
    if (slot_ < 0 || slot_ >= static_cast<int>(g_entries.size())) return;
    Entry &e = g_entries[slot_];
    e.cpu = static_cast<double>(std::clock() - cpu0_) / CLOCKS_PER_SEC;
    e.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
    e.done = true;
    --g_depth;
}

}  // namespace trlc
