// equations — the equations of each tensor, lowered to ir::Equation (sema's third step).
//
// 3. build_equations: variables = the pattern's dims in order; guards are
//    affine comparisons joined by && || !; `otherwise` = !(g1 || g2 || …)
//    over the `when` guards of the tensor's equations with the same pattern.
// Also the notes that explain a missing base case or a guard that reads values.  Tensors and
// domains come first (domains.cpp); typing follows (tensor_types.cpp).
#include <algorithm>
#include <functional>

#include "sema/sema_impl.h"

namespace trlc::sema {

namespace {

/** Whether e reads a value (an indexed name such as done[t], or a call): a guard cannot. */
bool reads_values(const ast::Expr &e) {
    if (e.kind == ast::ExprKind::Call) return true;
    if (e.kind == ast::ExprKind::Index && e.args[0]->kind == ast::ExprKind::Name) return true;
    for (const ast::ExprPtr &a : e.args)
        if (a && reads_values(*a)) return true;
    return false;
}

}  // namespace

void Sema::note_guard_alternative(Loc loc, const ast::Expr *e) {
    if (e && reads_values(*e)) {
        note(loc, "a guard chooses points by their coordinates only (which equation defines a "
                  "point is fixed at compile time); a condition on values chooses in the body: "
                  "x[t+1] = where(" +
                      text(loc) + ", a, b)");
        return;
    }
    note(loc, "a condition that is not quasi-affine (a product of dims: 't * t < 3') can choose in "
              "the body instead: x[t] = where(t * t < 3, a[t], b[t])");
}

namespace {

/** The Index expression at `loc` inside e (the read that needed a type), or null. */
const ast::Expr *find_index_at(const ast::Expr *e, const Loc &loc) {
    if (!e) return nullptr;
    if (e->kind == ast::ExprKind::Index && e->loc.file == loc.file && e->loc.line == loc.line &&
        e->loc.col == loc.col && e->loc.length == loc.length)
        return e;
    for (const ast::ExprPtr &a : e->args)
        if (const ast::Expr *r = find_index_at(a.get(), loc)) return r;
    for (const ast::IndexItem &it : e->indices)
        for (const ast::ExprPtr *x : {&it.value, &it.lo, &it.hi})
            if (const ast::Expr *r = find_index_at(x->get(), loc)) return r;
    for (const ast::KeywordArg &k : e->kwargs)
        if (const ast::Expr *r = find_index_at(k.value.get(), loc)) return r;
    return nullptr;
}

/** `d`, `d + c`, `c + d`, `d - c` with integer literal c: the offset c (0 for `d`). */
std::optional<int64_t> offset_of_dim(const ast::Expr &e, const std::string &d) {
    if (e.kind == ast::ExprKind::Name) return e.name == d ? std::optional<int64_t>(0) : std::nullopt;
    if (e.kind != ast::ExprKind::Binary || (e.op != ast::OpKind::Add && e.op != ast::OpKind::Sub)) return std::nullopt;
    const ast::Expr &a = *e.args[0], &b = *e.args[1];
    if (a.kind == ast::ExprKind::Name && a.name == d && b.kind == ast::ExprKind::IntLit)
        return e.op == ast::OpKind::Add ? b.int_value : -b.int_value;
    if (e.op == ast::OpKind::Add && b.kind == ast::ExprKind::Name && b.name == d && a.kind == ast::ExprKind::IntLit)
        return a.int_value;
    return std::nullopt;
}

}  // namespace

void Sema::note_missing_base_case(int t, const std::vector<int> &pending, const std::map<int, Loc> &self_reads) {
    TensorInfo &info = tinfo_[t];
    const ir::Tensor &tensor = prog_.tensors[t];
    if (pending.empty() || self_reads.size() != pending.size()) return;
    for (int k : pending)
        if (!self_reads.count(k)) return;
    // A base case in the direction of the read: reading later points (`G[t+1]` from `G[t]`)
    // needs the last point, reading earlier ones (`h[t]` from `h[t+1]`) the first.  Only when
    // every equation reads a single point that moves: then the first point computed would read
    // another, so the program cannot be right (a slice `x[0:t]` may be empty: annotate instead).
    std::string example;
    for (int k : pending) {
        const EqSrc &s = info.eqs[k];
        const ast::Expr *idx = s.decl ? find_index_at(s.body(), self_reads.at(k)) : nullptr;
        if (!idx || !s.cls_ok || s.cls.size() != tensor.dims.size() || idx->indices.size() != tensor.dims.size() ||
            s.decl->pattern.size() != s.cls.size())
            return;
        bool moves = false, single = true;
        std::string pos;
        for (size_t j = 0; j < s.cls.size(); ++j) {
            const ir::PatternItem &c = s.cls[j];
            const ir::Dim &dim = prog_.dims[tensor.dims[j]];
            const ast::IndexItem &it = idx->indices[j];
            single = single && !it.is_slice && it.value;
            std::string item = dim.name;
            if (c.kind == ir::PatternItem::Constant) {
                item = text(s.decl->pattern[j].loc);
            } else if (!it.is_slice && it.value) {
                int64_t lhs_off = c.kind == ir::PatternItem::Shift ? c.offset : 0;
                auto off = offset_of_dim(*it.value, dim.name);
                if (off && *off != lhs_off) {
                    moves = true;
                    if (*off > lhs_off)
                        item = dim.bound_name.empty() ? std::to_string(dim.bound - 1) : dim.bound_name + "-1";
                    else
                        item = "0";
                }
            }
            pos += (j ? ", " : "") + item;
        }
        if (!moves || !single) return;
        if (example.empty()) example = tensor.name + "[" + pos + "] = …";
    }
    Loc read = self_reads.at(pending[0]);
    note(read, tensor.name + " reads itself here, and so does every equation of " + tensor.name +
                   ": a recurrence needs a base case that does not read " + tensor.name + ", e.g. `" + example + "`");
}

ir::GuardPtr Sema::lower_guard(const ast::Expr &e, Scope &scope) {
    auto g = std::make_shared<ir::Guard>();
    auto bad = [&]() -> ir::GuardPtr {
        error(e.loc, "non-affine guard: '" + text(e.loc) +
                         "'; a guard compares affine expressions of the dims, e.g. t < T - 1, or their "
                         "% and / by a constant, e.g. t % 10 == 0");
        note_guard_alternative(e.loc, &e);
        return nullptr;
    };
    if (e.kind == ast::ExprKind::BoolLit) {
        if (e.bool_value) return g;
        auto n = std::make_shared<ir::Guard>();
        n->kind = ir::Guard::Not;
        n->a = g;
        return n;
    }
    if (e.kind == ast::ExprKind::Unary && e.op == ast::OpKind::Not) {
        g->kind = ir::Guard::Not;
        g->a = lower_guard(*e.args[0], scope);
        return g->a ? g : nullptr;
    }
    if (e.kind != ast::ExprKind::Binary) return bad();
    if (e.op == ast::OpKind::And || e.op == ast::OpKind::Or) {
        g->kind = e.op == ast::OpKind::And ? ir::Guard::And : ir::Guard::Or;
        g->a = lower_guard(*e.args[0], scope);
        g->b = lower_guard(*e.args[1], scope);
        return g->a && g->b ? g : nullptr;
    }
    static const std::map<ast::OpKind, ir::BinaryOp> cmps = {
        {ast::OpKind::Lt, ir::BinaryOp::Lt}, {ast::OpKind::Le, ir::BinaryOp::Le}, {ast::OpKind::Gt, ir::BinaryOp::Gt},
        {ast::OpKind::Ge, ir::BinaryOp::Ge}, {ast::OpKind::Eq, ir::BinaryOp::Eq}, {ast::OpKind::Ne, ir::BinaryOp::Ne}};
    auto it = cmps.find(e.op);
    if (it == cmps.end()) return bad();
    // One side: an affine expression, or (issue 22) its `% c`, `/ c` or `floor(… / c)` by a
    // positive integer constant (ir::Guard).  1: done; 0: an error was reported; -1: not
    // quasi-affine.
    auto side = [&](const ast::Expr &e0, ir::Affine *aff, ir::Guard::Quasi *q, int64_t *d) {
        const ast::Expr *xp = &e0;
        bool floored = e0.kind == ast::ExprKind::Call && e0.args.size() == 2 && e0.kwargs.empty() &&
                       e0.args[0]->kind == ast::ExprKind::Name && e0.args[0]->name == "floor" &&
                       e0.args[1]->kind == ast::ExprKind::Binary && e0.args[1]->op == ast::OpKind::Div;
        if (floored) xp = e0.args[1].get();
        const ast::Expr &x = *xp;
        const ast::Expr *body = &x;
        *q = ir::Guard::Plain;
        *d = 1;
        if (x.kind == ast::ExprKind::Binary && (x.op == ast::OpKind::Mod || x.op == ast::OpKind::Div)) {
            Val c = lower(*x.args[1], scope);
            if (!c.ok()) return 0;
            if (!c.idx || c.idx->kind != ir::IndexExpr::Aff || !c.idx->aff.is_constant() || c.idx->aff.constant <= 0) {
                const char *op = x.op == ast::OpKind::Mod ? "%" : "/";
                error(x.args[1]->loc, std::string("the divisor of `") + op +
                                          "` in a guard must be a positive integer constant, e.g. t " + op + " 10");
                return 0;
            }
            *q = x.op == ast::OpKind::Mod ? ir::Guard::Mod : floored ? ir::Guard::FloorDiv : ir::Guard::Div;
            *d = c.idx->aff.constant;
            body = x.args[0].get();
        }
        Val v = lower(*body, scope);
        if (!v.ok()) return 0;
        if (!v.idx || v.idx->kind != ir::IndexExpr::Aff) return -1;
        *aff = v.idx->aff;
        return 1;
    };
    int l = side(*e.args[0], &g->lhs, &g->lhs_quasi, &g->lhs_divisor);
    if (l == 0) return nullptr;
    int r = side(*e.args[1], &g->rhs, &g->rhs_quasi, &g->rhs_divisor);
    if (r == 0) return nullptr;
    if (l < 0 || r < 0) return bad();
    g->kind = ir::Guard::Cmp;
    g->cmp = it->second;
    return g;
}

void Sema::build_equations() {
    for (size_t ti = 0; ti < prog_.tensors.size(); ++ti) {
        TensorInfo &info = tinfo_[ti];
        if (!info.dims_ok) continue;
        for (EqSrc &s : info.eqs) {
            if (!s.cls_ok) continue;
            s.eq.vars.clear();
            s.eq.pattern.clear();
            for (const ir::PatternItem &c : s.cls) {
                ir::PatternItem p = c;
                if (c.kind != ir::PatternItem::Constant) {
                    p.var = static_cast<int>(s.eq.vars.size());
                    s.eq.vars.push_back(c.var);
                    s.var_names.push_back(prog_.dims[c.var].name);
                } else {
                    p.var = -1;
                }
                s.eq.pattern.push_back(p);
            }
            s.ok = true;
            if (s.decl->guard) {
                Scope scope;
                scope.vars = s.eq.vars;
                scope.var_names = s.var_names;
                scope.binder = "the left-hand side " + s.lhs_text;
                try {
                    s.eq.guard = lower_guard(*s.decl->guard, scope);
                } catch (const Deferred &) {
                    s.eq.guard = nullptr;
                    error(s.decl->guard->loc, "non-affine guard: '" + text(s.decl->guard->loc) +
                                                  "'; a guard compares affine expressions of "
                                                  "the dims, e.g. t < T - 1, or their % and / by a "
                                                  "constant, e.g. t % 10 == 0");
                    note_guard_alternative(s.decl->guard->loc, s.decl->guard.get());
                }
                s.ok = s.eq.guard != nullptr;
            }
        }
        auto same_pattern = [](const EqSrc &a, const EqSrc &b) {
            if (a.cls.size() != b.cls.size()) return false;
            for (size_t k = 0; k < a.cls.size(); ++k)
                if (a.cls[k].kind != b.cls[k].kind || a.cls[k].var != b.cls[k].var ||
                    a.cls[k].offset != b.cls[k].offset)
                    return false;
            return true;
        };
        for (EqSrc &s : info.eqs) {
            if (!s.cls_ok || !s.decl->otherwise) continue;
            s.eq.otherwise = true;
            ir::GuardPtr any;
            for (const EqSrc &o : info.eqs) {
                if (&o == &s || !o.cls_ok || !o.decl->guard || !same_pattern(s, o)) continue;
                if (!o.eq.guard) {
                    s.ok = false;  // its guard had an error
                    continue;
                }
                if (!any) {
                    any = o.eq.guard;
                } else {
                    auto g = std::make_shared<ir::Guard>();
                    g->kind = ir::Guard::Or;
                    g->a = any;
                    g->b = o.eq.guard;
                    any = g;
                }
            }
            if (!any) {
                if (s.ok)
                    error(s.eq.loc, "`otherwise` needs another equation of " + prog_.tensors[ti].name +
                                        " with the same left-hand side and a `when` guard");
                s.ok = false;
                continue;
            }
            auto g = std::make_shared<ir::Guard>();
            g->kind = ir::Guard::Not;
            g->a = any;
            s.eq.guard = g;
        }
    }
}

std::optional<ir::Type> Sema::coordinate_type(const ir::Type &ty, const EqSrc &s, const ir::Tensor &tensor,
                                              std::string *why) const {
    if (ty.is_tuple) {
        *why = "and a tuple's shapes cannot depend on the point (give each element its own equation)";
        return std::nullopt;
    }
    // Variable v of the equation as an expression of the coordinates: x[t+1] = … gives
    // t = (coordinate 0) - 1.
    std::vector<ir::IndexExprPtr> by(s.eq.vars.size());
    for (size_t j = 0; j < s.eq.pattern.size(); ++j) {
        const ir::PatternItem &p = s.eq.pattern[j];
        if (p.kind == ir::PatternItem::Constant) continue;
        ir::Affine a;
        a.coef.assign(j + 1, 0);
        a.coef[j] = 1;
        a.constant = p.kind == ir::PatternItem::Shift ? -p.offset : 0;
        by[p.var] = aff_expr(a);
    }
    ir::Type out = ty;
    for (ir::Extent &x : out.shape) {
        if (x.is_static()) continue;
        ir::IndexExprPtr e = idx_substitute(x.dynamic, by);
        if (!e) {
            *why = "on a variable that is not one of " + tensor.name + "'s coordinates";
            return std::nullopt;
        }
        if (e->kind == ir::IndexExpr::Aff && e->aff.is_constant()) {
            x.dynamic = nullptr;
            x.max_value = e->aff.constant;
        } else {
            x.dynamic = e;
            x.max_value = max_value(*e, tensor.dims);
        }
    }
    return out;
}

bool Sema::lower_equation(int t, int k) {
    EqSrc &s = tinfo_[t].eqs[k];
    const ir::Tensor &tensor = prog_.tensors[t];
    Scope scope;
    scope.vars = s.eq.vars;
    scope.var_names = s.var_names;
    scope.binder = "the left-hand side " + s.lhs_text;
    Val v;
    if (s.tuple_elem >= 0) {
        ir::Node r;
        r.kind = ir::NodeKind::Read;
        r.tensor = s.hidden;
        r.loc = s.eq.loc;
        for (const ir::PatternItem &p : s.eq.pattern) {
            ir::Affine a;
            if (p.kind == ir::PatternItem::Constant) {
                a.constant = p.offset;
            } else {
                a.coef.assign(p.var + 1, 0);
                a.coef[p.var] = 1;
                a.constant = p.kind == ir::PatternItem::Shift ? p.offset : 0;
            }
            ir::ReadIndex ri;
            ri.point = aff_expr(a);
            r.index.push_back(ri);
        }
        if (!tinfo_[s.hidden].dims_ok) return false;
        auto ty = tensor_type_for_read(s.hidden, s.eq.loc);
        if (!ty || !ty->is_tuple || static_cast<int>(ty->elems.size()) <= s.tuple_elem) return false;
        r.type = *ty;
        ir::Node g;
        g.kind = ir::NodeKind::TupleGet;
        g.type = ty->elems[s.tuple_elem];
        g.loc = s.eq.loc;
        g.args = {make_node(std::move(r))};
        g.int_attr = s.tuple_elem;
        v = Val{make_node(std::move(g)), false, nullptr};
    } else {
        v = lower(*s.body(), scope);
        if (!v.ok()) return false;
        if (tensor.is_hidden) {
            size_t n = s.decl->targets.size();
            if (!v.type().is_tuple || v.type().elems.size() != n) {
                error(s.decl->value->loc, "the value of the tuple equation " + s.lhs_text + " must be a tuple of " +
                                              std::to_string(n) + " values, got " + type_str(v.type(), scope));
                return false;
            }
        }
    }
    s.coord_type.reset();
    if (ir::has_dynamic_extent(v.type())) {
        // A shape that depends on the point (issue 16): restated in the tensor's coordinates
        // (`x[t+1] = …` of shape [t + 1] is [x's coordinate]), stored padded to its largest
        // value over the domain.
        std::string why;
        std::optional<ir::Type> coord = coordinate_type(v.type(), s, tensor, &why);
        if (!coord) {
            error(s.body()->loc, "the value of " + s.lhs_text + " has the shape " + type_str(v.type(), scope) +
                                     ", which depends on the point, " + why);
            return false;
        }
        s.coord_type = std::move(coord);
    }
    s.eq.body = v.node;
    s.weak = v.weak;
    s.typed = true;
    return true;
}

}  // namespace trlc::sema
