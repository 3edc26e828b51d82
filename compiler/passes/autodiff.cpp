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
#include "passes/autodiff.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "interp/eval.h"
#include "ir/ops.h"

namespace trlc {

namespace {

using namespace ir;

/** A diagnostic that stops differentiating one grad. */
struct AdError {
    Loc loc;
    std::string message;
};

// ---- node builders ---------------------------------------------------------------------------

NodePtr mk(Node n) { return std::make_shared<const Node>(std::move(n)); }

/** Rewrites expression DAGs: a node in "repl" becomes its replacement, and every node above
 *  one is copied (every field kept: a Const's bound tag, an Extern's name) with its rewritten
 *  operands; a node shared in the DAG is rewritten once ("memo").  Replacements added to
 *  "repl" later apply to nodes not yet rewritten. */
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
        NodePtr out = changed ? mk(std::move(c)) : n;
        return memo[n.get()] = out;
    }
};

Extent sext(int64_t v) { return Extent{v, nullptr}; }

bool ext_eq(const Extent &a, const Extent &b) {
    if (a.is_static() != b.is_static()) return false;
    if (a.is_static()) return a.max_value == b.max_value;
    return index_expr_to_string(*a.dynamic) == index_expr_to_string(*b.dynamic);
}

bool is_one(const Extent &e) { return e.is_static() && e.max_value == 1; }

Type arr_type(DType d, std::vector<Extent> shape) {
    Type t;
    t.dtype = d;
    t.shape = std::move(shape);
    return t;
}

bool is_float_dtype(DType d) { return d == DType::F32 || d == DType::F64; }

bool has_float(const Type &t) {
    if (!t.is_tuple) return is_float_dtype(t.dtype);
    for (const Type &e : t.elems)
        if (has_float(e)) return true;
    return false;
}

NodePtr cst(DType d, double v, Loc loc) {
    Node n;
    n.kind = NodeKind::Const;
    n.type = arr_type(d, {});
    n.data = {v};
    n.loc = loc;
    return mk(std::move(n));
}

NodePtr zeros_of(const Type &t, Loc loc) {
    Node n;
    n.loc = loc;
    n.type = t;
    if (t.is_tuple) {
        n.kind = NodeKind::Tuple;
        for (const Type &e : t.elems) n.args.push_back(zeros_of(e, loc));
        return mk(std::move(n));
    }
    if (t.shape.empty()) return cst(t.dtype, 0.0, loc);
    n.kind = NodeKind::Builtin;
    n.builtin = BuiltinOp::Zeros;
    return mk(std::move(n));
}

std::vector<Extent> broadcast(const std::vector<Extent> &a, const std::vector<Extent> &b) {
    size_t r = std::max(a.size(), b.size());
    std::vector<Extent> out(r);
    for (size_t k = 0; k < r; ++k) {
        const Extent *ea = k + a.size() >= r ? &a[k + a.size() - r] : nullptr;
        const Extent *eb = k + b.size() >= r ? &b[k + b.size() - r] : nullptr;
        if (!ea)
            out[k] = *eb;
        else if (!eb)
            out[k] = *ea;
        else
            out[k] = is_one(*ea) ? *eb : *ea;
    }
    return out;
}

bool is_cmp(BinaryOp op) {
    return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
           op == BinaryOp::Eq || op == BinaryOp::Ne;
}

NodePtr bin(BinaryOp op, NodePtr a, NodePtr b, Loc loc) {
    Node n;
    n.kind = NodeKind::Binary;
    n.bop = op;
    n.loc = loc;
    DType d = a->type.dtype;
    n.type = arr_type(is_cmp(op) || op == BinaryOp::And || op == BinaryOp::Or ? DType::Bool : d,
                      broadcast(a->type.shape, b->type.shape));
    n.args = {std::move(a), std::move(b)};
    return mk(std::move(n));
}

NodePtr un(UnaryOp op, NodePtr a, Loc loc) {
    Node n;
    n.kind = NodeKind::Unary;
    n.uop = op;
    n.loc = loc;
    n.type = a->type;
    n.args = {std::move(a)};
    return mk(std::move(n));
}

NodePtr where_(NodePtr c, NodePtr a, NodePtr b, Loc loc) {
    Node n;
    n.kind = NodeKind::Where;
    n.loc = loc;
    n.type =
        arr_type(a->type.dtype, broadcast(c->type.shape, broadcast(a->type.shape, b->type.shape)));
    n.args = {std::move(c), std::move(a), std::move(b)};
    return mk(std::move(n));
}

NodePtr cast_(NodePtr a, DType d, Loc loc) {
    if (a->type.dtype == d) return a;
    Node n;
    n.kind = NodeKind::Cast;
    n.loc = loc;
    n.type = arr_type(d, a->type.shape);
    n.args = {std::move(a)};
    return mk(std::move(n));
}

NodePtr builtin(BuiltinOp op, Type t, std::vector<NodePtr> args, Loc loc,
                std::vector<int64_t> axes = {}, bool has_axes = false) {
    Node n;
    n.kind = NodeKind::Builtin;
    n.builtin = op;
    n.type = std::move(t);
    n.args = std::move(args);
    n.loc = loc;
    n.axes = std::move(axes);
    n.has_axes = has_axes;
    return mk(std::move(n));
}

/** sum over "axes" (sorted, distinct); no axes: "x" itself. */
NodePtr sum_axes(NodePtr x, std::vector<int64_t> axes, Loc loc) {
    if (axes.empty()) return x;
    std::sort(axes.begin(), axes.end());
    std::vector<Extent> s;
    for (size_t k = 0; k < x->type.shape.size(); ++k)
        if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(k)))
            s.push_back(x->type.shape[k]);
    Type t = arr_type(x->type.dtype, s);
    return builtin(BuiltinOp::Sum, t, {std::move(x)}, loc, std::move(axes), true);
}

NodePtr reshape_(NodePtr x, const std::vector<Extent> &shape, Loc loc) {
    bool same = x->type.shape.size() == shape.size();
    for (size_t k = 0; same && k < shape.size(); ++k) same = ext_eq(x->type.shape[k], shape[k]);
    if (same) return x;
    for (const Extent &e : shape)
        if (!e.is_static())
            throw AdError{loc, "grad through a reshape of a dynamic shape is not supported yet"};
    Type t = arr_type(x->type.dtype, shape);
    return builtin(BuiltinOp::Reshape, t, {std::move(x)}, loc);
}

NodePtr transpose_(NodePtr x, const std::vector<int64_t> &perm, Loc loc) {
    std::vector<Extent> s;
    for (int64_t p : perm) s.push_back(x->type.shape[p]);
    Type t = arr_type(x->type.dtype, s);
    return builtin(BuiltinOp::Transpose, t, {std::move(x)}, loc, perm, true);
}

NodePtr swap_last2(NodePtr x, Loc loc) {
    size_t r = x->type.shape.size();
    std::vector<int64_t> perm;
    for (size_t k = 0; k < r; ++k) perm.push_back(static_cast<int64_t>(k));
    std::swap(perm[r - 1], perm[r - 2]);
    return transpose_(std::move(x), perm, loc);
}

NodePtr matmul_(NodePtr a, NodePtr b, Loc loc) {
    const auto &sa = a->type.shape, &sb = b->type.shape;
    std::vector<Extent> ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
    std::vector<Extent> s = broadcast(ba, bb);
    s.push_back(sa[sa.size() - 2]);
    s.push_back(sb.back());
    Type t = arr_type(a->type.dtype, s);
    return builtin(BuiltinOp::MatMul, t, {std::move(a), std::move(b)}, loc);
}

/** Sum "g" down to the shape "target" (numpy broadcasting in reverse). */
NodePtr unbroadcast(NodePtr g, const std::vector<Extent> &target, Loc loc) {
    size_t r = g->type.shape.size(), tr = target.size();
    std::vector<int64_t> axes;
    for (size_t k = 0; k + tr < r; ++k) axes.push_back(static_cast<int64_t>(k));
    bool ones = false;
    for (size_t k = 0; k < tr; ++k)
        if (is_one(target[k]) && !is_one(g->type.shape[k + r - tr])) {
            axes.push_back(static_cast<int64_t>(k + r - tr));
            ones = true;
        }
    if (axes.empty()) return g;
    NodePtr s = sum_axes(std::move(g), axes, loc);
    return ones ? reshape_(s, target, loc) : s;
}

/** The i32 scalar value of an affine form over the equation's variables. */
NodePtr affine_node(const Affine &a, Loc loc) {
    NodePtr acc = cst(DType::I32, static_cast<double>(a.constant), loc);
    for (size_t v = 0; v < a.coef.size(); ++v) {
        if (!a.coef[v]) continue;
        Node c;
        c.kind = NodeKind::Coord;
        c.var = static_cast<int>(v);
        c.type = arr_type(DType::I32, {});
        c.loc = loc;
        NodePtr term = mk(std::move(c));
        if (a.coef[v] != 1)
            term =
                bin(BinaryOp::Mul, cst(DType::I32, static_cast<double>(a.coef[v]), loc), term, loc);
        acc = bin(BinaryOp::Add, acc, term, loc);
    }
    return acc;
}

NodePtr index_expr_node(const IndexExpr &e, Loc loc) {
    if (e.kind == IndexExpr::Aff) return affine_node(e.aff, loc);
    return bin(e.kind == IndexExpr::Min ? BinaryOp::Min : BinaryOp::Max, index_expr_node(*e.a, loc),
               index_expr_node(*e.b, loc), loc);
}

