// source_output — the last steps on the generated source before it is printed (--emit=cuda) or
// compiled (-o): #include the headers of extern fns, format with libFormat, and for
// --standalone inline the runtime (its headers and implementation sources, both device layers
// behind `#if defined(__CUDACC__)`) and the extern headers, so that one file builds with
// `c++ -std=c++17 -fopenmp prog.cu -lopenblas` or `nvcc prog.cu -lcublas`.
#include <clang/Format/Format.h>
#include <clang/Tooling/Core/Replacement.h>
#include <fstream>
#include <set>
#include <sstream>

#include "externs/externs.h"
#include "support/install_dirs.h"

namespace trlc {

namespace {

std::string read_text(const std::string &path, bool *ok) {
    std::ifstream in(path, std::ios::binary);
    *ok = static_cast<bool>(in);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string dir_name(const std::string &p) {
    size_t s = p.rfind('/');
    return s == std::string::npos ? "." : p.substr(0, s);
}

/** Inlines `#include "x"` (relative to the including file, then to the runtime directory)
 *  once per file; `#pragma once` lines are dropped, <system> includes are kept. */
class Inliner {
public:
    explicit Inliner(std::string runtime) : runtime_(std::move(runtime)) {}

    /** "text" (from a file in "dir") with its quoted includes expanded. */
    std::string expand(const std::string &text, const std::string &dir) {
        std::string out;
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line)) {
            std::string name;
            if (quoted_include(line, &name)) {
                std::string path = resolve(name, dir);
                if (!path.empty()) {
                    if (!done_.insert(path).second) continue;
                    out += file(path, name);
                    continue;
                }
            } else if (is_pragma_once(line)) {
                continue;
            }
            out += line + "\n";
        }
        return out;
    }

    /** The expanded text of "path" between banner comments ("" if already inlined). */
    std::string file(const std::string &path, const std::string &shown) {
        done_.insert(path);
        bool ok = false;
        std::string text = read_text(path, &ok);
        if (!ok) return "#error \"trlc --standalone: cannot read " + path + "\"\n";
        return "// ---- begin " + shown + " " + std::string(std::max<int>(3, 80 - shown.size()), '-') + "\n" +
               expand(text, dir_name(path)) + "// ---- end " + shown + "\n";
    }

    void mark_done(const std::string &path) { done_.insert(path); }

private:
    static bool quoted_include(const std::string &line, std::string *name) {
        size_t i = line.find_first_not_of(" \t");
        if (i == std::string::npos || line[i] != '#') return false;
        i = line.find_first_not_of(" \t", i + 1);
        if (i == std::string::npos || line.compare(i, 7, "include") != 0) return false;
        size_t q = line.find('"', i + 7);
        if (q == std::string::npos) return false;
        size_t e = line.find('"', q + 1);
        if (e == std::string::npos) return false;
        *name = line.substr(q + 1, e - q - 1);
        return true;
    }
    static bool is_pragma_once(const std::string &line) {
        size_t i = line.find_first_not_of(" \t");
        return i != std::string::npos && line.compare(i, 12, "#pragma once") == 0;
    }
    std::string resolve(const std::string &name, const std::string &dir) {
        std::vector<std::string> cands;
        if (!name.empty() && name[0] == '/')
            cands.push_back(name);
        else
            cands = {dir + "/" + name, runtime_ + "/" + name};
        for (const std::string &c : cands) {
            std::ifstream f(c);
            if (f) return c;
        }
        return "";
    }

