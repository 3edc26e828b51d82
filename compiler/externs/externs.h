#pragma once
// externs — `extern "h.cuh" fn f(...) -> T` (dsl/README.md §7.6) against its C++ header, and the
// finishing touches of the generated source (extern #includes, --standalone, libFormat).
//
// The ABI of `extern "h.cuh" fn f(s: f64[4], a: i32) -> (f64[4], f32, bool)` is
//
//     TRL_HOST_DEVICE void f(const double s[4], int32_t a, double out0[4], float *out1,
//                            bool *out2);
//
// inputs by value (scalars) or as `const T name[N]` (arrays, flat in row-major order: f32[2, 3]
// is `const float name[6]`), then one output per result element: `T outK[N]` (arrays) or
// `T *outK` (scalars); a non-tuple result is out0.  dtypes: f32 float, f64 double, i32 int32_t,
// bool bool.  The function must be __host__ __device__ and defined in the header.
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostics.h"
#include "support/source.h"

namespace trlc {

/** The header of "f": f.header relative to the directory of the .trl file that declares it,
 *  then relative to each of "include_dirs"; an absolute path, or "" when no such file exists. */
std::string extern_header_path(const ir::ExternFn &f, const SourceManager &sm,
                               const std::vector<std::string> &include_dirs);

/** Read the header of every extern fn of "prog" with Clang (CUDA, host side, quietly; the
 *  runtime directory and "include_dirs" on the include path) and check the function against
 *  the ABI above: it exists (else a note names similar functions), is __host__ __device__ and
 *  defined, has void result and one parameter per input and per result element, each of the
 *  right type and extent.  Errors are reported at the .trl declaration with notes at the
 *  header's declarations (header files are added to "sm").  Returns false after an error. */
bool check_externs(const ir::Program &prog, SourceManager &sm, const std::vector<std::string> &include_dirs,
                   Diagnostics &diag);

/** How the generated source is finished before it is printed or compiled. */
struct SourceOptions {
    bool standalone = false;  // inline the runtime (headers and implementation) and headers
    bool format = true;       // libFormat (format_source)
    /** A distributed program's process-group layer (--distributed=mpi|nccl): a standalone
     *  source inlines runtime/rt/trl_dist_mpi.cpp, and for nccl trl_dist_nccl.cpp too. */
    std::string dist_layer = "mpi";
};

/** "source" from emit_cuda with the extern headers #included (absolute paths) after the
 *  runtime's headers, the runtime inlined when opts.standalone, formatted when opts.format. */
std::string finish_source(const std::string &source, const ir::Program &prog, const SourceManager &sm,
                          const std::vector<std::string> &include_dirs, const SourceOptions &opts);

/** "source" formatted with libFormat: LLVM style, 4-space indent, 100 columns, comments kept
 *  (see format_source.cpp).  Returns "source" unchanged if libFormat fails. */
std::string format_source(const std::string &source);

}  // namespace trlc
