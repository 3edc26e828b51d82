// time_passes — per-stage CPU and wall time for `trlc --time-passes`.
//
// A stage (or a part of one) opens a PassTimer for its duration; when timing is
// on, each finished timer adds one line to a report printed on stderr at the end:
//   trlc: time:   12.34 s cpu   12.50 s wall  schedule
//   trlc: time:    9.80 s cpu    9.90 s wall    schedule: compute
// Nested timers are indented under the enclosing one.  Off (the default), a timer
// costs one branch.  Only the thread that turned the report on records timers (others' are
// no-ops), and "cpu" is the process's (std::clock): while a stage runs work on another thread
// (the run-time bound check, driver/runtime_bounds.cpp), its cpu may exceed its wall.
//
// In support/ (below every stage) because the stages open timers themselves: checks/,
// schedule/ and memory/ time their parts; the driver turns the report on and prints it.
#pragma once

#include <chrono>
#include <ctime>
#include <ostream>
#include <string>

namespace trlc {

/** Turn the report on or off (process-wide; --time-passes); the calling thread's timers are
 *  the ones recorded. */
void set_time_passes(bool on);

/** Whether --time-passes is on. */
bool time_passes_enabled();

/** Print the finished timers, in the order they were opened, to "os"; clears them. */
void print_time_passes(std::ostream &os);

/** Times the enclosing scope under "name" when --time-passes is on. */
class PassTimer {
public:
    explicit PassTimer(std::string name);
    ~PassTimer();
    PassTimer(const PassTimer &) = delete;
    PassTimer &operator=(const PassTimer &) = delete;

private:
    int slot_ = -1;
    std::clock_t cpu0_ = 0;
    std::chrono::steady_clock::time_point wall0_;
};

}  // namespace trlc
