#pragma once
// work_estimate — how much arithmetic one batch point of a kernel does, for the host's choice
// of how many threads run a launch (TRL_LAUNCH's third argument, runtime/trl_rt.h).
//
// The estimate counts element operations in the expression DAG: each distinct node costs the
// larger of its own element count and its operands' (an elementwise op touches every element,
// a reduction reads all of its input), a matrix product m·n·k.  It is a proxy, not a model of
// the machine: the runtime only compares it with a threshold (a launch is split over threads
// when every thread gets enough work to pay for waking it), so a factor of two either way
// changes nothing that matters.  Example: tanh(x @ W + b) with x [128, 64], W [64, 64] costs
// 128·64·64 (the product) + 2·128·64 (the add and the tanh) ≈ 541k.  Reads cost nothing (the
// kernel reads the arena in place), and neither do tuples: a tuple element of a read (one
// layer's weights from the parameter tuple) costs its own elements, not the whole tuple's —
// counting the tuple made the rollout's [64]-wide layers of PPO CartPole look like 32k
// operations per point (0.2 us of time) and split them over threads, 2x slower.
#include <algorithm>
#include <cstdint>
#include <set>

#include "ir/ir.h"

namespace trlc {

/** Elements of a value of type "t" (its static maxima; a tuple: the sum over its leaves). */
inline int64_t work_numel(const ir::Type &t) {
    if (t.is_tuple) {
        int64_t n = 0;
        for (const auto &e : t.elems) n += work_numel(e);
        return n;
    }
    int64_t n = 1;
    for (const auto &e : t.shape) n *= std::max<int64_t>(1, e.max_value);
    return n;
}

/** Element operations of one evaluation of the DAG below "root" (distinct nodes counted once);
 *  "seen" carries the nodes already counted across calls (the statements of a fused kernel).
 *  "weigh", when given, multiplies each node's own count by its cost relative to an add
 *  (codegen/compile_parts.h's weighted_work). */
inline int64_t work_estimate(const ir::Node &root, std::set<const ir::Node *> &seen,
                             int64_t (*weigh)(const ir::Node &) = nullptr) {
    if (!seen.insert(&root).second) return 0;
    const bool free = root.kind == ir::NodeKind::Read || root.kind == ir::NodeKind::TupleGet || root.type.is_tuple;
    int64_t self = free ? 0 : work_numel(root.type), operands = 0, below = 0;
    for (const auto &a : root.args) {
        if (!a) continue;
        if (!a->type.is_tuple && !free) operands = std::max(operands, work_numel(a->type));
        below += work_estimate(*a, seen, weigh);
    }
    for (const auto &si : root.sindex)
        if (si.value) below += work_estimate(*si.value, seen, weigh);
    if (root.kind == ir::NodeKind::Builtin && root.builtin == ir::BuiltinOp::MatMul && root.args.size() == 2 &&
        root.args[0] && !root.args[0]->type.shape.empty())
        self *= std::max<int64_t>(1, root.args[0]->type.shape.back().max_value);
    return std::max(self, operands) * (weigh ? weigh(root) : 1) + below;
}

inline int64_t work_estimate(const ir::Node &root) {
    std::set<const ir::Node *> seen;
    return work_estimate(root, seen);
}

}  // namespace trlc
