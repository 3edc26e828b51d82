// autodiff — grad(y, x) by reverse-mode differentiation of the program's equations.
//
// Let the equation E0 holding grad(y, x) have variables V (e.g. {i}); y is a scalar float
// expression of E0, x a read of a tensor X at E0's own point (`net[i]`) or a tuple of such
// reads.  One grad is differentiated at a time:
//
// 1. Active set.  A tensor z is *active* when it lies on a dependence path X -> … -> y made of
//    gradient-carrying reads (not under stop_grad, not through integer, bool or key values:
//    argmax, categorical samples, comparisons, indices).  X itself is the leaf: its equations
//    are not differentiated (every active read of X is the identity along V, so y sees X at one
//    point only).
// 2. Adjoint tensors.  Each active z and each X gets `grad.<y>.<z>` with z's domain and type and
//    one equation per equation of z (same pattern and guard): adj_z[p] = ∂y[q]/∂z[p], where q is
//    p's point along V.  Along V every active read must be the identity (diagnosed otherwise), so
//    different grad points never mix.
// 3. Consumers.  For each equation Ec of an active tensor C (and for y itself, seeded with 1),
//    a spatial reverse sweep over Ec's body (standard reverse accumulation over the expression
//    DAG, shared nodes accumulating) gives, for every read r of an active tensor or X, the
//    adjoint g_r of the value read (shape of the read).  Those are stored in a tensor over C's
//    domain `grad.<y>.<z>.from.<C>.<k>` (J) whose equations mirror C's: Ec's gives g_r, the
//    others zeros, so J is zero wherever Ec does not apply (the effective domains are C's).
//    Several reads of one equation share one tuple-valued tensor `grad.<y>.back.<C>.<k>`.
// 4. Inverting the access relations.  Per domain position of z, the read index is a variable
//    plus a constant (`z[t-1]`, `z[t+1]`: adj_z[u] takes J at the consumer's point t = u+1 /
//    u-1, guarded by that point being in the consumer's equation: its variable range and guard —
//    backprop through time), a constant (`z[0]`: only at u = 0), or a constant slice (`z[0:T]`:
//    the slice axis of g_r is indexed at u - lo); a dynamic slice (`z[t:T]`, `z[0:t+1]`) is
//    read like the static slice 0:max(hi) after g_r has been placed at lo in a zero array of
//    that length (one_hot, along the block's own axis), its variable being summed.  The adjoint
//    of an indexing inside an expression (x[:, 0], gather) is a scatter_add of g into x's
//    shape (scatter_via_iota).  Variables
//    of Ec that no position of the read uses (logits[b, i, t] reading net[i]) are summed over:
//    J is read with a slice over them and reduced with sum.  A contribution whose guard is not
//    always true goes to its own tensor (`….at`) with the guarded equation and an
//    `otherwise`-like complement of zeros.
//    A clamped position (`z[min(t+1, T-1)]`) is split into pieces over t's static range, each a
//    shift or a constant restricted to its run of t (Contribution::var_range):
//      adj_z[u] += J[u-1] when 1 <= u <= T-1 (the shift, t < T-1);   adj_z[T-1] += J[T-1].
// 5. The grad node is replaced by a read of adj_X at E0's point.
// 6. Saved forward values.  The adjoints of step 3 are written in terms of forward values (tanh'
//    = 1 - y² with y the forward node itself, matmul's adjoints read its operands), so J's
//    expression contains Ec's forward expression again, and code generation would recompute
//    it in every kernel that needs it.  A forward node that J reads directly and whose
//    recomputation costs at least 1024 transcendental element operations (a tanh layer of a
//    batch) becomes a hidden tensor `<C>.<k>.saved.<n>` mirroring C's equations, read by Ec
//    and by J at their own point (Ec's whole value: a read of C itself): computed once, values
//    unchanged (the same operations).
//
// Not supported yet (diagnosed at the read): clamped reads over two dims or with more than 16
// pieces, a dynamic slice whose adjoint has rank > 2, reads along V other than the identity, discounted_cumsum,
// extern calls and random numbers inside a differentiated equation, grad of grad.
// Derivative conventions follow PyTorch/JAX: max/min (elementwise) split ties in halves,
// reductions max/min share the gradient evenly among tied maxima, relu'(0) = 0, |x|'(0) = 0,
// clamp passes the gradient to x for lo <= x <= hi.
//
// Files: this one is the driver (finding the grads; steps 1-3 and 5 for one grad, in
// differentiate_one and the functions it calls); autodiff_rules.cpp holds the adjoint rules
// (step 3's sweep), autodiff_access.cpp the access inversion (step 4), autodiff_saved.cpp the
// saved forward values (step 6), autodiff_builders.cpp the IR builders they share, and
// autodiff_impl.h (private to passes/) declares what the files share.
#include "passes/autodiff.h"

