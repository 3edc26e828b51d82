// distribute — data-parallel programs: the all-reduce of every gradient and the rank-keyed
// streams (passes/distribute.h has the rules and an example).
#include "passes/distribute.h"

#include <functional>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "ir/rewrite.h"

namespace trlc {

using namespace ir;

namespace {

NodePtr make(Node n) { return std::make_shared<const Node>(std::move(n)); }

/** "base", or "base#2", … : a name no tensor has. */
std::string unique_name(const Program &prog, const std::string &base) {
    std::string n = base;
    for (int k = 2; prog.tensor_index(n) >= 0; ++k) n = base + "#" + std::to_string(k);
    return n;
}

/** Calls f on every node of the DAG under "n" once; f returns false to skip a node's operands. */
void visit(const NodePtr &n, std::set<const Node *> &seen, const std::function<bool(const Node &)> &f) {
    if (!n || !seen.insert(n.get()).second) return;
    if (!f(*n)) return;
    for (const NodePtr &a : n->args) visit(a, seen, f);
    for (const SpatialIndex &s : n->sindex) visit(s.value, seen, f);
}

/** Step 1: each grad(y, x) of tensor "t"'s equation "ei" moves into a new tensor over the
 *  equation's variables (flagged allreduce_mean), read back at the equation's own point. */
void move_grads(Program &prog, int t, size_t ei) {
    std::vector<NodePtr> grads;
    std::set<const Node *> seen;
    std::function<void(const NodePtr &)> collect = [&](const NodePtr &n) {
        if (!n || !seen.insert(n.get()).second) return;
        if (n->kind == NodeKind::Grad) {
            grads.push_back(n);
            return;
        }
        for (const NodePtr &a : n->args) collect(a);
        for (const SpatialIndex &s : n->sindex) collect(s.value);
    };
    collect(prog.tensors[t].equations[ei].body);
    if (grads.empty()) return;
    NodeRewriter rw;
    for (const NodePtr &g : grads) {
        const Equation &eq = prog.tensors[t].equations[ei];
        Tensor a;
        a.name = unique_name(prog, "allreduce." + prog.tensors[t].name);
        a.type = g->type;
        a.loc = g->loc;
        a.is_hidden = true;
        a.allreduce_mean = true;
        a.rank_keyed = true;  // the gradient's loss is this rank's data
        a.stream_name = prog.tensors[t].stream();
        Equation ae;
        ae.vars = eq.vars;
        ae.guard = eq.guard;
        ae.body = g;
        ae.loc = eq.loc;
        Node read;
        read.kind = NodeKind::Read;
        read.type = g->type;
        read.loc = g->loc;
        for (size_t v = 0; v < eq.vars.size(); ++v) {
            a.dims.push_back(eq.vars[v]);
            PatternItem p;
            p.kind = PatternItem::Var;
            p.var = static_cast<int>(v);
            ae.pattern.push_back(p);
            auto ix = std::make_shared<IndexExpr>();
            ix->aff.coef.assign(v + 1, 0);
            ix->aff.coef[v] = 1;
            ReadIndex ri;
            ri.point = ix;
            read.index.push_back(ri);
        }
        a.equations.push_back(std::move(ae));
        prog.tensors.push_back(std::move(a));
        read.tensor = static_cast<int>(prog.tensors.size()) - 1;
        rw.repl[g.get()] = make(std::move(read));
    }
    Equation &eq = prog.tensors[t].equations[ei];
    eq.body = rw(eq.body);
}

/** The tensors that node "n" reads. */
void reads_of(const NodePtr &n, std::set<int> &out) {
    std::set<const Node *> seen;
    visit(n, seen, [&](const Node &m) {
        if (m.kind == NodeKind::Read) out.insert(m.tensor);
        return true;
    });
}

}  // namespace

bool distribute(Program &prog, Diagnostics &diag) {
    (void)diag;
    prog.distributed = true;
    size_t n = prog.tensors.size();
    for (size_t t = 0; t < n; ++t)
        for (size_t ei = 0; ei < prog.tensors[t].equations.size(); ++ei) move_grads(prog, static_cast<int>(t), ei);
    // Step 2: the replicated set, from the grads' x along reads, not into all-reduced tensors.
    std::vector<bool> replicated(prog.tensors.size(), false);
    std::vector<int> work;
    for (const Tensor &t : prog.tensors) {
        if (!t.allreduce_mean) continue;
        std::set<int> xs;
        reads_of(t.equations.at(0).body->args.at(1), xs);
        work.insert(work.end(), xs.begin(), xs.end());
    }
    while (!work.empty()) {
        int t = work.back();
        work.pop_back();
        if (replicated[t] || prog.tensors[t].allreduce_mean) continue;
        replicated[t] = true;
        std::set<int> rs;
        for (const Equation &e : prog.tensors[t].equations) reads_of(e.body, rs);
        work.insert(work.end(), rs.begin(), rs.end());
    }
    for (size_t t = 0; t < prog.tensors.size(); ++t)
        if (!prog.tensors[t].allreduce_mean) prog.tensors[t].rank_keyed = !replicated[t];
    return true;
}

bool save_is_replicated(const Program &prog, const Save &s) {
    std::set<int> rs;
    reads_of(s.value, rs);
    for (int t : rs)
        if (prog.tensors[t].rank_keyed && !prog.tensors[t].allreduce_mean) return false;
    return true;
}

}  // namespace trlc
