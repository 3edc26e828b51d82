// pipeline — the stage list and its runner (the contract is in driver/pipeline.h).
//
// Each stage is a function of the PipelineState that fills in its part (parse: the AST, sema:
// the Program, …) and a printer for --print-after.  The runner alone opens the --time-passes
// timers, runs the verifier, prints dumps and --emit outputs and decides where to stop, so a
// stage never returns early for an --emit.  Example: `trlc p.trl --emit=schedule` runs parse
// … schedule, then prints print_schedule's text (the emit table below) and stops.
#include "driver/pipeline.h"

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "checks/checks.h"
#include "driver/build_cache.h"
#include "driver/build_program.h"
#include "driver/extern_deps.h"
#include "driver/library_mode.h"
#include "driver/runtime_bounds.h"
#include "externs/extern_host.h"
#include "externs/externs.h"
#include "frontend/ast_printer.h"
#include "frontend/parser.h"
#include "interp/interpreter.h"
#include "ir/printer.h"
#include "ir/verify.h"
#include "passes/autodiff.h"
#include "passes/cse.h"
#include "passes/distribute.h"
#include "passes/incrementalize.h"
#include "support/install_dirs.h"
#include "support/time_passes.h"

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

// ---- the stages -------------------------------------------------------------------------

int parse_stage(PipelineState &s) {
    s.sema.include_dirs = s.opts.include_dirs;
    s.sema.import_root = s.opts.import_root;
    s.sema.stdlib_dir = stdlib_dir();
    bool defines_ok = true;
    for (const std::string &d : s.opts.raw_defines) defines_ok &= parse_define(d, s.sema, s.diag);
    if (!defines_ok) return 1;
    std::string err;
    s.file = s.sm.load(s.opts.input, &err);
    if (s.file < 0) {
        s.diag.error(err);
        return 1;
    }
    s.module = parse(s.sm, s.file, s.diag);
    return 0;
}

int sema_stage(PipelineState &s) {
    std::optional<ir::Program> prog = analyze(s.module, s.sm, s.diag, s.sema);
    if (!prog) return 1;
    s.prog = std::move(*prog);
    return 0;
}

int externs_stage(PipelineState &s) {
    if (s.prog.externs.empty()) return 0;
    if (!check_externs(s.prog, s.sm, s.opts.include_dirs, s.diag)) return 1;
    if (!s.opts.interpret.empty() &&  // the interpreter calls them
        !load_host_externs(s.prog, s.sm, s.opts.include_dirs, s.diag))
        return 1;
    return 0;
}

int distribute_stage(PipelineState &s) {  // grads averaged over ranks, rank-keyed streams
    return distribute(s.prog, s.diag) ? 0 : 1;
}

int autodiff_stage(PipelineState &s) {
    s.grad_done = true;
    return differentiate(s.prog, s.diag) ? 0 : 1;  // grad(y, x) → adjoint tensors
}

int incrementalize_stage(PipelineState &s) {  // sums over slices → running sums
    incrementalize(s.prog, &s.incrementalize_log, s.opts.incrementalize_min_bytes);
    return 0;
}

int cse_stage(PipelineState &s) {  // equal subexpressions → one node
    eliminate_common_subexpressions(s.prog);
    return 0;
}

int pdg_stage(PipelineState &s) {
    s.pdg = build_pdg(s.prog, s.diag);
    return 0;
}

/** A program with no emit and no save computes nothing anyone can see (dead-points then keeps
 *  nothing): a warning at its first tensor (the file's start when it has none). */
void warn_unobservable(const PipelineState &s) {
    if (!s.prog.emits.empty() || !s.prog.saves.empty()) return;
    Loc at{0, 1, 1, 1};
    for (const auto &t : s.prog.tensors)
        if (t.loc.valid() && t.loc.file == 0) {
            at = t.loc;
            break;
        }
    s.diag.warning(at, "nothing is observable: the program has no `emit` and no `save`, so its "
                       "executable computes nothing (write `emit \"name\"[i] { x: x[i] }` or "
                       "`save x[I] to \"x.npz\"`)");
}

