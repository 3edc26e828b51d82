#pragma once
// emit_program — `trlc --emit=cuda`: one C++17/CUDA source for a scheduled, memory-planned
// program (issue 4).  The source includes trl_rt.h and trl_random.h, holds one kernel per tensor
// statement (TRL_KERNEL over the statement's batch points) or per chain of fused statements
// (consecutive statements of one loop body over the same batch that touch each other's values
// only at their own batch point: one launch computes them in order per batch point), a host
// function per emit / save
// statement, `run_program` with the schedule's loop nest, and `main`.  Values live in one arena
// at Buffer::offset + slot_of(point) · slot_bytes, encoded as the scheduled interpreter encodes
// them (interp/scheduled.cpp), and every operation computes in the dtype and order of
// interp/value.cpp, so a generated host program prints what `--interpret` prints.
#include <string>
#include <vector>

#include "ir/ir.h"
#include "memory/memplan.h"
#include "pdg/pdg.h"
#include "schedule/schedule.h"
#include "support/source.h"

namespace trlc {

/** An operation the code generator cannot translate yet, at the node's source position. */
struct CodegenError {
    Loc loc;
    std::string message;  // "code generation does not support matmul yet"
};

/** Whether a program bound may change at run time (`--bound NAME=V` of the generated program;
 *  decided by driver/runtime_bounds.h). */
struct BoundInfo {
    bool runtime = false;
    int64_t min_value = 1;     // runtime: the smallest value accepted
    std::string fixed_reason;  // !runtime: why, for --help ("sizes a buffer")
};

/** Code generation choices (trlc flags). */
struct CodegenOptions {
    bool fuse = true;  // -fno-fuse: one kernel per statement
    bool blas = true;  // -fno-blas: every matmul stays a sequential k loop (bit-exact)
    /** -fno-row-split: no kernel is split by rows over the host's threads (codegen/row_split.h). */
    bool row_split = true;
    /** Products with K·N below this stay loops (bit-exact with --interpret, dsl/README §7.7). */
    int64_t blas_min_kn = 4096;
    /** Per Program::bounds entry (map order); empty: every bound is compiled in. */
    std::vector<BoundInfo> bounds;
    /** The schedule's loop nest with the run-time bounds as AstExpr::Bound (null: sched.root). */
    LoopNodePtr loop_nest;
    /** --emit=library: the library's name NAME (a C identifier); the source then defines the C
     *  API of library_header's NAME.h instead of run_program and main.  "": a program. */
    std::string library;
    /** --distributed=mpi|nccl: the process-group layer the program links (trl_dist_LAYER,
     *  runtime/trl_rt.h) when the program is distributed (ir::Program::distributed). */
    std::string dist_layer = "mpi";
    /** trlc -o on the host: the kernels in two compile parts (codegen/compile_parts.h), an -O3
     *  one and an -O1 one (with the loop vectorizer), between #if guards that a whole compile ignores. */
    bool compile_parts = false;
};

/** The generated source.  Throws CodegenError for an unsupported operation. */
std::string emit_cuda(const ir::Program &prog, const Schedule &sched, const MemPlan &plan);

/** As above; "sm" names the .trl files in the header and in the per-kernel line comments. */
std::string emit_cuda(const ir::Program &prog, const Schedule &sched, const MemPlan &plan, const SourceManager *sm);

/** --emit=library: NAME.h, the C API of the program as a library (codegen/emit_library.cpp):
 *  NAME_create, NAME_run with one buffer per `input` and `output`, NAME_error, NAME_destroy;
 *  "source_path" names the .trl file in its comment. */
std::string library_header(const ir::Program &prog, const std::string &name, const std::string &source_path);

struct KernelPlan;  // codegen/kernel_plan.h

/** As above with the PDG, whose access relations decide which statements fuse (without it,
 *  or with opts.fuse false, every statement is its own kernel).  "kernels": the products and
 *  fusion passes' decisions (codegen/kernel_plan.h); null: made here by the same passes. */
std::string emit_cuda(const ir::Program &prog, const Pdg &pdg, const Schedule &sched, const MemPlan &plan,
                      const SourceManager *sm, const CodegenOptions &opts, const KernelPlan *kernels = nullptr);

}  // namespace trlc