/** The number of elements of the axes "axes" of "shape", as a float scalar of dtype "d". */
NodePtr count_node(const std::vector<Extent> &shape, const std::vector<int64_t> &axes, DType d,
                   Loc loc) {
    int64_t st = 1;
    NodePtr dyn;
    for (int64_t a : axes) {
        const Extent &e = shape[a];
        if (e.is_static()) {
            st *= e.max_value;
        } else {
            NodePtr v = cast_(index_expr_node(*e.dynamic, loc), d, loc);
            dyn = dyn ? bin(BinaryOp::Mul, dyn, v, loc) : v;
        }
    }
    NodePtr c = cst(d, static_cast<double>(st), loc);
    return dyn ? bin(BinaryOp::Mul, c, dyn, loc) : c;
}

IndexExprPtr aff_ix(Affine a) {
    auto e = std::make_shared<IndexExpr>();
    e->aff = std::move(a);
    return e;
}

Affine aff_const(int64_t c) { return Affine{c, {}}; }

Affine aff_add(const Affine &a, const Affine &b, int64_t sb = 1) {
    Affine r;
    r.constant = a.constant + sb * b.constant;
    r.coef.assign(std::max(a.coef.size(), b.coef.size()), 0);
    for (size_t k = 0; k < r.coef.size(); ++k)
        r.coef[k] = a.coef_of(static_cast<int>(k)) + sb * b.coef_of(static_cast<int>(k));
    return r;
}

Affine aff_var(int v, int64_t c = 0) {
    Affine a;
    a.constant = c;
    a.coef.assign(v + 1, 0);
    a.coef[v] = 1;
    return a;
}

/** "a" (over some variables) with variable v replaced by map[v] (affine forms over others). */
Affine aff_subst(const Affine &a, const std::vector<Affine> &map) {
    Affine r = aff_const(a.constant);
    for (size_t v = 0; v < a.coef.size(); ++v)
        if (a.coef[v]) {
            Affine t = map.at(v);
            for (int64_t &c : t.coef) c *= a.coef[v];
            t.constant *= a.coef[v];
            r = aff_add(r, t);
        }
    return r;
}

GuardPtr guard_subst(const GuardPtr &g, const std::vector<Affine> &map) {
    if (!g) return nullptr;
    auto r = std::make_shared<Guard>(*g);
    if (g->kind == Guard::Cmp) {
        r->lhs = aff_subst(g->lhs, map);
        r->rhs = aff_subst(g->rhs, map);
    }
    r->a = guard_subst(g->a, map);
    r->b = guard_subst(g->b, map);
    return r;
}

GuardPtr guard_not(GuardPtr a) {
    auto g = std::make_shared<Guard>();
    g->kind = Guard::Not;
    g->a = std::move(a);
    return g;
}

bool mentions(const GuardPtr &g, int v) {
    if (!g) return false;
    if (g->kind == Guard::Cmp) return g->lhs.coef_of(v) || g->rhs.coef_of(v);
    return mentions(g->a, v) || mentions(g->b, v);
}

/** 1 = true at every point of the box [0, bound_v) of the variables, 0 = false at every
 *  point, -1 = depends. */
int guard_on_box(const GuardPtr &g, const std::vector<int64_t> &bounds) {
    if (!g) return 1;
    switch (g->kind) {
        case Guard::True: return 1;
        case Guard::Cmp: {
            Affine d = aff_add(g->lhs, g->rhs, -1);
            int64_t lo = d.constant, hi = d.constant;
            for (size_t v = 0; v < d.coef.size(); ++v) {
                int64_t c = d.coef[v], m = bounds.at(v) - 1;
                if (c > 0)
                    hi += c * m;
                else
                    lo += c * m;
            }
            auto tri = [&](bool always, bool never) {
                return always ? 1 : never ? 0 : -1;
            };
            switch (g->cmp) {
                case BinaryOp::Lt: return tri(hi < 0, lo >= 0);
                case BinaryOp::Le: return tri(hi <= 0, lo > 0);
                case BinaryOp::Gt: return tri(lo > 0, hi <= 0);
                case BinaryOp::Ge: return tri(lo >= 0, hi < 0);
                case BinaryOp::Eq: return tri(lo == 0 && hi == 0, lo > 0 || hi < 0);
                case BinaryOp::Ne: return tri(lo > 0 || hi < 0, lo == 0 && hi == 0);
                default: return -1;
            }
        }
        case Guard::And: {
            int a = guard_on_box(g->a, bounds), b = guard_on_box(g->b, bounds);
            if (a == 0 || b == 0) return 0;
            return a == 1 && b == 1 ? 1 : -1;
        }
        case Guard::Or: {
            int a = guard_on_box(g->a, bounds), b = guard_on_box(g->b, bounds);
            if (a == 1 || b == 1) return 1;
            return a == 0 && b == 0 ? 0 : -1;
        }
        case Guard::Not: {
            int a = guard_on_box(g->a, bounds);
            return a < 0 ? -1 : 1 - a;
        }
    }
    return -1;
}

// ---- adjoint values (a tree for tuples) ------------------------------------------------------

struct Adj {
    NodePtr v;               // an array adjoint (null = zero)
    std::vector<Adj> elems;  // a tuple adjoint (empty = zero)
    bool zero() const {
        if (v) return false;
        for (const Adj &e : elems)
            if (!e.zero()) return false;
        return true;
    }
};

void accumulate(Adj &acc, const Adj &g, Loc loc) {
    if (g.zero()) return;
    if (g.v) {
        acc.v = acc.v ? bin(BinaryOp::Add, acc.v, g.v, loc) : g.v;
        return;
    }
    if (acc.elems.size() < g.elems.size()) acc.elems.resize(g.elems.size());
    for (size_t k = 0; k < g.elems.size(); ++k) accumulate(acc.elems[k], g.elems[k], loc);
}

/** Leaves of a (tuple) type: paths of element indices. */
void leaves(const Type &t, std::vector<int> &path, std::vector<std::vector<int>> &out) {
    if (!t.is_tuple) {
        out.push_back(path);
        return;
    }
    for (size_t k = 0; k < t.elems.size(); ++k) {
        path.push_back(static_cast<int>(k));
        leaves(t.elems[k], path, out);
        path.pop_back();
    }
}

const Type &leaf_type(const Type &t, const std::vector<int> &path) {
    const Type *c = &t;
    for (int k : path) c = &c->elems[k];
    return *c;
}

NodePtr leaf_adj(const Adj &a, const std::vector<int> &path) {
    const Adj *c = &a;
    for (int k : path) {
        if (k >= static_cast<int>(c->elems.size())) return nullptr;
        c = &c->elems[k];
    }
    return c->v;
}

// ---- gradient-carrying arguments -----------------------------------------------------------

/** The argument positions of "n" through which a gradient flows. */
std::vector<size_t> grad_args(const Node &n) {
    std::vector<size_t> out;
    if (!n.type.is_tuple && !is_float_dtype(n.type.dtype) && n.kind != NodeKind::Tuple) return out;
    switch (n.kind) {
        case NodeKind::Const:
        case NodeKind::Coord:
        case NodeKind::Read:
        case NodeKind::Rng: return out;
        case NodeKind::Unary:
            if (n.uop == UnaryOp::StopGrad) return out;
            return {0};
        case NodeKind::Where: return {1, 2};
        case NodeKind::Index: return {0};
        case NodeKind::Builtin:
            switch (n.builtin) {
                case BuiltinOp::Gather: return {0};
                case BuiltinOp::ScatterAdd: return {1};
                case BuiltinOp::Full:
                    return n.args.empty() ? out : std::vector<size_t>{n.args.size() - 1};
                case BuiltinOp::Argmax:
                case BuiltinOp::OneHot:
                case BuiltinOp::Arange:
                case BuiltinOp::Zeros:
                case BuiltinOp::Ones:
                case BuiltinOp::Uniform:
                case BuiltinOp::Normal:
                case BuiltinOp::Categorical:
                case BuiltinOp::FoldIn: return out;
                default: break;
            }
            break;
        case NodeKind::Grad: return {0, 1};
        default: break;
    }
    for (size_t k = 0; k < n.args.size(); ++k) out.push_back(k);
    return out;
}

bool contains_rng(const NodePtr &n, std::unordered_map<const Node *, bool> &memo) {
    auto it = memo.find(n.get());
    if (it != memo.end()) return it->second;
    bool r = n->kind == NodeKind::Rng;
    for (const NodePtr &a : n->args) r = r || contains_rng(a, memo);
    for (const SpatialIndex &s : n->sindex)
        if (s.value) r = r || contains_rng(s.value, memo);
    return memo[n.get()] = r;
}

/** The tensors read through gradient-carrying positions of "body". */
void carried_reads(const NodePtr &n, std::set<const Node *> &seen, std::set<int> &out) {
    if (!seen.insert(n.get()).second) return;
    if (n->kind == NodeKind::Read) {
        if (has_float(n->type)) out.insert(n->tensor);
        return;
    }
    for (size_t k : grad_args(*n)) carried_reads(n->args[k], seen, out);
}

// ---- the spatial reverse sweep over one expression ------------------------------------------

class Sweep {
public:
    Sweep(const std::vector<bool> &diff) : diff_(diff) {}

    /** Reverse accumulation from "root" with adjoint "seed"; fills reads (read node, adjoint). */
    void run(const NodePtr &root, Adj seed) {
        if (!active(root)) return;
        std::vector<NodePtr> order;
        std::set<const Node *> seen;
        std::function<void(const NodePtr &)> dfs = [&](const NodePtr &n) {
            if (!seen.insert(n.get()).second) return;
            for (size_t k : grad_args(*n))
                if (active(n->args[k])) dfs(n->args[k]);
            order.push_back(n);
        };
        dfs(root);
        adj_[root.get()] = std::move(seed);
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            const NodePtr &n = *it;
            auto a = adj_.find(n.get());
            if (a == adj_.end() || a->second.zero()) continue;
            Adj g = a->second;
            if (n->kind == NodeKind::Read) {
                reads.push_back({n, g});
                continue;
            }
            back(n, g);
        }
    }

    std::vector<std::pair<NodePtr, Adj>> reads;