/** --emit=library, or an executable's source (--emit=cuda, -o): the inputs and outputs must fit
 *  it (driver/library_mode.h); the interpreter and the stages before code generation take any. */
bool generates_code(const PipelineState &s) {
    return s.goal > stage_index("memplan") && s.goal != stage_index("interpret");
}

int checks_stage(PipelineState &s) {
    if (generates_code(s) && !check_io_usage(s.prog, s.opts.emit == "library", s.diag)) return 1;
    warn_unobservable(s);
    {
        PassTimer t("reads defined");
        check_reads_defined(s.pdg, s.diag);
    }
    if (s.diag.has_errors()) return 1;
    PassTimer t("no zero cycle");
    check_no_zero_cycle(s.pdg, s.diag);
    return 0;
}

int dead_points_stage(PipelineState &s) {  // only the points an output needs
    restrict_to_needed_points(s.prog, s.vec.batch, s.pdg);
    return 0;
}

int vectorize_stage(PipelineState &s) {
    s.vec = vectorize(s.prog, s.pdg, s.opts.vectorize);
    return 0;
}

int schedule_stage(PipelineState &s) {
    ScheduleOptions sched_opts;
    sched_opts.load_schedule = s.opts.load_schedule;
    sched_opts.outer_band = s.opts.outer_band;
    sched_opts.cache_dir = s.opts.cache ? build_cache_dir() : "";
    s.sched = schedule_program(s.prog, s.pdg, s.vec.batch, sched_opts, s.diag);
    return 0;
}

bool runtime_bounds_applies(const PipelineState &s);

int memplan_stage(PipelineState &s) {
    // The run-time bound check's compilation at another value overlaps this plan (when that
    // stage will run): PPO CartPole's memplan and runtime-bounds on two cores, 0.23 + 0.51 s ->
    // 0.30 + 0.26 s of wall time (2026-11-29).
    if (s.goal >= stage_index("runtime-bounds") && runtime_bounds_applies(s))
        s.bounds_check = start_runtime_bounds(s.opts, s.prog, s.pdg, s.sched, s.sm);
    s.plan = plan_memory(s.prog, s.pdg, s.sched, s.diag, nullptr, s.opts.mem_budget);
    if (s.diag.has_errors()) return 1;
    return 0;
}

int runtime_bounds_stage(PipelineState &s) {  // --bound NAME=V of the generated program
    std::shared_ptr<RuntimeBoundsCheck> started = std::move(s.bounds_check);
    return find_runtime_bounds(s.opts, s.prog, s.pdg, s.sched, s.plan, s.sm, s.codegen, s.diag, started.get()) ? 0 : 1;
}

int blas_stage(PipelineState &s) {  // matmuls over the batch → trl_gemm
    plan_blas(s.prog, s.sched, s.plan, s.codegen, &s.kernels);
    return 0;
}

int fusion_stage(PipelineState &s) {  // consecutive statements → one kernel
    plan_fusion(s.prog, &s.pdg, s.sched, s.plan, s.codegen, &s.kernels);
    return 0;
}

