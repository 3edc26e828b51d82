// build_program — run the host C++ compiler or nvcc on a generated program; see
// build_program.h.  The commands are those of issue 4:
//   host: $CXX -std=c++17 -O3 -march=native -fopenmp -ffp-contract=off -x c++ prog.cu -x none
//         <runtime sources> -I<runtime> -lopenblas -o prog
//         (with libxsmm found at configure time: -DTRL_USE_LIBXSMM ... libxsmm.a -lopenblas
//         -lpthread -ldl; the standalone source, with the runtime inside, stays OpenBLAS only)
//         A source in two compile parts (codegen/compile_parts.h; the default level, not a
//         library, --standalone or --sanitize build): the same flags with -DTRL_PART=1 -O3 and
//         -DTRL_PART=0 -O1 (-O3's loop vectorizer, as -O2 below; Clang -O2), one command per
//         compile unit u, `-DTRL_PART=P -DTRL_UNIT=u -c -x c++ prog.cu -o unitU.o`, and
//         `c++ -c -x c++ program_hash.cpp` (TRLG_PROGRAM_HASH), all at once; a unit whose
//         object the build cache holds is not compiled (driver/unit_cache.h); then the command
//         above links the objects instead of compiling prog.cu.
//   cuda: $TRLC_NVCC -std=c++17 -O2 -fmad=false -gencode arch=compute_NN,code=sm_NN ...
//         -gencode arch=compute_MM,code=compute_MM prog.cu <runtime sources> -I<runtime>
//         -lcublas -o prog
// The CUDA architectures: --cuda-arch, else the compute capabilities of the GPUs that
// `nvidia-smi --query-gpu=compute_cap` lists, else sm_80 and sm_90 (A100, H100); the highest
// one is also embedded as PTX, which the driver compiles for any newer GPU at load time (CUDA C
// Programming Guide, "Binary Compatibility" and "PTX Compatibility").  Without the PTX an sm_80
// binary cannot run on an H100 ("no kernel image is available").
// -ffp-contract=off (host) and -fmad=false (nvcc) keep a * b + c two roundings, as the
// interpreter computes it (with -march=native the CPU has FMA, and contraction would fuse them);
// no -ffast-math, so GCC never reorders a float sum when it vectorizes (a reduction loop stays
// scalar, an elementwise loop computes each element as the scalar code does): the ISA changes
// speed, never bits.  --march picks the ISA (native: the CPU trlc runs on, since trlc builds
// where the program runs; x86-64-v3 to deploy on other AVX2 machines; none: the compiler's
// default).  --sanitize=LIST (host only) adds -fsanitize=LIST -fno-omit-frame-pointer -g, for
// finding memory errors, undefined behaviour and leaks in the runtime and the generated code.
// -fno-strict-aliasing: kernels read and write the arena through typed pointers, and
// the memory plan lets a buffer of one dtype reuse the bytes of another's (donation), so a
// float load and a later int32 store of the same bytes must stay in order.  -fno-math-errno: a
// generated program never reads errno, and with errno sqrtf(x) is a compare and a branch to
// libm's sqrtf around each vsqrtss, which keeps every loop with a square root scalar (Adam's
// update: 16 % of PPO CartPole's training); IEEE sqrt is correctly rounded either way, so no
// bit changes.  No -fno-builtin-*: generated code calls no libm transcendental (runtime/trl_math*.h
// computes them, for the interpreter too), so there is no libm call for GCC to fold or rewrite.
// -fno-tree-slp-vectorize: GCC 12.2's basic-block (SLP) vectorizer drops the rounding of
// f64 -> f32 -> f64 when it vectorizes the two short conversion loops that f64(f32(x)) of a
// [3] vector becomes (a 10-line C++ reproducer: b[i] = (double)(float)in[i] returns in[i] at
// -O2, the rounded value at -O1 or with this flag); found by tools/fuzz/diff_fuzz.py (seed
// 701163007, test/lit/codegen/f32-round-trip-host.trl).  Loop vectorization stays on: PPO
// CartPole trains in the same time without SLP (1.30 s CPU either way).
// -O2 (host) adds -ftree-loop-vectorize -fvect-cost-model=dynamic: GCC 12's -O2 vectorizes
// only loops its "very cheap" cost model accepts (no epilogue, no versioning), which leaves most
// of a kernel's loops scalar: PPO CartPole trained in 8.4 s at plain -O2 against 2.55 s at -O3.
// With the -O3 cost model -O2 compiles the generated source in 3.1 s instead of 5.7 s and
// trains in 2.73 s (median of 5, one core, AMD EPYC, 2026-11-27): the choice for a quick edit
// loop; -O3 stays the default.
// --distributed=mpi (data-parallel programs, issue 21) adds the MPI process-group layer
// runtime/rt/trl_dist_mpi.cpp, compiled with the flags CMake's FindMPI found when trlc was
// configured (driver/mpi_config.h: -I of MPI_CXX_INCLUDE_DIRS, -D of
// MPI_CXX_COMPILE_DEFINITIONS, MPI_CXX_COMPILE_OPTIONS) into a runtime object of its own (the
// flags are part of its set's key), and links MPI_CXX_LINK_FLAGS and MPI_CXX_LIBRARIES after the
// other libraries; with Debian's Open MPI:
//   host: ... <runtime objects> runtime-KEY/trl_dist_mpi.cpp.o -I<runtime> -lopenblas
//         /usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi_cxx.so .../openmpi/lib/libmpi.so -o prog
//   cuda: ... -I<runtime> -L/usr/lib/x86_64-linux-gnu/openmpi/lib -lmpi_cxx -lmpi -lcublas -o prog
//         (nvcc: a library path becomes -L DIR -l NAME, -Wl,X -Xlinker X, other flags -Xcompiler)
// The generated source includes trl_rt.h only, so its compile gets no MPI flag, unless the layer
// is compiled in the same command: --standalone (the source holds it), or no build cache to keep
// its object in.  Without --distributed nothing changes.
// -mno-red-zone: GCC 12.2 at -O2 -march=native (AVX-512) put a kernel's float[12] local in the
// red zone at an address 8 mod 16 and copied it out with vmovdqa, an aligned load: SIGSEGV
// (tools/fuzz/diff_fuzz.py seed 715281050, test/lit/codegen/red-zone-host.test; -O1, -O3,
// -march=x86-64-v2 or -mno-red-zone run it).  Without the red zone a leaf kernel adjusts rsp.
#include "driver/build_program.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "codegen/compile_parts.h"
#include "driver/build_cache.h"
#include "driver/mpi_config.h"
#include "driver/runtime_objects.h"
#include "driver/unit_cache.h"
#include "externs/subprocess.h"
#include "support/install_dirs.h"