private:
    bool active(const NodePtr &n) {
        auto it = active_.find(n.get());
        if (it != active_.end()) return it->second;
        bool r = false;
        if (n->kind == NodeKind::Read) {
            r = diff_[n->tensor] && has_float(n->type);
        } else {
            for (size_t k : grad_args(*n)) r = active(n->args[k]) || r;
        }
        if (r && n->kind == NodeKind::Grad)
            throw AdError{n->loc, "grad of a value that depends on grad(…) is not supported"};
        if (r && n->kind == NodeKind::Extern)
            throw AdError{n->loc,
                          "grad through the extern function '" + n->name + "' is not supported"};
        if (r && n->kind == NodeKind::Builtin && n->builtin == BuiltinOp::DiscountedCumsum)
            throw AdError{n->loc, "grad through discounted_cumsum is not supported yet"};
        if (r) {
            for (size_t k = 0; k < n->args.size(); ++k)
                if (contains_rng(n->args[k], rng_))
                    throw AdError{n->loc,
                                  "grad through an expression that draws random numbers "
                                  "(rng) is not supported yet; compute the random value "
                                  "in a tensor of its own and read it"};
        }
        return active_[n.get()] = r;
    }

    void give(const NodePtr &arg, NodePtr g) {
        if (!g || !active(arg)) return;
        Adj a;
        a.v = std::move(g);
        accumulate(adj_[arg.get()], a, arg->loc);
    }
    void give(const NodePtr &arg, const Adj &g) {
        if (!active(arg)) return;
        accumulate(adj_[arg.get()], g, arg->loc);
    }

    NodePtr keepdims(NodePtr g, const Type &like, const std::vector<int64_t> &axes, Loc loc) {
        if (axes.size() == like.shape.size()) return g;  // a scalar broadcasts as it is
        std::vector<Extent> keep = like.shape;
        for (int64_t a : axes) keep[a] = sext(1);
        return reshape_(std::move(g), keep, loc);
    }

    /** g as a full array of shape "like" (g has x's shape with "axes" removed). */
    NodePtr expand(NodePtr g, const Type &like, const std::vector<int64_t> &axes, Loc loc) {
        NodePtr gk = keepdims(std::move(g), like, axes, loc);
        return bin(BinaryOp::Add, zeros_of(like, loc), gk, loc);
    }
    static std::vector<int64_t> red_axes(const Node &n, size_t rank) {
        std::vector<int64_t> ax;
        if (n.has_axes && !n.axes.empty()) {
            for (int64_t a : n.axes) ax.push_back(a < 0 ? a + static_cast<int64_t>(rank) : a);
        } else {
            for (size_t k = 0; k < rank; ++k) ax.push_back(static_cast<int64_t>(k));
        }
        std::sort(ax.begin(), ax.end());
        return ax;
    }

    /** Scatter "g" (the adjoint of an indexing of x, shaped as its result) into x's static
     *  shape: "apply" (the same indexing) applied to an iota of x's flat positions says where
     *  each element of g came from, and scatter_add sums g's elements into those positions in
     *  row-major order: for x[:, 0] of an [N, 1] x, adj_x = scatter_add(iota[:, 0], g, N),
     *  O(N) where the one_hot product it replaced was O(N²) (same bits: the one_hot sum added
     *  the same terms in the same order, plus exact zeros). */
    NodePtr scatter_via_iota(const NodePtr &x, const std::function<NodePtr(NodePtr)> &apply,
                             NodePtr g, Loc loc) {
        const Type &xt = x->type;
        int64_t N = 1;
        for (const Extent &e : xt.shape) {
            if (!e.is_static())
                throw AdError{
                    loc,
                    "grad through indexing of an array with a dynamic shape is not supported yet"};
            N *= e.max_value;
        }
        Node io;
        io.kind = NodeKind::Const;
        io.type = arr_type(DType::I32, xt.shape);
        io.loc = loc;
        for (int64_t k = 0; k < N; ++k) io.data.push_back(static_cast<double>(k));
        NodePtr idx = apply(mk(std::move(io)));
        bool same = g->type.shape.size() == idx->type.shape.size();
        for (size_t k = 0; same && k < g->type.shape.size(); ++k)
            same = g->type.shape[k].max_value == idx->type.shape[k].max_value;
        if (!same)  // one value per index (g broadcast, e.g. a scalar adjoint)
            g = bin(BinaryOp::Add, zeros_of(arr_type(g->type.dtype, idx->type.shape), loc), g, loc);
        Node sc;
        sc.kind = NodeKind::Builtin;
        sc.builtin = BuiltinOp::ScatterAdd;
        sc.int_attr = N;
        sc.type = arr_type(g->type.dtype, {sext(N)});
        sc.args = {idx, g};
        sc.loc = loc;
        return reshape_(mk(std::move(sc)), xt.shape, loc);
    }

    void back(const NodePtr &np, const Adj &ga) {
        const Node &n = *np;
        Loc loc = n.loc;
        switch (n.kind) {
            case NodeKind::Tuple:
                for (size_t k = 0; k < n.args.size(); ++k)
                    if (k < ga.elems.size()) give(n.args[k], ga.elems[k]);
                return;
            case NodeKind::TupleGet: {
                Adj t;
                t.elems.resize(n.args[0]->type.elems.size());
                t.elems[n.int_attr] = ga;
                give(n.args[0], t);
                return;
            }
            default: break;
        }
        if (n.type.is_tuple)
            throw AdError{loc, "grad through this tuple-valued expression is not supported yet"};
        NodePtr g = ga.v;
        if (!g) return;
        DType d = n.type.dtype;
        auto one = [&] {
            return cst(d, 1.0, loc);
        };
        auto A = [&](size_t k) {
            return n.args[k];
        };
        switch (n.kind) {
            case NodeKind::Unary: {
                // x's adjoint: the formula of ir/ops.def's adjoint column, in these builders.
                const NodePtr &x = A(0), &y = np;
                auto C = [&](double v) { return cst(d, v, loc); };
#define TRL_UNARY(E, ...)                                                \
    auto E = [&](NodePtr a) { return un(UnaryOp::E, std::move(a), loc); }; \
    (void)E;
#include "ir/ops.def"
                auto Mul = [&](NodePtr a, NodePtr b) { return bin(BinaryOp::Mul, a, b, loc); };
                auto Div = [&](NodePtr a, NodePtr b) { return bin(BinaryOp::Div, a, b, loc); };
                auto Sub = [&](NodePtr a, NodePtr b) { return bin(BinaryOp::Sub, a, b, loc); };
                auto Gt = [&](NodePtr a, NodePtr b) { return bin(BinaryOp::Gt, a, b, loc); };
                auto Where = [&](NodePtr c, NodePtr a, NodePtr b) { return where_(c, a, b, loc); };
                (void)Mul, (void)Div, (void)Sub, (void)Gt, (void)Where, (void)y;
                NodePtr dx;
                switch (n.uop) {
#define TRL_UNARY(E, name, typing, f32, f64, i32, check, adjoint, ...) \
    case UnaryOp::E: dx = adjoint; break;
#include "ir/ops.def"
                }
                if (dx) give(x, dx);  // none: zero almost everywhere (floor, sign, …)
                return;
            }
            case NodeKind::Binary: {
                const NodePtr &a = A(0), &b = A(1);
                auto ga_ = [&](NodePtr v) {
                    give(a, unbroadcast(v, a->type.shape, loc));
                };
                auto gb_ = [&](NodePtr v) {
                    give(b, unbroadcast(v, b->type.shape, loc));
                };
                switch (n.bop) {
                    case BinaryOp::Add:
                        ga_(g);
                        gb_(g);
                        return;
                    case BinaryOp::Sub:
                        ga_(g);
                        gb_(un(UnaryOp::Neg, g, loc));
                        return;
                    case BinaryOp::Mul:
                        if (active(a)) ga_(bin(BinaryOp::Mul, g, b, loc));
                        if (active(b)) gb_(bin(BinaryOp::Mul, g, a, loc));
                        return;
                    case BinaryOp::Div:
                        if (active(a)) ga_(bin(BinaryOp::Div, g, b, loc));
                        if (active(b))
                            gb_(un(UnaryOp::Neg,
                                   bin(BinaryOp::Div, bin(BinaryOp::Mul, g, np, loc), b, loc),
                                   loc));
                        return;
                    case BinaryOp::Mod:
                        ga_(g);
                        if (active(b))
                            gb_(un(UnaryOp::Neg,
                                   bin(BinaryOp::Mul, g,
                                       un(UnaryOp::Floor, bin(BinaryOp::Div, a, b, loc), loc), loc),
                                   loc));
                        return;
                    case BinaryOp::Pow:
                        if (active(a))
                            ga_(bin(
                                BinaryOp::Mul, g,
                                bin(BinaryOp::Mul, b,
                                    bin(BinaryOp::Pow, a, bin(BinaryOp::Sub, b, one(), loc), loc),
                                    loc),
                                loc));
                        if (active(b))
                            gb_(bin(BinaryOp::Mul, g,
                                    bin(BinaryOp::Mul, np, un(UnaryOp::Log, a, loc), loc), loc));
                        return;
                    case BinaryOp::Min:
                    case BinaryOp::Max: {
                        BinaryOp wins = n.bop == BinaryOp::Max ? BinaryOp::Gt : BinaryOp::Lt;
                        NodePtr half = bin(BinaryOp::Mul, g, cst(d, 0.5, loc), loc),
                                z = cst(d, 0, loc);
                        NodePtr tie = bin(BinaryOp::Eq, a, b, loc);
                        if (active(a))
                            ga_(where_(bin(wins, a, b, loc), g, where_(tie, half, z, loc), loc));
                        if (active(b))
                            gb_(where_(bin(wins, b, a, loc), g, where_(tie, half, z, loc), loc));
                        return;
                    }
                    default: return;
                }
            }
            case NodeKind::Where: {
                const NodePtr &c = A(0), &a = A(1), &b = A(2);
                NodePtr z = cst(d, 0, loc);
                if (active(a)) give(a, unbroadcast(where_(c, g, z, loc), a->type.shape, loc));
                if (active(b)) give(b, unbroadcast(where_(c, z, g, loc), b->type.shape, loc));
                return;
            }
            case NodeKind::Cast: give(A(0), cast_(g, A(0)->type.dtype, loc)); return;
            case NodeKind::Index: scatter_back(n, g, loc); return;
            case NodeKind::Builtin: builtin_back(np, g); return;
            default: return;
        }
    }

    /** The adjoint "g" of an indexing node "n" (spatial Index, gather) given to n.args[0]: the
     *  same indexing applied to an iota of args[0]'s positions says where each element came
     *  from. */
    void scatter_back(const Node &n, NodePtr g, Loc loc) {
        const NodePtr &x = n.args[0];
        if (!active(x)) return;
        Node copy = n;
        auto apply = [copy](NodePtr iota) {
            Node c = copy;
            c.args[0] = iota;
            c.type.dtype = DType::I32;
            return mk(std::move(c));
        };
        give(x, scatter_via_iota(x, apply, std::move(g), loc));
    }

    void builtin_back(const NodePtr &np, NodePtr g) {
        const Node &n = *np;
        Loc loc = n.loc;
        DType d = n.type.dtype;
        const NodePtr &x = n.args.empty() ? np : n.args[0];
        size_t rank = x->type.shape.size();
        switch (n.builtin) {
            case BuiltinOp::Sum:
            case BuiltinOp::Mean: {
                auto ax = red_axes(n, rank);
                NodePtr e = expand(g, x->type, ax, loc);
                if (n.builtin == BuiltinOp::Mean)
                    e = bin(BinaryOp::Div, e, count_node(x->type.shape, ax, d, loc), loc);
                give(x, e);
                return;
            }
            case BuiltinOp::ReduceMax:
            case BuiltinOp::ReduceMin: {
                auto ax = red_axes(n, rank);
                NodePtr mask =
                    cast_(bin(BinaryOp::Eq, x, keepdims(np, x->type, ax, loc), loc), d, loc);
                NodePtr cnt = keepdims(sum_axes(mask, ax, loc), x->type, ax, loc);
                give(x,
                     bin(BinaryOp::Div,
                         bin(BinaryOp::Mul, mask, keepdims(g, x->type, ax, loc), loc), cnt, loc));
                return;
            }
            case BuiltinOp::Logsumexp: {
                auto ax = red_axes(n, rank);
                NodePtr p = un(UnaryOp::Exp,
                               bin(BinaryOp::Sub, x, keepdims(np, x->type, ax, loc), loc), loc);
                give(x, bin(BinaryOp::Mul, p, keepdims(g, x->type, ax, loc), loc));
                return;
            }
            case BuiltinOp::Softmax:
            case BuiltinOp::LogSoftmax: {
                int64_t a = n.has_axes && !n.axes.empty() ? n.axes[0] : -1;
                if (a < 0) a += static_cast<int64_t>(rank);
                std::vector<int64_t> ax = {a};
                if (n.builtin == BuiltinOp::Softmax) {
                    NodePtr s = keepdims(sum_axes(bin(BinaryOp::Mul, g, np, loc), ax, loc), x->type,
                                         ax, loc);
                    give(x, bin(BinaryOp::Mul, np, bin(BinaryOp::Sub, g, s, loc), loc));
                } else {
                    NodePtr s = keepdims(sum_axes(g, ax, loc), x->type, ax, loc);
                    give(x, bin(BinaryOp::Sub, g,
                                bin(BinaryOp::Mul, un(UnaryOp::Exp, np, loc), s, loc), loc));
                }
                return;
            }
            case BuiltinOp::MatMul: {
                NodePtr a = n.args[0], b = n.args[1];
                bool a1 = a->type.shape.size() == 1, b1 = b->type.shape.size() == 1;
                NodePtr a2 = a1 ? reshape_(a, {sext(1), a->type.shape[0]}, loc) : a;
                NodePtr b2 = b1 ? reshape_(b, {b->type.shape[0], sext(1)}, loc) : b;
                std::vector<Extent> gs = g->type.shape;
                if (a1) gs.insert(gs.end() - (b1 ? 0 : 1), sext(1));
                if (b1) gs.push_back(sext(1));
                NodePtr g2 = reshape_(g, gs, loc);
                if (active(a))
                    give(a, reshape_(unbroadcast(matmul_(g2, swap_last2(b2, loc), loc),
                                                 a2->type.shape, loc),
                                     a->type.shape, loc));
                if (active(b))
                    give(b, reshape_(unbroadcast(matmul_(swap_last2(a2, loc), g2, loc),
                                                 b2->type.shape, loc),
                                     b->type.shape, loc));
                return;
            }
            case BuiltinOp::Transpose: {
                std::vector<int64_t> perm = n.has_axes ? n.axes : std::vector<int64_t>{};
                if (perm.empty())
                    for (size_t k = rank; k-- > 0;) perm.push_back(static_cast<int64_t>(k));
                std::vector<int64_t> inv(perm.size());
                for (size_t k = 0; k < perm.size(); ++k) inv[perm[k]] = static_cast<int64_t>(k);
                give(x, transpose_(g, inv, loc));
                return;
            }
            case BuiltinOp::Reshape: give(x, reshape_(g, x->type.shape, loc)); return;
            case BuiltinOp::Concat:
            case BuiltinOp::Stack: {
                int64_t axis = n.has_axes && !n.axes.empty() ? n.axes[0] : 0;
                if (axis < 0) axis += static_cast<int64_t>(g->type.shape.size());
                int64_t off = 0;
                for (const NodePtr &a : n.args) {
                    Node ix;
                    ix.kind = NodeKind::Index;
                    ix.loc = loc;
                    ix.args = {g};
                    ix.type = arr_type(d, {});
                    for (int64_t k = 0; k < axis; ++k) {
                        SpatialIndex s;
                        s.kind = SpatialIndex::Full;
                        ix.sindex.push_back(s);
                    }
                    SpatialIndex s;
                    if (n.builtin == BuiltinOp::Stack) {
                        s.kind = SpatialIndex::Scalar;
                        s.value = cst(DType::I32, static_cast<double>(off), loc);
                        ix.args.push_back(s.value);
                        off += 1;
                    } else {
                        const Extent &e = a->type.shape[axis];
                        if (!e.is_static())
                            throw AdError{
                                loc, "grad through concat of dynamic extents is not supported yet"};
                        s.kind = SpatialIndex::Slice;
                        s.lo = aff_ix(aff_const(off));
                        s.hi = aff_ix(aff_const(off + e.max_value));
                        off += e.max_value;
                    }
                    ix.sindex.push_back(s);
                    ix.type.shape = a->type.shape;
                    if (active(a)) give(a, mk(std::move(ix)));
                }
                return;
            }
            case BuiltinOp::Gather: scatter_back(n, g, loc); return;
            case BuiltinOp::Cumsum: {
                if (!(n.has_axes && !n.axes.empty()) && rank != 1)
                    throw AdError{loc, "grad through cumsum without axis= is not supported yet"};
                int64_t a = n.has_axes && !n.axes.empty() ? n.axes[0] : 0;
                if (a < 0) a += static_cast<int64_t>(rank);
                std::vector<int64_t> ax = {a};
                // reverse cumsum: Σ_{j >= k} g_j = total - cumsum(g)_k + g_k
                NodePtr tot = keepdims(sum_axes(g, ax, loc), x->type, ax, loc);
                NodePtr cs = builtin(BuiltinOp::Cumsum, g->type, {g}, loc, ax, true);
                give(x, bin(BinaryOp::Add, bin(BinaryOp::Sub, tot, cs, loc), g, loc));
                return;
            }
            case BuiltinOp::Clamp: {
                const NodePtr &lo = n.args[1], &hi = n.args[2];
                NodePtr z = cst(d, 0, loc);
                NodePtr in = bin(BinaryOp::And, bin(BinaryOp::Ge, x, lo, loc),
                                 bin(BinaryOp::Le, x, hi, loc), loc);
                if (active(x)) give(x, unbroadcast(where_(in, g, z, loc), x->type.shape, loc));
                if (active(lo))
                    give(lo, unbroadcast(where_(bin(BinaryOp::Lt, x, lo, loc), g, z, loc),
                                         lo->type.shape, loc));
                if (active(hi))
                    give(hi, unbroadcast(where_(bin(BinaryOp::And, bin(BinaryOp::Gt, x, hi, loc),
                                                    bin(BinaryOp::Ge, x, lo, loc), loc),
                                                g, z, loc),
                                         hi->type.shape, loc));
                return;
            }
            case BuiltinOp::Full: {
                const NodePtr &v = n.args.back();
                std::vector<int64_t> all;
                for (size_t k = 0; k < g->type.shape.size(); ++k)
                    all.push_back(static_cast<int64_t>(k));
                give(v, cast_(sum_axes(g, all, loc), v->type.dtype, loc));
                return;
            }
            default: throw AdError{loc, "grad through this builtin is not supported yet"};
        }
    }

    const std::vector<bool> &diff_;
    std::unordered_map<const Node *, bool> active_;
    std::unordered_map<const Node *, bool> rng_;
    std::unordered_map<const Node *, Adj> adj_;
};

