// install_dirs — see install_dirs.h.
#include "support/install_dirs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace trlc {

namespace {

/** PREFIX/share/trlc/NAME when the running executable is PREFIX/bin/X and that directory
 *  exists, else "". */
std::string installed(const std::string &name) {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "";
    std::string exe(buf, static_cast<size_t>(n));
    size_t slash = exe.rfind('/');
    if (slash == std::string::npos) return "";
    std::string dir = exe.substr(0, slash) + "/../share/trlc/" + name;
    struct stat st {};
    return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? dir : "";
}

std::string pick(const char *env, const std::string &name, const char *built) {
    if (const char *v = getenv(env); v && *v) return v;
    std::string i = installed(name);
    return i.empty() ? built : i;
}

}  // namespace

std::string runtime_dir() { return pick("TRLC_RUNTIME_DIR", "runtime", TRLC_RUNTIME_DIR); }

std::string stdlib_dir() { return pick("TRLC_STDLIB_DIR", "dsl", TRLC_STDLIB_DIR); }

std::string prebuilt_runtime_dir() {
    return pick("TRLC_RUNTIME_OBJECTS_DIR", "runtime-objects", TRLC_RUNTIME_OBJECTS_DIR);
}

}  // namespace trlc
