// autodiff_access — step 4 of passes/autodiff: inverting the access relations of the reads
// that the adjoints flow back through.  A read of a differentiated tensor is classified per
// domain position (a variable plus a constant, a constant, a static or dynamic slice; a clamped
// position is split into pieces over its dim's range) and checked to be the identity along the
// grad's own dims; contribution() then writes, for a point u of the read tensor, the sum of the
// consumer's back tensor J over the consumer points that read u, and the condition for there
// being any.
#include <algorithm>

#include "interp/eval.h"
#include "passes/autodiff_impl.h"

namespace trlc::autodiff_detail {

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

/** Checks a read "r" of a differentiated tensor by consumer equation "e" (of tensor c, or
 *  the seed equation) and classifies its positions: one contribution, or one per piece of a
 *  clamped read. */
std::vector<Contribution> Differentiator::analyze_read(const Node &r, int c, const Equation &e, bool seed,
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
            if (ri.lo->kind != IndexExpr::Aff || ri.hi->kind != IndexExpr::Aff || !ri.lo->aff.is_constant() ||
                !ri.hi->aff.is_constant()) {
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
                throw AdError{r.loc, "grad through the read " + rt + " is not supported: index '" +
                                         index_expr_compact(*ri.point, var_names(e)) +
                                         "' is not a dim plus a constant"};
            if (k.var_pos[var] >= 0)
                throw AdError{r.loc, "grad through the read " + rt + " is not supported: it uses '" + var_name(e, var) +
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
std::vector<Contribution> Differentiator::clamped_pieces(const Node &r, const Equation &e, Contribution k,
                                                         const std::vector<size_t> &clamped,
                                                         const std::string &rt) const {
    const size_t kMaxPieces = 16;
    k.var_range.assign(e.vars.size(), {0, 0});
    for (size_t v = 0; v < e.vars.size(); ++v) k.var_range[v] = {0, prog_.dims[e.vars[v]].bound};
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
            throw AdError{r.loc, "grad through the clamped read " + rt + " is not supported: its index uses two dims"};
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
                        throw AdError{r.loc, "grad through the read " + rt + " is not supported: it uses '" +
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
                                             std::to_string(kMaxPieces) + " affine pieces over the dim's range"};
                t0 = t1;
            }
        }
        out = std::move(next);
    }
    return out;
}

/** Along the grad's own dims V every read is the identity (different grad points never
 *  mix); throws the diagnostic otherwise. */
void Differentiator::check_identity_along(const Contribution &k, const Node &r, int c, const Equation &e, bool seed,
                                          const std::vector<int> &V, const std::string &rt) const {
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
        ok = ok && jd >= 0 && k.pos[jd].kind == PosMap::Var && k.pos[jd].var == vd && k.pos[jd].a == 0;
        if (!ok)
            throw AdError{r.loc, "grad(" + y_text_ + ", …) through a dependence along '" + prog_.dims[d].name +
                                     "' is not supported: " + (seed ? "" : lhs_text(c, e) + " ") + "reads " + rt};
    }
}

/** The consumer points [lo, hi) of variable "v" that contribution "k" covers. */
std::pair<int64_t, int64_t> Differentiator::var_range(const Contribution &k, int v) const {
    if (!k.var_range.empty()) return k.var_range[v];
    return {0, prog_.dims[k.eq->vars[v]].bound};
}

/** The sum of J over the consumer points that read z at the point "u" (affine forms of the
 *  variables of the equation being built, each variable v in [0, box[v])), and the
 *  condition for there being any.  A range comparison that holds on the whole box is left
 *  out of the condition: it would only restate the dims' bounds as constants (`i < 977`),
 *  which the PDG cannot tell from a guard and a run-time bound could not change. */
NodePtr Differentiator::contribution(const Contribution &k, const std::vector<Affine> &u,
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
        guard_summed = guard_summed || (k.var_pos[v] < 0 && mentions(e.guard, static_cast<int>(v)));
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

}  // namespace trlc::autodiff_detail
