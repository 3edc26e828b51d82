// runtime_objects — see runtime_objects.h.
#include "driver/runtime_objects.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

#include "externs/subprocess.h"
#include "support/cache_key.h"
#include "support/install_dirs.h"

namespace trlc {

namespace fs = std::filesystem;

namespace {

/** A set's directory name: PREFIX-KEY (runtime_objects.h says what KEY covers). */
std::string keyed_name(const std::string &prefix, const std::vector<std::string> &compile, const std::string &rt) {
    BuildKey key;
    std::string flags;
    for (const std::string &a : compile) flags += a + '\0';
    key.add(prefix == "runtime" ? "runtime objects" : prefix, flags);
    key.add_tool(compile.at(0));
    key.add_tree(rt);
    key.add_host_cpu();
    return prefix + "-" + key.hex();
}

std::string set_name(const std::vector<std::string> &compile, const std::string &rt) {
    return keyed_name("runtime", compile, rt);
}

const char *const kPreludeGch = "trl_prelude.h.gch";

/** "cxx --version"'s output ("" when it does not run), asked once per compiler and process. */
const std::string &compiler_version(const std::string &cxx) {
    static std::map<std::string, std::string> seen;
    auto it = seen.find(cxx);
    if (it != seen.end()) return it->second;
    const char *tmp = getenv("TMPDIR");
    const std::string log =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/trlc-cxx-version-" + std::to_string(getpid()) + ".txt";
    ToolRun r = run_tool({cxx, "--version"}, log);
    return seen[cxx] = r.started && r.exit_status == 0 ? r.output : "";
}

/** Precompiles runtime/trl_prelude.h with "compile" into DIR/trl_prelude.h.gch (through a
 *  temporary name and a rename); the tool's run. */
ToolRun compile_prelude(const std::vector<std::string> &compile, const std::string &rt, const std::string &dir,
                        const std::string &log) {
    const std::string gch = dir + "/" + kPreludeGch, tmp = gch + ".tmp" + std::to_string(getpid());
    std::vector<std::string> argv = compile;
    for (const std::string &a :
         {std::string("-x"), std::string("c++-header"), rt + "/trl_prelude.h", "-I" + rt, std::string("-o"), tmp})
        argv.push_back(a);
    ToolRun r = run_tool(argv, log);
    if (r.started && r.exit_status == 0 && rename(tmp.c_str(), gch.c_str()) != 0) r.exit_status = -1;
    if (!r.started || r.exit_status != 0) unlink(tmp.c_str());
    return r;
}

/** DIR/NAME.o of each source. */
std::vector<std::string> object_paths(const std::string &dir, const std::vector<std::string> &sources) {
    std::vector<std::string> objs;
    for (const std::string &src : sources) objs.push_back(dir + "/" + fs::path(src).filename().string() + ".o");
    return objs;
}

/** Compiles "src" into "obj" (through a temporary name and a rename); the tool's run. */
ToolRun compile_one(const std::vector<std::string> &compile, const std::string &src, const std::string &rt,
                    const std::string &obj, const std::string &log) {
    std::string tmp = obj + ".tmp" + std::to_string(getpid());
    std::vector<std::string> argv = compile;
    for (const std::string &a : {std::string("-c"), src, "-I" + rt, std::string("-o"), tmp}) argv.push_back(a);
    ToolRun r = run_tool(argv, log);
    if (r.started && r.exit_status == 0 && rename(tmp.c_str(), obj.c_str()) != 0) r.exit_status = -1;
    if (!r.started || r.exit_status != 0) unlink(tmp.c_str());
    return r;
}

}  // namespace

bool compiler_is_clang(const std::string &cxx) { return compiler_version(cxx).find("clang") != std::string::npos; }

bool compiler_is_gcc(const std::string &cxx) {
    const std::string &v = compiler_version(cxx);
    return v.find("Free Software Foundation") != std::string::npos && v.find("clang") == std::string::npos;
}

std::vector<std::string> host_runtime_sources(const std::string &rt) {
    return {rt + "/rt/trl_rt_common.cpp", rt + "/rt/trl_checkpoint.cpp", rt + "/rt/trl_profile.cpp",
            rt + "/rt/trl_rt_host.cpp",   rt + "/trl_npy.cpp",           rt + "/trl_json.cpp",
            rt + "/rt/trl_outlined.cpp",  rt + "/rt/trl_dist.cpp"};
}

std::vector<std::string> cuda_runtime_sources(const std::string &rt) {
    return {rt + "/rt/trl_rt_cuda.cu",  rt + "/rt/trl_rt_common.cpp", rt + "/rt/trl_checkpoint.cpp",
            rt + "/rt/trl_profile.cpp", rt + "/trl_npy.cpp",          rt + "/trl_json.cpp",
            rt + "/rt/trl_dist.cpp"};
}

std::vector<std::string> runtime_objects(const std::vector<std::string> &compile,
                                         const std::vector<std::string> &sources, const std::string &rt,
                                         const std::string &cache_dir, const std::string &tmpdir) {
    std::string name = set_name(compile, rt);
    std::vector<std::string> prebuilt = object_paths(prebuilt_runtime_dir() + "/" + name, sources);
    bool all = true;
    for (const std::string &obj : prebuilt) all = all && access(obj.c_str(), R_OK) == 0;
    if (all) return prebuilt;
    if (cache_dir.empty()) return sources;
    std::string dir = cache_dir + "/" + name;
    std::vector<std::string> objs = object_paths(dir, sources);
    for (size_t k = 0; k < sources.size(); ++k) {
        if (access(objs[k].c_str(), R_OK) == 0) continue;
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec) return sources;
        ToolRun r = compile_one(compile, sources[k], rt, objs[k], tmpdir + "/runtime-output.txt");
        if (!r.started || r.exit_status != 0) return sources;
    }
    std::error_code ec;  // recently used: build_cache.cpp keeps the newest sets
    fs::last_write_time(dir, fs::file_time_type::clock::now(), ec);
    return objs;
}

