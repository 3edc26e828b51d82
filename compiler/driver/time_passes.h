// time_passes — per-stage CPU and wall time for `trlc --time-passes`.
//
// A stage (or a part of one) opens a PassTimer for its duration; when timing is
// on, each finished timer adds one line to a report printed on stderr at the end:
//   trlc: time:     3.65 s cpu    3.70 s wall    schedule
//   trlc: time:     3.40 s cpu    3.45 s wall      isl scheduler (coefficients in [-1, 1])
// Nested timers are indented under the enclosing one; CPU time counts child
// processes (the isl scheduler's) once they are waited for.  Off (the default), a timer
// costs one branch.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

namespace trlc {

/** Turn the report on or off (process-wide; --time-passes). */
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
    double cpu0_ = 0;  // user + system seconds, children included
    std::chrono::steady_clock::time_point wall0_;
};

}  // namespace trlc
