#pragma once
// pipeline — the compiler's stages in order, in one function (run_driver).
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/diagnostics.h"
#include "ir/ir.h"
#include "pdg/pdg.h"

namespace trlc {

struct DriverOptions {
    std::string input;
    std::string emit;  // "", ast, types, pdg, pdg-dot, json, schedule, memplan
    std::string interpret;  // "", "pointwise" or "scheduled"
    bool vectorize = true;  // -fno-vectorize
    bool incrementalize = true;  // -fno-incrementalize (passes/incrementalize.h)
    std::vector<std::string> *incrementalize_log = nullptr;  // trl-opt --print-incrementalize
    int64_t incrementalize_min_bytes = 1 << 20;  // --incrementalize-min-bytes
    bool fuse = true;       // -fno-fuse (code generation: one kernel per statement)
    bool blas = true;       // -fno-blas (code generation: every matmul a sequential k loop)
    /** --runtime-bound: "" automatic (small programs), "none", or "I,T": check exactly these
     *  bounds for `--bound NAME=V` of the generated program (driver/runtime_bounds.h). */
    std::string runtime_bound;
    std::string load_schedule;  // trl-opt --load-schedule
    std::vector<std::string> raw_defines;  // "NAME=VALUE" as typed
    std::vector<std::string> include_dirs;
    std::string import_root;  // --import-root (SemaOptions::import_root)
    uint64_t seed = 0;
    std::string log_path;
    std::string output;  // -o: build an executable (build_program.h)
    std::string target;  // --target: "", host, cuda
    std::vector<std::string> cuda_archs;  // --cuda-arch
    int opt_level = 2;   // -O0 .. -O3 for the toolchain
    std::string march = "native";  // --march: the host build's ISA (g++ -march=ARCH)
    bool keep_source = false;  // --keep-source
    bool standalone = false;   // --standalone: inline the runtime into the generated source
    bool no_color = false;
    bool color = false;
    bool time_passes = false;  // --time-passes: CPU and wall time per stage on stderr
};

/** argv for CLI11's parse(std::vector<std::string>&) (last argument first), with GCC-style
 *  single-dash long flags (-fno-vectorize) spelled with two dashes as CLI11 wants them. */
std::vector<std::string> cli11_args(int argc, char **argv);

/** Run the compiler as the command line asked; returns the process exit code
 *  (0 success, 1 user error, 2 internal compiler error). */
int run_driver(const DriverOptions &opts);

/** The checked front half, for tools that run chosen stages (trl-opt): loads
 *  opts.input into "sm", applies opts.raw_defines / include_dirs, then parse →
 *  sema → build_pdg → check_reads_defined → check_no_zero_cycle.  Returns false
 *  when a stage reported errors to "diag" (then "prog"/"pdg" are partial). */
bool run_front_end(const DriverOptions &opts, SourceManager &sm, Diagnostics &diag,
                   ir::Program *prog, Pdg *pdg);

}  // namespace trlc