int codegen_stage(PipelineState &s) {
    SourceOptions source_opts;
    source_opts.standalone = s.opts.standalone;
    // libFormat only for a source someone reads (--emit=cuda, --keep-source, a library's
    // NAME.cu): the temporary one of `-o` goes straight to the C++ compiler, and formatting
    // PPO CartPole's took 0.3 s, 8 % of its front end.
    source_opts.format = !s.opts.emit.empty() || s.opts.output.empty() || s.opts.keep_source;
    if (!s.opts.distributed.empty()) source_opts.dist_layer = s.opts.distributed;
    // `trlc -o` at the default level: the kernels in an -O3 and an -O2 compile part
    // (codegen/compile_parts.h; build_program compiles them side by side on the host, and a CUDA
    // or whole compile ignores the guards).  Not with `extern fn`s: their headers, included by
    // the source, may define functions that two parts would both define (chain.cuh).
    s.codegen.compile_parts = s.opts.emit.empty() && !s.opts.output.empty() && !s.opts.standalone &&
                              s.opts.opt_level < 0 && s.opts.sanitize.empty() && s.opts.target != "cuda-emu" &&
                              s.prog.externs.empty();
    try {
        if (s.opts.emit == "library" && s.plan.host_bytes > 0) {
            // The host arena is a static array of the generated source (trlg_swap): one per
            // program, while a library has one context per caller thread.
            s.diag.error("--mem-budget with --emit=library: this budget needs a host arena (" +
                         std::to_string(s.plan.host_bytes) +
                         " bytes), which a library's contexts cannot share yet; raise the budget to " +
                         std::to_string(s.plan.unconstrained_peak) + " bytes or build a program (-o)");
            return 1;
        }
        if (s.opts.emit == "library") {  // NAME.h now; the source below (build writes it)
            LibraryPaths lp = library_paths(s.opts.output);
            s.codegen.library = lp.name;
            std::string main_path = s.sm.size() > 0 ? s.sm.file(0).path : "<input>";
            if (!write_text_file(lp.header, library_header(s.prog, lp.name, main_path), s.diag)) return 1;
        }
        s.source = finish_source(emit_cuda(s.prog, s.pdg, s.sched, s.plan, &s.sm, s.codegen, &s.kernels), s.prog, s.sm,
                                 s.opts.include_dirs, source_opts);
    } catch (const CodegenError &e) {
        s.diag.error(e.loc, e.message);
        return 1;
    }
    return 0;
}

BuildOptions build_options(const DriverOptions &opts) {
    BuildOptions b;
    b.output = opts.output;
    b.target = opts.target;
    b.cuda_archs = opts.cuda_archs;
    b.opt_level = opts.opt_level;
    b.march = opts.march;
    b.keep_source = opts.keep_source;
    b.sanitize = opts.sanitize;
    b.standalone = opts.standalone;
    b.distributed = opts.distributed;
    b.cache_dir = opts.cache ? build_cache_dir() : "";
    if (opts.emit == "library") {  // DIR/libNAME.so from DIR/NAME.cu
        LibraryPaths lp = library_paths(opts.output);
        b.output = lp.shared;
        b.source_path = lp.source;
        b.shared_library = true;
    }
    return b;
}

int build_stage(PipelineState &s) { return build_program(s.source, build_options(s.opts), s.diag); }

/** The point-wise interpreter, or the scheduled one (through the memory plan). */
int interpret_stage(PipelineState &s) {
    InterpOptions iopts;
    iopts.seed = s.opts.seed;
    std::ofstream log;
    if (!s.opts.log_path.empty()) {
        log.open(s.opts.log_path);
        if (!log) {
            s.diag.error("cannot open log file '" + s.opts.log_path + "'");
            return 1;
        }
        iopts.log = &log;
    }
    if (!parse_inputs(s.opts.inputs, s.prog, &iopts.inputs, s.diag)) return 1;
    iopts.ranks = s.opts.ranks;
    if (s.opts.interpret == "scheduled") return interpret_scheduled(s.prog, s.sched, s.plan, iopts, s.diag);
    return interpret(s.prog, iopts, s.diag);
}

// ---- when a stage applies ----------------------------------------------------------------

int goal_of(const PipelineState &s) { return s.goal; }

bool distribute_applies(const PipelineState &s) { return !s.opts.distributed.empty() || s.opts.ranks > 0; }

bool incrementalize_applies(const PipelineState &s) { return s.opts.incrementalize; }

bool dead_points_applies(const PipelineState &s) { return s.opts.dead_points; }

bool cse_applies(const PipelineState &s) { return s.opts.cse; }

