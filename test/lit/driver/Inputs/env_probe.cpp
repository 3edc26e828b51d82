// env_probe — linked into test programs (driver/omp-wait-reexec.test): before main, prints
// whether OMP_WAIT_POLICY is in the environment the kernel gave this process
// (/proc/self/environ, not getenv, so nothing the program does later can change the answer).
// A process that the runtime re-executed prints once, from the re-executed image.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

__attribute__((constructor)) static void env_probe() {
    std::ifstream f("/proc/self/environ", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const std::string want = "OMP_WAIT_POLICY=";
    for (size_t at = 0; at < all.size();) {
        size_t end = all.find('\0', at);
        if (end == std::string::npos) end = all.size();
        if (all.compare(at, want.size(), want) == 0) {
            std::fprintf(stderr, "env-probe: %s\n", all.substr(at, end - at).c_str());
            return;
        }
        at = end + 1;
    }
    std::fprintf(stderr, "env-probe: OMP_WAIT_POLICY unset\n");
}
