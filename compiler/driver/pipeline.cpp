// pipeline — parse → sema → PDG → checks → (emit | interpret), in one place.
#include "driver/pipeline.h"

#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>

#include "checks/checks.h"
#include "codegen/emit_program.h"
#include "driver/build_program.h"
#include "driver/runtime_bounds.h"
#include "driver/time_passes.h"
#include "externs/extern_host.h"
#include "externs/externs.h"
#include "frontend/ast_printer.h"
#include "frontend/diagnostics.h"
#include "frontend/parser.h"
#include "interp/interpreter.h"
#include "memory/memplan.h"
#include "passes/autodiff.h"
#include "passes/incrementalize.h"
#include "passes/vectorize_free_dims.h"
#include "schedule/schedule.h"
#include "pdg/pdg.h"
#include "sema/sema.h"

namespace trlc {

namespace {

/** Parse "NAME=VALUE" with an integer VALUE; reports a bad -D and returns false. */
bool parse_define(const std::string &raw, SemaOptions &sema, Diagnostics &diag) {
    auto eq = raw.find('=');
    std::string name = raw.substr(0, eq);
    bool name_ok = !name.empty() && (isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
    for (char c : name) name_ok = name_ok && (isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (eq == std::string::npos || !name_ok) {
        diag.error("invalid -D '" + raw + "': expected NAME=VALUE, e.g. -D T=100");
        return false;
    }
    std::string value = raw.substr(eq + 1);
    size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(value, &used);
    } catch (...) {
        used = 0;
    }
    if (value.empty() || used != value.size()) {
        diag.error("invalid -D '" + raw + "': '" + value + "' is not an integer");
        return false;
    }
    sema.defines[name] = v;
    return true;
}

/** Run the point-wise interpreter, or the scheduled one when "sched" is given. */
int run_interpreter(const ir::Program &prog, const Schedule *sched, const MemPlan *plan,
                    const DriverOptions &opts, Diagnostics &diag) {
    InterpOptions iopts;
    iopts.seed = opts.seed;
    std::ofstream log;
    if (!opts.log_path.empty()) {
        log.open(opts.log_path);
        if (!log) {
            diag.error("cannot open log file '" + opts.log_path + "'");
            return 1;
        }
        iopts.log = &log;
    }
    if (sched) return interpret_scheduled(prog, *sched, *plan, iopts, diag);
    return interpret(prog, iopts, diag);
}

/* The sema options the command line asks for; false after reporting a bad -D. */
bool make_sema_options(const DriverOptions &opts, SemaOptions *sema, Diagnostics &diag) {
    sema->include_dirs = opts.include_dirs;
    sema->import_root = opts.import_root;
    sema->stdlib_dir = TRLC_STDLIB_DIR;
    if (const char *env = getenv("TRLC_STDLIB_DIR")) sema->stdlib_dir = env;
    bool defines_ok = true;
    for (const std::string &d : opts.raw_defines) defines_ok &= parse_define(d, *sema, diag);
    return defines_ok;
}

/* Read the input file into "sm"; its id, or -1 after reporting why it is unreadable. */
int load_input(const DriverOptions &opts, SourceManager &sm, Diagnostics &diag) {
    std::string err;
    int file = sm.load(opts.input, &err);
    if (file < 0) diag.error(err);
    return file;
}

/* The PDG of "prog" and the two isl checks on it; false when any reported an error. */
bool build_checked_pdg(const ir::Program &prog, Diagnostics &diag, Pdg *pdg) {
    {
        PassTimer t("pdg");
        *pdg = build_pdg(prog, diag);
    }
    if (diag.has_errors()) return false;
    {
        PassTimer t("check reads defined");
        check_reads_defined(*pdg, diag);
    }
    if (diag.has_errors()) return false;
    PassTimer t("check no zero cycle");
    check_no_zero_cycle(*pdg, diag);
    return !diag.has_errors();
}

int run(const DriverOptions &opts, SourceManager &sm, Diagnostics &diag) {
    SemaOptions sema_opts;
    if (!make_sema_options(opts, &sema_opts, diag)) return 1;
    int file = load_input(opts, sm, diag);
    if (file < 0) return 1;
    std::optional<PassTimer> timer(std::in_place, "parse");
    ast::Module module = parse(sm, file, diag);
    timer.reset();
    if (diag.has_errors()) return 1;
    if (opts.emit == "ast") {
        print_ast(module, sm, std::cout);
        return 0;
    }

    timer.emplace("sema");
    std::optional<ir::Program> prog = analyze(module, sm, diag, sema_opts);
    timer.reset();
    if (!prog || diag.has_errors()) return 1;
    if (!prog->externs.empty() && !check_externs(*prog, sm, opts.include_dirs, diag)) return 1;
    if (!prog->externs.empty() && !opts.interpret.empty() &&
        !load_host_externs(*prog, sm, opts.include_dirs, diag))  // the interpreter calls them
        return 1;
    timer.emplace("autodiff");
    if (!differentiate(*prog, diag)) return 1;  // grad(y, x) → adjoint tensors
    timer.emplace("incrementalize");
    if (opts.incrementalize)  // sums over slices → running sums
        incrementalize(*prog, nullptr, opts.incrementalize_min_bytes);
    timer.reset();
    if (opts.emit == "types") {
        print_types(*prog, std::cout);
        return 0;
    }

    Pdg pdg;
    if (!build_checked_pdg(*prog, diag, &pdg)) return 1;
    std::vector<bool> batch_dims = vectorize_free_dims(*prog, pdg, opts.vectorize);
    if (opts.emit == "pdg") {
        print_pdg(pdg, std::cout, batch_dims);
        return 0;
    }
    if (opts.emit == "pdg-dot") {
        print_pdg_dot(pdg, std::cout);
        return 0;
    }
    if (opts.emit.empty() && opts.output.empty() && opts.interpret != "scheduled") {
        if (opts.interpret.empty()) return 0;  // check only
        // The reference semantics needs no schedule: keep it independent of one.
        return run_interpreter(*prog, nullptr, nullptr, opts, diag);
    }

    BuildOptions build_opts;
    build_opts.output = opts.output;
    build_opts.target = opts.target;
    build_opts.cuda_archs = opts.cuda_archs;
    build_opts.opt_level = opts.opt_level;
    build_opts.march = opts.march;
    build_opts.keep_source = opts.keep_source;
    build_opts.standalone = opts.standalone;
    SourceOptions source_opts;
    source_opts.standalone = opts.standalone;
    if (!opts.output.empty() && !check_build_options(build_opts, diag)) return 1;
    ScheduleOptions sched_opts;
    sched_opts.load_schedule = opts.load_schedule;
    timer.emplace("schedule");
    Schedule sched = schedule_program(*prog, pdg, batch_dims, sched_opts, diag);
    timer.reset();
    if (diag.has_errors()) return 1;
    if (opts.emit == "schedule") {
        print_schedule(sched, std::cout);
        return 0;
    }
    timer.emplace("memory plan");
    MemPlan plan = plan_memory(*prog, pdg, sched, diag);
    timer.reset();
    if (diag.has_errors()) return 1;
    if (opts.emit == "memplan") {
        print_memplan(*prog, plan, std::cout);
        return 0;
    }
    if (opts.emit == "json") {
        nlohmann::json doc = nlohmann::json::parse(pdg_to_json(pdg, batch_dims));
        doc["schedule"] = nlohmann::json::parse(schedule_to_json(sched));
        doc["memplan"] = nlohmann::json::parse(memplan_to_json(*prog, plan));
        std::cout << doc.dump(2) << "\n";
        return 0;
    }
    CodegenOptions codegen_opts;
    codegen_opts.fuse = opts.fuse;
    codegen_opts.blas = opts.blas;
    timer.emplace("runtime bounds");
    if (opts.emit == "cuda" || !opts.output.empty())  // --bound NAME=V of the generated program
        if (!find_runtime_bounds(opts, *prog, pdg, sched, plan, sm, codegen_opts, diag)) return 1;
    timer.emplace("codegen");
    if (opts.emit == "cuda") {
        try {
            std::cout << finish_source(emit_cuda(*prog, pdg, sched, plan, &sm, codegen_opts), *prog,
                                       sm, opts.include_dirs, source_opts);
        } catch (const CodegenError &e) {
            diag.error(e.loc, e.message);
            return 1;
        }
        return 0;
    }
    if (!opts.output.empty()) {
        std::string source;
        try {
            source = finish_source(emit_cuda(*prog, pdg, sched, plan, &sm, codegen_opts), *prog, sm,
                                   opts.include_dirs, source_opts);
            timer.reset();
        } catch (const CodegenError &e) {
            diag.error(e.loc, e.message);
            return 1;
        }
        PassTimer t("build (C++ toolchain)");
        return build_program(source, build_opts, diag);
    }
    if (opts.interpret == "scheduled") return run_interpreter(*prog, &sched, &plan, opts, diag);
    return 0;
}

}  // namespace

bool run_front_end(const DriverOptions &opts, SourceManager &sm, Diagnostics &diag,
                   ir::Program *prog, Pdg *pdg) {
    SemaOptions sema_opts;
    if (!make_sema_options(opts, &sema_opts, diag)) return false;
    int file = load_input(opts, sm, diag);
    if (file < 0) return false;
    ast::Module module = parse(sm, file, diag);
    if (diag.has_errors()) return false;
    std::optional<ir::Program> p = analyze(module, sm, diag, sema_opts);
    if (!p || diag.has_errors()) return false;
    if (!p->externs.empty() && !check_externs(*p, sm, opts.include_dirs, diag)) return false;
    if (!differentiate(*p, diag)) return false;  // grad(y, x) → adjoint tensors
    if (opts.incrementalize)
        incrementalize(*p, opts.incrementalize_log, opts.incrementalize_min_bytes);
    *prog = std::move(*p);
    return build_checked_pdg(*prog, diag, pdg);
}

std::vector<std::string> cli11_args(int argc, char **argv) {
    std::vector<std::string> args;
    for (int k = argc - 1; k >= 1; --k) {
        std::string a = argv[k];
        if (a.size() > 2 && a[0] == '-' && a[1] == 'f') a = "-" + a;
        args.push_back(a);
    }
    return args;
}

int run_driver(const DriverOptions &opts) {
    SourceManager sm;
    Diagnostics diag(sm, std::cerr);
    diag.set_color(opts.color);
    set_time_passes(opts.time_passes);
    try {
        int code = 0;
        {
            PassTimer t("total");
            code = run(opts, sm, diag);
        }
        print_time_passes(std::cerr);
        return code;
    } catch (const InternalError &e) {
        std::cerr << "trlc: internal compiler error: " << e.message << "\n";
    } catch (const std::bad_alloc &) {
        std::cerr << "trlc: internal compiler error: out of memory\n";
    } catch (const std::exception &e) {
        std::cerr << "trlc: internal compiler error: " << e.what() << "\n";
    }
    return 2;
}

}  // namespace trlc
