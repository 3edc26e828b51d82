#pragma once
// build_cache — `trlc prog.trl -o prog` run again on the same inputs copies the executable it
// built before instead of scheduling, planning and compiling the program again (issue 14: an
// unchanged program rebuilds in under a second; PPO CartPole's cold build is about 17 s).
//
// The key of a build is the SHA-256 (OpenSSL) of everything the executable depends on:
//   * the trlc executable (its path, size and modification time: a rebuilt trlc is another
//     compiler; hashing its ~100 MB would cost more than the lookup saves),
//   * the command line without the -o name (options, -D, --bound checks, the target, -O, ...),
//   * the path and the bytes of every .trl file the compilation read (the program and each
//     imported module, std modules included),
//   * every file under the runtime directory (its headers and sources are compiled in),
//   * the toolchain: $CXX or c++ (host), nvcc (cuda) resolved on PATH, by path, size and time,
//     and the environment variables that change a build (CXX, TRLC_NVCC, TRLC_RUNTIME_DIR,
//     PATH, and whether nvidia-smi is found, which picks the default target),
//   * the CPU (/proc/cpuinfo's model and flags: --march=native, the default, compiles for it,
//     so a cache shared between machines never hands an AVX-512 program to an AVX2 CPU).
//   * the files that the headers of the program's `extern fn`s read: each header and everything
//     it includes, as the host compiler's -M lists them (driver/extern_deps.h); a header whose
//     list cannot be made leaves the build uncached.
//
// Where: $TRLC_CACHE_DIR, else $XDG_CACHE_HOME/trlc, else $HOME/.cache/trlc; one directory per
// key holding the executable (and the generated source, for --keep-source), and runtime-KEY
// directories of the runtime's sources compiled once per toolchain, flags and CPU when trlc's
// prebuilt set does not match (runtime_objects.h; a cache miss compiles only the generated
// source), and prelude-KEY directories of the runtime's headers precompiled per compile part
// (runtime_objects.h: prelude_pch_dir), and units/KEY.o, the objects of compile units
// (driver/unit_cache.h: a build after an edit compiles only the units it changed).  The newest
// 64 programs, 8 runtime sets, 16 preludes and 512 unit objects are kept.  `--no-cache` (or TRLC_CACHE_DIR=off) builds without reading or writing it;
// deleting the directory is always safe.
#include <string>
#include <vector>

#include "support/cache_key.h"

namespace trlc {

/** The command line "argv" (argv[1..]) without the -o operand, for the key. */
std::vector<std::string> key_arguments(const std::vector<std::string> &argv);

/** A hit: copies the executable cached under "key" in "dir" to "output" (and its source to
 *  output + ".cu" when "keep_source") and returns true.  False on a miss or any I/O problem. */
bool fetch_cached_build(const std::string &dir, const std::string &key, const std::string &output, bool keep_source);

/** Stores the freshly built "output" (and output + ".cu" when it exists and "keep_source") under
 *  "key", then removes all but the newest 64 entries.  Failures are silent: the cache is an
 *  optimization, never a reason for a build to fail. */
void store_cached_build(const std::string &dir, const std::string &key, const std::string &output, bool keep_source);

}  // namespace trlc