/* The reference semantics needs no schedule: the point-wise interpreter stays independent of
 * one, so scheduling is skipped when it is the goal. */
bool schedule_applies(const PipelineState &s) {
    return !(goal_of(s) == stage_index("interpret") && s.opts.interpret != "scheduled");
}

/* Run-time bounds and code generation serve --emit=cuda and -o only, not the interpreter. */
bool codegen_applies(const PipelineState &s) { return goal_of(s) != stage_index("interpret"); }

/* A library's bounds are all compiled in: its caller has no --bound. */
bool runtime_bounds_applies(const PipelineState &s) { return codegen_applies(s) && s.opts.emit != "library"; }

bool build_applies(const PipelineState &s) { return !s.opts.output.empty(); }

bool interpret_applies(const PipelineState &s) { return !s.opts.interpret.empty(); }

// ---- --print-after printers ---------------------------------------------------------------

void print_ir(const PipelineState &s, std::ostream &out) {
    ir::PrintOptions po;
    po.types = s.opts.print_types;
    ir::print_program(s.prog, out, po);
}

void print_ast_of(const PipelineState &s, std::ostream &out) { print_ast(s.module, s.sm, out); }

/* The program after incrementalize, then one comment line per running sum made. */
void print_incrementalized(const PipelineState &s, std::ostream &out) {
    print_ir(s, out);
    for (const std::string &l : s.incrementalize_log) out << "// running sum: " << l << "\n";
}

void print_pdg_of(const PipelineState &s, std::ostream &out) { print_pdg(s.pdg, out); }

/* The program with each dim's decision as a note: "dim b < B = 16  // batch axis". */
void print_vectorized(const PipelineState &s, std::ostream &out) {
    ir::PrintOptions po;
    po.types = s.opts.print_types;
    for (size_t d = 0; d < s.vec.batch.size(); ++d)
        po.dim_notes.push_back(s.vec.batch[d] ? "batch axis" : "loop: " + s.vec.reasons[d]);
    ir::print_program(s.prog, out, po);
}

void print_schedule_of(const PipelineState &s, std::ostream &out) { print_schedule(s.sched, out); }

void print_memplan_of(const PipelineState &s, std::ostream &out) { print_memplan(s.prog, s.plan, out); }

/* One line per program bound: "T = 500: run time, >= 2" or "T = 500: fixed (reason)". */
void print_runtime_bounds(const PipelineState &s, std::ostream &out) {
    size_t k = 0;
    for (const auto &b : s.prog.bounds) {
        out << b.first << " = " << b.second << ": ";
        if (k >= s.codegen.bounds.size())
            out << "fixed (not checked)";
        else if (s.codegen.bounds[k].runtime)
            out << "run time, >= " << s.codegen.bounds[k].min_value;
        else
            out << "fixed (" << s.codegen.bounds[k].fixed_reason << ")";
        out << "\n";
        ++k;
    }
}

void print_blas_of(const PipelineState &s, std::ostream &out) { print_blas(s.sched, s.kernels, out); }

void print_fusion_of(const PipelineState &s, std::ostream &out) { print_fusion(s.sched, s.kernels, out); }

void print_source(const PipelineState &s, std::ostream &out) { out << s.source; }

void print_json(const PipelineState &s, std::ostream &out) {
    nlohmann::json doc = nlohmann::json::parse(pdg_to_json(s.pdg, s.vec.batch));
    doc["schedule"] = nlohmann::json::parse(schedule_to_json(s.sched));
    doc["memplan"] = nlohmann::json::parse(memplan_to_json(s.prog, s.plan));
    out << doc.dump(2) << "\n";
}

// ---- the tables ---------------------------------------------------------------------------

