#pragma once
// pipeline — the compiler as one list of named stages, run by one runner for trlc
// (driver/main.cpp), trl-opt (tools/trl-opt.cpp) and the run-time bound check
// (driver/runtime_bounds.cpp, which compiles the program again at other bound values).
//
// The stages, in order (each name is the pass's --print-after / --stop-after / --time-passes
// name and its lit folder under test/lit):
//   parse, sema, externs, autodiff, incrementalize, cse, pdg, checks, vectorize, dead-points, schedule, memplan,
//   runtime-bounds, blas, fusion, codegen, build, interpret
// The runner applies the same things to every stage: a --time-passes timer, the IR verifier
// after the stages that rewrite the Program (unless --no-verify), --print-after dumps (on stderr),
// --stop-after, and the --emit=KIND output of the stage that makes KIND (on stdout).  Example:
//   trlc prog.trl --print-after=autodiff --stop-after=autodiff
// prints the program with its adjoint tensors and stops.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "codegen/emit_program.h"
#include "codegen/kernel_plan.h"
#include "frontend/ast.h"
#include "ir/ir.h"
#include "memory/memplan.h"
#include "passes/incrementalize.h"
#include "passes/vectorize.h"
#include "pdg/pdg.h"
#include "schedule/schedule.h"
#include "sema/sema.h"
#include "support/diagnostics.h"

