// runtime_objects — see runtime_objects.h.
#include "driver/runtime_objects.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "externs/subprocess.h"
#include "support/cache_key.h"
#include "support/install_dirs.h"

namespace trlc {

namespace fs = std::filesystem;

namespace {

/** The set's directory name: runtime-KEY (runtime_objects.h says what KEY covers). */
std::string set_name(const std::vector<std::string> &compile, const std::string &rt) {
    BuildKey key;
    std::string flags;
    for (const std::string &a : compile) flags += a + '\0';
    key.add("runtime objects", flags);
    key.add_tool(compile.at(0));
    key.add_tree(rt);
    key.add_host_cpu();
    return "runtime-" + key.hex();
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

std::vector<std::string> host_runtime_sources(const std::string &rt) {
    return {rt + "/rt/trl_rt_common.cpp", rt + "/rt/trl_checkpoint.cpp", rt + "/rt/trl_profile.cpp",
            rt + "/rt/trl_rt_host.cpp",   rt + "/trl_npy.cpp",           rt + "/trl_json.cpp",
            rt + "/rt/trl_outlined.cpp", rt + "/rt/trl_dist.cpp"};
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
