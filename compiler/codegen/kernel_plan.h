#pragma once
// kernel_plan — the two planning passes of code generation, run by the pipeline between
// runtime-bounds and codegen (driver/pipeline.h), and by emit_cuda itself when it is given no
// plan (the run-time bound check's compilations):
//   blas (plan_blas.cpp): which matmul nodes of each tensor statement go to trl_gemm
//     for all batch points at once, and the workspace they use (-fno-blas: none);
//   fusion (plan_fusion.cpp): which consecutive tensor statements of one loop body run as one
//     kernel (-fno-fuse: none).
// The rules are in those files' header comments.  Example (`trlc p.trl --print-after=fusion`):
//   ob_0 + logits_0 + act_0
#include <cstdint>
#include <map>
#include <ostream>
#include <set>
#include <utility>
#include <vector>

#include "codegen/emit_program.h"

namespace trlc {

/** One matmul node of a statement computed by trl_gemm for all batch points at once. */
struct BlasProduct {
    const ir::Node *node = nullptr;
    ir::DType dt = ir::DType::F32;
    int64_t m = 1, k = 1, n = 1;  // per point: A [m, k] ([k] when a_vector), B [k, n]
    bool a_vector = false;
    /** Operand read in place from the arena (a point read of a tensor, or a tuple part of one,
     *  of the product's dtype): trl_gemm gets its arena address, computed on the host, and no
     *  operand kernel copies it.  A only with one batch point. */
    bool a_in_place = false, b_in_place = false;
    /** A read in place is transpose(x) of a point read x stored [k, m] (trl_gemm_tn). */
    bool a_trans = false;
    /** The operand is the result of the statement's earlier product j (in place: its rows of
     *  the workspace; B only with one batch point), else -1. */
    int a_product = -1, b_product = -1;
    int64_t a_off = 0, b_off = 0, c_off = 0;  // workspace byte offsets
};

/** A value the operand kernel of product "producer" computes anyway (its A side) and stores to
 *  the workspace at byte "off" (its rows per batch point), so that the statement's later
 *  kernels read it instead of computing it again (plan_blas.cpp, "spills"). */
struct BlasSpill {
    const ir::Node *node = nullptr;
    int producer = 0;
    int64_t off = 0;
    int64_t numel = 1;  // elements per batch point (its static shape; 1 for a scalar)
};

struct BlasPlan {
    int64_t points = 1;  // batch points of the statement (the GEMM has points·m rows)
    std::vector<BlasProduct> products;
    std::vector<BlasSpill> spills;
};

/** Whether an operand "op" that its operand kernel stored in the workspace for a product in
 *  "dt" is read back from there by the statement's later kernels (instead of computed again):
 *  an array of the product's dtype with a static shape.  plan_spills and the emitter's
 *  bind_operand both ask this. */
inline bool operand_read_back(const ir::Node &op, ir::DType dt) {
    if (op.type.is_tuple || op.type.dtype != dt) return false;
    for (const auto &e : op.type.shape)
        if (!e.is_static()) return false;
    return true;
}

/** What the two passes decided; statement indices are Schedule::statements indices. */
struct KernelPlan {
    std::map<int, BlasPlan> blas;          // tensor statement -> its products computed by trl_gemm
    int64_t workspace_bytes = 0;           // the largest statement's workspace (statements run in turn)
    std::set<int> single;                  // tensor statements launched alone somewhere
    std::vector<std::vector<int>> groups;  // fused chains (statement indices, in order)
    /** (Block of the loop nest, its first child in the chain) -> (group, chain length). */
    std::map<std::pair<const LoopNode *, size_t>, std::pair<int, size_t>> fused_at;
};

/** Tensor statement "st" copies a value onto its own bytes: its equation is a plain read of a
 *  tensor (the same one, `tgt[t+1] = tgt[t] otherwise`, or another whose buffer the memory plan
 *  donated to it, of the same type) and both buffers keep every point at one address (a point
 *  buffer, or one slot), the same one, so running it changes no byte: the loop nest launches
 *  nothing for it and the fusion pass puts it in no kernel.  DQN sample: the target network's
 *  copy, 43 KB at 9,999 of 10,000 steps; a --distributed program: `allreduce.T = grad(...)`,
 *  36,640 B per PPO update.  (plan_fusion.cpp) */
bool copies_onto_itself(const ir::Program &prog, const MemPlan &plan, const Statement &st);

/** The loop nest code generation prints: opts.loop_nest (run-time bounds) or sched.root. */
const LoopNode *codegen_root(const Schedule &sched, const CodegenOptions &opts);

/** The blas pass: fills plan->blas and plan->workspace_bytes (nothing with !opts.blas). */
void plan_blas(const ir::Program &prog, const Schedule &sched, const MemPlan &plan, const CodegenOptions &opts,
               KernelPlan *out);

/** The fusion pass over codegen_root's loop nest: fills plan->single, groups and fused_at.
 *  Without "pdg" or with !opts.fuse every statement is its own kernel.  Reads plan->blas (a
 *  statement with products is never fused), so it runs after plan_blas. */
void plan_fusion(const ir::Program &prog, const Pdg *pdg, const Schedule &sched, const MemPlan &plan,
                 const CodegenOptions &opts, KernelPlan *out);

/** --print-after=blas: "x_1: [512, 4] x [4, 64] by trl_gemm" per statement with products (one
 *  [rows, k] x [k, n] per product), then "workspace: N bytes"; or "no products through trl_gemm". */
void print_blas(const Schedule &sched, const KernelPlan &k, std::ostream &out);

/** --print-after=fusion: one line per fused chain, "x_1 + y_1 + z_0", or "no fusion". */
void print_fusion(const Schedule &sched, const KernelPlan &k, std::ostream &out);

/** The named profiler region (`region "name" { … }`, dsl/README §7.9) statement "st" is timed
 *  under: the innermost one holding its source line, else, for a tensor of the autodiff pass
 *  (grad.<y>…, <y>.<k>.saved.<n>), its loss y's; nullptr when none (profile_regions.cpp).  A
 *  fused kernel never spans two regions (plan_fusion.cpp). */
const ir::Region *statement_region(const ir::Program &prog, const Statement &st);

}  // namespace trlc
