// unit_cache — compile units' objects in the build cache; see unit_cache.h.
#include "driver/unit_cache.h"

#include <filesystem>
#include <utility>

#include "support/cache_key.h"

namespace fs = std::filesystem;

namespace trlc {

std::string unit_object_path(const std::string &cache_dir, const std::vector<std::string> &compile,
                             const std::string &rt, const std::string &view) {
    if (cache_dir.empty() || compile.empty()) return "";
    BuildKey key;
    std::string flags;
    for (const std::string &a : compile) flags += a + '\0';
    key.add("unit compile", flags);
    key.add_tool(compile.at(0));
    key.add_tree(rt);
    key.add_host_cpu();
    key.add("unit source", view);
    return cache_dir + "/units/" + key.hex() + ".o";
}

bool take_unit_object(const std::string &path) {
    std::error_code ec;
    if (path.empty() || !fs::is_regular_file(path, ec)) return false;
    fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
    return true;
}

void store_unit_object(const std::string &obj, const std::string &path) {
    if (path.empty()) return;
    std::error_code ec;
    const fs::path dir = fs::path(path).parent_path();
    fs::create_directories(dir, ec);
    if (ec || !replace_file(obj, path)) return;
    std::vector<std::pair<fs::file_time_type, fs::path>> objects;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".o") objects.push_back({fs::last_write_time(it->path(), ec), it->path()});
    if (objects.size() > kMaxUnitObjects) remove_all_but_newest(std::move(objects), kMaxUnitObjects);
}

}  // namespace trlc