std::string prelude_pch_dir(const std::vector<std::string> &compile, const std::string &rt,
                            const std::string &cache_dir, const std::string &tmpdir) {
    const std::string name = keyed_name("prelude", compile, rt);
    const std::string prebuilt = prebuilt_runtime_dir() + "/" + name;
    if (access((prebuilt + "/" + kPreludeGch).c_str(), R_OK) == 0) return prebuilt;
    if (cache_dir.empty()) return "";
    const std::string dir = cache_dir + "/" + name;
    std::error_code ec;
    if (access((dir + "/" + kPreludeGch).c_str(), R_OK) != 0) {
        // A marker that this toolchain cannot have one (not GCC), so that the next build does
        // not ask again.
        if (access((dir + "/none").c_str(), F_OK) == 0) return "";
        fs::create_directories(dir, ec);
        if (ec) return "";
        const std::string log = tmpdir + "/prelude-output.txt";
        if (!compiler_is_gcc(compile.at(0))) {
            FILE *f = fopen((dir + "/none").c_str(), "w");
            if (f) fclose(f);
            return "";
        }
        ToolRun r = compile_prelude(compile, rt, dir, log);
        if (!r.started || r.exit_status != 0) return "";
    }
    fs::last_write_time(dir, fs::file_time_type::clock::now(), ec);  // recently used (build_cache.cpp)
    return dir;
}

int prebuild_prelude_pchs(const std::vector<std::vector<std::string>> &compiles, const std::string &rt,
                          const std::string &dir, Diagnostics &diag) {
    std::vector<std::string> names;
    for (const auto &c : compiles) names.push_back(keyed_name("prelude", c, rt));
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string other = it->path().filename().string();
        if (other.rfind("prelude-", 0) == 0 && std::find(names.begin(), names.end(), other) == names.end())
            fs::remove_all(it->path(), ec);
    }
    if (compiles.empty() || !compiler_is_gcc(compiles[0].at(0))) return 0;
    int compiled = 0;
    for (size_t k = 0; k < compiles.size(); ++k) {
        const std::string set = dir + "/" + names[k];
        if (access((set + "/" + kPreludeGch).c_str(), R_OK) == 0) continue;
        fs::create_directories(set, ec);
        ToolRun r = compile_prelude(compiles[k], rt, set, set + "/compile-output.txt");
        if (ec || !r.started || r.exit_status != 0) {
            diag.error("cannot precompile the runtime prelude '" + rt + "/trl_prelude.h' into '" + set + "'");
            if (!r.output.empty()) std::cerr << "  its output:\n" << r.output << "\n";
            return 1;
        }
        ++compiled;
    }
    std::cerr << "trlc: precompiled prelude headers in " << dir << "/prelude-* (" << compiled << " compiled, "
              << compiles.size() - compiled << " up to date)\n";
    return 0;
}

int prebuild_runtime_objects(const std::vector<std::string> &compile, const std::vector<std::string> &sources,
                             const std::string &rt, const std::string &dir, Diagnostics &diag) {
    std::string name = set_name(compile, rt);
    std::string set = dir + "/" + name;
    std::error_code ec;
    fs::create_directories(set, ec);
    if (ec) {
        diag.error("cannot create '" + set + "': " + ec.message());
        return 1;
    }
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string other = it->path().filename().string();
        if (other.rfind("runtime-", 0) == 0 && other != name) fs::remove_all(it->path(), ec);
    }
    std::vector<std::string> objs = object_paths(set, sources);
    int compiled = 0;
    for (size_t k = 0; k < sources.size(); ++k) {
        if (access(objs[k].c_str(), R_OK) == 0) continue;
        ToolRun r = compile_one(compile, sources[k], rt, objs[k], set + "/compile-output.txt");
        if (!r.started || r.exit_status != 0) {
            diag.error("cannot compile the runtime source '" + sources[k] + "' into '" + objs[k] + "'");
            std::string cmd;
            for (const std::string &a : compile) cmd += a + " ";
            std::cerr << "  command: " << cmd << "-c " << sources[k] << " -I" << rt << "\n";
            if (!r.output.empty()) std::cerr << "  its output:\n" << r.output << "\n";
            return 1;
        }
        ++compiled;
    }
    std::cerr << "trlc: runtime objects in " << set << " (" << compiled << " compiled, " << sources.size() - compiled
              << " up to date)\n";
    return 0;
}

}  // namespace trlc