    std::string runtime_;
    std::set<std::string> done_;
};

/** "source" with `#include "h"` lines for the extern headers after the runtime's includes. */
std::string add_extern_includes(const std::string &source, const ir::Program &prog, const SourceManager &sm,
                                const std::vector<std::string> &include_dirs) {
    std::string lines;
    std::set<std::string> seen;
    for (const ir::ExternFn &f : prog.externs) {
        if (f.name.empty()) continue;
        std::string path = extern_header_path(f, sm, include_dirs);
        if (path.empty() || !seen.insert(path).second) continue;
        lines += "#include \"" + path + "\"  // extern fn " + f.name + "\n";
    }
    if (lines.empty()) return source;
    lines = "// Headers of extern fns (trlc checked their signatures, dsl/README.md).\n" + lines;
    const std::string anchor = "#include \"trl_random.h\"\n";
    size_t at = source.find(anchor);
    if (at == std::string::npos) return lines + source;
    at += anchor.size();
    return source.substr(0, at) + "\n" + lines + source.substr(at);
}

/** "mpi": a --distributed program, whose source also holds the MPI layer, and the NCCL layer
 *  when "nccl" (--distributed=nccl: its CUDA build; a host compiler skips it). */
std::string standalone(const std::string &source, const std::string &runtime, bool mpi, bool nccl) {
    Inliner inl(runtime);
    std::string body = inl.expand(source, runtime);
    std::string out = "// Standalone (trlc --standalone): the runtime is inlined below; build with\n"
                      "//   c++ -std=c++17 -O2 -fopenmp -ffp-contract=off -x c++ THIS -lopenblas -o prog\n"
                      "//   nvcc -std=c++17 -O2 -fmad=false -x cu THIS -lcublas -o prog\n";
    if (mpi)
        out += std::string("// and MPI's flags (--distributed=") + (nccl ? "nccl" : "mpi") +
               "): $(mpicxx --showme:compile) and $(mpicxx --showme:link)" + (nccl ? ", and -lnccl" : "") + "\n";
    out += body;
    out += "\n// ==== The runtime's implementation (runtime/) "
           "===============================================\n";
    // What both device layers include goes first: a file is inlined once, not once per branch.
    out += inl.file(runtime + "/rt/trl_rt_internal.h", "rt/trl_rt_internal.h");
    out += "#if defined(__CUDACC__)\n";
    out += inl.file(runtime + "/rt/trl_rt_cuda.cu", "rt/trl_rt_cuda.cu");
    out += "#else\n";
    out += inl.file(runtime + "/rt/trl_rt_host.cpp", "rt/trl_rt_host.cpp");
    out += "#endif\n";
    out += inl.file(runtime + "/rt/trl_rt_common.cpp", "rt/trl_rt_common.cpp");
    out += inl.file(runtime + "/rt/trl_checkpoint.cpp", "rt/trl_checkpoint.cpp");
    out += inl.file(runtime + "/rt/trl_profile.cpp", "rt/trl_profile.cpp");
    out += inl.file(runtime + "/rt/trl_dist.cpp", "rt/trl_dist.cpp");
    if (mpi) out += inl.file(runtime + "/rt/trl_dist_mpi.cpp", "rt/trl_dist_mpi.cpp");
    if (nccl)
        out += "#if defined(__CUDACC__)\n" + inl.file(runtime + "/rt/trl_dist_nccl.cpp", "rt/trl_dist_nccl.cpp") +
               "#endif\n";
    out += inl.file(runtime + "/trl_npy.cpp", "trl_npy.cpp");
    out += inl.file(runtime + "/trl_json.cpp", "trl_json.cpp");
    return out;
}

}  // namespace

std::string format_source(const std::string &source) {
    clang::format::FormatStyle style = clang::format::getLLVMStyle();
    style.IndentWidth = 4;
    style.ColumnLimit = 100;
    style.SortIncludes = clang::format::FormatStyle::SI_Never;
    style.ReflowComments = false;  // comments as written (the .trl line comments, notes)
    style.ForEachMacros.push_back("TRL_KERNEL_INDEX");
    style.ForEachMacros.push_back("TRL_ROWS_INDEX");
    style.SpaceBeforeParens = clang::format::FormatStyle::SBPO_ControlStatementsExceptControlMacros;
    std::vector<clang::tooling::Range> all{clang::tooling::Range(0, source.size())};
    clang::tooling::Replacements r = clang::format::reformat(style, source, all, "program.cu");
    llvm::Expected<std::string> out = clang::tooling::applyAllReplacements(source, r);
    if (!out) {
        llvm::consumeError(out.takeError());
        return source;
    }
    return *out;
}

std::string finish_source(const std::string &source, const ir::Program &prog, const SourceManager &sm,
                          const std::vector<std::string> &include_dirs, const SourceOptions &opts) {
    std::string s = add_extern_includes(source, prog, sm, include_dirs);
    if (opts.format) s = format_source(s);
    if (opts.standalone) {
        std::string runtime = runtime_dir();
        s = standalone(s, runtime, prog.distributed, prog.distributed && opts.dist_layer == "nccl");
    }
    return s;
}

}  // namespace trlc
