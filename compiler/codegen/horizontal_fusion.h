#pragma once
// horizontal_fusion — one loop over the leaves of a tuple statement that compute the same thing.
//
// What it does: pytree arithmetic (dsl/README.md §9.2) is expanded by sema into one expression
// per leaf, so Adam over PPO's 12 parameter tensors is 36 leaf expressions (m', v', p' of each
// tensor) that differ only in which leaf of the parameter, gradient and state tuples they read.
// Code generation of one leaf at a time writes one loop (and one local array) per leaf and
// operation, and copying a tuple (`p[i, 0] = net[i]`) one loop per leaf.  This pass groups
// consecutive leaves of the statement's value whose expressions are the same elementwise
// function of the same scalars and of the same leaves' neighbours: leaf j of the group reads,
// from every tuple it reads, the bytes that follow those leaf j - 1 reads exactly where leaf j's
// result follows leaf j - 1's.  Such a group is one expression over the concatenation: its tuple
// reads become flat views of the arena ([N] elements from the first leaf's address, read in
// place), its operations keep their kinds, its scalars (the clip coefficient, Adam's bias
// corrections) stay the nodes the leaves share, and its result is stored at the first leaf's
// offset.  Each element is computed by the same operations on the same operands as before, so
// the result is bit-identical; only the loop structure changes.
//
// When it applies: a tuple-valued tensor statement with elementwise fusion on (-fno-fusion turns
// it off with the rest) and no matrix product planned for BLAS.  A group needs two or more
// consecutive leaves of rank >= 1, static shapes, one float store dtype, and expressions made of
// float elementwise operations (unary, binary, where, float casts; bool comparisons), zeros /
// ones, and point reads of tuple leaves; every other operand is a scalar shared by all leaves.
// Float elementwise operations raise no run-time error, so evaluating them leaf-interleaved
// cannot change which error a program reports.  The scalars such a statement reads may hold a
// chain of whole sums of leaves that fuse the same way (SumChain: a tuple's squared norm), which
// becomes one loop over the concatenation with a table of leaf boundaries.
//
// Before (one leaf of Adam's first moment, twelve times):        After (once):
//     const float *const val13 = (const float *)(src12);          const float *const val13 = ...;
//     float val125[256];                                          float val40[9155];
//     for (k = 0; k < 256; ++k)                                   for (k = 0; k < 9155; ++k)
//         val125[k] = val13[k] + 0.1f * (val122[k] - val13[k]);       val40[k] = val13[k] + ...;
//     ... 11 more leaves, then 12 store loops ...                 (one store loop)
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/row_split.h"
#include "ir/ir.h"
#include "memory/memplan.h"

namespace trlc {

namespace codegen {
class ExprEmitter;
}

/** One store of a tuple statement's value: "expr" converted to "type" (a leaf of the statement's
 *  type, or [N] elements of one dtype for a fused group) written at byte "off" of the value. */
struct LeafStore {
    ir::NodePtr expr;
    ir::Type type;
    int64_t off = 0;
};

/** A node made by this pass that stands for the elements [off, off + N·size) bytes of the value
 *  point read "read" reads: the concatenated leaves of one tuple that a fused group reads.  Code
 *  generation binds it to a view of the arena (ExprEmitter::flat_view) before emitting. */
struct FlatRead {
    ir::NodePtr node;  // type: [N] of the leaves' dtype
    ir::NodePtr read;  // a Read of one point of a tuple-valued tensor
    int64_t off = 0;   // bytes into the read's value
};

/** A chain ((sum(f_0) + sum(f_1)) + ...) + sum(f_m-1) of whole f32 / f64 sums of leaf
 *  expressions that fuse as a group's leaves do (the squared norm of a tuple in
 *  clip_by_global_norm): one loop nest over the concatenation "flat", where segment j
 *  [bounds[j], bounds[j+1]) is summed from zero in element order and the segment sums are added
 *  left to right, the additions the chain makes, in its order. */
struct SumChain {
    ir::NodePtr root;             // the last addition; code generation binds its value
    ir::NodePtr flat;             // f over [bounds.back()] elements
    std::vector<int64_t> bounds;  // m + 1 element offsets
};

/** The stores of a tuple statement after horizontal fusion. */
struct HorizontalPlan {
    std::vector<LeafStore> stores;  // in the order of the value's leaves
    std::vector<FlatRead> flat_reads;
    std::vector<SumChain> chains;  // emitted first
    ir::NodePtr all;               // a Tuple of every store's expr (ExprEmitter::count_uses)
    int groups = 0;                // fused groups and chains (>= 1)
    int fused_leaves = 0;          // leaves inside them
};

/** The horizontal fusion of the value "root" of a statement of tuple type "type" (see the file
 *  comment); nullopt when no two leaves fuse.  "plan" says which tensors have arena buffers. */
std::optional<HorizontalPlan> plan_horizontal_fusion(const ir::Program &prog, const MemPlan &plan,
                                                     const ir::NodePtr &root, const ir::Type &type);

/** Emits "hp" with "ee": binds its flat reads, computes every store's value, then writes them at
 *  address variable "dst" (the statement's point in buffer "dst_buffer").  Values that read bytes
 *  of "dst_buffer" are copied first, and an elementwise value is computed as it is stored only
 *  when nothing the statement reads shares bytes with "dst_buffer" (as for one-leaf values). */
/** With "rows" (not null), as a row-split kernel (codegen/row_split.h): the stores' values are
 *  split by the rows of the concatenation (each thread its elements of Adam's [N] update), the
 *  sums of SumChains stay whole; *rows gets the split, or RowSplitUnsupported is thrown. */
void emit_horizontal(codegen::ExprEmitter &ee, const MemPlan &plan, const HorizontalPlan &hp, int dst_buffer,
                     const std::string &dst_address, const Loc &loc, std::optional<codegen::RowSplit> *rows = nullptr);

}  // namespace trlc
