#pragma once
// extern_host — extern fns for the reference interpreter: their headers compiled with the host
// C++ compiler into a shared object (one wrapper per fn that unpacks the interpreter's double
// storage into the ABI's typed arrays and back), loaded with dlopen.  So `--interpret` runs
// programs with extern fns and stays the oracle of the generated code.
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostics.h"
#include "support/source.h"

namespace trlc {

/** A loaded wrapper: in[k] holds input k's elements, out[k] receives result element k's, each
 *  row-major and stored as double (exact for f32, i32 and bool). */
using HostExternFn = void (*)(const double *const *in, double *const *out);

/** Compile (with $CXX, default c++: -std=c++17 -O2 -ffp-contract=off -fPIC -shared, the
 *  header's directory, the runtime and "include_dirs" on the include path) and load a wrapper of
 *  every extern fn of "prog".  A toolchain failure is an error at the first extern declaration
 *  with the command and its output; returns false then.  Loaded functions stay loaded. */
bool load_host_externs(const ir::Program &prog, const SourceManager &sm, const std::vector<std::string> &include_dirs,
                       Diagnostics &diag);

/** The include path of a host compile of extern headers "headers" (absolute paths): each
 *  header's directory, the runtime directory, then "include_dirs", as -I arguments.  The
 *  interpreter's wrapper build and the build cache's dependency list (driver/extern_deps.h)
 *  both use it, so the list names the files the build reads. */
std::vector<std::string> extern_include_args(const std::vector<std::string> &headers,
                                             const std::vector<std::string> &include_dirs);

/** The loaded wrapper of extern fn "name", or null (load_host_externs was not run). */
HostExternFn host_extern(const std::string &name);

}  // namespace trlc
