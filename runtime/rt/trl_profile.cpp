// trl_profile — the region profiler of generated programs (issue 15 point 2, after RL-Scope):
// `prog --profile FILE.json`.  On the GPU, kernels and products are timed by CUDA events
// (runtime/rt/trl_rt_cuda.cu, trl_prof_gpu_begin), charged here through trl_prof_charge.
//
// Regions are the program's statements (one per tensor equation, emit and save; a fused kernel
// counts for its first statement), each with a group that trlc derives from where its code
// comes from (codegen: acting, environment step, returns/advantages, loss and gradient,
// optimizer, metrics, other) or the name of the program's `region "name" { … }` around it, and
// a side for the balance report (actor, learner, -: codegen/profile_regions.cpp).  run_program marks the region it enters (TRL_REGION); the runtime
// times, when profiling, every launch (kernels), trl_gemm (products), trl_to_host / to_device
// (copies), emits and saves (I/O), and the time the calling thread waits for the team's other
// threads inside a split launch (waiting), and adds each to the current region's category.
// Time outside all of them (the loop nest itself, bookkeeping) is reported as "other".
//
// Overhead correction as RL-Scope does it: at start the cost of one timed event (two clock
// reads and the bookkeeping) is measured over 20000 empty events, and subtracted per event from
// the region it was charged to; the report gives the corrected and the uncorrected sums and the
// estimated total overhead.
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "rt/trl_rt_internal.h"

extern "C" {
int trl_prof_on = 0;
int trl_prof_region_now = -1;
}

namespace {

const char *const kCategory[TRL_PROF_CATEGORIES] = {"kernels", "products", "copies", "io", "waiting", "communication"};

struct Profile {
    int regions = 0;
    std::vector<long long> ticks;                   // [region + 1][category] (row 0: outside every region)
    std::vector<long long> events;                  // [region + 1][category]
    double event_cost = 0;                          // ticks per timed event (calibrated)
    long long wait_mark_ns = 0, wait_total_ns = 0;  // ticks
    std::chrono::steady_clock::time_point start;
    long long iterations = 0;
};

Profile g_prof;

long long clock_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// The timestamps of timed calls, in ticks: the x86 time-stamp counter (~7 ns a read, against
// ~20 ns for clock_gettime: PPO CartPole times ~5 million calls), summed as integers per region
// and category and scaled to seconds once, at the end, by a factor measured against the steady
// clock when profiling starts; nanoseconds of the steady clock elsewhere.
double g_seconds_per_tick = 1e-9;
#if defined(__x86_64__) || defined(__i386__)
inline long long now_ticks() { return static_cast<long long>(__rdtsc()); }
void calibrate_ticks() {
    const long long c0 = clock_ns();
    const unsigned long long t0 = __rdtsc();
    while (clock_ns() - c0 < 20000000) {}
    const long long c1 = clock_ns();
    const unsigned long long t1 = __rdtsc();
    g_seconds_per_tick = 1e-9 * static_cast<double>(c1 - c0) / static_cast<double>(t1 - t0);
}
#else
inline long long now_ticks() { return clock_ns(); }
void calibrate_ticks() {}
#endif

inline void add(int region, int category, long long ticks) {
    const size_t row = static_cast<size_t>(std::max(-1, std::min(region, g_prof.regions - 1)) + 1);
    g_prof.ticks[row * TRL_PROF_CATEGORIES + category] += ticks;
    g_prof.events[row * TRL_PROF_CATEGORIES + category] += 1;
}

std::string json_string(const char *s) {
    std::string r = "\"";
    for (const char *p = s ? s : ""; *p; ++p) {
        if (*p == '"' || *p == '\\') r += '\\';
        if (static_cast<unsigned char>(*p) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", *p);
            r += buf;
            continue;
        }
        r += *p;
    }
    return r + "\"";
}

}  // namespace

extern "C" {

long long trl_prof_now(void) { return now_ticks(); }

long long trl_prof_begin(void) {
    g_prof.wait_mark_ns = g_prof.wait_total_ns;
    return now_ticks();
}

void trl_prof_end(long long t0, int category) {
    const long long dt = now_ticks() - t0, waited = g_prof.wait_total_ns - g_prof.wait_mark_ns;
    add(trl_prof_region_now, category, dt - waited);
    if (waited > 0) add(trl_prof_region_now, TRL_PROF_WAITING, waited);
}

void trl_prof_waited(long long ticks) { g_prof.wait_total_ns += ticks; }

void trl_prof_charge(int region, int category, double seconds) {
    add(region, category, static_cast<long long>(seconds / g_seconds_per_tick));
}

}  // extern "C"

