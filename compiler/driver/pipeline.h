#pragma once
// pipeline — the compiler's stages in order, in one function (run_driver).
#include <cstdint>
#include <string>
#include <vector>

namespace trlc {

struct DriverOptions {
    std::string input;
    std::string emit;  // "", ast, types, pdg, pdg-dot, json, schedule, memplan
    std::string interpret;  // "", "pointwise" or "scheduled"
    bool vectorize = true;  // -fno-vectorize
    std::string load_schedule;  // trl-opt --load-schedule
    std::vector<std::string> raw_defines;  // "NAME=VALUE" as typed
    std::vector<std::string> include_dirs;
    uint64_t seed = 0;
    std::string log_path;
    std::string output;
    bool no_color = false;
    bool color = false;
};

/** Run the compiler as the command line asked; returns the process exit code
 *  (0 success, 1 user error, 2 internal compiler error). */
int run_driver(const DriverOptions &opts);

}  // namespace trlc