namespace trlc {

namespace {

std::string env_or(const char *name, const std::string &fallback) {
    const char *v = getenv(name);
    return v && *v ? std::string(v) : fallback;
}

bool is_executable(const std::string &p) { return access(p.c_str(), X_OK) == 0; }

/** DIR/NAME for the first directory DIR of $PATH that holds an executable NAME; "" if none. */
std::string find_on_path(const std::string &name) {
    const char *path = getenv("PATH");
    std::string p = path ? path : "";
    size_t start = 0;
    while (start <= p.size()) {
        size_t end = p.find(':', start);
        if (end == std::string::npos) end = p.size();
        std::string dir = p.substr(start, end - start);
        if (!dir.empty() && is_executable(dir + "/" + name)) return dir + "/" + name;
        start = end + 1;
    }
    return "";
}

/** nvcc: $TRLC_NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc. */
std::string find_nvcc() {
    if (const char *v = getenv("TRLC_NVCC"); v && *v) return v;
    if (std::string p = find_on_path("nvcc"); !p.empty()) return p;
    if (is_executable("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
    return "nvcc";
}

/** The host link's linker flag: `-fuse-ld=NAME` for $TRLC_LD=NAME (`default`: none), else
 *  `-fuse-ld=lld` when ld.lld is on PATH and "cxx" is GCC or Clang (both accept it), else none
 *  (the compiler's default, GNU ld).  LLD links PPO CartPole's seven objects with the runtime,
 *  libxsmm and OpenBLAS in 0.03-0.04 s instead of GNU ld's 0.10-0.12 s (one core, 2026-11-29). */
std::string host_linker_flag(const std::string &cxx) {
    if (const char *v = getenv("TRLC_LD"); v && *v)
        return std::string(v) == "default" ? "" : "-fuse-ld=" + std::string(v);
    static const bool lld = !find_on_path("ld.lld").empty();
    if (!lld || !(compiler_is_gcc(cxx) || compiler_is_clang(cxx))) return "";
    return "-fuse-ld=lld";
}

std::string base_name(const std::string &p) {
    size_t s = p.rfind('/');
    return s == std::string::npos ? p : p.substr(s + 1);
}

/** Remove the temporary directory (its files are ours: prog.cu and the tool log). */
void remove_dir(const std::string &dir, const std::vector<std::string> &files) {
    for (const std::string &f : files) std::remove(f.c_str());
    rmdir(dir.c_str());
}

/** "9.0" -> "sm_90"; "" when "cap" is not MAJOR.MINOR. */
std::string sm_of_compute_cap(const std::string &cap) {
    size_t dot = cap.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 >= cap.size()) return "";
    std::string digits = cap.substr(0, dot) + cap.substr(dot + 1);
    for (char c : digits)
        if (!isdigit(static_cast<unsigned char>(c))) return "";
    return "sm_" + digits;
}

/** The host compiler and its code-generation flags (file comment): the -O level, the ISA of
 *  --march (default native), OpenMP, and the flags that keep the interpreter's arithmetic. */
std::vector<std::string> host_flags(const BuildOptions &opts, const std::string &olevel) {
    std::vector<std::string> f = {env_or("CXX", "c++"), "-std=c++17", olevel};
    // The loop vectorizer as at -O3 (file comment), in GCC's flags: Clang's -O2 vectorizes loops
    // already, and Clang 14 refuses both flags.
    if (olevel == "-O2" && !compiler_is_clang(f[0]))
        for (const char *a : {"-ftree-loop-vectorize", "-fvect-cost-model=dynamic"}) f.push_back(a);
    if (!opts.march.empty() && opts.march != "none") f.push_back("-march=" + opts.march);
    for (const char *a : {"-fopenmp", "-ffp-contract=off", "-fno-strict-aliasing", "-fno-math-errno",
                          "-fno-tree-slp-vectorize", "-mno-red-zone"})
        f.push_back(a);
    if (!opts.sanitize.empty())  // compile and link: the one command does both
        for (const std::string &a :
             {"-fsanitize=" + opts.sanitize, std::string("-fno-omit-frame-pointer"), std::string("-g")})
            f.push_back(a);
    return f;
}

/** The host build's compile command without inputs and outputs (host_flags, then -fPIC for a
 *  shared library, -DTRL_USE_LIBXSMM where libxsmm was found at configure time and the runtime
 *  is linked), and in "libs" the libraries to link after the inputs. */
std::vector<std::string> host_command(const BuildOptions &opts, const std::string &olevel,
                                      std::vector<std::string> *libs) {
    std::vector<std::string> argv = host_flags(opts, olevel);
    if (opts.shared_library)
        for (const char *a : {"-fPIC", "-fvisibility=hidden"}) argv.push_back(a);
    *libs = {"-lopenblas"};
#if defined(TRLC_LIBXSMM_LIBRARY)
    if (!opts.standalone && !opts.shared_library) {
        // Small f32 products through libxsmm (runtime/rt/trl_rt_host.cpp); its BLAS fallback
        // (sgemm_) comes from OpenBLAS, which follows it.
        argv.push_back("-DTRL_USE_LIBXSMM");
        if (std::string(TRLC_LIBXSMM_INCLUDE_DIR) != "/usr/include") argv.push_back("-I" TRLC_LIBXSMM_INCLUDE_DIR);
        *libs = {TRLC_LIBXSMM_LIBRARY, "-lopenblas", "-lpthread", "-ldl"};
    }
#endif
    return argv;
}

/** The compile command of compile part "p" (codegen/compile_parts.h) without inputs, outputs
 *  and -DTRL_PART: host_command at -O3 (part 1), or for part 0 -O1 with -O3's loop vectorizer
 *  (GCC; Clang: -O2, which vectorizes loops), the runtime's outlined functions declared only.
 *  Its prelude is precompiled with exactly these flags.  Part 0 at -O1: PPO CartPole's part 0
 *  compiles in 1.24 s instead of 1.72 s (user + system, precompiled prelude, one core, least
 *  of 3, 2026-11-29) and trains as fast, the same log bytes (compile_parts.h): its metrics
 *  kernels' loops stay vectorized, and run_program only launches. */
std::vector<std::string> part_command(const BuildOptions &opts, int p) {
    std::vector<std::string> unused;
    const bool clang = compiler_is_clang(env_or("CXX", "c++"));
    std::vector<std::string> c = host_command(opts, p == 1 ? "-O3" : clang ? "-O2" : "-O1", &unused);
    if (p == 0 && !clang)  // the loop vectorizer as at -O3 (host_flags)
        c.insert(c.begin() + 3, {"-ftree-loop-vectorize", "-fvect-cost-model=dynamic"});
    c.push_back("-DTRL_RT_OUTLINED");
    return c;
}

/** The process-group layers' sources under runtime directory "rt": runtime/rt/trl_dist_mpi.cpp,
 *  and for --distributed=nccl runtime/rt/trl_dist_nccl.cpp too (it calls the MPI layer). */
std::vector<std::string> dist_layer_sources(const std::string &rt, const std::string &layer) {
    std::vector<std::string> s = {rt + "/rt/trl_dist_mpi.cpp"};
    if (layer == "nccl") s.push_back(rt + "/rt/trl_dist_nccl.cpp");
    return s;
}

/** Where nccl.h is for the nvcc "nvcc" (its toolkit's include directories, then the system's,
 *  which nvcc and the host compiler search without -I), or "" when none has it; "looked" gets
 *  the directories tried, for the message. */
std::string find_nccl_header(const std::string &nvcc, std::string *looked) {
    std::vector<std::string> dirs;
    size_t slash = nvcc.rfind('/');
    if (slash != std::string::npos) {  // TOOLKIT/bin/nvcc
        std::string toolkit = nvcc.substr(0, slash) + "/..";
        dirs = {toolkit + "/include", toolkit + "/targets/x86_64-linux/include",
                toolkit + "/targets/sbsa-linux/include"};
    }
    for (const char *d : {"/usr/local/cuda/include", "/usr/include", "/usr/local/include"}) dirs.push_back(d);
    for (const std::string &d : dirs) {
        if (looked) *looked += (looked->empty() ? "" : ", ") + d;
        if (access((d + "/nccl.h").c_str(), R_OK) == 0) return d;
    }
    return "";
}

/** The flags that compile the MPI layer (driver/mpi_config.h): -I, -D, then the compile options,
 *  which nvcc hands to the host compiler (-Xcompiler). */
std::vector<std::string> mpi_compile_flags(bool nvcc) {
    std::vector<std::string> f;
    for (const std::string &d : kMpiIncludeDirs) f.push_back("-I" + d);
    for (const std::string &d : kMpiCompileDefinitions) f.push_back("-D" + d);
    for (const std::string &o : kMpiCompileOptions) {
        if (nvcc) f.push_back("-Xcompiler");
        f.push_back(o);
    }
    return f;
}

/** What links MPI: the link flags, then the libraries.  For nvcc a library file DIR/libNAME.so
 *  becomes -LDIR -lNAME (nvcc takes no .so as input), -Wl,X becomes -Xlinker X and any other
 *  flag goes to the host compiler (-Xcompiler); .a files, -l and -L stay as they are. */
std::vector<std::string> mpi_link_flags(bool nvcc) {
    std::vector<std::string> f;
    auto add = [&](const std::string &a) {
        if (!nvcc) {
            f.push_back(a);
            return;
        }
        std::string name = base_name(a);
        size_t so = name.find(".so");
        if (a.size() > 1 && a[0] == '/' && name.rfind("lib", 0) == 0 && so != std::string::npos && so > 3 &&
            (so + 3 == name.size() || name[so + 3] == '.')) {
            std::string dir = a.substr(0, a.size() - name.size() - 1);
            std::string lflag = "-L" + (dir.empty() ? "/" : dir);
            if (std::find(f.begin(), f.end(), lflag) == f.end()) f.push_back(lflag);
            f.push_back("-l" + name.substr(3, so - 3));
        } else if (a.rfind("-Wl,", 0) == 0) {
            f.push_back("-Xlinker");
            f.push_back(a.substr(4));
        } else if (a.rfind("-l", 0) == 0 || a.rfind("-L", 0) == 0 || a[0] != '-') {
            f.push_back(a);
        } else {
            f.push_back("-Xcompiler");
            f.push_back(a);
        }
    };
    for (const std::string &a : kMpiLinkFlags) add(a);
    for (const std::string &a : kMpiLibraries) add(a);
    return f;
}

/** The runtime inputs "rt_inputs" of a --distributed build get its layers
 *  (dist_layer_sources): their objects, compiled by "compile" with the MPI flags into a set of
 *  their own (runtime_objects.h), or their sources when there is no build cache to keep the
 *  objects; true in that case (the program's command compiles them and needs the MPI flags). */
bool add_dist_layers(const std::vector<std::string> &compile, bool nvcc, const BuildOptions &opts,
                     const std::string &rt, const std::string &tmpdir, std::vector<std::string> *rt_inputs) {
    std::vector<std::string> mpi_compile = compile;
    for (const std::string &a : mpi_compile_flags(nvcc)) mpi_compile.push_back(a);
    std::vector<std::string> src = dist_layer_sources(rt, opts.distributed);
    std::vector<std::string> obj = runtime_objects(mpi_compile, src, rt, opts.cache_dir, tmpdir);
    rt_inputs->insert(rt_inputs->end(), obj.begin(), obj.end());
    return obj == src;
}

/** `nvidia-smi ARGS`, its output captured in a temporary directory (removed again); a run that
 *  could not start (no nvidia-smi, no temporary directory) has started == false. */
ToolRun run_nvidia_smi(const std::vector<std::string> &args) {
    char tmpl[] = "/tmp/trlc-detect-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir) return ToolRun{};
    std::vector<std::string> argv = {"nvidia-smi"};
    argv.insert(argv.end(), args.begin(), args.end());
    ToolRun r = run_tool(argv, std::string(dir) + "/tool-output.txt");
    rmdir(dir);
    return r;
}

}  // namespace

std::vector<std::string> default_cuda_archs(std::string *why) {
    std::vector<std::string> archs;
    ToolRun r = run_nvidia_smi({"--query-gpu=compute_cap", "--format=csv,noheader"});
    if (r.started && r.exit_status == 0) {
        std::istringstream lines(r.output);
        std::string line;
        while (std::getline(lines, line)) {
            while (!line.empty() && isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
            std::string sm = sm_of_compute_cap(line);
            if (!sm.empty() && std::find(archs.begin(), archs.end(), sm) == archs.end()) archs.push_back(sm);
        }
    }
    if (!archs.empty()) {
        if (why) *why = "the compute capability nvidia-smi reports";
        return archs;
    }
    if (why) *why = "no GPU's compute capability could be read; the default list";
    return {"sm_80", "sm_90"};
}

std::string detect_target() {
    std::string target = "host";
    ToolRun r = run_nvidia_smi({"-L"});
    if (r.started && r.exit_status == 0 && r.output.find("GPU ") != std::string::npos) target = "cuda";
    std::string why = !r.started         ? "nvidia-smi is not installed"
                      : target == "cuda" ? "nvidia-smi -L lists a GPU"
                                         : "nvidia-smi -L lists no GPU";
    std::cerr << "trlc: building for " << target << " (" << why << "; choose with --target=host|cuda)\n";
    return target;
}

bool check_build_options(const BuildOptions &opts, Diagnostics &diag) {
    bool ok = true;
    if (!opts.target.empty() && opts.target != "host" && opts.target != "cuda" && opts.target != "cuda-emu") {
        diag.error("unknown --target '" + opts.target + "': expected host, cuda or cuda-emu");
        ok = false;
    }
    for (const std::string &a : opts.cuda_archs) {
        bool good = a.size() > 3 && a.compare(0, 3, "sm_") == 0;
        for (size_t i = 3; good && i < a.size(); ++i)
            good = isdigit(static_cast<unsigned char>(a[i])) || (i + 1 == a.size() && a[i] == 'a');
        if (!good) {
            diag.error("invalid --cuda-arch '" + a + "': expected sm_NN, e.g. sm_80,sm_90");
            ok = false;
        }
    }
    bool march_ok = !opts.march.empty();
    for (char c : opts.march)
        march_ok = march_ok && (isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
    if (!march_ok) {
        diag.error("invalid --march '" + opts.march + "': expected an ISA name such as native, x86-64-v3 or none");
        ok = false;
    }
    if (!opts.sanitize.empty()) {
        size_t start = 0;
        bool thread = false, memory = false, valid = true;
        while (start <= opts.sanitize.size()) {
            size_t end = opts.sanitize.find(',', start);
            if (end == std::string::npos) end = opts.sanitize.size();
            std::string s = opts.sanitize.substr(start, end - start);
            if (s != "address" && s != "undefined" && s != "leak" && s != "thread") {
                diag.error("invalid --sanitize '" + opts.sanitize +
                           "': expected a comma-separated list of address, undefined, leak and thread");
                ok = valid = false;
                break;
            }
            thread = thread || s == "thread";
            memory = memory || s == "address" || s == "leak";
            start = end + 1;
        }
        if (valid && thread && memory) {  // GCC and Clang refuse -fsanitize=thread,address
            diag.error("invalid --sanitize '" + opts.sanitize +
                       "': thread cannot be combined with address or leak (build twice)");
            ok = false;
        }
        if (opts.target == "cuda") {
            diag.error("--sanitize is for host builds only (--target=host or cuda-emu), not --target=cuda");
            ok = false;
        }
    }
    if (opts.target == "cuda-emu" && opts.standalone) {
        diag.error("--target=cuda-emu links the runtime library; it cannot be --standalone");
        ok = false;
    }
    const std::string dist = "--distributed=" + opts.distributed;
    if (!opts.distributed.empty() && opts.distributed != "mpi" && opts.distributed != "nccl") {
        diag.error("unknown " + dist + ": expected mpi or nccl");
        ok = false;
    } else if (!opts.distributed.empty() && !kMpiFound) {
        diag.error(dist + " needs an MPI library (" + (opts.distributed == "nccl" ? "it starts the ranks; " : "") +
                   "and this trlc was configured without one): install Open MPI (apt-get install "
                   "libopenmpi-dev openmpi-bin, or tools/setup.sh) and configure trlc again");
        ok = false;
    } else if (!opts.distributed.empty() && opts.shared_library) {
        diag.error(dist + " builds a program (-o OUT), not --emit=library: a library's caller "
                          "would have to start the ranks");
        ok = false;
    } else if (opts.distributed == "nccl" && (opts.target == "host" || opts.target == "cuda-emu")) {
        diag.error("--distributed=nccl averages the gradients in GPU memory: it needs --target=cuda (a build for " +
                   opts.target + " averages through MPI: --distributed=mpi)");
        ok = false;
    }
    if (opts.output.empty()) {
        diag.error("-o needs an output file name");
        ok = false;
    }
    return ok;
}

int build_program(const std::string &source, const BuildOptions &opts, Diagnostics &diag) {
    // --sanitize builds for the host (check_build_options rejects it with --target=cuda).
    std::string target = !opts.target.empty() ? opts.target : !opts.sanitize.empty() ? "host" : detect_target();
    std::string rt = runtime_dir();
    const std::string tmpdir = make_temp_dir("trlc");
    if (tmpdir.empty()) {
        diag.error("cannot create a temporary directory in " + env_or("TMPDIR", "/tmp") + ": " + strerror(errno));
        return 1;
    }
    std::string cu = !opts.source_path.empty() ? opts.source_path
                     : opts.keep_source        ? opts.output + ".cu"
                                               : tmpdir + "/" + base_name(opts.output) + ".cu";
    std::vector<std::string> temp_files;
    if (!opts.keep_source && opts.source_path.empty()) temp_files.push_back(cu);
    {
        std::ofstream f(cu, std::ios::binary);
        // --target=cuda-emu: the kernels as the device runs them (runtime/trl_rt.h,
        // TRL_CUDA_EMU), defined in the generated source only: the runtime is the host build's
        // (its emulated grid is always compiled in), whether from the cache or this command.
        if (target == "cuda-emu") f << "#define TRL_CUDA_EMU 1  // trlc --target=cuda-emu\n";
        f << source;
        f.close();
        if (!f) {
            diag.error("cannot write the generated source '" + cu + "'");
            remove_dir(tmpdir, temp_files);
            return 1;
        }
    }
    const bool on_host = target == "host" || target == "cuda-emu";
    std::string nccl_looked;
    if (opts.distributed == "nccl" && on_host) {  // the target detected: no GPU listed
        diag.error("--distributed=nccl averages the gradients in GPU memory: it needs --target=cuda, and this "
                   "build is for " +
                   target + " (a host build averages through MPI: --distributed=mpi)");
        remove_dir(tmpdir, temp_files);
        return 1;
    }
    if (opts.distributed == "nccl" && find_nccl_header(find_nvcc(), &nccl_looked).empty()) {
        diag.error("--distributed=nccl needs NCCL, and nccl.h is in none of " + nccl_looked +
                   ": install NCCL (NVIDIA's libnccl-dev, or the CUDA toolkit's nccl component) or use "
                   "--distributed=mpi");
        remove_dir(tmpdir, temp_files);
        return 1;
    }
    std::string olevel = "-O" + std::to_string(opts.opt_level >= 0 ? opts.opt_level : on_host ? 3 : 2);
    std::vector<std::string> argv;
    std::vector<std::vector<std::string>> parts;                  // compile units, run at once before argv
    std::vector<std::string> part_logs;                           // their outputs
    std::vector<std::pair<std::string, std::string>> part_cache;  // each one's object, cache path
    std::string tool_name;
    if (on_host) {
        tool_name = "the host C++ compiler";
        std::vector<std::string> libs;
        argv = host_command(opts, olevel, &libs);
        std::vector<std::string> rt_inputs;
        const bool mpi = !opts.distributed.empty();
        // This command compiles the MPI layer: the standalone source holds it, or no object of it.
        bool mpi_in_command = mpi && opts.standalone;
        if (!opts.standalone) {  // else the runtime is inside the source
            rt_inputs = runtime_objects(argv, host_runtime_sources(rt), rt, opts.cache_dir, tmpdir);
            if (mpi) mpi_in_command = add_dist_layers(argv, false, opts, rt, tmpdir, &rt_inputs);
            // The program calls the runtime headers' largest functions in rt/trl_outlined.cpp
            // (TRL_OUTLINED, runtime/trl_dd.h) instead of compiling its own copies.
            argv.push_back("-DTRL_RT_OUTLINED");
        }
        for (const std::string &a : {std::string("-x"), std::string("c++"), cu, std::string("-x"), std::string("none")})
            argv.push_back(a);
        argv.insert(argv.end(), rt_inputs.begin(), rt_inputs.end());
        argv.push_back("-I" + rt);
        if (mpi_in_command)
            for (const std::string &a : mpi_compile_flags(false)) argv.push_back(a);
        argv.insert(argv.end(), libs.begin(), libs.end());
        if (mpi)
            for (const std::string &a : mpi_link_flags(false)) argv.push_back(a);
        if (opts.shared_library)
            for (const std::string &a : {std::string("-shared"), "-Wl,-soname," + base_name(opts.output)})
                argv.push_back(a);
        if (std::string ld = host_linker_flag(argv.at(0)); !ld.empty()) argv.push_back(ld);
        argv.push_back("-o");
        argv.push_back(opts.output);
        // A source in two compile parts (codegen/compile_parts.h; codegen splits only `-o` at the
        // default level, no library, --standalone, --sanitize or extern): part 1 (the kernels
        // doing most of the work) at -O3 and part 0 at -O1, each in compile units compiled side
        // by side, whose objects the build cache keeps (driver/unit_cache.h: an edit recompiles
        // the units whose kernels changed), then this command links them instead of compiling
        // the source.
        const std::vector<int> units = codegen::compile_units(source);
        if (target == "host" && !units.empty()) {
            std::vector<std::string> objs;
            for (int u = 0; u < static_cast<int>(units.size()); ++u) {
                const int p = units[u];
                std::vector<std::string> c = part_command(opts, p);
                // The runtime's headers precompiled for this part's flags (runtime_objects.h).
                const std::string pch = prelude_pch_dir(c, rt, opts.cache_dir, tmpdir);
                if (!pch.empty())
                    for (const std::string &a : {"-I" + pch, std::string("-include"), std::string("trl_prelude.h")})
                        c.push_back(a);
                for (const std::string &a :
                     {"-DTRL_PART=" + std::to_string(p), "-DTRL_UNIT=" + std::to_string(u), "-I" + rt})
                    c.push_back(a);
                const std::string cached = unit_object_path(opts.cache_dir, c, rt, codegen::unit_view(source, u));
                if (take_unit_object(cached)) {
                    objs.push_back(cached);
                    continue;
                }
                const std::string obj = tmpdir + "/unit" + std::to_string(u) + ".o";
                for (const std::string &a :
                     {std::string("-c"), std::string("-x"), std::string("c++"), cu, std::string("-o"), obj})
                    c.push_back(a);
                parts.push_back(c);
                part_logs.push_back(tmpdir + "/unit" + std::to_string(u) + "-output.txt");
                part_cache.push_back({obj, cached});
                temp_files.push_back(obj);
                objs.push_back(obj);
            }
            // kProgramInfo's hash (TRLG_PROGRAM_HASH, runtime/trl_gen.h): a one-line source of its
            // own, so that unit 0 does not change with every kernel.
            const std::string hash = codegen::program_hash_literal(source);
            if (!hash.empty()) {
                const std::string hsrc = tmpdir + "/program_hash.cpp", hobj = tmpdir + "/program_hash.o";
                std::ofstream(hsrc) << "extern \"C\" const unsigned long long trlg_program_hash = " << hash << ";\n";
                parts.push_back({argv.at(0), "-c", "-x", "c++", hsrc, "-o", hobj});
                part_logs.push_back(tmpdir + "/program_hash-output.txt");
                temp_files.push_back(hsrc);
                temp_files.push_back(hobj);
                objs.push_back(hobj);
            }
            auto x = std::find(argv.begin(), argv.end(), cu);  // "-x c++ CU -x none" -> the objects
            x = argv.erase(x - 2, x + 3);
            argv.insert(x, objs.begin(), objs.end());
        }
    } else {
        tool_name = "nvcc";
        argv = {find_nvcc(), "-std=c++17", olevel, "-fmad=false"};
        if (opts.shared_library)
            for (const char *a : {"-Xcompiler", "-fPIC,-fvisibility=hidden"}) argv.push_back(a);
        std::vector<std::string> archs = opts.cuda_archs;
        if (archs.empty()) {
            std::string why;
            archs = default_cuda_archs(&why);
            std::string list;
            for (const std::string &a : archs) list += (list.empty() ? "" : ",") + a;
            std::cerr << "trlc: CUDA architectures " << list << " (" << why
                      << "; choose with --cuda-arch), PTX of the highest embedded\n";
        }
        for (const std::string &a : archs) {
            std::string num = a.substr(3);
            argv.push_back("-gencode");
            argv.push_back("arch=compute_" + num + ",code=" + a);
        }
        // PTX of the highest architecture: the driver JIT-compiles it on newer GPUs.
        std::string top = *std::max_element(archs.begin(), archs.end(), [](const std::string &x, const std::string &y) {
            return std::stoi(x.substr(3)) < std::stoi(y.substr(3));
        });
        argv.push_back("-gencode");
        argv.push_back("arch=compute_" + top.substr(3) + ",code=compute_" + top.substr(3));
        const bool mpi = !opts.distributed.empty();
        // This command compiles the process-group layers: the standalone source holds them, or
        // no object of them.
        bool mpi_in_command = mpi && opts.standalone;
        if (!opts.standalone) {  // else the runtime is inside the source
            std::vector<std::string> rt_inputs =
                runtime_objects(argv, cuda_runtime_sources(rt), rt, opts.cache_dir, tmpdir);
            if (mpi) mpi_in_command = add_dist_layers(argv, true, opts, rt, tmpdir, &rt_inputs);
            argv.push_back(cu);
            argv.insert(argv.end(), rt_inputs.begin(), rt_inputs.end());
        } else {
            argv.push_back(cu);
        }
        if (opts.shared_library)
            for (const std::string &a :
                 {std::string("-shared"), std::string("-Xlinker"), "-soname=" + base_name(opts.output)})
                argv.push_back(a);
        argv.push_back("-I" + rt);
        if (mpi_in_command)
            for (const std::string &a : mpi_compile_flags(true)) argv.push_back(a);
        if (mpi)
            for (const std::string &a : mpi_link_flags(true)) argv.push_back(a);
        if (opts.distributed == "nccl") argv.push_back("-lnccl");  // the toolkit's, or the system's
        for (const std::string &s : {std::string("-lcublas"), std::string("-o"), opts.output}) argv.push_back(s);
    }
    ToolRun r;
    if (!parts.empty()) {
        std::vector<ToolRun> pr = run_tools(parts, part_logs);
        for (size_t p = 0; p < pr.size() && r.started == false; ++p)
            if (!pr[p].started || pr[p].exit_status != 0) {
                r = pr[p];
                argv = parts[p];
            }
        if (!r.started && r.spawn_errno == 0) {
            for (const auto &[obj, cached] : part_cache) store_unit_object(obj, cached);
            r = run_tool(argv, tmpdir + "/tool-output.txt");  // the link
        }
    } else {  // one compile, or every unit cached: the link alone
        r = run_tool(argv, tmpdir + "/tool-output.txt");
    }
    remove_dir(tmpdir, temp_files);
    if (!r.started) {
        diag.error(
            "cannot run " + tool_name + " '" + argv[0] + "': " + strerror(r.spawn_errno) +
            (on_host ? " (set CXX to the compiler to use)" : " (set TRLC_NVCC to nvcc's path, or use --target=host)"));
        std::cerr << "  command: " << command_text(argv) << "\n";
        return 1;
    }
    if (r.exit_status != 0) {
        diag.error(tool_name + " failed (exit status " + std::to_string(r.exit_status) + ") building '" + opts.output +
                   "'");
        std::cerr << "  command: " << command_text(argv) << "\n";
        if (!r.output.empty()) {
            std::cerr << "  its output:\n" << r.output;
            if (r.output.back() != '\n') std::cerr << "\n";
        } else {
            std::cerr << "  (it printed nothing)\n";
        }
        if (!opts.keep_source) std::cerr << "  (use --keep-source to keep the generated .cu)\n";
        return 1;
    }
    return 0;
}

int prebuild_runtime(const std::string &dir, Diagnostics &diag) {
    BuildOptions opts;  // the defaults of `trlc prog.trl -o prog` for the host
    std::vector<std::string> libs;
    std::vector<std::string> compile = host_command(opts, "-O3", &libs);
    std::string rt = runtime_dir();
    if (prebuild_runtime_objects(compile, host_runtime_sources(rt), rt, dir, diag) != 0) return 1;
    return prebuild_prelude_pchs({part_command(opts, 0), part_command(opts, 1)}, rt, dir, diag);
}

}  // namespace trlc
