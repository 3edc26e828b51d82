#pragma once
// runtime_objects — the runtime's sources (runtime/rt/*.cpp, trl_npy.cpp, trl_json.cpp; the
// CUDA layer for nvcc) compiled once, not into every program: `trlc -o` compiles only the
// generated source and links these objects (issue 14 point 3).  One directory runtime-KEY per
// compile command, in two places, looked up in this order:
//   1. the prebuilt sets, made when trlc is built (CMake runs `trlc --prebuild-runtime DIR`
//      after linking trlc: the default host command, -O3 -march=native, into
//      BUILD/runtime-objects; `cmake --install` has the installed trlc compile its own set into
//      PREFIX/share/trlc/runtime-objects, since the runtime's paths are in the key;
//      install_dirs.h's prebuilt_runtime_dir).  Read only, and used with --no-cache too: they
//      are part of the installation, like a library;
//   2. the build cache (build_cache.h), for every other command (another -O, --march, CXX,
//      nvcc), compiled on first use and kept (the newest 8 sets).
// KEY (support/cache_key.h's BuildKey) covers the compile command, the compiler (resolved path,
// size, modification time), every file of the runtime directory, and the CPU (-march=native
// compiles for the machine it runs on), so a set never meets another toolchain, runtime text or
// ISA: a copied installation on another CPU falls back to the cache.
//
// Example: `trlc samples/dqn_cartpole.trl -o dqn` on an empty cache compiles the generated
// source alone (about 4 s of CPU) instead of also the seven runtime sources (8.6 s).
//
// Beside them, prelude-KEY directories: runtime/trl_prelude.h (the headers every generated
// program includes) precompiled by GCC with one compile part's flags (codegen/compile_parts.h),
// which that part's compile loads with `-include trl_prelude.h` instead of parsing the headers
// (about 0.35 s of CPU per part of PPO CartPole); the same two places, the same KEY.
#include <string>
#include <vector>

#include "support/diagnostics.h"

namespace trlc {

/** Whether host compiler "cxx" is Clang (its --version says so; asked once per process): GCC's
 *  own flags, such as -fvect-cost-model, are then left out. */
bool compiler_is_clang(const std::string &cxx);
/** Whether host compiler "cxx" is GCC (its --version names the Free Software Foundation and not
 *  Clang; asked once per process). */
bool compiler_is_gcc(const std::string &cxx);

/** The runtime sources of a host build (under runtime directory "rt"). */
std::vector<std::string> host_runtime_sources(const std::string &rt);

/** The runtime sources of a CUDA build (under "rt"). */
std::vector<std::string> cuda_runtime_sources(const std::string &rt);

/** The objects of "sources" compiled by "compile" (the command without inputs and outputs,
 *  e.g. {c++, -std=c++17, -O3, ...}) with -I"rt": the prebuilt set when one matches, else the
 *  set under "cache_dir", compiling what is missing there (tool logs under "tmpdir").  Returns
 *  "sources" themselves when neither has them and there is no cache directory or a compile
 *  fails: the program's own build command then compiles them and reports any error.  Objects
 *  appear by rename, so concurrent builds never see half a file. */
std::vector<std::string> runtime_objects(const std::vector<std::string> &compile,
                                         const std::vector<std::string> &sources, const std::string &rt,
                                         const std::string &cache_dir, const std::string &tmpdir);

/** Compiles "sources" with "compile" into DIR/runtime-KEY and removes DIR's other runtime-*
 *  sets (a prebuilt directory holds the current set only); says what it did on stderr.
 *  Returns 0, or 1 after an error in "diag" (DIR cannot be created, a compile failed: its
 *  command and output are shown). */
int prebuild_runtime_objects(const std::vector<std::string> &compile, const std::vector<std::string> &sources,
                             const std::string &rt, const std::string &dir, Diagnostics &diag);

/** A directory holding `trl_prelude.h.gch`, runtime/trl_prelude.h precompiled by "compile"
 *  (a compile part's command without inputs and outputs; GCC only: "" for another compiler),
 *  for a compile given `-I DIR -include trl_prelude.h` before -I"rt": the prebuilt one
 *  (prebuilt_runtime_dir()/prelude-KEY, KEY as a runtime set's, of "compile") when present,
 *  else the one under "cache_dir", compiled on first use (through a temporary name and a
 *  rename).  "" when there is none and no cache or the compile fails: the part then parses the
 *  headers as before.  GCC rejects a .gch whose flags differ and then reads the header's text,
 *  so a stale one costs time, never a wrong build. */
std::string prelude_pch_dir(const std::vector<std::string> &compile, const std::string &rt,
                            const std::string &cache_dir, const std::string &tmpdir);

/** Precompiles the prelude for each of "compiles" into DIR/prelude-KEY, as
 *  prebuild_runtime_objects does the objects, and removes DIR's other prelude-* sets.  Nothing
 *  for a compiler other than GCC.  Returns 0, or 1 after an error in "diag". */
int prebuild_prelude_pchs(const std::vector<std::vector<std::string>> &compiles, const std::string &rt,
                          const std::string &dir, Diagnostics &diag);

}  // namespace trlc
