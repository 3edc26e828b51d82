// build_program — run the host C++ compiler or nvcc on a generated program; see
// build_program.h.  The commands are those of issue 4:
//   host: $CXX -std=c++17 -O2 -fopenmp -ffp-contract=off -x c++ prog.cu -x none <runtime
//         sources> -I<runtime> -lopenblas -o prog
//         (with libxsmm found at configure time: -DTRL_USE_LIBXSMM ... libxsmm.a -lopenblas
//         -lpthread -ldl; the standalone source, with the runtime inside, stays OpenBLAS only)
//   cuda: $TRLC_NVCC -std=c++17 -O2 -fmad=false -gencode arch=compute_80,code=sm_80 ...
//         prog.cu <runtime sources> -I<runtime> -lcublas -o prog
// -ffp-contract=off (host) and -fmad=false (nvcc) keep a * b + c two roundings, as the
// interpreter computes it; -fno-builtin-pow(f) keeps pow(x, 2.0) a call of libm's pow, as in
// the interpreter (g++ would fold it into x * x, which differs in the last bit for ~0.1% of x).
#include "driver/build_program.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "externs/subprocess.h"

namespace trlc {

namespace {

std::string env_or(const char *name, const std::string &fallback) {
    const char *v = getenv(name);
    return v && *v ? std::string(v) : fallback;
}

bool is_executable(const std::string &p) { return access(p.c_str(), X_OK) == 0; }

/** nvcc: $TRLC_NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc. */
std::string find_nvcc() {
    if (const char *v = getenv("TRLC_NVCC"); v && *v) return v;
    const char *path = getenv("PATH");
    std::string p = path ? path : "";
    size_t start = 0;
    while (start <= p.size()) {
        size_t end = p.find(':', start);
        if (end == std::string::npos) end = p.size();
        std::string dir = p.substr(start, end - start);
        if (!dir.empty() && is_executable(dir + "/nvcc")) return dir + "/nvcc";
        start = end + 1;
    }
    if (is_executable("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
    return "nvcc";
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

}  // namespace

std::string detect_target() {
    char tmpl[] = "/tmp/trlc-detect-XXXXXX";
    std::string target = "host", why;
    if (char *dir = mkdtemp(tmpl)) {
        ToolRun r = run_tool({"nvidia-smi", "-L"}, std::string(dir) + "/tool-output.txt");
        rmdir(dir);
        if (r.started && r.exit_status == 0 && r.output.find("GPU ") != std::string::npos)
            target = "cuda";
        why = !r.started ? "nvidia-smi is not installed"
              : target == "cuda" ? "nvidia-smi -L lists a GPU"
                                 : "nvidia-smi -L lists no GPU";
    }
    std::cerr << "trlc: building for " << target << " (" << why
              << "; choose with --target=host|cuda)\n";
    return target;
}

bool check_build_options(const BuildOptions &opts, Diagnostics &diag) {
    bool ok = true;
    if (!opts.target.empty() && opts.target != "host" && opts.target != "cuda") {
        diag.error("unknown --target '" + opts.target + "': expected host or cuda");
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
    if (opts.output.empty()) {
        diag.error("-o needs an output file name");
        ok = false;
    }
    return ok;
}

int build_program(const std::string &source, const BuildOptions &opts, Diagnostics &diag) {
    std::string target = opts.target.empty() ? detect_target() : opts.target;
    std::string rt = env_or("TRLC_RUNTIME_DIR", TRLC_RUNTIME_DIR);
    std::string tmpl_s = env_or("TMPDIR", "/tmp") + "/trlc-XXXXXX";
    std::vector<char> tmpl(tmpl_s.begin(), tmpl_s.end());
    tmpl.push_back('\0');
    if (!mkdtemp(tmpl.data())) {
        diag.error("cannot create a temporary directory in " + env_or("TMPDIR", "/tmp") + ": " +
                   strerror(errno));
        return 1;
    }
    std::string tmpdir = tmpl.data();
    std::string cu = opts.keep_source ? opts.output + ".cu"
                                      : tmpdir + "/" + base_name(opts.output) + ".cu";
    std::vector<std::string> temp_files;
    if (!opts.keep_source) temp_files.push_back(cu);
    {
        std::ofstream f(cu, std::ios::binary);
        f << source;
        f.close();
        if (!f) {
            diag.error("cannot write the generated source '" + cu + "'");
            remove_dir(tmpdir, temp_files);
            return 1;
        }
    }
    std::string olevel = "-O" + std::to_string(opts.opt_level);
    std::vector<std::string> argv;
    std::string tool_name;
    if (target == "host") {
        tool_name = "the host C++ compiler";
        argv = {env_or("CXX", "c++"), "-std=c++17", olevel, "-fopenmp", "-ffp-contract=off",
                "-fno-builtin-pow", "-fno-builtin-powf"};
        std::vector<std::string> libs = {"-lopenblas"};
#if defined(TRLC_LIBXSMM_LIBRARY)
        // Small f32 products through libxsmm (runtime/rt/trl_rt_host.cpp); its BLAS fallback
        // (sgemm_) comes from OpenBLAS, which follows it.
        argv.push_back("-DTRL_USE_LIBXSMM");
        if (std::string(TRLC_LIBXSMM_INCLUDE_DIR) != "/usr/include")
            argv.push_back("-I" TRLC_LIBXSMM_INCLUDE_DIR);
        libs = {TRLC_LIBXSMM_LIBRARY, "-lopenblas", "-lpthread", "-ldl"};
#endif
        for (const std::string &s : {std::string("-x"), std::string("c++"), cu, std::string("-x"),
                                     std::string("none"), rt + "/rt/trl_rt_common.cpp",
                                     rt + "/rt/trl_rt_host.cpp", rt + "/trl_npy.cpp",
                                     rt + "/trl_json.cpp", "-I" + rt})
            argv.push_back(s);
        argv.insert(argv.end(), libs.begin(), libs.end());
        argv.push_back("-o");
        argv.push_back(opts.output);
        if (opts.standalone)  // the runtime is inside the source
            argv = {env_or("CXX", "c++"), "-std=c++17", olevel, "-fopenmp", "-ffp-contract=off",
                    "-fno-builtin-pow", "-fno-builtin-powf", "-x", "c++", cu, "-x", "none", "-lopenblas", "-o", opts.output};
    } else {
        tool_name = "nvcc";
        argv = {find_nvcc(), "-std=c++17", olevel, "-fmad=false"};
        std::vector<std::string> archs = opts.cuda_archs;
        if (archs.empty()) archs.push_back("sm_80");
        for (const std::string &a : archs) {
            std::string num = a.substr(3);
            argv.push_back("-gencode");
            argv.push_back("arch=compute_" + num + ",code=" + a);
        }
        argv.push_back(cu);
        if (!opts.standalone)  // else the runtime is inside the source
            for (const std::string &s : {rt + "/rt/trl_rt_cuda.cu", rt + "/rt/trl_rt_common.cpp",
                                         rt + "/trl_npy.cpp", rt + "/trl_json.cpp"})
                argv.push_back(s);
        for (const std::string &s : {"-I" + rt, std::string("-lcublas"), std::string("-o"),
                                     opts.output})
            argv.push_back(s);
    }
    ToolRun r = run_tool(argv, tmpdir + "/tool-output.txt");
    remove_dir(tmpdir, temp_files);
    if (!r.started) {
        diag.error("cannot run " + tool_name + " '" + argv[0] + "': " + strerror(r.spawn_errno) +
                   (target == "host" ? " (set CXX to the compiler to use)"
                                     : " (set TRLC_NVCC to nvcc's path, or use --target=host)"));
        std::cerr << "  command: " << command_text(argv) << "\n";
        return 1;
    }
    if (r.exit_status != 0) {
        diag.error(tool_name + " failed (exit status " + std::to_string(r.exit_status) +
                   ") building '" + opts.output + "'");
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

}  // namespace trlc
