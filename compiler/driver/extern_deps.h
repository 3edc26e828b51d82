#pragma once
// extern_deps — the files that the C++ headers of a program's extern fns read, for the build
// cache's key (driver/build_cache.h): a cached executable is reused only while every one of
// them is unchanged.
//
// How: the host C++ compiler's dependency list, `$CXX -std=c++17 -M -MG -MF LIST -x c++ HEADER`
// with the include path of the interpreter's wrapper build (externs/extern_host.h's
// extern_include_args: the header's directory, the runtime, then -I's directories), once per
// distinct header; the list (a Makefile rule, GCC manual "Preprocessor Options": -M, -MG, -MF)
// names the header and everything it includes, system headers too.  -MG lists a header that
// is not found instead of failing (a CUDA-only include behind #ifdef __CUDACC__ is not seen at
// all: the host preprocessor skips it, and nvcc's own headers are keyed by the nvcc tool).
// Example: samples/extern_cartpole.trl's envs/cartpole_env.cuh → the header, trl_rt.h and the
// C++ standard headers they include (about 150 files).
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/source.h"

namespace trlc {

/** Every file the extern headers of "prog" read, sorted, each once; false when a header cannot
 *  be found or the compiler cannot list its dependencies (the build is then not cached). */
bool extern_dependencies(const ir::Program &prog, const SourceManager &sm, const std::vector<std::string> &include_dirs,
                         std::vector<std::string> *files);

}  // namespace trlc