// ---- the program transformation ------------------------------------------------------------

/** How one domain position of a differentiated read indexes the tensor it reads. */
struct PosMap {
    enum Kind { Var, Const, Slice } kind = Var;
    int var = -1;            // Var: the consumer equation's variable
    int64_t a = 0;           // Var: index = var + a; Const: the coordinate
    int64_t lo = 0, hi = 0;  // Slice
    IndexExprPtr dyn_lo;     // Slice with ends that depend on the variables (x[t:T]): the
                             // adjoint of the block is first placed at dyn_lo in [0, hi)
};

/** The largest value of "e" over the box [0, bounds[v]) of the variables. */
int64_t index_max(const IndexExpr &e, const std::vector<int64_t> &bounds) {
    if (e.kind == IndexExpr::Min) return std::min(index_max(*e.a, bounds), index_max(*e.b, bounds));
    if (e.kind == IndexExpr::Max) return std::max(index_max(*e.a, bounds), index_max(*e.b, bounds));
    int64_t m = e.aff.constant;
    for (size_t v = 0; v < e.aff.coef.size(); ++v)
        if (e.aff.coef[v] > 0) m += e.aff.coef[v] * (bounds.at(v) - 1);
    return m;
}

/** The adjoint "g" of a dynamic block x[lo:hi] along axis "axis" of g (g of rank 1 or 2: a
 *  block [L], or [L, n] / [n, L] — a block of vectors, or next to another slice) placed in a
 *  zero array of length "n_out" along that axis, at lo: Σ_s one_hot(lo + s, n_out)·g[s]. */
