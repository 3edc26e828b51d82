#pragma once
// rewrite — replacing nodes inside the expression DAGs of the IR (ir/ir.h), for passes that
// substitute one subexpression for another (passes/autodiff, passes/distribute).
#include <memory>
#include <unordered_map>
#include <utility>

#include "ir/ir.h"

namespace trlc::ir {

/** Rewrites expression DAGs: a node in "repl" becomes its replacement, and every node above
 *  one is copied (every field kept: a Const's bound tag, an Extern's name) with its rewritten
 *  operands; a node shared in the DAG is rewritten once ("memo").  Replacements added to
 *  "repl" later apply to nodes not yet rewritten.
 *    before: repl = {g → r}, body = tanh(g) + g     after: tanh(r) + r (one new + and tanh) */
struct NodeRewriter {
    std::unordered_map<const Node *, NodePtr> repl, memo;
    NodePtr operator()(const NodePtr &n) {
        if (!n) return n;
        auto r = repl.find(n.get());
        if (r != repl.end()) return r->second;
        auto m = memo.find(n.get());
        if (m != memo.end()) return m->second;
        bool changed = false;
        Node c = *n;
        for (NodePtr &a : c.args) {
            NodePtr b = (*this)(a);
            changed = changed || b != a;
            a = b;
        }
        for (SpatialIndex &s : c.sindex) {
            NodePtr b = (*this)(s.value);
            changed = changed || b != s.value;
            s.value = b;
        }
        NodePtr out = changed ? std::make_shared<const Node>(std::move(c)) : n;
        return memo[n.get()] = out;
    }
};

}  // namespace trlc::ir
