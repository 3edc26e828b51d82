#pragma once
// vectorize — choose the dims that become batch axes (the TimeRL paper, Silvestre & Pietzuch,
// arXiv 2501.05408, §4.2).
//
// A dim d becomes a batch axis when no dependence is carried along it.  The
// rule is syntactic on the IR (every equation, emit and save), and each part
// of it is checked where it can fail:
//   1. every pattern position of d is the plain dim (no shift `d+1`, no
//      constant `0` / `T-1`), so every statement covers d's whole range;
//   2. no guard of an equation mentions d;
//   3. every read by a consumer that has d of a tensor that has d maps d to
//      itself (`x[b, t-1]` is fine for b; `x[b-1]`, `x[min(b+1, B-1)]`,
//      `x[0:B]` are not);
//   4. a consumer that has d uses d in no other read index (`w[b]` of a tensor
//      over another dim) and in no dynamic extent (`x[b, 0:b]`, `arange(B-b)`):
//      the batch's elements would not line up.
// Reads by consumers *without* d are free: `x[0:B, i]`, `x[0, i]` read the
// finished batch.  Using d as a value (`rng(b, i)`, `f32(b)`) is fine: each
// element of the batch computes its own coordinate.  Emits over d and saves
// are consumers like equations.
// Why this is enough: collapse d in the point-level dependence graph.  Edges
// between two d-tensors keep d, and no other coordinate depends on d (rules
// 2-4), so a cycle in the collapsed graph that passes through a tensor without
// d would repeat, at the same d, as a point-level zero cycle, which
// check_no_zero_cycle has already rejected; a cycle entirely among d-tensors
// would be one too.
// A statement then runs once for all values of its batch dims, as one tensor
// operation, and a batch dim's range is always [0, bound).
//
//   before:  act_0[b, i, t]        (B·I·T instances)
//   after:   act_0[i, t] × batch b (I·T instances, each over all of b)
#include <string>
#include <vector>

#include "ir/ir.h"
#include "pdg/pdg.h"

namespace trlc {

/** The decision with its reasons.  Per Program::dims index: batch[d], true when the dim is a
 *  batch axis, and when !batch[d] the first reason found, in program order (tensors, their
 *  equations, emits, saves), e.g. "x[t] reads x[t-1] at 4:8 (carried dependence)". */
struct VectorizeDecision {
    std::vector<bool> batch;
    std::vector<std::string> reasons;
};

/** The vectorize pass (pipeline stage "vectorize", flag -fno-vectorize, lit folder vectorize/):
 *  the rule above on "prog".  All false when "enabled" is false (-fno-vectorize). */
VectorizeDecision vectorize(const ir::Program &prog, const Pdg &pdg, bool enabled);

/** "b: batch axis" / "t: not a batch axis: REASON", one line per dim in declaration order. */
std::string vectorize_decision_to_string(const ir::Program &prog, const VectorizeDecision &d);

}  // namespace trlc
