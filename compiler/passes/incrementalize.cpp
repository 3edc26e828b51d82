// incrementalize — sums over slices of single-use tensors become running sums (see the header).
//
// One candidate at a time: collect every read of every tensor (equation bodies, emits, saves),
// pick a tensor C whose reads are one Read node, under one `sum` of one equation of R, match the
// pattern, decide the direction, replace C's equations by the running sum's and the `sum` node
// in R's body by a sum of the accumulator's last point; repeat until nothing matches.
#include "passes/incrementalize.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

namespace trlc {

namespace {

using namespace ir;

NodePtr mk(Node n) { return std::make_shared<const Node>(std::move(n)); }

IndexExprPtr aff_ix(Affine a) {
    auto e = std::make_shared<IndexExpr>();
    e->kind = IndexExpr::Aff;
    e->aff = std::move(a);
    return e;
}

Affine aff_const(int64_t c) {
    Affine a;
    a.constant = c;
    return a;
}

Affine aff_var(int v, int64_t c) {
    Affine a;
    a.constant = c;
    a.coef.assign(v + 1, 0);
    a.coef[v] = 1;
    return a;
}

/** The constant value of "e" when it is a constant affine form. */
bool const_of(const IndexExprPtr &e, int64_t *v) {
    if (!e || e->kind != IndexExpr::Aff || !e->aff.is_constant()) return false;
    *v = e->aff.constant;
    return true;
}

/** When "e" is var "v" plus a constant (no other variable): that constant. */
bool shift_of(const IndexExprPtr &e, int v, int64_t *c) {
    if (!e || e->kind != IndexExpr::Aff || e->aff.coef_of(v) != 1) return false;
    for (size_t k = 0; k < e->aff.coef.size(); ++k)
        if (static_cast<int>(k) != v && e->aff.coef[k]) return false;
    *c = e->aff.constant;
    return true;
}

/** Every distinct node of the DAG under "root", each once. */
void walk(const NodePtr &root, std::set<const Node *> &seen, const std::function<void(const NodePtr &)> &f) {
    if (!root || !seen.insert(root.get()).second) return;
    f(root);
    for (const NodePtr &a : root->args) walk(a, seen, f);
    for (const SpatialIndex &s : root->sindex) walk(s.value, seen, f);
}

/** One reader of a tensor: equation "eq" of tensor "tensor" (-1: an emit or save). */
struct ReadSite {
    int tensor = -1, eq = -1;
    NodePtr read;
};

/** "root" with the node "from" replaced by "to" (nodes not above "from" are shared). */
NodePtr replace_node(const NodePtr &root, const Node *from, const NodePtr &to,
                     std::unordered_map<const Node *, NodePtr> &memo) {
    if (root.get() == from) return to;
    auto it = memo.find(root.get());
    if (it != memo.end()) return it->second;
    bool changed = false;
    std::vector<NodePtr> args;
    for (const NodePtr &a : root->args) {
        args.push_back(replace_node(a, from, to, memo));
        changed = changed || args.back() != a;
    }
    std::vector<SpatialIndex> sindex = root->sindex;
    for (SpatialIndex &s : sindex) {
        if (!s.value) continue;
        NodePtr v = replace_node(s.value, from, to, memo);
        changed = changed || v != s.value;
        s.value = v;
    }
    NodePtr out = root;
    if (changed) {
        Node n = *root;
        n.args = std::move(args);
        n.sindex = std::move(sindex);
        out = mk(std::move(n));
    }
    memo[root.get()] = out;
    return out;
}

class Incrementalizer {
public:
    Incrementalizer(Program &p, int64_t min_bytes) : prog_(p), min_bytes_(min_bytes) {}

    int run(std::vector<std::string> *log) {
        int count = 0;
        std::set<int> rejected;
        for (;;) {
            collect();
            bool done_one = false;
            for (size_t c = 0; c < prog_.tensors.size() && !done_one; ++c) {
                if (rejected.count(static_cast<int>(c))) continue;
                if (try_rewrite(static_cast<int>(c), log))
                    done_one = true, ++count;
                else
                    rejected.insert(static_cast<int>(c));
            }
            if (!done_one) return count;
        }
    }

private:
    Program &prog_;
    int64_t min_bytes_;
    std::vector<std::vector<ReadSite>> reads_;                             // per tensor
    std::unordered_map<const Node *, std::vector<const Node *>> parents_;  // parent edges

    /** Dims along which some equation carries a dependence (a shift pattern `x[t+1]` or a read
     *  `x[t-1]`): only those may carry a running sum.  A dim without one is vectorized into a
     *  batch axis (passes/vectorize.h), and a running sum along it would serialize it. */
    std::set<int> carried_;

