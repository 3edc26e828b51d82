#pragma once
// row_split — which values of a one-point kernel its threads may compute by rows (the host's
// `--threads N`), for emit_program.cpp and ExprEmitter.
//
// What: a kernel launched at one batch point (a minibatch update: its values are [R, ...]
// arrays of R minibatch rows) runs on every thread of the team; each thread computes rows
// [trl_r0, trl_r1) of the values in RowSplit::nodes (the split values) and all of every other
// value (uniform values: computed the same way by each thread, so the same bits), stores its
// rows of the split values it writes, and thread 0 alone stores the uniform ones.  Row r of a
// split value depends only on row r of its split operands, so no thread reads another's rows,
// and every element is computed by exactly the operations of the one-thread kernel: the
// output bits do not depend on --threads.
//
// When: the value's leading extent is the kernel's row count R (static), and it is
//   - an elementwise operation (unary, binary, where, cast) whose split operands have its rank
//     (operands of lower rank broadcast over the rows and stay uniform);
//   - a 2-D product A·B with A split or uniform and B uniform (the [R, K]·[K, N] layer);
//   - a float sum or mean over some axes that keeps R leading (each thread its output rows,
//     every group summed whole in the one-thread order: a bias gradient's column sums);
// and every consumer of it is split too, or it is stored by rows (a root the kernel writes:
// the statement's value, a tuple element of it, or a BLAS operand A in the workspace).  Values
// read by anything else (a sum over the rows, a gather, a softmax, an operand B) are uniform,
// and so is everything they read — unless the kernel may publish (its workspace holds a region
// for it): then such a value stays split and is published: each thread copies its rows into
// the region, a barrier (TRL_ROW_BARRIER) follows, and the uniform consumers read the whole
// value from there.  Every element is still computed by the one-thread kernel's operations.
// R is the leading extent of the largest values.
//
// Example (PPO's hidden layer after its product, h = tanh(x·W + b) with x·W from trl_gemm):
//   before: for (i = 0; i < 128; ++i) for (j ...) out[i*64 + j] = tanh(gemm[i*64 + j] + b[j]);
//   after:  for (i = trl_r0; i < trl_r1; ++i) for (j ...) out[i*64 + j] = tanh(gemm[...] + b[j]);
// launched with TRL_LAUNCH_ROWS, whose row shares are those trl_gemm splits the product by,
// so each thread reads the rows of x·W it computed itself (they stay in its core's cache).
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "ir/ir.h"

namespace trlc::codegen {

/** The split values of one kernel (see above). */
struct RowSplit {
    int64_t rows = 0;                      // R: the leading extent of every split value
    std::set<const ir::Node *> nodes;      // the split values; a root tuple is listed when its elements may be
    int64_t work = 0;                      // element operations of the split values (work_estimate's units)
    std::set<const ir::Node *> published;  // split values that uniform consumers read (see above)
};

/** The row split of a kernel computing the DAGs below "split_roots" (each stored by rows when
 *  split: the statement's value, a BLAS operand A) and "uniform_roots" (stored whole: an
 *  operand B, a value spilled for later kernels), where the nodes in "leaves" are already
 *  computed (products and operands read from the workspace: views, never split); "publish":
 *  split values read by uniform consumers may be published (above) instead of made uniform.
 *  Nothing (nullopt) when the split values are under 40 % of the kernel's work or 2^14
 *  operations: then the kernel runs on one thread as before. */
std::optional<RowSplit> plan_row_split(const std::vector<const ir::Node *> &split_roots,
                                       const std::vector<const ir::Node *> &uniform_roots,
                                       const std::set<const ir::Node *> &leaves, bool publish = false);

}  // namespace trlc::codegen