const std::vector<Stage> kStages = {
    {"parse", "read the file and build the syntax tree", nullptr, parse_stage, print_ast_of, false},
    {"sema", "names, types, shapes; inline fns; the typed IR", nullptr, sema_stage, print_ir, true},
    {"externs", "check extern fns against their C++ headers", nullptr, externs_stage, print_ir, false},
    {"distribute", "data-parallel ranks: grads averaged, rank-keyed streams", distribute_applies, distribute_stage,
     print_ir, true},
    {"autodiff", "grad(y, x) becomes adjoint tensors", nullptr, autodiff_stage, print_ir, true},
    {"incrementalize", "sums over slices become running sums", incrementalize_applies, incrementalize_stage,
     print_incrementalized, true},
    {"cse", "equal subexpressions computed once (-fno-cse)", cse_applies, cse_stage, print_ir, true},
    {"pdg", "the polyhedral dependence graph (isl)", nullptr, pdg_stage, print_pdg_of, false},
    {"checks", "every read defined; no zero-distance cycle", nullptr, checks_stage, print_ir, false},
    {"vectorize", "dims that carry no dependence become batch axes", nullptr, vectorize_stage, print_vectorized, false},
    {"dead-points", "keep only the points an output needs (-fno-dead-points)", dead_points_applies, dead_points_stage,
     print_pdg_of, false},
    {"schedule", "the isl schedule tree and the loop nest", schedule_applies, schedule_stage, print_schedule_of, false},
    {"memplan", "storage, live range and offset of every tensor", schedule_applies, memplan_stage, print_memplan_of,
     false},
    {"runtime-bounds", "which bounds the executable may change (--bound)", runtime_bounds_applies, runtime_bounds_stage,
     print_runtime_bounds, false},
    {"blas", "matmuls over the batch become trl_gemm calls (-fno-blas)", codegen_applies, blas_stage, print_blas_of,
     false},
    {"fusion", "consecutive statements share a kernel (-fno-fusion)", codegen_applies, fusion_stage, print_fusion_of,
     false},
    {"codegen", "the C++17/CUDA source", codegen_applies, codegen_stage, print_source, false},
    {"build", "compile the source with the toolchain (-o)", build_applies, build_stage, nullptr, false},
    {"interpret", "run the reference interpreter (--interpret)", interpret_applies, interpret_stage, nullptr, false},
};

/** --emit=KIND: the stage after which KIND is printed (on stdout), and how. */
struct EmitKind {
    const char *kind;
    const char *stage;
    void (*print)(const PipelineState &, std::ostream &);
};

void print_types_of(const PipelineState &s, std::ostream &out) { print_types(s.prog, out); }
void print_nothing(const PipelineState &, std::ostream &) {}
void print_pdg_batch(const PipelineState &s, std::ostream &out) { print_pdg(s.pdg, out, s.vec.batch); }
void print_pdg_dot_of(const PipelineState &s, std::ostream &out) { print_pdg_dot(s.pdg, out); }

const EmitKind kEmits[] = {
    {"ast", "parse", print_ast_of},
    {"types", "incrementalize", print_types_of},
    {"pdg", "vectorize", print_pdg_batch},
    {"pdg-dot", "vectorize", print_pdg_dot_of},
    {"schedule", "schedule", print_schedule_of},
    {"memplan", "memplan", print_memplan_of},
    {"json", "memplan", print_json},
    {"cuda", "codegen", print_source},
    {"library", "build", print_nothing},  // files: DIR/NAME.h, NAME.cu, libNAME.so (-o DIR/NAME)
};

const EmitKind *emit_kind(const std::string &kind) {
    for (const EmitKind &e : kEmits)
        if (kind == e.kind) return &e;
    return nullptr;
}

bool prints_after(const DriverOptions &opts, const std::string &stage) {
    for (const std::string &p : opts.print_after)
        if (p == stage || p == "all") return true;
    return false;
}

