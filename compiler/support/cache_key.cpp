// cache_key — the caches' directory and the SHA-256 key of their inputs (cache_key.h).
#include "support/cache_key.h"

#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace trlc {

namespace fs = std::filesystem;

namespace {

std::string env(const char *name) {
    const char *v = getenv(name);
    return v ? std::string(v) : std::string();
}

/** The file's bytes; false when it cannot be read. */
bool read_bytes(const std::string &path, std::string *out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::ostringstream ss;
    ss << in.rdbuf();
    *out = ss.str();
    return static_cast<bool>(in) || in.eof();
}

/** "name" resolved as execvp would: itself when it holds a '/', else the first PATH entry. */
std::string find_on_path(const std::string &name) {
    if (name.find('/') != std::string::npos) return name;
    std::string path = env("PATH");
    size_t start = 0;
    while (start <= path.size()) {
        size_t end = path.find(':', start);
        if (end == std::string::npos) end = path.size();
        std::string cand = (end > start ? path.substr(start, end - start) : ".") + "/" + name;
        if (access(cand.c_str(), X_OK) == 0) return cand;
        start = end + 1;
    }
    return "";
}

}  // namespace

void remove_all_but_newest(std::vector<std::pair<fs::file_time_type, fs::path>> entries, size_t keep) {
    if (entries.size() <= keep) return;
    std::sort(entries.begin(), entries.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    std::error_code ec;
    for (size_t k = keep; k < entries.size(); ++k) fs::remove_all(entries[k].second, ec);
}

bool replace_file(const fs::path &from, const fs::path &to) {
    std::error_code ec;
    fs::path tmp = to;
    tmp += ".trlc-tmp" + std::to_string(getpid());  // one per process: concurrent builds
    fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
    if (ec) return false;
    fs::permissions(tmp, fs::status(from, ec).permissions(), ec);  // an executable stays one
    fs::rename(tmp, to, ec);                                       // atomic: a reader never sees half a file
    if (ec) fs::remove(tmp, ec);
    return !ec;
}

std::string build_cache_dir() {
    std::string d = env("TRLC_CACHE_DIR");
    if (d == "off") return "";
    if (!d.empty()) return d;
    if (!env("XDG_CACHE_HOME").empty()) return env("XDG_CACHE_HOME") + "/trlc";
    if (!env("HOME").empty()) return env("HOME") + "/.cache/trlc";
    return "";
}

BuildKey::BuildKey() : ctx_(EVP_MD_CTX_new()) {
    EVP_DigestInit_ex(static_cast<EVP_MD_CTX *>(ctx_), EVP_sha256(), nullptr);
    add("trlc build key", "1");
}

BuildKey::~BuildKey() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX *>(ctx_)); }

void BuildKey::add(const std::string &label, const std::string &data) {
    // Length-prefixed, so that ("ab", "c") and ("a", "bc") differ.
    std::string head = label + "\n" + std::to_string(data.size()) + "\n";
    EVP_DigestUpdate(static_cast<EVP_MD_CTX *>(ctx_), head.data(), head.size());
    EVP_DigestUpdate(static_cast<EVP_MD_CTX *>(ctx_), data.data(), data.size());
}

void BuildKey::add_file(const std::string &path) {
    std::string bytes;
    if (read_bytes(path, &bytes))
        add("file " + path, bytes);
    else
        add("missing file", path);
}

void BuildKey::add_tree(const std::string &dir) {
    std::vector<std::string> files;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec)) files.push_back(it->path().string());
    if (ec) add("unreadable tree", dir);
    std::sort(files.begin(), files.end());
    add("tree " + dir, std::to_string(files.size()));
    for (const std::string &f : files) add_file(f);
}

void BuildKey::add_tool(const std::string &name) {
    std::string p = find_on_path(name);
    struct stat st {};
    std::string id = p;
    if (!p.empty()) {
        char buf[4096];
        if (realpath(p.c_str(), buf)) id = buf;
        if (stat(id.c_str(), &st) == 0)
            id += " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
                  std::to_string(st.st_mtim.tv_nsec);
    }
    add("tool " + name, id);
}

void BuildKey::add_env(const char *name) {
    const char *v = getenv(name);
    add(std::string("env ") + name, v ? std::string("=") + v : std::string("unset"));
}

void BuildKey::add_host_cpu() {
    std::ifstream in("/proc/cpuinfo");
    std::string line, cpu;
    while (std::getline(in, line)) {
        if (line.empty()) break;  // the end of the first processor's block
        std::string name = line.substr(0, line.find(':'));
        while (!name.empty() && isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
        if (name == "vendor_id" || name == "cpu family" || name == "model" || name == "model name" || name == "flags")
            cpu += line + '\n';
    }
    add("host cpu", cpu.empty() ? "unknown" : cpu);
}

std::string BuildKey::hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(static_cast<EVP_MD_CTX *>(ctx_), md, &n);
    static const char *digits = "0123456789abcdef";
    std::string s;
    for (unsigned int k = 0; k < n; ++k) {
        s += digits[md[k] >> 4];
        s += digits[md[k] & 15];
    }
    return s;
}

}  // namespace trlc