namespace trlc {

struct DriverOptions {
    std::string input;
    std::string emit;            // "", ast, types, pdg, pdg-dot, json, schedule, memplan, cuda, library
    std::string interpret;       // "", "pointwise" or "scheduled"
    bool vectorize = true;       // -fno-vectorize
    bool incrementalize = true;  // -fno-incrementalize (passes/incrementalize.h)
    int64_t incrementalize_min_bytes = kIncrementalizeMinBytes;  // --incrementalize-min-bytes
    bool fuse = true;         // -fno-fusion, alias -fno-fuse (the fusion pass: one kernel per statement)
    bool blas = true;         // -fno-blas (the blas pass: every matmul a sequential k loop)
    bool row_split = true;    // -fno-row-split (codegen/row_split.h: one-point kernels by rows)
    bool cse = true;          // -fno-cse (passes/cse.h: equal subexpressions computed once)
    bool dead_points = true;  // -fno-dead-points (pdg/dead_points.cpp: only the points outputs need)
    /** --runtime-bound: "" automatic (small programs), "none", or "I,T": check exactly these
     *  bounds for `--bound NAME=V` of the generated program (driver/runtime_bounds.h). */
    std::string runtime_bound;
    /** --mem-budget: the most bytes the arena may take (0: no budget); buffers move to a host
     *  arena between uses to meet it (memory/swap.cpp). */
    int64_t mem_budget = 0;
    /** --distributed=mpi|nccl: data-parallel ranks (passes/distribute.h; the build links the
     *  process-group layer, build_program.h); "" one process. */
    std::string distributed;
    /** --ranks N (with --interpret): simulate N data-parallel ranks in one process, as a
     *  --distributed build run with mpirun -np N (interp/interpreter.h); 0: not distributed. */
    int ranks = 0;
    std::string load_schedule;  // trl-opt --load-schedule
    /** --outer-band: "auto", "none" or a dim name (ScheduleOptions::outer_band). */
    std::string outer_band = "auto";
    std::vector<std::string> raw_defines;  // "NAME=VALUE" as typed
    std::vector<std::string> include_dirs;
    std::string import_root;  // --import-root (SemaOptions::import_root)
    uint64_t seed = 0;
    std::string log_path;
    /** --input NAME=FILE.npy (repeatable): the value of `input NAME` for --interpret. */
    std::vector<std::string> inputs;
    std::string output;  // -o: build an executable (build_program.h); with --emit=library DIR/NAME
    /** The command line as typed (argv[1..]): part of the build cache's key (build_cache.h). */
    std::vector<std::string> argv;
    bool cache = true;  // --no-cache: -o builds without reading or writing the build cache
    /** --depfile FILE (with -o): after a build, write "OUT: every .trl file read" in Makefile
     *  syntax, as compilers' -MF does (CMake's DEPFILE, Ninja's depfile). */
    std::string depfile;
    std::string target;                   // --target: "", host, cuda
    std::vector<std::string> cuda_archs;  // --cuda-arch
    int opt_level = -1;                   // -O0 .. -O3 for the toolchain; -1: the target's default (BuildOptions)
    std::string march = "native";         // --march: the host build's ISA (g++ -march=ARCH)
    bool keep_source = false;             // --keep-source
    std::string sanitize;                 // --sanitize=address,undefined,leak (host builds; BuildOptions)
    bool standalone = false;              // --standalone: inline the runtime into the generated source
    bool no_color = false;
    bool color = false;
    bool time_passes = false;  // --time-passes: CPU and wall time per stage on stderr
    /** --print-after=PASS[,PASS]: print the stage's result on stderr after it ("all": every
     *  stage that runs); --stop-after=PASS: stop there (exit 0). */
    std::vector<std::string> print_after;
    std::string stop_after;
    bool print_types = false;  // --print-types: the IR dumps give every operation its type
    /** ir::verify after every stage that rewrites the Program; --no-verify turns it off.  On
     *  the PPO sample one run costs about 1.3M instructions (callgrind: parse … incrementalize
     *  62.4M without, 66.3M with its 3 runs); its --emit=cuda compile (8 s CPU) runs it 15
     *  times, the run-time bound check's compilations included. */
    bool verify_each = true;
};

struct RuntimeBoundsCheck;  // driver/runtime_bounds.h

/** What the stages have made so far.  "opts", "sm" and "diag" outlive the state.  Member
 *  order matters: the schedule's and the memory plan's isl objects live in the PDG's isl
 *  context, so they are destroyed before it. */
struct PipelineState {
    PipelineState(const DriverOptions &o, SourceManager &s, Diagnostics &d);
    const DriverOptions &opts;
    SourceManager &sm;
    Diagnostics &diag;
    SemaOptions sema;
    int file = -1;
    ast::Module module;
    ir::Program prog;
    bool grad_done = false;                       // autodiff ran: no Grad node may remain
    std::vector<std::string> incrementalize_log;  // one line per running sum made
    Pdg pdg;
    VectorizeDecision vec;
    Schedule sched;
    MemPlan plan;
    CodegenOptions codegen;  // fuse/blas from opts; bounds and loop nest from runtime-bounds
    /** runtime-bounds' work started by the memplan stage (driver/runtime_bounds.h). */
    std::shared_ptr<RuntimeBoundsCheck> bounds_check;
    KernelPlan kernels;  // the blas and fusion passes' decisions
    std::string source;  // the generated program (codegen)
    int next = 0;        // index of the next stage to run
    int goal = -1;       // the last stage of the current run_pipeline call
};

/** One stage of the compiler. */
struct Stage {
    const char *name;     // "autodiff"
    const char *summary;  // one line for --help
    /** Whether the stage runs in this compilation (null: always). */
    bool (*applies)(const PipelineState &);
    /** 0, or the exit code to stop with (1 after errors reported to s.diag). */
    int (*run)(PipelineState &);
    /** What --print-after=NAME prints; null when the stage has nothing to show. */
    void (*print)(const PipelineState &, std::ostream &);
    bool rewrites_ir;  // the verifier runs after it (--verify-each)
};

/** The stages in order. */
const std::vector<Stage> &pipeline_stages();

/** Index of stage "name" in pipeline_stages(), -1 when there is none. */
int stage_index(const std::string &name);

/** The names of the stages that --print-after accepts, "all" first. */
std::vector<std::string> printable_stage_names();

/** The stage after which the command line's request is complete: --emit=KIND's stage, build
 *  (-o), interpret (--interpret), else checks, or a later stage named by --print-after;
 *  --stop-after moves it earlier (or later when nothing else was asked). */
std::string pipeline_goal(const DriverOptions &opts);

/** Called after each stage that ran (trl-opt prints its reports here). */
struct PipelineHooks {
    std::function<void(const std::string &stage, PipelineState &)> after;
};

/** Run the stages from s.next through "last", skipping those that do not apply.  Returns 0
 *  when "last" was reached, else the first non-zero exit code of a stage.  Throws
 *  InternalError when the verifier finds the IR malformed after a stage. */
int run_pipeline(PipelineState &s, const std::string &last, const PipelineHooks &hooks = {});

/** argv for CLI11's parse(std::vector<std::string>&) (last argument first), with GCC-style
 *  single-dash long flags (-fno-vectorize) spelled with two dashes as CLI11 wants them. */
std::vector<std::string> cli11_args(int argc, char **argv);

/** The files of `--emit=library -o DIR/NAME`: DIR/NAME.h, DIR/NAME.cu, DIR/libNAME.so. */
struct LibraryPaths {
    std::string name, header, source, shared;
};
LibraryPaths library_paths(const std::string &output);

/** Run the compiler as the command line asked; returns the process exit code
 *  (0 success, 1 user error, 2 internal compiler error). */
int run_driver(const DriverOptions &opts);

}  // namespace trlc