NodePtr place_block(NodePtr g, size_t axis, const IndexExprPtr &lo, int64_t n_out, Loc loc) {
    if (g->type.shape.empty() || g->type.shape.size() > 2)
        throw AdError{loc, "grad through a dynamic slice whose adjoint has rank > 2 (a block of "
                           "matrices, or of vectors next to another slice) is not supported yet"};
    if (axis == 1) {  // the block's axis first, placed, then back
        NodePtr placed = place_block(transpose_(std::move(g), {1, 0}, loc), 0, lo, n_out, loc);
        return transpose_(std::move(placed), {1, 0}, loc);
    }
    const std::vector<Extent> &gs = g->type.shape;
    Node ar;
    ar.kind = NodeKind::Builtin;
    ar.builtin = BuiltinOp::Arange;
    ar.type = arr_type(DType::I32, {gs[0]});
    ar.loc = loc;
    NodePtr idx = bin(BinaryOp::Add, mk(std::move(ar)), index_expr_node(*lo, loc), loc);
    Node oh;
    oh.kind = NodeKind::Builtin;
    oh.builtin = BuiltinOp::OneHot;
    oh.int_attr = n_out;
    oh.type = arr_type(g->type.dtype, {gs[0], sext(n_out)});
    oh.args = {idx};
    oh.loc = loc;
    NodePtr ohT = transpose_(mk(std::move(oh)), {1, 0}, loc);  // [n_out, L]
    if (gs.size() == 1) return sum_axes(bin(BinaryOp::Mul, ohT, g, loc), {1}, loc);
    return matmul_(ohT, g, loc);
}

struct Contribution {
    int j_tensor;              // J: over C's domain, the adjoint of the value read
    int leaf = -1;             // >= 0: J is element `leaf` of the tuple-valued J (read at points)
    int consumer;              // C
    const Equation *eq;        // Ec
    std::vector<PosMap> pos;   // per position of z
    std::vector<int> var_pos;  // per variable of Ec: the position of z it maps to, or -1 (summed)
    // Per variable of Ec: the consumer points [lo, hi) this contribution covers (a piece of a
    // clamped read); empty = every point.
    std::vector<std::pair<int64_t, int64_t>> var_range;
    std::vector<int> path;     // the leaf of z's type
    Loc loc;                   // the read
};

class Differentiator {
public:
    Differentiator(Program &prog, Diagnostics &diag) : prog_(prog), diag_(diag) {}