namespace trl_rt {

namespace {

/** Where this process writes its profile: --profile FILE on rank 0 (and in one process); on rank
 *  r > 0 of a distributed run FILE with ".rank<r>" before its extension (p.json: p.rank1.json),
 *  so the ranks never write one file at once and their waits can be compared. */
std::string profile_file(const trl_ctx *ctx) {
    const std::string &path = ctx->profile_path;
    if (ctx->rank == 0) return path;
    const size_t slash = path.find_last_of('/'), dot = path.find_last_of('.');
    const size_t at = dot != std::string::npos && (slash == std::string::npos || dot > slash) ? dot : path.size();
    return path.substr(0, at) + ".rank" + std::to_string(ctx->rank) + path.substr(at);
}

}  // namespace

void profile_start(trl_ctx *ctx) {
    if (ctx->profile_path.empty()) return;
    g_prof = Profile{};
    g_prof.regions = ctx->info->num_regions;
    g_prof.ticks.assign(static_cast<size_t>(g_prof.regions + 1) * TRL_PROF_CATEGORIES, 0);
    g_prof.events.assign(g_prof.ticks.size(), 0);
    // The cost of one event, as the launches pay it (begin, end, the add into a region).
    calibrate_ticks();
    trl_prof_on = 1;
    const int n = 20000;
    const long long t0 = now_ticks();
    for (int i = 0; i < n; ++i) trl_prof_end(trl_prof_begin(), TRL_PROF_KERNELS);
    g_prof.event_cost = static_cast<double>(now_ticks() - t0) / n;
    std::fill(g_prof.ticks.begin(), g_prof.ticks.end(), 0);
    std::fill(g_prof.events.begin(), g_prof.events.end(), 0);
    trl_prof_region_now = -1;
    g_prof.start = std::chrono::steady_clock::now();
}

void profile_count_iteration() { ++g_prof.iterations; }

int profile_finish(trl_ctx *ctx) {
    if (ctx->profile_path.empty() || !trl_prof_on) return TRL_OK;
    trl_prof_on = 0;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_prof.start).count();
    const trl_program_info *info = ctx->info;
    const int C = TRL_PROF_CATEGORIES;
    // Corrected seconds: each event's calibrated cost taken off the region it was charged to.
    const double tick = g_seconds_per_tick;
    auto corrected = [&](size_t row, int c) {
        return tick * std::max(0.0, static_cast<double>(g_prof.ticks[row * C + c]) -
                                        g_prof.event_cost * static_cast<double>(g_prof.events[row * C + c]));
    };
    long long events = 0;
    double uncorrected = 0, measured = 0;
    for (size_t i = 0; i < g_prof.ticks.size(); ++i)
        events += g_prof.events[i], uncorrected += tick * static_cast<double>(g_prof.ticks[i]);
    const double event_seconds = tick * g_prof.event_cost;
    // Groups, in the order the regions first name them.
    std::vector<std::string> groups;
    // The region table's fields (trl_rt.h: a line per region, 4 tab-separated fields).
    std::vector<std::string> fields;
    for (const char *p = info->regions ? info->regions : ""; *p;) {
        const char *e = p;
        while (*e && *e != '\t' && *e != '\n') ++e;
        fields.emplace_back(p, e);
        p = *e ? e + 1 : e;
    }
    fields.resize(4 * static_cast<size_t>(g_prof.regions));
    auto text = [&](int r, int k) { return fields[4 * static_cast<size_t>(r) + k].c_str(); };
    double actor = 0, learner = 0;  // the CPU/GPU balance (issue 15 point 3), by each region's side
    auto group_of = [&](int r) { return std::string(text(r, 1)); };
    for (int r = 0; r < g_prof.regions; ++r)
        if (std::find(groups.begin(), groups.end(), group_of(r)) == groups.end()) groups.push_back(group_of(r));
    std::vector<std::vector<double>> by_group(groups.size(), std::vector<double>(C, 0.0));
    std::string regions_json;
    for (int r = 0; r < g_prof.regions; ++r) {
        const size_t row = static_cast<size_t>(r) + 1;
        double total = 0;
        long long ev = 0;
        std::string cats;
        for (int c = 0; c < C; ++c) {
            const double s = corrected(row, c);
            total += s;
            ev += g_prof.events[row * C + c];
            by_group[std::find(groups.begin(), groups.end(), group_of(r)) - groups.begin()][c] += s;
            cats += std::string(c ? ", " : "") + "\"" + kCategory[c] + "\": " + std::to_string(s);
        }
        measured += total;
        if (std::string(text(r, 3)) == "actor") actor += total;
        if (std::string(text(r, 3)) == "learner") learner += total;
        if (ev == 0) continue;
        regions_json += std::string(regions_json.empty() ? "" : ",\n") + "    {\"name\": " + json_string(text(r, 0)) +
                        ", \"group\": " + json_string(text(r, 1)) + ", \"where\": " + json_string(text(r, 2)) +
                        ", \"side\": " + json_string(text(r, 3)) + ", \"events\": " + std::to_string(ev) +
                        ", \"seconds\": " + std::to_string(total) + ", \"by_category\": {" + cats + "}}";
    }
    const double outside = [&] {
        double s = 0;
        for (int c = 0; c < C; ++c) s += corrected(0, c);
        return s;
    }();
    measured += outside;
    const double other = std::max(0.0, wall - measured);
    const long long iters = std::max<long long>(1, g_prof.iterations);
    std::string groups_json;
    for (size_t g = 0; g < groups.size(); ++g) {
        std::string cats;
        double total = 0;
        for (int c = 0; c < C; ++c) {
            total += by_group[g][c];
            cats += std::string(c ? ", " : "") + "\"" + kCategory[c] + "\": " + std::to_string(by_group[g][c]);
        }
        groups_json += std::string(g ? ",\n" : "") + "    {\"group\": " + json_string(groups[g].c_str()) +
                       ", \"seconds\": " + std::to_string(total) + ", \"by_category\": {" + cats + "}}";
    }
    std::string cats_json;
    for (int c = 0; c < C; ++c) cats_json += std::string(c ? ", " : "") + "\"" + kCategory[c] + "\"";
    std::string json =
        "{\n  \"program\": " + json_string(info->name) + ",\n  \"source\": " + json_string(info->source) +
        (ctx->dist ? ",\n  \"rank\": " + std::to_string(ctx->rank) + ",\n  \"ranks\": " + std::to_string(ctx->world)
                   : std::string()) +
        ",\n  \"wall_seconds\": " + std::to_string(wall) + ",\n  \"measured_seconds\": " + std::to_string(measured) +
        ",\n  \"uncorrected_seconds\": " + std::to_string(uncorrected) +
        ",\n  \"other_seconds\": " + std::to_string(other) +
        ",\n  \"outside_regions_seconds\": " + std::to_string(outside) + ",\n  \"events\": " + std::to_string(events) +
        ",\n  \"event_cost_seconds\": " + std::to_string(event_seconds) +
        ",\n  \"overhead_seconds\": " + std::to_string(event_seconds * events) + ",\n  \"categories\": [" + cats_json +
        "],\n  \"groups\": [\n" + groups_json + "\n  ],\n  \"regions\": [\n" + regions_json +
        "\n  ],\n  \"balance\": {\"iterations\": " + std::to_string(g_prof.iterations) +
        ", \"actor_seconds_per_iteration\": " + std::to_string(actor / iters) +
        ", \"learner_seconds_per_iteration\": " + std::to_string(learner / iters) +
        ", \"actor_per_learner\": " + std::to_string(learner > 0 ? actor / learner : 0.0) + "}\n}\n";
    const std::string file = profile_file(ctx);
    FILE *f = std::fopen(file.c_str(), "w");
    if (!f || std::fwrite(json.data(), 1, json.size(), f) != json.size() || std::fclose(f) != 0) {
        std::fprintf(stderr, "%s: error: cannot write the profile '%s'\n", ctx->prog.c_str(), file.c_str());
        return TRL_EIO;
    }
    if (ctx->rank > 0) {  // rank 0 prints the table; the others one line each, their totals
        double by_cat[TRL_PROF_CATEGORIES] = {};
        for (size_t g = 0; g < groups.size(); ++g)
            for (int c = 0; c < C; ++c) by_cat[c] += by_group[g][c];
        std::fprintf(stderr, "%s: rank %d: profile (%s): %.3f s wall, waiting %.3f s, comm %.3f s\n", ctx->prog.c_str(),
                     ctx->rank, file.c_str(), wall, by_cat[TRL_PROF_WAITING], by_cat[TRL_PROF_COMMUNICATION]);
        return TRL_OK;
    }
    // The short table on stderr: seconds per group and category, share of the wall time.
    std::fprintf(stderr, "%s: %sprofile (%s): %.3f s wall, %lld timed events, overhead %.3f s corrected away\n",
                 ctx->prog.c_str(), ctx->dist ? "rank 0: " : "", file.c_str(), wall, events, event_seconds * events);
    std::fprintf(stderr, "  %-20s", "group");
    for (int c = 0; c < C; ++c) std::fprintf(stderr, " %9s", c == TRL_PROF_COMMUNICATION ? "comm" : kCategory[c]);
    std::fprintf(stderr, " %9s %6s\n", "total", "share");
    for (size_t g = 0; g < groups.size(); ++g) {
        double total = 0;
        std::fprintf(stderr, "  %-20s", groups[g].c_str());
        for (int c = 0; c < C; ++c) std::fprintf(stderr, " %9.3f", by_group[g][c]), total += by_group[g][c];
        std::fprintf(stderr, " %9.3f %5.1f%%\n", total, wall > 0 ? 100 * total / wall : 0.0);
    }
    std::fprintf(stderr, "  %-20s %*s %9.3f %5.1f%%\n", "other (host control)", 10 * C - 1, "", other + outside,
                 wall > 0 ? 100 * (other + outside) / wall : 0.0);
    if (g_prof.iterations > 0 && learner > 0)
        std::fprintf(stderr,
                     "  balance: per iteration of the outermost loop, actor side (acting + environment step) "
                     "%.1f us, learner side %.1f us: %.2f actor thread(s) of this speed per learner\n",
                     1e6 * actor / iters, 1e6 * learner / iters, actor / learner);
    else if (g_prof.iterations > 0)
        std::fprintf(stderr,
                     "  balance: per iteration of the outermost loop, actor side (acting + environment step) "
                     "%.1f us, no learner side (no loss and gradient, optimizer or returns/advantages regions)\n",
                     1e6 * actor / iters);
    return TRL_OK;
}

}  // namespace trl_rt
