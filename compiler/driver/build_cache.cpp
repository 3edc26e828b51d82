// build_cache — the build cache of `trlc -o`; what the key covers is in build_cache.h.
#include "driver/build_cache.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace trlc {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxEntries = 64;
constexpr size_t kMaxRuntimes = 8;

}  // namespace

std::vector<std::string> key_arguments(const std::vector<std::string> &argv) {
    std::vector<std::string> out;
    for (size_t k = 0; k < argv.size(); ++k) {
        if (argv[k] == "-o") {
            ++k;  // and its operand
            continue;
        }
        if (argv[k].rfind("-o", 0) == 0 && argv[k].size() > 2) continue;  // -oNAME
        out.push_back(argv[k]);
    }
    return out;
}

bool fetch_cached_build(const std::string &dir, const std::string &key, const std::string &output, bool keep_source) {
    fs::path entry = fs::path(dir) / key;
    std::error_code ec;
    if (!fs::is_regular_file(entry / "program", ec)) return false;
    if (keep_source && !fs::is_regular_file(entry / "program.cu", ec)) return false;
    if (!replace_file(entry / "program", output)) return false;
    if (keep_source && !replace_file(entry / "program.cu", output + ".cu")) return false;
    fs::last_write_time(entry, fs::file_time_type::clock::now(), ec);  // recently used
    return true;
}

void store_cached_build(const std::string &dir, const std::string &key, const std::string &output, bool keep_source) {
    std::error_code ec;
    fs::path entry = fs::path(dir) / key;
    fs::create_directories(entry, ec);
    if (ec || !replace_file(output, entry / "program")) return;
    if (keep_source) replace_file(output + ".cu", entry / "program.cu");
    // Keep the newest kMaxEntries programs, kMaxRuntimes runtime object sets (runtime_objects.h:
    // one per toolchain, flags, runtime text and CPU) and twice as many precompiled preludes
    // (one per compile part: 24 MB each for GCC 12).
    std::vector<std::pair<fs::file_time_type, fs::path>> programs, runtimes, preludes;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (!it->is_directory(ec)) continue;
        std::string name = it->path().filename().string();
        if (name.size() == 64)
            programs.push_back({fs::last_write_time(it->path(), ec), it->path()});
        else if (name.rfind("runtime-", 0) == 0)
            runtimes.push_back({fs::last_write_time(it->path(), ec), it->path()});
        else if (name.rfind("prelude-", 0) == 0)
            preludes.push_back({fs::last_write_time(it->path(), ec), it->path()});
    }
    remove_all_but_newest(std::move(programs), kMaxEntries);
    remove_all_but_newest(std::move(runtimes), kMaxRuntimes);
    remove_all_but_newest(std::move(preludes), 2 * kMaxRuntimes);
}

}  // namespace trlc
