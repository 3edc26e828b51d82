#pragma once
// cache_key — what trlc's caches share: where they live and the SHA-256 key of their inputs
// (the build cache of `trlc -o`, driver/build_cache.h; the schedule cache,
// schedule/schedule_cache.h).
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace trlc {

/** Removes (recursively) every entry of "entries" (modification time, path) but the "keep" newest:
 *  how the caches stay bounded.  Failures are silent. */
void remove_all_but_newest(std::vector<std::pair<std::filesystem::file_time_type, std::filesystem::path>> entries,
                           size_t keep);

/** Copies "from" to "to" through a temporary name beside it and a rename, so that a reader
 *  (another build) never sees half a file; the permissions are kept (an executable stays one).
 *  False on any I/O failure (nothing is left at the temporary name). */
bool replace_file(const std::filesystem::path &from, const std::filesystem::path &to);
/** The directory of trlc's caches: $TRLC_CACHE_DIR, else $XDG_CACHE_HOME/trlc, else
 *  $HOME/.cache/trlc; "" when caching is off (TRLC_CACHE_DIR=off) or no directory can be named
 *  (no HOME).  Deleting it is always safe. */
std::string build_cache_dir();

/** Incremental SHA-256 (OpenSSL) of a cached result's inputs, each added with a label. */
class BuildKey {
public:
    BuildKey();
    ~BuildKey();
    BuildKey(const BuildKey &) = delete;
    BuildKey &operator=(const BuildKey &) = delete;
    /** "label", its length and "data". */
    void add(const std::string &label, const std::string &data);
    /** "path" and its bytes ("missing" when it cannot be read). */
    void add_file(const std::string &path);
    /** Every regular file under directory "dir", in sorted path order (path and bytes). */
    void add_tree(const std::string &dir);
    /** The program "name" (a path, or found on PATH): its resolved path, size and mtime. */
    void add_tool(const std::string &name);
    /** Environment variable "name" (unset and empty differ). */
    void add_env(const char *name);
    /** The CPU that -march=native compiles for: the first processor's vendor_id, cpu family,
     *  model, model name and flags lines of /proc/cpuinfo ("unknown" without it), so that a
     *  cache shared between machines (a network home) never hands AVX-512 code to an AVX2 CPU. */
    void add_host_cpu();
    /** The key: 64 hex digits.  Call once, after the last add. */
    std::string hex();

private:
    void *ctx_;  // EVP_MD_CTX
};

}  // namespace trlc