    bool run() {
        std::vector<std::pair<int, int>> sites_eq;
        std::vector<NodePtr> sites;
        std::set<const Node *> seen;
        std::function<void(const NodePtr &, int, int)> find = [&](const NodePtr &n, int t, int e) {
            if (!n || !seen.insert(n.get()).second) return;
            if (n->kind == NodeKind::Grad) {
                if (t < 0) {
                    diag_.error(n->loc,
                                "grad may only be used in the equation of a tensor, not in an "
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
                repl[sites[k].get()] =
                    differentiate_one(sites_eq[k].first, sites_eq[k].second, sites[k]);
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

private:
    static bool contains_grad(const NodePtr &n) {
        if (!n) return false;
        if (n->kind == NodeKind::Grad) return true;
        for (const NodePtr &a : n->args)
            if (contains_grad(a)) return true;
        return false;
    }

    std::string var_name(const Equation &e, int v) const { return prog_.dims[e.vars[v]].name; }

    std::vector<std::string> var_names(const Equation &e) const {
        std::vector<std::string> out;
        for (int d : e.vars) out.push_back(prog_.dims[d].name);
        return out;
    }

    std::string read_text(const Node &r, const Equation &e) const {
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
    std::string lhs_text(int c, const Equation &e) const {
        std::string s = prog_.tensors[c].name;
        if (e.pattern.empty()) return s;
        s += "[";
        for (size_t k = 0; k < e.pattern.size(); ++k) {
            const PatternItem &p = e.pattern[k];
            s += k ? ", " : "";
            if (p.kind == PatternItem::Constant)
                s += std::to_string(p.offset);
            else
                s += var_name(e, p.var) +
                     (p.kind == PatternItem::Shift ? "+" + std::to_string(p.offset) : "");
        }
        return s + "]";
    }

    std::string unique_name(const std::string &base) {
        std::string n = base;
        for (int k = 2; prog_.tensor_index(n) >= 0 || made_names_.count(n); ++k)
            n = base + "#" + std::to_string(k);
        made_names_.insert(n);
        return n;
    }

    int new_tensor(const std::string &name, const std::vector<int> &dims, const Type &type,
                   Loc loc) {
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
    std::vector<Equation> shapes_of(int z, bool plain) const {
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

    static Equation mirror(const Equation &e, NodePtr body) {
        Equation m;
        m.vars = e.vars;
        m.pattern = e.pattern;
        m.guard = e.guard;
        m.loc = e.loc;
        m.body = std::move(body);
        return m;
    }

    /** The pattern point of "e" as affine forms of its variables. */
    static std::vector<Affine> pattern_point(const Equation &e) {
        std::vector<Affine> out;
        for (const PatternItem &p : e.pattern) {
            if (p.kind == PatternItem::Constant)
                out.push_back(aff_const(p.offset));
            else
                out.push_back(aff_var(p.var, p.kind == PatternItem::Shift ? p.offset : 0));
        }
        return out;
    }

    NodePtr read_at(int tensor, const std::vector<ReadIndex> &index, Loc loc) const {
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

    NodePtr read_point(int tensor, const std::vector<Affine> &point, Loc loc) const {
        std::vector<ReadIndex> idx;
        for (const Affine &a : point) {
            ReadIndex ri;
            ri.point = aff_ix(a);
            idx.push_back(ri);
        }
        return read_at(tensor, idx, loc);
    }

    /** Checks a read "r" of a differentiated tensor by consumer equation "e" (of tensor c, or
     *  the seed equation) and classifies its positions: one contribution, or one per piece of a
     *  clamped read. */
    std::vector<Contribution> analyze_read(const Node &r, int c, const Equation &e, bool seed,
                                           const std::vector<int> &V) {
        Contribution k;
        k.consumer = c;
        k.eq = &e;
        k.loc = r.loc;
        k.var_pos.assign(e.vars.size(), -1);
        std::string rt = read_text(r, e);
        std::vector<size_t> clamped;  // positions indexed by min/max of affine forms
        for (size_t j = 0; j < r.index.size(); ++j) {
            const ReadIndex &ri = r.index[j];
            PosMap p;
            if (ri.is_slice) {
                p.kind = PosMap::Slice;
                if (ri.lo->kind != IndexExpr::Aff || ri.hi->kind != IndexExpr::Aff ||
                    !ri.lo->aff.is_constant() || !ri.hi->aff.is_constant()) {
                    // A block whose ends move with the variables: its adjoint is placed in
                    // [0, max hi) first, then read like the static slice 0:max hi.
                    std::vector<int64_t> bounds;
                    for (int d : e.vars) bounds.push_back(prog_.dims[d].bound);
                    p.dyn_lo = ri.lo;
                    p.lo = 0;
                    p.hi = index_max(*ri.hi, bounds);
                } else {
                    p.lo = ri.lo->aff.constant;
                    p.hi = ri.hi->aff.constant;
                }
            } else if (ri.point->kind != IndexExpr::Aff) {
                clamped.push_back(j);  // split into pieces below
            } else if (ri.point->aff.is_constant()) {
                p.kind = PosMap::Const;
                p.a = ri.point->aff.constant;
            } else {
                const Affine &a = ri.point->aff;
                int var = -1;
                bool ok = true;
                for (size_t v = 0; v < a.coef.size(); ++v) {
                    if (!a.coef[v]) continue;
                    if (a.coef[v] != 1 || var >= 0) ok = false;
                    var = static_cast<int>(v);
                }
                if (!ok)
                    throw AdError{r.loc, "grad through the read " + rt +
                                             " is not supported: index '" +
                                             index_expr_compact(*ri.point, var_names(e)) +
                                             "' is not a dim plus a constant"};
                if (k.var_pos[var] >= 0)
                    throw AdError{r.loc, "grad through the read " + rt +
                                             " is not supported: it uses '" + var_name(e, var) +
                                             "' at two positions"};
                p.kind = PosMap::Var;
                p.var = var;
                p.a = a.constant;
                k.var_pos[var] = static_cast<int>(j);
            }
            k.pos.push_back(p);
        }
        std::vector<Contribution> pieces = clamped_pieces(r, e, k, clamped, rt);
        for (const Contribution &piece : pieces) check_identity_along(piece, r, c, e, seed, V, rt);
        return pieces;
    }

    /** A clamped position (`x[min(t+1, T-1)]`, `x[max(t-2, 0)]`, any min/max of affine forms of
     *  one dim) is piecewise "dim plus a constant" or constant over the dim's range: the read
     *  is split into one contribution per piece, each restricted to its consumer points
     *  (var_range).  The pieces are found by evaluating the index at every point of the dim
     *  (its bound is static): maximal runs where it steps by 1 are Var pieces, runs where it
     *  stays equal are Const pieces (a lone point is a Const piece). */
    std::vector<Contribution> clamped_pieces(const Node &r, const Equation &e, Contribution k,
                                             const std::vector<size_t> &clamped,
                                             const std::string &rt) const {
        const size_t kMaxPieces = 16;
        k.var_range.assign(e.vars.size(), {0, 0});
        for (size_t v = 0; v < e.vars.size(); ++v)
            k.var_range[v] = {0, prog_.dims[e.vars[v]].bound};
        std::vector<Contribution> out{k};
        for (size_t j : clamped) {
            const IndexExpr &ix = *r.index[j].point;
            std::set<int> used;
            std::function<void(const IndexExpr &)> vars = [&](const IndexExpr &x) {
                if (x.kind != IndexExpr::Aff) {
                    vars(*x.a);
                    vars(*x.b);
                    return;
                }
                for (size_t v = 0; v < x.aff.coef.size(); ++v)
                    if (x.aff.coef[v]) used.insert(static_cast<int>(v));
            };
            vars(ix);
            if (used.size() > 1)
                throw AdError{r.loc, "grad through the clamped read " + rt +
                                         " is not supported: its index uses two dims"};
            std::vector<Contribution> next;
            if (used.empty()) {  // min/max of constants
                for (Contribution piece : out) {
                    piece.pos[j].kind = PosMap::Const;
                    piece.pos[j].a = interp::eval_index_expr(ix, {});
                    next.push_back(piece);
                }
                out = std::move(next);
                continue;
            }
            const int var = *used.begin();
            std::vector<int64_t> env(e.vars.size(), 0);
            auto at = [&](int64_t t) {
                env[var] = t;
                return interp::eval_index_expr(ix, env);
            };
            for (const Contribution &base : out) {
                const auto [lo, hi] = base.var_range[var];
                for (int64_t t0 = lo; t0 < hi;) {
                    int64_t v0 = at(t0), t1 = t0 + 1;
                    bool steps = t1 < hi && at(t1) == v0 + 1;
                    while (t1 < hi && at(t1) == (steps ? v0 + (t1 - t0) : v0)) ++t1;
                    Contribution piece = base;
                    piece.var_range[var] = {t0, t1};
                    PosMap &pm = piece.pos[j];
                    if (steps) {
                        if (piece.var_pos[var] >= 0)
                            throw AdError{r.loc, "grad through the read " + rt +
                                                     " is not supported: it uses '" +
                                                     var_name(e, var) + "' at two positions"};
                        pm.kind = PosMap::Var;
                        pm.var = var;
                        pm.a = v0 - t0;
                        piece.var_pos[var] = static_cast<int>(j);
                    } else {
                        pm.kind = PosMap::Const;
                        pm.a = v0;
                    }
                    next.push_back(piece);
                    if (next.size() > kMaxPieces)
                        throw AdError{r.loc, "grad through the clamped read " + rt +
                                                 " is not supported: its index has more than " +
                                                 std::to_string(kMaxPieces) +
                                                 " affine pieces over the dim's range"};
                    t0 = t1;
                }
            }
            out = std::move(next);
        }
        return out;
    }

    /** Along the grad's own dims V every read is the identity (different grad points never
     *  mix); throws the diagnostic otherwise. */
    void check_identity_along(const Contribution &k, const Node &r, int c, const Equation &e,
                              bool seed, const std::vector<int> &V, const std::string &rt) const {
        const Tensor &z = prog_.tensors[r.tensor];
        for (int d : V) {
            int vd = -1;
            for (size_t v = 0; v < e.vars.size(); ++v)
                if (e.vars[v] == d) vd = static_cast<int>(v);
            bool ok = vd >= 0;
            if (ok && !seed) {
                for (const PatternItem &pi : e.pattern)
                    if (pi.var == vd && pi.kind != PatternItem::Var) ok = false;
            }
            int jd = -1;
            for (size_t j = 0; j < z.dims.size(); ++j)
                if (z.dims[j] == d) jd = static_cast<int>(j);
            ok = ok && jd >= 0 && k.pos[jd].kind == PosMap::Var && k.pos[jd].var == vd &&
                 k.pos[jd].a == 0;
            if (!ok)
                throw AdError{r.loc, "grad(" + y_text_ + ", …) through a dependence along '" +
                                         prog_.dims[d].name + "' is not supported: " +
                                         (seed ? "" : lhs_text(c, e) + " ") + "reads " + rt};
        }
    }

    /** The consumer points [lo, hi) of variable "v" that contribution "k" covers. */
    std::pair<int64_t, int64_t> var_range(const Contribution &k, int v) const {
        if (!k.var_range.empty()) return k.var_range[v];
        return {0, prog_.dims[k.eq->vars[v]].bound};
    }

    /** The sum of J over the consumer points that read z at the point "u" (affine forms of the
     *  variables of the equation being built, each variable v in [0, box[v])), and the
     *  condition for there being any.  A range comparison that holds on the whole box is left
     *  out of the condition: it would only restate the dims' bounds as constants (`i < 977`),
     *  which the PDG cannot tell from a guard and a run-time bound could not change. */
    NodePtr contribution(const Contribution &k, const std::vector<Affine> &u,
                         const std::vector<int64_t> &box, GuardPtr *cond, Loc loc) {
        const Equation &e = *k.eq;
        const Tensor &C = prog_.tensors[k.consumer];
        std::vector<Affine> vmap(e.vars.size(), aff_const(0));
        GuardPtr g;
        auto need = [&](BinaryOp op, const Affine &a, int64_t c) {
            GuardPtr cmp = guard_cmp(op, a, aff_const(c));
            if (guard_on_box(cmp, box) != 1) g = guard_and(g, cmp);
        };
        for (size_t j = 0; j < k.pos.size(); ++j) {
            const PosMap &p = k.pos[j];
            if (p.kind == PosMap::Var) {
                vmap[p.var] = aff_add(u[j], aff_const(p.a), -1);
                auto [lo, hi] = var_range(k, p.var);
                need(BinaryOp::Ge, vmap[p.var], lo);
                need(BinaryOp::Lt, vmap[p.var], hi);
            } else if (p.kind == PosMap::Const) {
                g = guard_and(g, guard_cmp(BinaryOp::Eq, u[j], aff_const(p.a)));
            } else {
                need(BinaryOp::Ge, u[j], p.lo);
                need(BinaryOp::Lt, u[j], p.hi);
            }
        }
        // Ec's guard restricts the consumer points read; J is zero wherever Ec does not apply, so
        // a guard on summed variables needs no condition (the slice reads J over C's points).
        bool guard_summed = false;
        for (size_t v = 0; v < e.vars.size(); ++v)
            guard_summed =
                guard_summed || (k.var_pos[v] < 0 && mentions(e.guard, static_cast<int>(v)));
        if (e.guard && !guard_summed) g = guard_and(g, guard_subst(e.guard, vmap));
        *cond = g;
        std::vector<ReadIndex> idx;
        int nsum = 0;
        for (size_t i = 0; i < C.dims.size(); ++i) {
            const PatternItem &pi = e.pattern[i];
            ReadIndex ri;
            if (pi.kind == PatternItem::Constant) {
                ri.point = aff_ix(aff_const(pi.offset));
            } else {
                int64_t o = pi.kind == PatternItem::Shift ? pi.offset : 0;
                if (k.var_pos[pi.var] >= 0) {
                    ri.point = aff_ix(aff_add(vmap[pi.var], aff_const(o)));
                } else {
                    auto [lo, hi] = var_range(k, pi.var);
                    ri.is_slice = true;
                    ri.lo = aff_ix(aff_const(o + lo));
                    ri.hi = aff_ix(aff_const(o + hi));
                    ++nsum;
                }
            }
            idx.push_back(ri);
        }
        NodePtr v = read_at(k.j_tensor, idx, loc);
        if (k.leaf >= 0) {
            Node g;
            g.kind = NodeKind::TupleGet;
            g.int_attr = k.leaf;
            g.type = v->type.elems.at(k.leaf);
            g.args = {v};
            g.loc = loc;
            v = mk(std::move(g));
        }
        std::vector<int64_t> axes;
        for (int s = 0; s < nsum; ++s) axes.push_back(s);
        v = sum_axes(v, axes, loc);
        bool any_slice = false;
        for (const PosMap &p : k.pos) any_slice = any_slice || p.kind == PosMap::Slice;
        if (any_slice) {
            Node ix;
            ix.kind = NodeKind::Index;
            ix.loc = loc;
            ix.args = {v};
            ix.type = arr_type(v->type.dtype, {});
            size_t ax = 0;
            for (size_t j = 0; j < k.pos.size(); ++j) {
                if (k.pos[j].kind != PosMap::Slice) continue;
                SpatialIndex s;
                s.kind = SpatialIndex::Scalar;
                s.value = affine_node(aff_add(u[j], aff_const(k.pos[j].lo), -1), loc);
                ix.args.push_back(s.value);
                ix.sindex.push_back(s);
                ++ax;
            }
            ix.type.shape.assign(v->type.shape.begin() + ax, v->type.shape.end());
            v = mk(std::move(ix));
        }
        return v;
    }

    NodePtr differentiate_one(int R, int e0_index, const NodePtr &grad) {
        const Equation E0 = prog_.tensors[R].equations[e0_index];
        const NodePtr y = grad->args[0], x = grad->args[1];
        // ---- x: reads at the equation's point
        std::vector<NodePtr> xreads;
        std::function<void(const NodePtr &)> collect = [&](const NodePtr &n) {
            if (n->kind == NodeKind::Tuple) {
                for (const NodePtr &a : n->args) collect(a);
                return;
            }
            bool ok = n->kind == NodeKind::Read;
            std::set<int> used;
            for (size_t j = 0; ok && j < n->index.size(); ++j) {
                const ReadIndex &ri = n->index[j];
                ok =
                    !ri.is_slice && ri.point->kind == IndexExpr::Aff && ri.point->aff.constant == 0;
                int var = -1;
                for (size_t v = 0; ok && v < ri.point->aff.coef.size(); ++v)
                    if (ri.point->aff.coef[v]) {
                        ok = ri.point->aff.coef[v] == 1 && var < 0;
                        var = static_cast<int>(v);
                    }
                ok = ok && var >= 0 && used.insert(var).second &&
                     E0.vars[var] == prog_.tensors[n->tensor].dims[j];
            }
            if (!ok)
                throw AdError{n->loc,
                              "grad(y, x): x must be a tensor read at the equation's own point, "
                              "such as net[i] in an equation over i (or a tuple of such reads)"};
            for (const NodePtr &o : xreads)
                if (o->tensor == n->tensor)
                    throw AdError{
                        n->loc, "grad(y, x): x names " + prog_.tensors[n->tensor].name + " twice"};
            xreads.push_back(n);
        };
        collect(x);
        // ---- y's name, for the adjoint tensors' names and messages
        y_text_ = "y";
        {
            std::set<const Node *> s;
            std::set<int> rs;
            carried_reads(y, s, rs);
            std::function<const Node *(const NodePtr &)> first =
                [&](const NodePtr &n) -> const Node * {
                if (n->kind == NodeKind::Read) return n.get();
                for (const NodePtr &a : n->args)
                    if (const Node *f = first(a)) return f;
                return nullptr;
            };
            if (const Node *f = first(y)) y_text_ = read_text(*f, E0);
            base_ = "grad." + (first(y) ? prog_.tensors[first(y)->tensor].name : std::string("y")) +
                    ".";
        }
        // ---- active set
        size_t n = prog_.tensors.size();
        std::vector<bool> is_x(n, false);
        for (const NodePtr &r : xreads) is_x[r->tensor] = true;
        std::vector<std::set<int>> deps(n);
        for (size_t t = 0; t < n; ++t) {
            std::set<const Node *> s;
            for (const Equation &e : prog_.tensors[t].equations) carried_reads(e.body, s, deps[t]);
        }
        std::vector<bool> from_y(n, false), to_x(n, false);
        {
            std::set<const Node *> s;
            std::set<int> start;
            carried_reads(y, s, start);
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
        std::vector<bool> diff(n, false);
        std::vector<int> active;
        for (size_t t = 0; t < n; ++t) {
            if (is_x[t])
                diff[t] = true;
            else if (from_y[t] && to_x[t]) {
                diff[t] = true;
                active.push_back(static_cast<int>(t));
            }
        }
        // ---- adjoint tensors (equations filled below)
        std::map<int, int> adj;
        std::vector<int> order = active;
        for (const NodePtr &r : xreads) order.push_back(r->tensor);
        for (int z : order) {
            const Tensor &t = prog_.tensors[z];
            adj[z] = new_tensor(base_ + t.name, t.dims, t.type, grad->loc);
        }
        diff.resize(prog_.tensors.size(), false);
        // ---- consumers: the reverse sweep of every equation of an active tensor, and of y
        std::map<int, std::vector<Contribution>> contribs;  // z → contributions
        std::vector<int> V = E0.vars;
        auto consume = [&](int C, int eidx, bool seed) {
            Tensor ct;  // a copy of the consumer's metadata (new tensors move prog_.tensors)
            ct.name = prog_.tensors[C].name;
            ct.dims = prog_.tensors[C].dims;
            ct.type = prog_.tensors[C].type;
            ct.equations = prog_.tensors[C].equations;
            const int self_idx = seed ? e0_index : eidx;
            const Equation &e = seed ? E0 : ct.equations[eidx];
            Sweep sw(diff);
            Adj s;
            if (seed) {
                s.v = cst(y->type.dtype, 1.0, grad->loc);
                sw.run(y, s);
            } else {
                NodePtr in = read_point(adj.at(C), pattern_point(e), e.loc);
                if (ct.type.is_tuple) {
                    std::function<Adj(const NodePtr &, const Type &)> split = [&](const NodePtr &v,
                                                                                  const Type &t) {
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
                            a.elems.push_back(split(mk(std::move(g)), t.elems[k]));
                        }
                        return a;
                    };
                    s = split(in, ct.type);
                } else {
                    s.v = in;
                }
                sw.run(e.body, s);
            }
            // One leaf per (read, element of its type).
            struct Leaf {
                NodePtr read;
                std::vector<int> path;
                NodePtr value;
            };
            std::vector<Leaf> ls;
            std::vector<Contribution> ks;                   // per leaf: its first piece
            std::vector<std::vector<Contribution>> kpieces;  // per leaf: every piece
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
                    ls.push_back({r, path, v});
                    for (Contribution &piece : pieces) piece.path = path;
                    ks.push_back(pieces.front());
                    kpieces.push_back(pieces);
                }
            }
            if (ls.empty()) return;
            std::string where = ct.name + "." + std::to_string(seed ? e0_index : eidx);
            const std::vector<Equation> &ceqs = ct.equations;
            const Equation *self = &prog_.tensors[C].equations[self_idx];  // stable: never resized
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
                    prog_.tensors[K].equations.push_back(mirror(
                        ceqs[ci],
                        static_cast<int>(ci) == self_idx ? tup : zeros_of(tt, ceqs[ci].loc)));
                note_back(C, self_idx, seed ? y : nullptr, K);
            }
            for (size_t q = 0; q < ls.size(); ++q) {
                const Leaf &l = ls[q];
                const Type &lt = l.value->type;
                std::string zn = prog_.tensors[l.read->tensor].name;
                for (int e : l.path) zn += "." + std::to_string(e);  // the tuple element
                bool sums = false;  // a piece leaves a variable of Ec out: J is sliced
                for (const Contribution &piece : kpieces[q])
                    for (int vp : piece.var_pos) sums = sums || vp < 0;
                auto record = [&](int j_tensor, int leaf) {
                    for (Contribution piece : kpieces[q]) {
                        piece.j_tensor = j_tensor;
                        piece.leaf = leaf;
                        piece.eq = self;  // Ec must stay valid: point into C's equations
                        contribs[l.read->tensor].push_back(piece);
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
                        Node g;
                        g.kind = NodeKind::TupleGet;
                        g.int_attr = static_cast<int64_t>(q);
                        g.type = lt;
                        g.args = {read_point(K, pattern_point(ce), ce.loc)};
                        g.loc = ce.loc;
                        body = mk(std::move(g));
                    } else {
                        body = static_cast<int>(ci) == self_idx ? l.value : zeros_of(lt, ce.loc);
                    }
                    prog_.tensors[J].equations.push_back(mirror(ce, body));
                }
                if (K < 0) note_back(C, self_idx, seed ? y : nullptr, J);
                record(J, -1);
            }
        };
        consume(R, e0_index, true);
        for (int C : active)
            for (size_t ei = 0; ei < prog_.tensors[C].equations.size(); ++ei)
                consume(C, static_cast<int>(ei), false);
        // ---- adjoint equations
        for (int z : order) {
            const std::vector<Equation> zeqs = shapes_of(z, is_x[z]);
            const Type zt = prog_.tensors[z].type;
            std::vector<std::vector<int>> paths;
            std::vector<int> p;
            leaves(zt, p, paths);
            const std::vector<Contribution> ks = contribs[z];
            // Per contribution: inline it (condition always true) or give it a guarded tensor.
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
                                       (ks[q].leaf >= 0 ? "." + std::to_string(ks[q].leaf) : "") +
                                       ".at",
                                   prog_.tensors[z].dims, lt, ks[q].loc);
                for (size_t ei = 0; ei < zeqs.size(); ++ei) {
                    const Equation &ze = zeqs[ei];
                    std::vector<int64_t> bounds;
                    for (int d : ze.vars) bounds.push_back(prog_.dims[d].bound);
                    int tri = guard_on_box(per_eq[ei].first, bounds);
                    if (tri == 1 || tri == 0) {
                        prog_.tensors[P].equations.push_back(
                            mirror(ze, tri ? per_eq[ei].second : zeros_of(lt, ze.loc)));
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
                std::function<NodePtr(const Type &, std::vector<int> &)> build =
                    [&](const Type &t, std::vector<int> &path) -> NodePtr {
                    if (!t.is_tuple) {
                        auto it = sums.find(path);
                        return it != sums.end() ? it->second : zeros_of(t, ze.loc);
                    }
                    Node tn;
                    tn.kind = NodeKind::Tuple;
                    tn.type = t;
                    tn.loc = ze.loc;
                    for (size_t k = 0; k < t.elems.size(); ++k) {
                        path.push_back(static_cast<int>(k));
                        tn.args.push_back(build(t.elems[k], path));
                        path.pop_back();
                    }
                    return mk(std::move(tn));
                };
                std::vector<int> path;
                prog_.tensors[adj[z]].equations.push_back(mirror(ze, build(zt, path)));
            }
        }
        // ---- the grad's value: adj_X at the equation's point
        std::function<NodePtr(const NodePtr &)> value = [&](const NodePtr &xn) -> NodePtr {
            if (xn->kind == NodeKind::Tuple) {
                Node tn = *xn;
                for (NodePtr &a : tn.args) a = value(a);
                return mk(std::move(tn));
            }
            Node r = *xn;
            r.tensor = adj.at(xn->tensor);
            r.loc = grad->loc;
            return mk(std::move(r));
        };
        return value(x);
    }

    // ---- step 6: saved forward values ---------------------------------------------------------

    /** The back tensors (K, or J when there is no K) of one consumer equation: their equation
     *  "eq" holds the adjoints, whose expressions share forward nodes with the equation's body
     *  (or with y, for the seed). */
    struct BackSite {
        int consumer = -1, eq = -1;
        NodePtr seed_y;  // the seed: y (its nodes are gone from E0's body)
        std::vector<int> backs;
    };

    void note_back(int C, int eq, const NodePtr &seed_y, int back) {
        BackSite &b = backs_[{C, eq, seed_y ? 1 : 0}];
        b.consumer = C;
        b.eq = eq;
        b.seed_y = seed_y;
        b.backs.push_back(back);
    }

    /** Transcendental element operations of "n" (exp, log, sqrt, tanh, sigmoid, sin, cos, pow,
     *  softmax, log_softmax, logsumexp), weighted by element count. */
    static int64_t transcendental_work(const Node &n) {
        int64_t w = 0;
        if (n.kind == NodeKind::Unary) {
            w = ir::unary_info(n.uop).transcendental ? 1 : 0;
        } else if (n.kind == NodeKind::Binary && n.bop == BinaryOp::Pow) {
            w = 1;
        } else if (n.kind == NodeKind::Builtin &&
                   (n.builtin == BuiltinOp::Softmax || n.builtin == BuiltinOp::LogSoftmax ||
                    n.builtin == BuiltinOp::Logsumexp) &&
                   !n.args.empty()) {
            w = 2;
            const Type &t = n.args[0]->type;
            for (const Extent &e : t.shape) w *= e.max_value;
            return w;
        }
        if (w == 0 || n.type.is_tuple) return 0;
        for (const Extent &e : n.type.shape) w *= e.max_value;
        return w;
    }

    /** Step 6 (saved forward values).  The sweep writes a derivative in terms of forward values
     *  (tanh' = 1 - y², with y the forward tanh node; matmul's adjoints read its operands), so
     *  the back tensor's expression contains the forward expression again and code generation
     *  recomputes it — once per kernel that needs it.  Every forward node that the back
     *  expressions read directly (the topmost forward nodes under backward ones) and whose
     *  recomputation costs at least kSaveWork transcendental element operations (counted up to
     *  the values already saved) becomes a hidden tensor `<C>.<k>.saved.<n>` over C's domain,
     *  whose equations mirror C's (Ec's computes the node, the others zeros), and both C's
     *  equation and the back tensors read it at their own point (Ec's whole body: the back
     *  tensors read C itself).  Same operations in the same
     *  order: the values, hence every float of the program, are unchanged. */
    void save_forward_values(const BackSite &site) {
        static constexpr int64_t kSaveWork = 1024;
        const int C = site.consumer, ei = site.eq;
        const NodePtr froot = site.seed_y ? site.seed_y : prog_.tensors[C].equations[ei].body;
        if (!froot) return;
        // Forward nodes in post-order (operands first).
        std::vector<NodePtr> post;
        std::set<const Node *> fwd;
        std::function<void(const NodePtr &)> walk = [&](const NodePtr &n) {
            if (!n || !fwd.insert(n.get()).second) return;
            for (const NodePtr &a : n->args) walk(a);
            for (const SpatialIndex &s : n->sindex) walk(s.value);
            post.push_back(n);
        };
        walk(froot);
        // The forward nodes the back expressions reach without passing another forward node.
        std::set<const Node *> frontier, seen;
        std::function<void(const NodePtr &)> reach = [&](const NodePtr &n) {
            if (!n || !seen.insert(n.get()).second) return;
            if (fwd.count(n.get())) {
                frontier.insert(n.get());
                return;
            }
            for (const NodePtr &a : n->args) reach(a);
            for (const SpatialIndex &s : n->sindex) reach(s.value);
        };
        for (int b : site.backs) reach(prog_.tensors[b].equations[ei].body);
        // Which can be a tensor: a static float array, no random numbers, externs or grads.
        std::unordered_map<const Node *, bool> pure;
        std::function<bool(const NodePtr &)> is_pure = [&](const NodePtr &n) -> bool {
            if (!n) return true;
            auto it = pure.find(n.get());
            if (it != pure.end()) return it->second;
            bool ok = n->kind != NodeKind::Rng && n->kind != NodeKind::Extern &&
                      n->kind != NodeKind::Grad;
            for (const NodePtr &a : n->args) ok = is_pure(a) && ok;
            for (const SpatialIndex &s : n->sindex) ok = is_pure(s.value) && ok;
            return pure[n.get()] = ok;
        };
        auto storable = [&](const NodePtr &n) {
            if (n->type.is_tuple || !is_float_dtype(n->type.dtype)) return false;
            if (n->kind == NodeKind::Read || n->kind == NodeKind::Const) return false;
            for (const Extent &e : n->type.shape)
                if (!e.is_static()) return false;
            return is_pure(n);
        };
        std::set<const Node *> saved;
        auto work = [&](const NodePtr &n) {
            int64_t w = 0;
            std::set<const Node *> vis;
            std::function<void(const NodePtr &)> go = [&](const NodePtr &m) {
                if (!m || !vis.insert(m.get()).second) return;
                if (m != n && saved.count(m.get())) return;
                w += transcendental_work(*m);
                for (const NodePtr &a : m->args) go(a);
                for (const SpatialIndex &s : m->sindex) go(s.value);
            };
            go(n);
            return w;
        };
        std::vector<NodePtr> chosen;
        for (const NodePtr &n : post)
            if (frontier.count(n.get()) && storable(n) && work(n) >= kSaveWork) {
                saved.insert(n.get());
                chosen.push_back(n);
            }
        if (chosen.empty()) return;
        // The tensors, operands first; then every body reads them.
        const Tensor ct = prog_.tensors[C];  // copied: new tensors move prog_.tensors
        const Equation &ce = ct.equations[ei];
        NodeRewriter rw;
        std::unordered_map<const Node *, NodePtr> &repl = rw.repl;
        int k = 0;
        NodePtr new_root;
        for (const NodePtr &n : chosen) {
            if (n == froot && !site.seed_y && !ct.type.is_tuple) {
                // The whole value: C itself holds it.
                new_root = rw(n);
                repl[n.get()] = read_point(C, pattern_point(ce), n->loc);
                continue;
            }
            int S = new_tensor(ct.name + "." + std::to_string(ei) + ".saved." + std::to_string(k++),
                               ct.dims, n->type, n->loc);
            NodePtr body = rw(n);  // n is not in repl yet: its operands read earlier saves
            for (size_t q = 0; q < ct.equations.size(); ++q)
                prog_.tensors[S].equations.push_back(
                    mirror(ct.equations[q], static_cast<int>(q) == ei
                                                ? body
                                                : zeros_of(n->type, ct.equations[q].loc)));
            repl[n.get()] = read_point(S, pattern_point(ce), n->loc);
        }
        if (!site.seed_y) prog_.tensors[C].equations[ei].body = new_root ? new_root : rw(froot);
        for (int b : site.backs) {
            NodePtr &body = prog_.tensors[b].equations[ei].body;
            body = rw(body);
        }
    }

    Program &prog_;
    Diagnostics &diag_;
    std::map<std::tuple<int, int, int>, BackSite> backs_;
    std::set<std::string> made_names_;
    std::string y_text_ = "y", base_ = "grad.";
};

}  // namespace

bool differentiate(ir::Program &prog, Diagnostics &diag) {
    Differentiator d(prog, diag);
    return d.run();
}

void print_adjoints(const ir::Program &prog, std::ostream &out) {
    for (const ir::Tensor &t : prog.tensors) {
        if (!t.is_hidden || t.name.rfind("grad.", 0) != 0) continue;
        out << t.name;
        if (!t.dims.empty()) {
            out << "[";
            for (size_t k = 0; k < t.dims.size(); ++k)
                out << (k ? ", " : "") << prog.dims[t.dims[k]].name;
            out << "]";
        }
        out << " : " << ir::type_to_string(t.type) << " (" << t.equations.size() << " equation"
            << (t.equations.size() == 1 ? "" : "s") << ")\n";
    }
}

}  // namespace trlc
