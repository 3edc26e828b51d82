#pragma once
// unit_cache — the objects of a host program's compile units (codegen/compile_parts.h) kept in
// the build cache, so that a build after an edit compiles only the units whose code changed
// (issue 14: from a .trl edit to a running program in seconds).
//
// What it does: unit u of a split source is compiled with its part's flags and -DTRL_UNIT=u;
// its object is stored as CACHE/units/KEY.o, KEY the SHA-256 of the compile command without
// inputs and outputs, the compiler (path, size, mtime), every file of the runtime directory, the
// CPU (-march=native), and codegen::unit_view of the source: its own kernels, the other units'
// declarations, the shared definitions, no comments.  A later build whose unit has the same KEY
// links that object instead of compiling it.  Example: PPO CartPole with `lr0` changed compiles
// unit 1 (part 0's kernels) only.
//
// When it applies: `trlc -o` of a split host source with a build cache (not --no-cache or
// TRLC_CACHE_DIR=off).  The newest kMaxUnitObjects objects are kept; objects appear by rename, so
// concurrent builds never see half a file; any I/O failure only means a compile.
#include <string>
#include <vector>

namespace trlc {

/** The newest unit objects kept (about 40 KB each for PPO CartPole). */
constexpr size_t kMaxUnitObjects = 512;

/** The cache path of the object of a unit compiled by "compile" (flags only: no input, no -o)
 *  from a source whose unit_view is "view", with the runtime under "rt"; "" without a cache
 *  directory.  The file may not exist yet. */
std::string unit_object_path(const std::string &cache_dir, const std::vector<std::string> &compile,
                             const std::string &rt, const std::string &view);

/** Whether "path" holds a cached unit object; a hit refreshes its modification time (the
 *  pruning keeps the newest). */
bool take_unit_object(const std::string &path);

/** Copies the freshly compiled "obj" to "path" (a temporary name, then a rename) and prunes the
 *  directory to the newest kMaxUnitObjects.  Silent on failure. */
void store_unit_object(const std::string &obj, const std::string &path);

}  // namespace trlc