    void collect() {
        carried_.clear();
        for (const Tensor &T : prog_.tensors)
            for (const Equation &e : T.equations) {
                for (size_t j = 0; j < e.pattern.size(); ++j)
                    if (e.pattern[j].kind == PatternItem::Shift) carried_.insert(T.dims[j]);
                std::set<const Node *> seen;
                walk(e.body, seen, [&](const NodePtr &n) {
                    if (n->kind != NodeKind::Read) return;
                    const Tensor &W = prog_.tensors[n->tensor];
                    for (size_t j = 0; j < W.dims.size(); ++j) {
                        if (n->index[j].is_slice) continue;
                        for (size_t v = 0; v < e.vars.size(); ++v) {
                            int64_t c = 0;
                            if (e.vars[v] == W.dims[j] && shift_of(n->index[j].point, static_cast<int>(v), &c) &&
                                c != 0)
                                carried_.insert(W.dims[j]);
                        }
                    }
                });
            }
        reads_.assign(prog_.tensors.size(), {});
        parents_.clear();
        auto scan = [&](const NodePtr &body, int t, int e) {
            std::set<const Node *> seen;
            walk(body, seen, [&](const NodePtr &n) {
                for (const NodePtr &a : n->args) parents_[a.get()].push_back(n.get());
                if (n->kind == NodeKind::Read) reads_[n->tensor].push_back({t, e, n});
            });
        };
        for (size_t t = 0; t < prog_.tensors.size(); ++t)
            for (size_t e = 0; e < prog_.tensors[t].equations.size(); ++e)
                scan(prog_.tensors[t].equations[e].body, static_cast<int>(t), static_cast<int>(e));
        for (const Emit &em : prog_.emits) {
            for (const auto &f : em.fields) scan(f.second, -1, -1);
            if (em.guard) scan(em.guard, -1, -1);
        }
        for (const Save &s : prog_.saves) scan(s.value, -1, -1);
    }

    /** True when the accumulation along dim "x" must run downwards: body_C reads (through
     *  reads at the same x) a tensor with a read along x at a positive shift. */
    bool runs_down(int c, int x) {
        std::set<int> visited{c};
        std::vector<int> work{c};
        bool down = false;
        while (!work.empty()) {
            int w = work.back();
            work.pop_back();
            const Tensor &W = prog_.tensors[w];
            for (const Equation &e : W.equations) {
                // The variable for x in this equation and the pattern's offset there.
                int vx = -1;
                int64_t off = 0;
                for (size_t j = 0; j < W.dims.size(); ++j)
                    if (W.dims[j] == x && e.pattern[j].kind != PatternItem::Constant) {
                        vx = e.pattern[j].var;
                        off = e.pattern[j].kind == PatternItem::Shift ? e.pattern[j].offset : 0;
                    }
                if (vx < 0) continue;
                std::set<const Node *> seen;
                walk(e.body, seen, [&](const NodePtr &n) {
                    if (n->kind != NodeKind::Read) return;
                    const Tensor &R = prog_.tensors[n->tensor];
                    for (size_t j = 0; j < R.dims.size(); ++j) {
                        if (R.dims[j] != x || n->index[j].is_slice) continue;
                        int64_t s = 0;
                        if (!shift_of(n->index[j].point, vx, &s)) continue;
                        s -= off;
                        if (s > 0) down = true;
                        if (s == 0 && visited.insert(n->tensor).second) work.push_back(n->tensor);
                    }
                });
            }
        }
        return down;
    }