/** The verifier after stage "st"; an internal error that names the stage on a violation. */
void verify_after(const Stage &st, const PipelineState &s) {
    PassTimer t("verify");
    ir::VerifyOptions vo;
    vo.allow_grad = !s.grad_done;
    std::vector<std::string> v = ir::verify(s.prog, vo);
    if (v.empty()) return;
    std::string msg = "the IR verifier failed after pass '" + std::string(st.name) + "': " + v[0];
    if (v.size() > 1) msg += " (and " + std::to_string(v.size() - 1) + " more)";
    throw InternalError{msg};
}

/** The build cache's key of "s" after sema (driver/build_cache.h lists what it covers); "" when
 *  the build is not cacheable: caching off, --print-after asked, or extern headers whose
 *  dependencies the host compiler cannot list (driver/extern_deps.h). */
std::string build_cache_key(const PipelineState &s) {
    if (!s.opts.cache || !s.opts.print_after.empty()) return "";
    std::vector<std::string> extern_files;
    if (!extern_dependencies(s.prog, s.sm, s.opts.include_dirs, &extern_files)) return "";
    BuildKey key;
    for (const std::string &f : extern_files) key.add_file(f);
    std::string args;
    for (const std::string &a : key_arguments(s.opts.argv)) args += a + '\0';
    key.add("arguments", args);
    key.add_tool("/proc/self/exe");
    for (int f = 0; f < s.sm.size(); ++f) key.add("source " + s.sm.file(f).path, s.sm.file(f).text);
    key.add_tree(runtime_dir());
    const char *cxx = getenv("CXX");
    key.add_tool(cxx && *cxx ? cxx : "c++");
    const char *nvcc = getenv("TRLC_NVCC");
    key.add_tool(nvcc && *nvcc ? nvcc : "nvcc");
    key.add_tool("nvidia-smi");
    key.add_host_cpu();  // --march=native (the default) compiles for it
    for (const char *v : {"CXX", "TRLC_NVCC", "TRLC_RUNTIME_DIR", "PATH", "TMPDIR"}) key.add_env(v);
    return key.hex();
}

/** "path" escaped for a Makefile rule (spaces, '#', '$'). */
std::string make_escape(const std::string &path) {
    std::string out;
    for (char c : path) {
        if (c == ' ' || c == '#') out += '\\';
        if (c == '$') out += '$';
        out += c;
    }
    return out;
}

/** --depfile: "OUT: the .trl files read" (those on disk), for CMake's and Ninja's depfiles. */
int write_depfile(const PipelineState &s) {
    std::ofstream f(s.opts.depfile);
    f << make_escape(s.opts.emit == "library" ? library_paths(s.opts.output).shared : s.opts.output) << ":";
    for (int k = 0; k < s.sm.size(); ++k) {
        const std::string &p = s.sm.file(k).path;
        if (std::ifstream(p).good()) f << " \\\n  " << make_escape(p);
    }
    f << "\n";
    f.close();
    if (!f) {
        s.diag.error("cannot write the dependency file '" + s.opts.depfile + "'");
        return 1;
    }
    return 0;
}

/** run_pipeline up to "goal", with the build cache when the goal is an -o build: on a hit after
 *  sema the cached executable is copied (no schedule, plan or C++ build); a fresh build is
 *  stored.  Then the --depfile. */
int run_cached_build(PipelineState &s, const std::string &goal);

int run_cached(PipelineState &s, const std::string &goal) {
    int code = run_cached_build(s, goal);
    if (code == 0 && goal == "build" && !s.opts.depfile.empty()) code = write_depfile(s);
    return code;
}

int run_cached_build(PipelineState &s, const std::string &goal) {
    std::string dir = goal == "build" && s.opts.emit != "library" ? build_cache_dir() : "";
    if (dir.empty() || !s.opts.cache) return run_pipeline(s, goal);
    int code = run_pipeline(s, "sema");
    if (code != 0) return code;
    std::string key = build_cache_key(s);
    if (key.empty()) return run_pipeline(s, goal);
    if (fetch_cached_build(dir, key, s.opts.output, s.opts.keep_source)) {
        std::cerr << "trlc: " << s.opts.output << " is up to date: the build cache (" << dir
                  << ") holds it, built from the same inputs (--no-cache rebuilds)\n";
        return 0;
    }
    code = run_pipeline(s, goal);
    if (code == 0) store_cached_build(dir, key, s.opts.output, s.opts.keep_source);
    return code;
}

}  // namespace

