#pragma once
// build_program — `trlc prog.trl -o prog`: write the generated .cu and run the toolchain (the
// host C++ compiler with OpenMP and OpenBLAS, or nvcc with cuBLAS) on it together with the
// runtime's sources (TRLC_RUNTIME_DIR, or the TRLC_RUNTIME_DIR environment variable).
#include <string>
#include <vector>

#include "support/diagnostics.h"

namespace trlc {

struct BuildOptions {
    std::string output;                   // -o OUT: the executable
    std::string target;                   // "host", "cuda", or "" (detect a GPU)
    std::vector<std::string> cuda_archs;  // --cuda-arch=sm_80,sm_90 (empty: default_cuda_archs())
    /** -O0 .. -O3, passed to the toolchain; -1: on the host -O3 (GCC 12's plain -O2 uses the
     *  'very cheap' vectorizer cost model, which leaves the kernels' loops over arena pointers
     *  that may alias scalar: PPO CartPole trained 2.2x slower), for a source in two compile
     *  parts (codegen/compile_parts.h) -O3 and -O1 with -O3's vectorizer; -O2 for nvcc. */
    int opt_level = -1;
    std::string march = "native";  // --march: host ISA (-march=ARCH); "" none
    bool keep_source = false;      // --keep-source: keep OUT.cu next to OUT
    /** --sanitize=LIST (host only): address, undefined, leak, comma-separated; the host build
     *  adds -fsanitize=LIST -fno-omit-frame-pointer -g.  "": none. */
    std::string sanitize;
    bool standalone = false;  // the source has the runtime inlined (--standalone)
    /** The build cache's directory (build_cache.h), "" for none: the runtime's sources are
     *  compiled once into objects there (per toolchain, flags and runtime text) and linked. */
    std::string cache_dir;
    /** --emit=library: "output" is the shared library DIR/libNAME.so, built from the source
     *  written to "source_path" (DIR/NAME.cu, kept) with -shared -fPIC, only the C API visible
     *  (-fvisibility=hidden: two libraries' runtimes never meet), products through OpenBLAS. */
    bool shared_library = false;
    std::string source_path;
    /** --distributed=mpi: also compile runtime/rt/trl_dist_mpi.cpp (the trl_dist_layer of
     *  runtime/trl_rt.h) with the MPI flags CMake's FindMPI found when trlc was configured,
     *  and link MPI; nccl (--target=cuda only): runtime/rt/trl_dist_nccl.cpp too, and -lnccl;
     *  "" none (the program depends on no MPI). */
    std::string distributed;
};

/** The CUDA architectures to build for when --cuda-arch is not given: the compute capabilities
 *  of the visible GPUs (`nvidia-smi --query-gpu=compute_cap`, e.g. "9.0" -> sm_90), else
 *  {sm_80, sm_90}; "why" gets which of the two, for the message. */
std::vector<std::string> default_cuda_archs(std::string *why);

/** "cuda" when `nvidia-smi -L` lists a GPU, else "host"; says which on stderr. */
std::string detect_target();

/** Check the options (target, architectures) before any work; false after an error. */
bool check_build_options(const BuildOptions &opts, Diagnostics &diag);

/** Write "source" to OUT.cu (--keep-source) or a temporary directory and compile it to
 *  opts.output.  Toolchain problems (compiler missing, non-zero exit) are reported to "diag"
 *  with the command line and the tool's stderr; returns the exit code (0, or 1). */
int build_program(const std::string &source, const BuildOptions &opts, Diagnostics &diag);

/** `trlc --prebuild-runtime DIR`: the runtime objects of the default host build (-O3,
 *  --march=native, the compiler $CXX or c++) compiled into DIR (runtime_objects.h), where
 *  every later host build with those flags links them.  CMake runs it into BUILD/runtime-objects
 *  when it builds trlc.  Returns 0, or 1 after an error in "diag". */
int prebuild_runtime(const std::string &dir, Diagnostics &diag);

}  // namespace trlc