    bool try_rewrite(int c, std::vector<std::string> *log) {
        Tensor &C = prog_.tensors[c];
        if (C.is_load || C.type.is_tuple) return false;
        if (C.type.dtype != DType::F32 && C.type.dtype != DType::F64) return false;
        for (const Extent &x : C.type.shape)
            if (!x.is_static()) return false;
        if (C.equations.empty() || C.dims.empty()) return false;
        double bytes = C.type.dtype == DType::F64 ? 8 : 4;
        for (const Extent &x : C.type.shape) bytes *= static_cast<double>(x.max_value);
        for (int d : C.dims) bytes *= static_cast<double>(prog_.dims[d].bound);
        if (bytes < static_cast<double>(min_bytes_)) return false;
        bool has_rng = false;
        for (const Equation &E : C.equations) {
            std::set<const Node *> seen;
            walk(E.body, seen, [&](const NodePtr &n) {
                has_rng = has_rng || n->kind == NodeKind::Rng || n->kind == NodeKind::Extern;
            });
        }
        if (has_rng) return false;
        // One read node, one reader equation (not C itself), under one sum.
        const std::vector<ReadSite> &rs = reads_[c];
        if (rs.empty()) return false;
        for (const ReadSite &s : rs)
            if (s.read != rs[0].read || s.tensor < 0 || s.tensor == c) return false;
        if (rs.size() != 1) return false;
        const NodePtr &read = rs[0].read;
        auto pit = parents_.find(read.get());
        if (pit == parents_.end() || pit->second.size() != 1) return false;
        const Node *sum = pit->second[0];
        if (sum->kind != NodeKind::Builtin || sum->builtin != BuiltinOp::Sum || sum->args.size() != 1) return false;
        // The read: full slices at some positions, points elsewhere.
        std::vector<int> sliced;
        for (size_t j = 0; j < read->index.size(); ++j) {
            const ReadIndex &ri = read->index[j];
            if (!ri.is_slice) continue;
            int64_t lo = -1, hi = -1;
            if (!const_of(ri.lo, &lo) || !const_of(ri.hi, &hi) || lo != 0 || hi != prog_.dims[C.dims[j]].bound)
                return false;
            sliced.push_back(static_cast<int>(j));
        }
        if (sliced.empty()) return false;
        int ns = static_cast<int>(sliced.size());
        int rank = static_cast<int>(read->type.shape.size());
        std::set<int64_t> axes;
        if (sum->has_axes)
            for (int64_t a : sum->axes) axes.insert(a < 0 ? a + rank : a);
        else
            for (int a = 0; a < rank; ++a) axes.insert(a);
        for (int a = 0; a < ns; ++a)
            if (!axes.count(a)) return false;
        // The rewrite.
        // The last sliced dim that carries a dependence somewhere.
        int jx = -1;
        for (int j : sliced)
            if (carried_.count(C.dims[j])) jx = j;
        if (jx < 0) return false;
        int x = C.dims[jx];
        int ax_x = static_cast<int>(std::find(sliced.begin(), sliced.end(), jx) - sliced.begin());
        int64_t X = prog_.dims[x].bound;
        bool down = runs_down(c, x);
        std::string old_name = C.name;
        int64_t first = down ? X - 1 : 0;
        int64_t step = down ? 1 : -1;  // the previous point is x + step
        std::vector<Equation> eqs;
        for (const Equation &E : C.equations) {
            // The point an equation defines, as affine forms of its variables.
            std::vector<Affine> at;
            for (const PatternItem &pi : E.pattern)
                at.push_back(pi.kind == PatternItem::Constant
                                 ? aff_const(pi.offset)
                                 : aff_var(pi.var, pi.kind == PatternItem::Shift ? pi.offset : 0));
            Node prev;
            prev.kind = NodeKind::Read;
            prev.type = C.type;
            prev.loc = E.loc;
            prev.tensor = c;
            for (size_t j = 0; j < at.size(); ++j) {
                ReadIndex ri;
                Affine a = at[j];
                if (static_cast<int>(j) == jx) a.constant += step;
                ri.point = aff_ix(a);
                prev.index.push_back(ri);
            }
            Node add;
            add.kind = NodeKind::Binary;
            add.bop = BinaryOp::Add;
            add.type = C.type;
            add.loc = E.loc;
            add.args = {mk(std::move(prev)), E.body};
            NodePtr sum_body = mk(std::move(add));
            const PatternItem &px = E.pattern[jx];
            if (px.kind == PatternItem::Constant) {
                Equation e = E;
                if (px.offset != first) e.body = sum_body;
                eqs.push_back(e);
                continue;
            }
            Equation e1 = E, e2 = E;
            e1.otherwise = e2.otherwise = false;
            e1.guard = guard_and(E.guard, guard_cmp(BinaryOp::Eq, at[jx], aff_const(first)));
            e2.guard = guard_and(E.guard, guard_cmp(down ? BinaryOp::Lt : BinaryOp::Gt, at[jx], aff_const(first)));
            e2.body = sum_body;
            eqs.push_back(e1);
            eqs.push_back(e2);
        }
        C.equations = std::move(eqs);
        C.name = old_name + ".acc";

        // The reader: the accumulator's last point along x, the other slices summed as before.
        Node nr = *read;
        nr.index[jx] = ReadIndex{};
        nr.index[jx].point = aff_ix(aff_const(down ? 0 : X - 1));
        nr.type.shape.erase(nr.type.shape.begin() + ax_x);
        NodePtr newread = mk(std::move(nr));
        NodePtr repl;
        if (!sum->has_axes) {
            Node s = *sum;
            s.args = {newread};
            repl = mk(std::move(s));
        } else {
            std::vector<int64_t> na;
            for (int64_t a : axes)
                if (a != ax_x) na.push_back(a > ax_x ? a - 1 : a);
            if (na.empty()) {
                repl = newread;
            } else {
                Node s = *sum;
                s.args = {newread};
                s.axes = na;
                repl = mk(std::move(s));
            }
        }
        Loc sum_loc = sum->loc;
        Tensor &R = prog_.tensors[rs[0].tensor];
        Equation &Er = R.equations[rs[0].eq];
        std::unordered_map<const Node *, NodePtr> memo;
        Er.body = replace_node(Er.body, sum, repl, memo);
        if (log) {
            std::string d;
            for (size_t j = 0; j < C.dims.size(); ++j) d += (j ? ", " : "") + prog_.dims[C.dims[j]].name;
            log->push_back(old_name + "[" + d + "]: running sum along " + prog_.dims[x].name +
                           (down ? " (down)" : " (up)") + " in " + C.name + ", read by " + R.name + " at " +
                           std::to_string(sum_loc.line) + ":" + std::to_string(sum_loc.col));
        }
        return true;
    }
};

}  // namespace

int incrementalize(Program &prog, std::vector<std::string> *log, int64_t min_bytes) {
    return Incrementalizer(prog, min_bytes).run(log);
}

}  // namespace trlc