PipelineState::PipelineState(const DriverOptions &o, SourceManager &s, Diagnostics &d) : opts(o), sm(s), diag(d) {
    codegen.fuse = o.fuse;
    // A library's products are the bit-exact loops: a call allocates nothing (no libxsmm kernel
    // is generated at its first product) and computes what --interpret computes.
    codegen.blas = o.blas && o.emit != "library";
    codegen.row_split = o.row_split;
    if (!o.distributed.empty()) codegen.dist_layer = o.distributed;
}

const std::vector<Stage> &pipeline_stages() { return kStages; }

int stage_index(const std::string &name) {
    for (size_t k = 0; k < kStages.size(); ++k)
        if (name == kStages[k].name) return static_cast<int>(k);
    return -1;
}

std::vector<std::string> printable_stage_names() {
    std::vector<std::string> out{"all"};
    for (const Stage &st : kStages)
        if (st.print) out.push_back(st.name);
    return out;
}

std::string pipeline_goal(const DriverOptions &opts) {
    std::string goal = "checks";  // with nothing asked, trlc only checks the program
    bool asked = true;
    if (const EmitKind *e = emit_kind(opts.emit))
        goal = e->stage;
    else if (!opts.output.empty())
        goal = "build";
    else if (!opts.interpret.empty())
        goal = "interpret";
    else
        asked = false;
    if (!asked)
        for (const std::string &p : opts.print_after)  // run far enough to print what is asked
            if (stage_index(p) > stage_index(goal)) goal = p;
    int stop = stage_index(opts.stop_after);
    if (stop >= 0 && (!asked || stop < stage_index(goal))) goal = opts.stop_after;
    return goal;
}

int run_pipeline(PipelineState &s, const std::string &last, const PipelineHooks &hooks) {
    s.goal = stage_index(last);
    if (s.goal < 0) throw InternalError{"run_pipeline: no stage '" + last + "'"};
    const EmitKind *emit = emit_kind(s.opts.emit);
    for (; s.next <= s.goal; ++s.next) {
        const Stage &st = kStages[s.next];
        if (!st.applies || st.applies(s)) {
            int code = 0;
            {
                PassTimer t(st.name);
                code = st.run(s);
            }
            if (code == 0 && s.diag.has_errors()) code = 1;
            if (code != 0) {
                ++s.next;
                return code;
            }
            if (st.rewrites_ir && s.opts.verify_each) verify_after(st, s);
            if (st.print && prints_after(s.opts, st.name)) {
                std::cerr << "// ---- after " << st.name << " ----\n";
                st.print(s, std::cerr);
            }
            if (hooks.after) hooks.after(st.name, s);
        }
        if (emit && st.name == std::string(emit->stage)) emit->print(s, std::cout);
    }
    return 0;
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
            // The command line's build options before any work on the program.
            if (!opts.depfile.empty() && opts.output.empty()) {
                diag.error("--depfile FILE needs -o OUT: it lists what OUT was built from");
                code = 1;
            } else if (opts.emit == "library" &&
                       (opts.output.empty() ? (diag.error("--emit=library needs -o DIR/NAME: it writes DIR/NAME.h, "
                                                          "DIR/NAME.cu and builds DIR/libNAME.so"),
                                               true)
                                            : !check_library_name(library_paths(opts.output).name, diag))) {
                code = 1;
            } else if (!opts.output.empty() && !check_build_options(build_options(opts), diag)) {
                code = 1;
            } else {
                PipelineState s(opts, sm, diag);
                code = run_cached(s, pipeline_goal(opts));
            }
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
