// schedule_cache — isl schedules read back by the key of their constraints (schedule_cache.h).
#include "schedule/schedule_cache.h"

#include <isl/schedule.h>
#include <isl/version.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "support/cache_key.h"

namespace trlc {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxSchedules = 256;  // a few KB to a few hundred KB each

fs::path entry_path(const std::string &dir, const std::string &key) {
    return fs::path(dir) / "schedules" / (key + ".yaml");
}

}  // namespace

std::string schedule_cache_key(const std::string &constraints) {
    BuildKey key;
    key.add("schedule cache", "1");
    key.add_tool("/proc/self/exe");  // compute()'s attempts, budgets and options
    key.add("isl", isl_version());
    key.add("constraints", constraints);
    return key.hex();
}

isl::schedule fetch_cached_schedule(const std::string &dir, const std::string &key, isl::ctx ctx) {
    if (dir.empty()) return isl::schedule();
    fs::path path = entry_path(dir, key);
    std::ifstream in(path, std::ios::binary);
    if (!in) return isl::schedule();
    std::ostringstream text;
    text << in.rdbuf();
    isl_schedule *raw = isl_schedule_read_from_str(ctx.get(), text.str().c_str());
    isl_ctx_reset_error(ctx.get());
    if (!raw) return isl::schedule();
    std::error_code ec;
    fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // recently used
    return isl::manage(raw);
}

void store_cached_schedule(const std::string &dir, const std::string &key, const isl::schedule &sched) {
    if (dir.empty() || sched.is_null()) return;
    std::error_code ec;
    fs::path path = entry_path(dir, key);
    fs::create_directories(path.parent_path(), ec);
    if (ec) return;
    char *text = isl_schedule_to_str(sched.get());
    if (!text) return;
    fs::path tmp = path;  // one per process: two compilations may store the same key at once
    tmp += "." + std::to_string(getpid()) + ".trlc-tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text;
        free(text);
        if (!out) {
            fs::remove(tmp, ec);
            return;
        }
    }
    fs::rename(tmp, path, ec);  // atomic: a reader never sees half an entry
    if (ec) {
        fs::remove(tmp, ec);
        return;
    }
    std::vector<std::pair<fs::file_time_type, fs::path>> entries;
    for (fs::directory_iterator it(path.parent_path(), ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".yaml") entries.push_back({fs::last_write_time(it->path(), ec), it->path()});
    remove_all_but_newest(std::move(entries), kMaxSchedules);
}

}  // namespace trlc