#include "passes/autodiff_impl.h"

namespace trlc::autodiff_detail {

bool Differentiator::run() {
    std::vector<std::pair<int, int>> sites_eq;
    std::vector<NodePtr> sites;
    std::set<const Node *> seen;
    std::function<void(const NodePtr &, int, int)> find = [&](const NodePtr &n, int t, int e) {
        if (!n || !seen.insert(n.get()).second) return;
        if (n->kind == NodeKind::Grad) {
            if (t < 0) {
                diag_.error(n->loc, "grad may only be used in the equation of a tensor, not in an "
                                    "emit or save; define a tensor holding it");
                return;
            }
            sites.push_back(n);
            sites_eq.push_back({t, e});
            if (contains_grad(n->args[0]) || contains_grad(n->args[1]))
                diag_.error(n->loc, "grad of a value that depends on grad(…) is not supported");
        }
        for (const NodePtr &a : n->args) find(a, t, e);
        for (const SpatialIndex &s : n->sindex) find(s.value, t, e);
    };
    size_t ntensors = prog_.tensors.size();
    for (size_t t = 0; t < ntensors; ++t)
        for (size_t e = 0; e < prog_.tensors[t].equations.size(); ++e)
            find(prog_.tensors[t].equations[e].body, static_cast<int>(t), static_cast<int>(e));
    for (const Emit &em : prog_.emits) {
        for (const auto &f : em.fields) find(f.second, -1, -1);
        if (em.guard) find(em.guard, -1, -1);
    }
    for (const Save &s : prog_.saves) find(s.value, -1, -1);
    if (diag_.has_errors()) return false;
    if (sites.empty()) return true;

    std::unordered_map<const Node *, NodePtr> repl;
    for (size_t k = 0; k < sites.size(); ++k) {
        try {
            repl[sites[k].get()] = differentiate_one(sites_eq[k].first, sites_eq[k].second, sites[k]);
        } catch (const AdError &e) {
            diag_.error(e.loc, e.message);
        }
    }
    if (diag_.has_errors()) return false;
    // Replace the grad nodes everywhere (bodies of the new tensors may copy them too).
    NodeRewriter rw;
    rw.repl = std::move(repl);
    for (Tensor &t : prog_.tensors)
        for (Equation &e : t.equations) e.body = rw(e.body);
    for (const auto &site : backs_) save_forward_values(site.second);
    return true;
}

bool Differentiator::contains_grad(const NodePtr &n) {
    if (!n) return false;
    if (n->kind == NodeKind::Grad) return true;
    for (const NodePtr &a : n->args)
        if (contains_grad(a)) return true;
    return false;
}

std::vector<std::string> Differentiator::var_names(const Equation &e) const {
    std::vector<std::string> out;
    for (int d : e.vars) out.push_back(prog_.dims[d].name);
    return out;
}

std::string Differentiator::read_text(const Node &r, const Equation &e) const {
    std::vector<std::string> names = var_names(e);
    std::string s = prog_.tensors[r.tensor].name + "[";
    for (size_t k = 0; k < r.index.size(); ++k) {
        if (k) s += ", ";
        const ReadIndex &ri = r.index[k];
        if (ri.is_slice)
            s += index_expr_compact(*ri.lo, names) + ":" + index_expr_compact(*ri.hi, names);
        else
            s += index_expr_compact(*ri.point, names);
    }
    return s + "]";
}

/** "q[i+1]": tensor "c"'s left-hand side in equation "e". */
std::string Differentiator::lhs_text(int c, const Equation &e) const {
    std::string s = prog_.tensors[c].name;
    if (e.pattern.empty()) return s;
    s += "[";
    for (size_t k = 0; k < e.pattern.size(); ++k) {
        const PatternItem &p = e.pattern[k];
        s += k ? ", " : "";
        if (p.kind == PatternItem::Constant)
            s += std::to_string(p.offset);
        else
            s += var_name(e, p.var) + (p.kind == PatternItem::Shift ? "+" + std::to_string(p.offset) : "");
    }
    return s + "]";
}

std::string Differentiator::unique_name(const std::string &base) {
    std::string n = base;
    for (int k = 2; prog_.tensor_index(n) >= 0 || made_names_.count(n); ++k) n = base + "#" + std::to_string(k);
    made_names_.insert(n);
    return n;
}

int Differentiator::new_tensor(const std::string &name, const std::vector<int> &dims, const Type &type, Loc loc) {
    Tensor t;
    t.name = unique_name(name);
    t.dims = dims;
    t.type = type;
    t.loc = loc;
    t.is_hidden = true;
    prog_.tensors.push_back(std::move(t));
    return static_cast<int>(prog_.tensors.size()) - 1;
}

/** The equations whose patterns adj_z mirrors: z's own, or a single plain one over z's
 *  dims for a leaf x (only read by the grad, at the equation's point, inside the dims'
 *  bounds), a load or an equation-less tensor. */
std::vector<Equation> Differentiator::shapes_of(int z, bool plain) const {
    const Tensor &t = prog_.tensors[z];
    if (!t.equations.empty() && !plain) return t.equations;
    Equation e;
    for (size_t k = 0; k < t.dims.size(); ++k) {
        e.vars.push_back(t.dims[k]);
        PatternItem p;
        p.kind = PatternItem::Var;
        p.var = static_cast<int>(k);
        e.pattern.push_back(p);
    }
    e.loc = t.loc;
    return {e};
}

Equation Differentiator::mirror(const Equation &e, NodePtr body) {
    Equation m;
    m.vars = e.vars;
    m.pattern = e.pattern;
    m.guard = e.guard;
    m.loc = e.loc;
    m.body = std::move(body);
    return m;
}

/** The pattern point of "e" as affine forms of its variables. */
std::vector<Affine> Differentiator::pattern_point(const Equation &e) {
    std::vector<Affine> out;
    for (const PatternItem &p : e.pattern) {
        if (p.kind == PatternItem::Constant)
            out.push_back(aff_const(p.offset));
        else
            out.push_back(aff_var(p.var, p.kind == PatternItem::Shift ? p.offset : 0));
    }
    return out;
}

NodePtr Differentiator::read_at(int tensor, const std::vector<ReadIndex> &index, Loc loc) const {
    Node r;
    r.kind = NodeKind::Read;
    r.tensor = tensor;
    r.index = index;
    r.loc = loc;
    const Tensor &t = prog_.tensors[tensor];
    r.type = t.type;
    std::vector<Extent> pre;
    for (const ReadIndex &ri : index)
        if (ri.is_slice) pre.push_back(sext(ri.hi->aff.constant - ri.lo->aff.constant));
    r.type.shape.insert(r.type.shape.begin(), pre.begin(), pre.end());
    return mk(std::move(r));
}

NodePtr Differentiator::read_point(int tensor, const std::vector<Affine> &point, Loc loc) const {
    std::vector<ReadIndex> idx;
    for (const Affine &a : point) {
        ReadIndex ri;
        ri.point = aff_ix(a);
        idx.push_back(ri);
    }
    return read_at(tensor, idx, loc);
}

/** Differentiates one grad(y, x) held by equation "e0_index" of tensor R (steps 1-5 of the file
 *  comment; step 6 runs once every grad is done); returns the node that replaces the grad. */
NodePtr Differentiator::differentiate_one(int R, int e0_index, const NodePtr &grad) {
    OneGrad g;
    g.R = R;
    g.e0_index = e0_index;
    g.E0 = prog_.tensors[R].equations[e0_index];
    g.grad = grad;
    g.y = grad->args[0];
    g.x = grad->args[1];
    collect_x_reads(g, g.x);
    name_y(g);
    find_active(g);
    // ---- adjoint tensors (equations filled below)
    g.order = g.active;
    for (const NodePtr &r : g.xreads) g.order.push_back(r->tensor);
    for (int z : g.order) {
        const Tensor &t = prog_.tensors[z];
        g.adj[z] = new_tensor(base_ + t.name, t.dims, t.type, grad->loc);
    }
    g.diff.resize(prog_.tensors.size(), false);
    // ---- consumers: the reverse sweep of every equation of an active tensor, and of y
    consume(g, R, e0_index, true);
    for (int C : g.active)
        for (size_t ei = 0; ei < prog_.tensors[C].equations.size(); ++ei) consume(g, C, static_cast<int>(ei), false);
    // ---- adjoint equations
    for (int z : g.order) adjoint_equations(g, z);
    // ---- the grad's value: adj_X at the equation's point
    return grad_value(g, g.x);
}

/** x: reads at the equation's point (a tuple of them, each tensor once), into g.xreads. */
void Differentiator::collect_x_reads(OneGrad &g, const NodePtr &n) {
    if (n->kind == NodeKind::Tuple) {
        for (const NodePtr &a : n->args) collect_x_reads(g, a);
        return;
    }
    bool ok = n->kind == NodeKind::Read;
    std::set<int> used;
    for (size_t j = 0; ok && j < n->index.size(); ++j) {
        const ReadIndex &ri = n->index[j];
        ok = !ri.is_slice && ri.point->kind == IndexExpr::Aff && ri.point->aff.constant == 0;
        int var = -1;
        for (size_t v = 0; ok && v < ri.point->aff.coef.size(); ++v)
            if (ri.point->aff.coef[v]) {
                ok = ri.point->aff.coef[v] == 1 && var < 0;
                var = static_cast<int>(v);
            }
        ok = ok && var >= 0 && used.insert(var).second && g.E0.vars[var] == prog_.tensors[n->tensor].dims[j];
    }
    if (!ok)
        throw AdError{n->loc, "grad(y, x): x must be a tensor read at the equation's own point, "
                              "such as net[i] in an equation over i (or a tuple of such reads)"};
    for (const NodePtr &o : g.xreads)
        if (o->tensor == n->tensor)
            throw AdError{n->loc, "grad(y, x): x names " + prog_.tensors[n->tensor].name + " twice"};
    g.xreads.push_back(n);
}

/** y's name, for the adjoint tensors' names (base_) and the messages (y_text_). */
void Differentiator::name_y(const OneGrad &g) {
    y_text_ = "y";
    std::set<const Node *> s;
    std::set<int> rs;
    carried_reads(g.y, s, rs);
    std::function<const Node *(const NodePtr &)> first = [&](const NodePtr &n) -> const Node * {
        if (n->kind == NodeKind::Read) return n.get();
        for (const NodePtr &a : n->args)
            if (const Node *f = first(a)) return f;
        return nullptr;
    };
    if (const Node *f = first(g.y)) y_text_ = read_text(*f, g.E0);
    base_ = "grad." + (first(g.y) ? prog_.tensors[first(g.y)->tensor].name : std::string("y")) + ".";
}

/** Step 1, the active set: the tensors on a path of gradient-carrying reads from y down to x
 *  (g.active), and with x's tensors the differentiated ones (g.diff). */
void Differentiator::find_active(OneGrad &g) {
    size_t n = prog_.tensors.size();
    g.is_x.assign(n, false);
    for (const NodePtr &r : g.xreads) g.is_x[r->tensor] = true;
    const std::vector<bool> &is_x = g.is_x;
    std::vector<std::set<int>> deps(n);
    for (size_t t = 0; t < n; ++t) {
        std::set<const Node *> s;
        for (const Equation &e : prog_.tensors[t].equations) carried_reads(e.body, s, deps[t]);
    }
    std::vector<bool> from_y(n, false), to_x(n, false);
    {
        std::set<const Node *> s;
        std::set<int> start;
        carried_reads(g.y, s, start);
        std::vector<int> stack(start.begin(), start.end());
        while (!stack.empty()) {
            int t = stack.back();
            stack.pop_back();
            if (from_y[t]) continue;
            from_y[t] = true;
            if (is_x[t]) continue;
            for (int d : deps[t]) stack.push_back(d);
        }
        for (bool changed = true; changed;) {
            changed = false;
            for (size_t t = 0; t < n; ++t) {
                if (to_x[t] || is_x[t]) continue;
                for (int d : deps[t])
                    if (is_x[d] || to_x[d]) {
                        to_x[t] = changed = true;
                        break;
                    }
            }
        }
    }
    g.diff.assign(n, false);
    for (size_t t = 0; t < n; ++t) {
        if (is_x[t])
            g.diff[t] = true;
        else if (from_y[t] && to_x[t]) {
            g.diff[t] = true;
            g.active.push_back(static_cast<int>(t));
        }
    }
}

/** Step 3 for one consumer equation: equation "eidx" of the active tensor C, or (seed) the
 *  equation E0 holding y, seeded with 1.  The reverse sweep over its body gives the adjoint of
 *  every differentiated read; they are stored in back tensors over C's domain (J, or one
 *  tuple-valued K for several reads) and recorded as contributions to the adjoints of the
 *  tensors read. */
void Differentiator::consume(OneGrad &g, int C, int eidx, bool seed) {
    Tensor ct;  // a copy of the consumer's metadata (new tensors move prog_.tensors)
    ct.name = prog_.tensors[C].name;
    ct.dims = prog_.tensors[C].dims;
    ct.type = prog_.tensors[C].type;
    ct.equations = prog_.tensors[C].equations;
    const int self_idx = seed ? g.e0_index : eidx;
    const Equation &e = seed ? g.E0 : ct.equations[eidx];
    Sweep sw(g.diff);
    Adj s;
    if (seed) {
        s.v = cst(g.y->type.dtype, 1.0, g.grad->loc);
        sw.run(g.y, s);
    } else {
        NodePtr in = read_point(g.adj.at(C), pattern_point(e), e.loc);
        if (ct.type.is_tuple)
            s = split_adjoint(in, ct.type);
        else
            s.v = in;
        sw.run(e.body, s);
    }
    std::vector<Leaf> ls;
    std::vector<std::vector<Contribution>> kpieces;  // per leaf: every piece
    sweep_leaves(sw, C, e, seed, g.E0.vars, &ls, &kpieces);
    if (ls.empty()) return;
    store_back_values(g, C, ct, e, self_idx, seed, ls, kpieces);
}

/** The adjoint "v" of a tuple-valued tensor read whole, split into its elements. */
Adj Differentiator::split_adjoint(const NodePtr &v, const Type &t) {
    Adj a;
    if (!t.is_tuple) {
        a.v = v;
        return a;
    }
    for (size_t k = 0; k < t.elems.size(); ++k) {
        Node g;
        g.kind = NodeKind::TupleGet;
        g.int_attr = static_cast<int64_t>(k);
        g.type = t.elems[k];
        g.args = {v};
        g.loc = v->loc;
        a.elems.push_back(split_adjoint(mk(std::move(g)), t.elems[k]));
    }
    return a;
}

/** One leaf per (read, element of its type) of a finished sweep over consumer equation "e" of
 *  C, with the read's contributions (one per piece of a clamped read: "kpieces"). */
void Differentiator::sweep_leaves(const Sweep &sw, int C, const Equation &e, bool seed, const std::vector<int> &V,
                                  std::vector<Leaf> *ls, std::vector<std::vector<Contribution>> *kpieces) {
    for (const auto &[r, g] : sw.reads) {
        std::vector<Contribution> pieces = analyze_read(*r, C, e, seed, V);
        const Contribution &k = pieces.front();
        std::vector<std::vector<int>> paths;
        std::vector<int> p;
        leaves(r->type, p, paths);
        for (const auto &path : paths) {
            NodePtr v = leaf_adj(g, path);
            if (!v || !is_float_dtype(leaf_type(r->type, path).dtype)) continue;
            size_t axis = 0;  // the slice axes lead the value read, in position order
            for (const PosMap &pm : k.pos) {
                if (pm.kind != PosMap::Slice) continue;
                if (pm.dyn_lo) v = place_block(v, axis, pm.dyn_lo, pm.hi, r->loc);
                ++axis;
            }
            ls->push_back({r, path, v});
            for (Contribution &piece : pieces) piece.path = path;
            kpieces->push_back(pieces);
        }
    }
}

/** The back tensors of consumer equation "self_idx" of C (a copy "ct"): with several leaves, one
 *  tuple-valued K holding them all; per leaf read at points, its element of K, else a J over C's
 *  domain (the leaf's adjoint in C's equation, zeros in the others; J reads K's element when
 *  there is a K).  Each leaf's pieces become contributions to the tensor it reads. */
void Differentiator::store_back_values(OneGrad &g, int C, const Tensor &ct, const Equation &e, int self_idx, bool seed,
                                       const std::vector<Leaf> &ls,
                                       const std::vector<std::vector<Contribution>> &kpieces) {
    std::string where = ct.name + "." + std::to_string(self_idx);
    const std::vector<Equation> &ceqs = ct.equations;
    const Equation *self = &prog_.tensors[C].equations[self_idx];  // stable: never resized
    const NodePtr seed_y = seed ? g.y : nullptr;
    int K = -1;
    if (ls.size() > 1) {
        Type tt;
        tt.is_tuple = true;
        std::vector<NodePtr> vals;
        for (const Leaf &l : ls) {
            tt.elems.push_back(l.value->type);
            vals.push_back(l.value);
        }
        K = new_tensor(base_ + "back." + where, ct.dims, tt, e.loc);
        Node tn;
        tn.kind = NodeKind::Tuple;
        tn.type = tt;
        tn.args = vals;
        tn.loc = e.loc;
        NodePtr tup = mk(std::move(tn));
        for (size_t ci = 0; ci < ceqs.size(); ++ci)
            prog_.tensors[K].equations.push_back(
                mirror(ceqs[ci], static_cast<int>(ci) == self_idx ? tup : zeros_of(tt, ceqs[ci].loc)));
        note_back(C, self_idx, seed_y, K);
    }
    for (size_t q = 0; q < ls.size(); ++q) {
        const Leaf &l = ls[q];
        const Type &lt = l.value->type;
        std::string zn = prog_.tensors[l.read->tensor].name;
        for (int e : l.path) zn += "." + std::to_string(e);  // the tuple element
        bool sums = false;                                   // a piece leaves a variable of Ec out: J is sliced
        for (const Contribution &piece : kpieces[q])
            for (int vp : piece.var_pos) sums = sums || vp < 0;
        auto record = [&](int j_tensor, int leaf) {
            for (Contribution piece : kpieces[q]) {
                piece.j_tensor = j_tensor;
                piece.leaf = leaf;
                piece.eq = self;  // Ec must stay valid: point into C's equations
                g.contribs[l.read->tensor].push_back(piece);
            }
        };
        if (K >= 0 && !sums) {  // read K at points, take the element there
            record(K, static_cast<int>(q));
            continue;
        }
        int J = new_tensor(base_ + zn + ".from." + where, ct.dims, lt, l.read->loc);
        for (size_t ci = 0; ci < ceqs.size(); ++ci) {
            const Equation &ce = ceqs[ci];
            NodePtr body;
            if (K >= 0) {
                Node tg;
                tg.kind = NodeKind::TupleGet;
                tg.int_attr = static_cast<int64_t>(q);
                tg.type = lt;
                tg.args = {read_point(K, pattern_point(ce), ce.loc)};
                tg.loc = ce.loc;
                body = mk(std::move(tg));
            } else {
                body = static_cast<int>(ci) == self_idx ? l.value : zeros_of(lt, ce.loc);
            }
            prog_.tensors[J].equations.push_back(mirror(ce, body));
        }
        if (K < 0) note_back(C, self_idx, seed_y, J);
        record(J, -1);
    }
}

/** Where adj_X is read: E0 reads it at its own point (step 5), so only the points where E0's
 *  guard holds are needed.  E0's guard over X's variables (X's plain equation: var k at
 *  position k), or null (every point) when E0 has no guard or its guard mentions a variable
 *  that the read of X does not carry (E0 over (i, k) reading net[i], guarded on k).
 *  Example (samples/dqn_cartpole.trl): `(net, opt)[t+1] = optim.adam(net[t], grad(loss[t],
 *  net[t]), …) when t > LS && t % F == 0`:
 *    before: grad.loss.net[t] over every t, its `.at` contributions zeros off the update steps
 *            (10 KB a step, summed every step);
 *    after:  grad.loss.net[t] when t > LS && t % F == 0, and no zero pieces. */
GuardPtr Differentiator::x_guard(const OneGrad &g, int z) const {
    if (!g.E0.guard) return nullptr;
    const NodePtr *read = nullptr;
    for (const NodePtr &r : g.xreads)
        if (r->tensor == z) read = &r;
    if (!read) return nullptr;
    std::vector<Affine> map(g.E0.vars.size(), aff_const(0));
    std::vector<bool> carried(g.E0.vars.size(), false);
    for (size_t j = 0; j < (*read)->index.size(); ++j) {
        const Affine &a = (*read)->index[j].point->aff;
        for (size_t v = 0; v < a.coef.size(); ++v)
            if (a.coef[v]) {  // the identity (collect_x_reads): E0's var v is X's position j
                map[v] = aff_var(static_cast<int>(j));
                carried[v] = true;
            }
    }
    for (size_t v = 0; v < carried.size(); ++v)
        if (!carried[v] && mentions(g.E0.guard, static_cast<int>(v))) return nullptr;
    return guard_subst(g.E0.guard, map);
}

/** Step 4's result for one adjoint tensor adj_z: per equation of z's shape, the sum of the
 *  contributions to z (per leaf of z's type; zeros where none). */
void Differentiator::adjoint_equations(OneGrad &g, int z) {
    std::vector<Equation> zeqs = shapes_of(z, g.is_x[z]);
    if (g.is_x[z]) zeqs.at(0).guard = x_guard(g, z);
    const Type zt = prog_.tensors[z].type;
    const std::vector<Contribution> ks = g.contribs[z];
    const std::vector<int> ptensor = guarded_contributions(z, zeqs, zt, ks);
    for (const Equation &ze : zeqs) {
        std::vector<Affine> u = pattern_point(ze);
        std::map<std::vector<int>, NodePtr> sums;
        for (size_t q = 0; q < ks.size(); ++q) {
            NodePtr v;
            if (ptensor[q] >= 0) {
                v = read_point(ptensor[q], u, ze.loc);
            } else {
                GuardPtr cond;
                std::vector<int64_t> box;
                for (int d : ze.vars) box.push_back(prog_.dims[d].bound);
                v = contribution(ks[q], u, box, &cond, ks[q].loc);
            }
            NodePtr &acc = sums[ks[q].path];
            acc = acc ? bin(BinaryOp::Add, acc, v, ze.loc) : v;
        }
        std::vector<int> path;
        prog_.tensors[g.adj[z]].equations.push_back(mirror(ze, tuple_of_sums(zt, path, sums, ze.loc)));
    }
}

/** Per contribution "ks[q]" to z: -1 when its condition is always true (it is inlined in adj_z's
 *  equations), else a tensor `….at` over z's domain holding it where the condition holds and
 *  zeros elsewhere. */
std::vector<int> Differentiator::guarded_contributions(int z, const std::vector<Equation> &zeqs, const Type &zt,
                                                       const std::vector<Contribution> &ks) {
    std::vector<int> ptensor(ks.size(), -1);
    for (size_t q = 0; q < ks.size(); ++q) {
        bool all_true = true;
        std::vector<std::pair<GuardPtr, NodePtr>> per_eq;
        for (const Equation &ze : zeqs) {
            GuardPtr cond;
            std::vector<int64_t> bounds;
            for (int d : ze.vars) bounds.push_back(prog_.dims[d].bound);
            NodePtr v = contribution(ks[q], pattern_point(ze), bounds, &cond, ks[q].loc);
            if (guard_on_box(cond, bounds) != 1) all_true = false;
            per_eq.push_back({cond, v});
        }
        if (all_true) continue;
        const Type &lt = leaf_type(zt, ks[q].path);
        int P = new_tensor(prog_.tensors[ks[q].j_tensor].name +
                               (ks[q].leaf >= 0 ? "." + std::to_string(ks[q].leaf) : "") + ".at",
                           prog_.tensors[z].dims, lt, ks[q].loc);
        for (size_t ei = 0; ei < zeqs.size(); ++ei) {
            const Equation &ze = zeqs[ei];
            std::vector<int64_t> bounds;
            for (int d : ze.vars) bounds.push_back(prog_.dims[d].bound);
            int tri = guard_on_box(per_eq[ei].first, bounds);
            if (tri == 1 || tri == 0) {
                prog_.tensors[P].equations.push_back(mirror(ze, tri ? per_eq[ei].second : zeros_of(lt, ze.loc)));
                continue;
            }
            Equation a = mirror(ze, per_eq[ei].second);
            a.guard = guard_and(ze.guard, per_eq[ei].first);
            Equation b = mirror(ze, zeros_of(lt, ze.loc));
            b.guard = guard_and(ze.guard, guard_not(per_eq[ei].first));
            prog_.tensors[P].equations.push_back(a);
            prog_.tensors[P].equations.push_back(b);
        }
        ptensor[q] = P;
    }
    return ptensor;
}

/** A value of type "t" (at leaf "path") made of the sums per leaf; zeros for a leaf without. */
NodePtr Differentiator::tuple_of_sums(const Type &t, std::vector<int> &path,
                                      const std::map<std::vector<int>, NodePtr> &sums, Loc loc) {
    if (!t.is_tuple) {
        auto it = sums.find(path);
        return it != sums.end() ? it->second : zeros_of(t, loc);
    }
    Node tn;
    tn.kind = NodeKind::Tuple;
    tn.type = t;
    tn.loc = loc;
    for (size_t k = 0; k < t.elems.size(); ++k) {
        path.push_back(static_cast<int>(k));
        tn.args.push_back(tuple_of_sums(t.elems[k], path, sums, loc));
        path.pop_back();
    }
    return mk(std::move(tn));
}

/** Step 5: the grad's value, x with each read of X replaced by a read of adj_X at the same
 *  point (a tuple for a tuple x). */
NodePtr Differentiator::grad_value(const OneGrad &g, const NodePtr &xn) {
    if (xn->kind == NodeKind::Tuple) {
        Node tn = *xn;
        for (NodePtr &a : tn.args) a = grad_value(g, a);
        return mk(std::move(tn));
    }
    Node r = *xn;
    r.tensor = g.adj.at(xn->tensor);
    r.loc = g.grad->loc;
    return mk(std::move(r));
}

}  // namespace trlc::autodiff_detail

namespace trlc {

bool differentiate(ir::Program &prog, Diagnostics &diag) {
    autodiff_detail::Differentiator d(prog, diag);
    return d.run();
}

void print_adjoints(const ir::Program &prog, std::ostream &out) {
    for (const ir::Tensor &t : prog.tensors) {
        if (!t.is_hidden || t.name.rfind("grad.", 0) != 0) continue;
        out << t.name;
        if (!t.dims.empty()) {
            out << "[";
            for (size_t k = 0; k < t.dims.size(); ++k) out << (k ? ", " : "") << prog.dims[t.dims[k]].name;
            out << "]";
        }
        out << " : " << ir::type_to_string(t.type) << " (" << t.equations.size() << " equation"
            << (t.equations.size() == 1 ? "" : "s") << ")\n";
    }
}

}  // namespace trlc
