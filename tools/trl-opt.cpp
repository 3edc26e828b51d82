// trl-opt — run chosen stages of trlc on a program, for tests (issue 3).
//
//   trl-opt FILE.trl [-D N=V]… [-I DIR]… [--print-adjoints] [--print-incrementalize]
//           [--print-vectorize] [--print-dependences]
//           [--load-schedule=FILE] [--emit=pdg|schedule|memplan|json] [-fno-vectorize]
//
// Runs trlc's stages (driver/pipeline.h) through vectorize, or as far as --emit,
// --print-dependences or --stop-after need, and prints, in this order and each only when asked:
//   --print-adjoints      the tensors made by autodiff for grad(y, x) (passes/autodiff.h):
//                           grad.loss.net[i] : f32[4] (2 equations)
//   --print-incrementalize  the sums over slices made running sums (passes/incrementalize.h):
//                           g[b, i, t]: running sum along t (up) in g.acc, read by h at 3:9
//   --print-vectorize     the batch-axis decision, one line per dim:
//                           b: batch axis
//                           t: not a batch axis: x[t] reads x[t-1] at 4:8 (…)
//   --print-dependences   the flow dependences between statement instances, one
//                         isl piece per line, sorted (schedule/schedule.h)
//   --emit=KIND           what `trlc --emit=KIND` prints, after the same stages
// --load-schedule=FILE replaces the scheduler by the isl schedule tree in FILE.
// --print-after, --stop-after, --print-types and --no-verify work as in trlc.
// Exit codes as trlc: 0 success, 1 errors in the program or command line, 2 ICE.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "driver/cli_common.h"
#include "driver/pipeline.h"
#include "memory/memplan.h"
#include "passes/autodiff.h"
#include "passes/vectorize.h"
#include "pdg/pdg.h"
#include "schedule/schedule.h"
#include "support/diagnostics.h"
#include "support/source.h"

namespace {

struct OptOptions {
    trlc::DriverOptions driver;
    bool print_vectorize = false;
    bool print_dependences = false;
    bool print_adjoints = false;
    bool print_incrementalize = false;
};

/* The reports, each after the stage that makes what it shows and before that stage's --emit
 * output: adjoints, running sums and the batch-axis decision after vectorize, the flow
 * dependences after schedule. */
void report(const OptOptions &o, const std::string &stage, trlc::PipelineState &s) {
    if (stage == "vectorize") {
        if (o.print_adjoints) trlc::print_adjoints(s.prog, std::cout);
        if (o.print_incrementalize)
            for (const std::string &l : s.incrementalize_log) std::cout << l << "\n";
        if (o.print_vectorize) std::cout << trlc::vectorize_decision_to_string(s.prog, s.vec);
    }
    if (stage == "schedule" && o.print_dependences) std::cout << trlc::dependences_to_string(s.sched);
}

int run(const OptOptions &o, trlc::SourceManager &sm, trlc::Diagnostics &diag) {
    using namespace trlc;
    const DriverOptions &opts = o.driver;
    std::string goal = o.print_dependences ? "schedule" : "vectorize";
    if (!opts.emit.empty()) goal = opts.emit == "pdg" ? "vectorize" : opts.emit == "schedule" ? "schedule" : "memplan";
    if (!opts.stop_after.empty()) goal = opts.stop_after;
    PipelineState s(opts, sm, diag);
    PipelineHooks hooks;
    hooks.after = [&](const std::string &stage, PipelineState &st) { report(o, stage, st); };
    return run_pipeline(s, goal, hooks);
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"trl-opt — run chosen stages of trlc on a .trl program (for tests)", "trl-opt"};
    OptOptions o;
    trlc::DriverOptions &opts = o.driver;
    app.add_option("file", opts.input, "the .trl program")->required();
    app.add_option("-D", opts.raw_defines, "override a bound: -D NAME=VALUE (repeatable)")->allow_extra_args(false);
    app.add_option("-I", opts.include_dirs, "add a directory to search for imports (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--import-root", opts.import_root,
                   "confine every import \"path\" to files inside DIR (absolute paths, '..' and "
                   "symbolic links leaving DIR are refused; std modules still load): for services "
                   "that compile other people's programs")
        ->check(CLI::ExistingDirectory);
    app.add_flag("--print-adjoints", o.print_adjoints, "print the adjoint tensors that autodiff made for grad(y, x)");
    app.add_flag("--print-incrementalize", o.print_incrementalize,
                 "print the sums over slices that became running sums (passes/incrementalize.h)");
    app.add_flag("--print-vectorize", o.print_vectorize,
                 "print the batch-axis decision per dim, with the reason for each loop dim");
    app.add_flag("--print-dependences", o.print_dependences, "print the flow dependences between statement instances");
    app.add_option("--load-schedule", opts.load_schedule,
                   "use the isl schedule tree (YAML) in FILE instead of the scheduler");
    app.add_option("--emit", opts.emit, "print a stage's output (as trlc --emit) and stop")
        ->check(CLI::IsMember({"pdg", "schedule", "memplan", "json"}));
    bool no_incrementalize = false;
    trlc::add_incrementalize_options(app, opts, &no_incrementalize);
    bool no_vectorize = false;
    app.add_flag("--fno-vectorize", no_vectorize, "(spelled -fno-vectorize) keep every dim a loop: no batch axes");
    app.add_flag("--no-color", opts.no_color, "never colour diagnostics");
    bool no_verify = false;
    trlc::add_pipeline_options(app, opts, &no_verify);

    int exit_code = 0;
    if (!trlc::parse_command_line(app, argc, argv, &exit_code)) return exit_code;
    opts.vectorize = !no_vectorize;
    opts.incrementalize = !no_incrementalize;
    opts.verify_each = !no_verify;
    trlc::SourceManager sm;
    trlc::Diagnostics diag(sm, std::cerr);
    diag.set_color(false);
    try {
        return run(o, sm, diag);
    } catch (const trlc::InternalError &e) {
        std::cerr << "trl-opt: internal compiler error: " << e.message << "\n";
    } catch (const std::exception &e) {
        std::cerr << "trl-opt: internal compiler error: " << e.what() << "\n";
    }
    return 2;
}
