// trlc — the command-line driver: parse options (CLI11), run the pipeline,
// map outcomes to exit codes (0 success, 1 user error, 2 internal error).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "driver/build_program.h"
#include "driver/cli_common.h"
#include "driver/pipeline.h"

namespace {

const char *kDescription = "trlc — compiler for .trl recurrent-tensor programs (deep RL as recurrence equations).\n"
                           "\n"
                           "Reads FILE.trl, checks it (names, shapes, dtypes, every read defined, no zero-distance\n"
                           "cycle) and then, depending on the options:\n"
                           "  --emit=KIND     prints one stage's output and stops:\n"
                           "                    ast      the syntax tree with source positions\n"
                           "                    types    every tensor's domain and inferred type\n"
                           "                    pdg      the polyhedral dependence graph (isl domains and accesses)\n"
                           "                    pdg-dot  the same graph for Graphviz\n"
                           "                    json     one JSON document: graph, schedule and memory plan\n"
                           "                    schedule the isl schedule tree (YAML) and the loop nest\n"
                           "                    memplan  storage, live range, offset of every tensor; the peak\n"
                           "                    cuda     the generated C++17/CUDA program (one .cu source)\n"
                           "                    library  with -o DIR/NAME: the program's `input`s and `output`s as\n"
                           "                             a C API: DIR/NAME.h, DIR/NAME.cu, DIR/libNAME.so\n"
                           "  --interpret     runs the reference interpreter: emit records as JSON Lines on\n"
                           "                  stdout (or --log FILE), save outputs as .npy/.npz;\n"
                           "                  --interpret=scheduled runs in schedule order through the memory\n"
                           "                  plan (batch axes, windows, poisoned frees) and must print the same\n"
                           "                  output\n"
                           "  -o OUT          builds the executable OUT: writes the generated .cu and compiles\n"
                           "                  it with the runtime (--target=host: $CXX, default c++, with OpenMP\n"
                           "                  and OpenBLAS, linked by LLD when ld.lld is installed, else\n"
                           "                  the compiler's default; $TRLC_LD=NAME: -fuse-ld=NAME, =default:\n"
                           "                  the compiler's; --target=cuda: nvcc, or $TRLC_NVCC, with cuBLAS;\n"
                           "                  --target=cuda-emu: the CUDA kernels run on the host as the GPU\n"
                           "                  runs them, to check them without one);\n"
                           "                  OUT --help lists the program's own options; a build from the\n"
                           "                  same inputs as an earlier one copies that executable from the\n"
                           "                  build cache ($TRLC_CACHE_DIR, else ~/.cache/trlc; --no-cache);\n"
                           "                  after an edit, only the host compile units whose code\n"
                           "                  changed are compiled again (an edit of a constant: one or two)\n"
                           "Every mode reads isl's schedule from the same cache when the program's schedule\n"
                           "constraints were scheduled before (an edit of a constant or a layer's width keeps them).\n"
                           "With none of these, trlc only checks the program.\n"
                           "\n"
                           "Passes, in order (names for --print-after, --stop-after and --time-passes):\n"
                           "%PASSES%"
                           "--print-after=PASS prints the program (the IR, close to .trl syntax; shared values as\n"
                           "%n = ... lines; --print-types adds every operation's type) or the pass's result on\n"
                           "stderr.  The IR verifier checks the IR after every pass that rewrites it (--no-verify).\n"
                           "\n"
                           "Exit codes: 0 success, 1 errors in the program or the command line, 2 internal\n"
                           "compiler error (a bug in trlc: please report it with the input).\n";

/** kDescription with the pass list (driver/pipeline.h) in place of %PASSES%. */
std::string description() {
    std::string passes;
    for (const trlc::Stage &st : trlc::pipeline_stages()) {
        std::string name = std::string("  ") + st.name;
        passes += name + std::string(name.size() < 18 ? 18 - name.size() : 1, ' ') + st.summary + "\n";
    }
    std::string d = kDescription;
    d.replace(d.find("%PASSES%"), 8, passes);
    return d;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{description(), "trlc"};
    app.set_version_flag("--version", std::string("trlc ") + TRLC_VERSION);
    trlc::DriverOptions opts;
    std::vector<std::string> defines;
    // `trlc --prebuild-runtime DIR` takes no program.
    bool prebuild = false;
    for (int k = 1; k < argc; ++k) prebuild = prebuild || std::string(argv[k]).rfind("--prebuild-runtime", 0) == 0;
    CLI::Option *file = app.add_option("file", opts.input, "the .trl program");
    if (!prebuild) file->required();
    app.add_option("--emit", opts.emit, "print a stage's output and stop")
        ->check(CLI::IsMember({"ast", "types", "pdg", "pdg-dot", "json", "schedule", "memplan", "cuda", "library"}));
    app.add_option("--interpret", opts.interpret,
                   "run the reference interpreter (pointwise, the default) or the scheduled one")
        ->expected(0, 1)
        ->default_str("pointwise")
        ->check(CLI::IsMember({"pointwise", "scheduled"}));
    bool no_vectorize = false;
    app.add_flag("--fno-vectorize", no_vectorize, "(spelled -fno-vectorize) keep every dim a loop: no batch axes");
    bool no_incrementalize = false;
    trlc::add_incrementalize_options(app, opts, &no_incrementalize);
    bool no_fuse = false;
    app.add_flag("--fno-fusion,--fno-fuse", no_fuse,
                 "(spelled -fno-fusion, or -fno-fuse) with --emit=cuda or -o: one kernel per "
                 "statement (the fusion pass off)");
    bool no_cse = false;
    app.add_flag("--fno-cse", no_cse,
                 "(spelled -fno-cse) keep equal subexpressions apart: each computed where written "
                 "(the cse pass off)");
    bool no_dead_points = false;
    app.add_flag("--fno-dead-points", no_dead_points,
                 "(spelled -fno-dead-points) compute every point of every tensor, also those no "
                 "emit or save needs (the dead-points pass off)");
    bool no_blas = false;
    app.add_flag("--fno-blas", no_blas,
                 "(spelled -fno-blas) with --emit=cuda or -o: every matmul a sequential k loop "
                 "(no trl_gemm: bit-exact with --interpret)");
    bool no_row_split = false;
    app.add_flag("--fno-row-split", no_row_split,
                 "(spelled -fno-row-split) with --emit=cuda or -o: a kernel at one batch point (a "
                 "minibatch update) always runs on one thread (else --threads N of the program shares "
                 "its [rows, ...] values by rows: the same output bits)");
    app.add_option("-D", defines, "override a bound or an integer const: -D NAME=VALUE (repeatable)")
        ->allow_extra_args(false);
    app.add_option("-I", opts.include_dirs, "add a directory to search for imports (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--import-root", opts.import_root,
                   "confine every import \"path\" to files inside DIR (absolute paths, '..' and "
                   "symbolic links leaving DIR are refused; std modules still load): for services "
                   "that compile other people's programs")
        ->check(CLI::ExistingDirectory);
    app.add_option("--seed", opts.seed, "seed of all random streams (default 0)");
    app.add_option("--log", opts.log_path, "write emit records to FILE instead of stdout");
    app.add_option("--input", opts.inputs,
                   "with --interpret: the value of `input NAME` from an .npy file, NAME=FILE.npy (repeatable)")
        ->allow_extra_args(false);
    app.add_option("-o", opts.output, "build the executable OUT from the generated .cu (host compiler or nvcc)");
    bool no_cache = false;
    app.add_flag("--no-cache", no_cache,
                 "with -o: build even if the build cache holds an executable built from the same "
                 "inputs, and do not store this one; in every mode: compute isl's schedule instead "
                 "of reading it from the schedule cache ($TRLC_CACHE_DIR, else ~/.cache/trlc; "
                 "TRLC_CACHE_DIR=off turns both off)");
    app.add_option("--depfile", opts.depfile,
                   "with -o: after the build, write FILE as a Makefile rule 'OUT: every .trl file "
                   "read' (imports and std modules), for CMake's DEPFILE and Ninja");
    app.add_option("--target", opts.target,
                   "host (C++ compiler, OpenMP, OpenBLAS) or cuda (nvcc, cuBLAS); default: cuda "
                   "when nvidia-smi -L lists a GPU, else host.  cuda-emu: the CUDA program's kernels "
                   "built by the host compiler and run as the device runs them (every thread of a "
                   "launch's grid an independent task, in shuffled order, over --threads threads; "
                   "frames in place of large locals), to check the CUDA build without a GPU, e.g. "
                   "with --sanitize=thread")
        ->check(CLI::IsMember({"host", "cuda", "cuda-emu"}));
    app.add_option("--cuda-arch", opts.cuda_archs,
                   "GPU architectures for nvcc, comma-separated, e.g. sm_80,sm_90 (default: those of the GPUs "
                   "nvidia-smi lists, else sm_80,sm_90); the highest is also embedded as PTX for newer GPUs")
        ->delimiter(',');
    app.add_option("-O", opts.opt_level,
                   "optimization level of the toolchain, -O0 .. -O3 "
                   "(default: -O2 for nvcc; for the host, the kernels doing at least 95 % of the estimated "
                   "work at -O3 and the rest of the program at -O1 with -O3's loop vectorizer, in compile units "
                   "run side by side and kept in the build cache, so that an edit recompiles the units it changed: "
                   "codegen/compile_parts.h; -O3 compiles everything at -O3, one compile).  Host -O2 "
                   "vectorizes loops as -O3 does and compiles in about half the time, for programs "
                   "about 7 % slower (PPO CartPole); -O1 and -O0 leave the kernels' loops scalar")
        ->check(CLI::Range(0, 3));
    app.add_option("--march", opts.march,
                   "host builds: the instruction set, passed as -march=ARCH to the C++ compiler "
                   "(default native: the CPU trlc runs on; e.g. x86-64-v3 for AVX2 machines "
                   "elsewhere, x86-64 for any x86-64; none: no -march flag)");
    app.add_option("--sanitize", opts.sanitize,
                   "host builds: build the program with sanitizers, a comma-separated list of "
                   "address, undefined, leak and thread (passed as -fsanitize=LIST "
                   "-fno-omit-frame-pointer -g); implies --target=host unless --target=cuda-emu, "
                   "an error with --target=cuda");
    app.add_option("--runtime-bound", opts.runtime_bound,
                   "with --emit=cuda or -o: which bounds the program's --bound NAME=V may change. "
                   "Default: every bound of a dim is checked, whatever the program's size (about "
                   "one more memory plan each); NAMES (comma-separated): check only these, an error "
                   "when one sizes a buffer, has its value compiled into a kernel (a shape, a "
                   "slice, float arithmetic on literals only such as 1.0 / I; i / I reads it at run "
                   "time), is in a guard or an index, or changes the schedule; none: every bound "
                   "fixed");
    app.add_option("--distributed", opts.distributed,
                   "build a data-parallel program (with -o; mpi: through MPI, which trlc finds when it "
                   "is configured): launch it as N ranks with `mpirun -np N ./prog`; every rank steps "
                   "its own environments (random streams keyed by the rank), the gradients of every "
                   "grad(...) are averaged over the ranks, so the parameters stay identical, and rank 0 "
                   "writes the log and the saved files.  nccl (--target=cuda): the gradients' mean by "
                   "NCCL in GPU memory (one GPU per rank: the node-local rank's), the rest through "
                   "MPI.  See dsl/README.md section 7.12")
        ->check(CLI::IsMember({"mpi", "nccl"}));
    app.add_option("--ranks", opts.ranks,
                   "with --interpret (or --interpret=scheduled): run the program as N data-parallel "
                   "ranks in one process, as a --distributed build runs under mpirun -np N (the same "
                   "records and parameters)")
        ->check(CLI::Range(1, 1 << 20))
        ->type_name("N");
    app.add_option("--mem-budget", opts.mem_budget,
                   "plan the arena (the device memory of the program's tensors) in at most BYTES "
                   "(1048576, 1M, 1MiB, 512KB; K and KB are 1024): buffers that a run of statements "
                   "does not touch are copied to a host arena for that run and back; --emit=memplan "
                   "shows them; an error when no plan fits.  Bounds become fixed (--bound)")
        ->transform(CLI::AsSizeValue(false).description(""))
        ->check(CLI::Validator(
            [](const std::string &v) {
                return v.find_first_not_of("0123456789") == std::string::npos &&
                               v.find_first_not_of('0') != std::string::npos
                           ? std::string()
                           : "a budget is a positive number of bytes (1048576, 1M, 512KB), not " + v;
            },
            ""))
        ->type_name("BYTES");
    app.add_flag("--keep-source", opts.keep_source, "with -o OUT: keep the generated OUT.cu");
    app.add_flag("--standalone", opts.standalone,
                 "with --emit=cuda or -o: inline the runtime (headers and sources) and extern "
                 "headers, so the one .cu builds alone (c++ -fopenmp ... -lopenblas, or nvcc "
                 "... -lcublas)");
    app.add_flag("--no-color", opts.no_color, "never colour diagnostics");
    app.add_flag("--time-passes", opts.time_passes, "print each pass's CPU and wall time on stderr at the end");
    std::string prebuild_dir;
    app.add_option("--prebuild-runtime", prebuild_dir,
                   "instead of compiling a program: compile the runtime's sources for the default "
                   "host build (-O3, --march=native, $CXX or c++) into DIR, where every such build "
                   "links them (the build does this into BUILD/runtime-objects, and cmake --install "
                   "into PREFIX/share/trlc/runtime-objects), and, with GCC, the runtime's headers precompiled for "
                   "each compile part (runtime/trl_prelude.h).  Other flags compile their own set once into the build "
                   "cache")
        ->type_name("DIR")
        ->excludes(file);
    bool no_verify = false;
    trlc::add_pipeline_options(app, opts, &no_verify);
    // Hidden (empty group): shared with trl-opt, for tests of a hand-written schedule.
    app.add_option("--load-schedule", opts.load_schedule,
                   "use the isl schedule tree (YAML) in FILE instead of the scheduler")
        ->group("");

    int exit_code = 0;
    if (!trlc::parse_command_line(app, argc, argv, &exit_code)) return exit_code;
    if (app.count("--prebuild-runtime")) {
        trlc::SourceManager sm;
        trlc::Diagnostics diag(sm, std::cerr);
        if (prebuild_dir.empty()) {
            diag.error("--prebuild-runtime needs a directory");
            return 1;
        }
        return trlc::prebuild_runtime(prebuild_dir, diag);
    }
    opts.color = !opts.no_color && isatty(STDERR_FILENO) && getenv("NO_COLOR") == nullptr;
    opts.raw_defines = defines;
    opts.argv.assign(argv + 1, argv + argc);
    opts.cache = !no_cache;
    opts.vectorize = !no_vectorize;
    opts.incrementalize = !no_incrementalize;
    opts.verify_each = !no_verify;
    opts.fuse = !no_fuse;
    opts.blas = !no_blas;
    opts.row_split = !no_row_split;
    opts.dead_points = !no_dead_points;
    opts.cse = !no_cse;
    if (app.count("--interpret") && opts.interpret.empty()) opts.interpret = "pointwise";
    if (opts.ranks > 0 && !app.count("--interpret")) {
        trlc::SourceManager sm;
        trlc::Diagnostics diag(sm, std::cerr);
        diag.error("--ranks needs --interpret (it runs N ranks in the interpreter; a program built with "
                   "--distributed=mpi runs as N ranks under mpirun -np N)");
        return 1;
    }
    return trlc::run_driver(opts);
}
