// trl-opt — run chosen stages of trlc on a program, for tests (issue 3).
//
//   trl-opt FILE.trl [-D N=V]… [-I DIR]… [--print-adjoints] [--print-incrementalize]
//           [--print-vectorize] [--print-dependences]
//           [--load-schedule=FILE] [--emit=pdg|schedule|memplan|json] [-fno-vectorize]
//
// Runs the checked front half of trlc (parse → sema → PDG → checks,
// driver/pipeline.h run_front_end), then vectorize_free_dims, then prints, in
// this order and each only when asked:
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
// Exit codes as trlc: 0 success, 1 errors in the program or command line, 2 ICE.
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "driver/cli_common.h"
#include "driver/pipeline.h"
#include "frontend/diagnostics.h"
#include "frontend/source.h"
#include "memory/memplan.h"
#include "passes/autodiff.h"
#include "passes/vectorize_free_dims.h"
#include "pdg/pdg.h"
#include "schedule/schedule.h"

namespace {

struct OptOptions {
    trlc::DriverOptions driver;
    bool print_vectorize = false;
    bool print_dependences = false;
    bool print_adjoints = false;
    bool print_incrementalize = false;
};

int run(const OptOptions &o, trlc::SourceManager &sm, trlc::Diagnostics &diag) {
    using namespace trlc;
    const DriverOptions &opts = o.driver;
    ir::Program prog;
    Pdg pdg;
    std::vector<std::string> inc_log;
    DriverOptions front = opts;
    front.incrementalize_log = &inc_log;
    if (!run_front_end(front, sm, diag, &prog, &pdg)) return 1;
    if (o.print_adjoints) print_adjoints(prog, std::cout);
    if (o.print_incrementalize)
        for (const std::string &l : inc_log) std::cout << l << "\n";
    VectorizeDecision vec = decide_batch_dims(prog, pdg, opts.vectorize);
    if (o.print_vectorize) std::cout << vectorize_decision_to_string(prog, vec);
    if (opts.emit == "pdg") {
        print_pdg(pdg, std::cout, vec.batch);
        return 0;
    }
    if (!o.print_dependences && opts.emit.empty()) return 0;

    ScheduleOptions sched_opts;
    sched_opts.load_schedule = opts.load_schedule;
    Schedule sched = schedule_program(prog, pdg, vec.batch, sched_opts, diag);
    if (diag.has_errors()) return 1;
    if (o.print_dependences) std::cout << dependences_to_string(sched);
    if (opts.emit == "schedule") {
        print_schedule(sched, std::cout);
        return 0;
    }
    if (opts.emit.empty()) return 0;
    MemPlan plan = plan_memory(prog, pdg, sched, diag);
    if (diag.has_errors()) return 1;
    if (opts.emit == "memplan") {
        print_memplan(prog, plan, std::cout);
        return 0;
    }
    if (opts.emit == "json") {
        nlohmann::json doc = nlohmann::json::parse(pdg_to_json(pdg, vec.batch));
        doc["schedule"] = nlohmann::json::parse(schedule_to_json(sched));
        doc["memplan"] = nlohmann::json::parse(memplan_to_json(prog, plan));
        std::cout << doc.dump(2) << "\n";
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"trl-opt — run chosen stages of trlc on a .trl program (for tests)", "trl-opt"};
    OptOptions o;
    trlc::DriverOptions &opts = o.driver;
    app.add_option("file", opts.input, "the .trl program")->required();
    app.add_option("-D", opts.raw_defines, "override a bound: -D NAME=VALUE (repeatable)")
        ->allow_extra_args(false);
    app.add_option("-I", opts.include_dirs, "add a directory to search for imports (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--import-root", opts.import_root,
                   "confine every import \"path\" to files inside DIR (absolute paths, '..' and "
                   "symbolic links leaving DIR are refused; std modules still load): for services "
                   "that compile other people's programs")
        ->check(CLI::ExistingDirectory);
    app.add_flag("--print-adjoints", o.print_adjoints,
                 "print the adjoint tensors that autodiff made for grad(y, x)");
    app.add_flag("--print-incrementalize", o.print_incrementalize,
                 "print the sums over slices that became running sums (passes/incrementalize.h)");
    app.add_flag("--print-vectorize", o.print_vectorize,
                 "print the batch-axis decision per dim, with the reason for each loop dim");
    app.add_flag("--print-dependences", o.print_dependences,
                 "print the flow dependences between statement instances");
    app.add_option("--load-schedule", opts.load_schedule,
                   "use the isl schedule tree (YAML) in FILE instead of the scheduler");
    app.add_option("--emit", opts.emit, "print a stage's output (as trlc --emit) and stop")
        ->check(CLI::IsMember({"pdg", "schedule", "memplan", "json"}));
    bool no_incrementalize = false;
    trlc::add_incrementalize_options(app, opts, &no_incrementalize);
    bool no_vectorize = false;
    app.add_flag("--fno-vectorize", no_vectorize,
                 "(spelled -fno-vectorize) keep every dim a loop: no batch axes");
    app.add_flag("--no-color", opts.no_color, "never colour diagnostics");

    int exit_code = 0;
    if (!trlc::parse_command_line(app, argc, argv, &exit_code)) return exit_code;
    opts.vectorize = !no_vectorize;
    opts.incrementalize = !no_incrementalize;
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
