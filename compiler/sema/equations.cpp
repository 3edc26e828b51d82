// equations — tensors, their domains and types, and the program's outputs.
//
// 1. collect_tensors: every equation target, type declaration and `load`
//    names a tensor; a tuple equation `(a, b)[p] = e` adds a hidden tensor
//    "(a, b)" holding e, and a = TupleGet(0, "(a, b)"[p]), b = TupleGet(1, …).
// 2. infer_domains: each pattern position is a dim `t`, a shift `t+c` (c > 0)
//    or a constant; position k's dim comes from any equation with a dim
//    there (or from a type declaration), and all equations must agree.
// 3. build_equations: variables = the pattern's dims in order; guards are
//    affine comparisons joined by && || !; `otherwise` = !(g1 || g2 || …)
//    over the `when` guards of the tensor's equations with the same pattern.
// 4. type_tensors: a tensor is typed when first read (or in order), its
//    equations most specific first, so that `h[0] = 0.0; h[t+1] = tanh(h[t])`
//    types h[t+1] with the type of h[0].  Weak bodies adapt (a Cast or a
//    re-typed literal); two different strong dtypes are an error.
// 5. lower_outputs: emits and saves.  An emit's `when` guard is any scalar bool
//    expression of its variables (it may read tensors: an emit defines nothing).
#include <algorithm>
#include <functional>

#include "sema/sema_impl.h"

namespace trlc::sema {

int Sema::get_tensor(const std::string &name, Loc loc, bool hidden) {
    const Entity *e = lookup(0, name);
    if (e && e->kind == EntityKind::Tensor) {
        if (prog_.tensors[e->index].is_load) {
            error(loc, "duplicate definition of '" + name + "'");
            note(e->loc, "'" + name + "' is first defined here");
            return -1;
        }
        return e->index;
    }
    int id = static_cast<int>(prog_.tensors.size());
    if (!hidden && !define(0, name, {EntityKind::Tensor, id, loc})) return -1;
    if (hidden) modules_[0].names.emplace(name, Entity{EntityKind::Tensor, id, loc});
    ir::Tensor t;
    t.name = name;
    t.loc = loc;
    t.is_hidden = hidden;
    prog_.tensors.push_back(t);
    tinfo_.emplace_back();
    return id;
}

void Sema::collect_tensors() {
    auto declare = [&](int t, const ast::TypeAnnot &ty, Loc loc) {
        auto type = eval_type(ty, 0);
        if (!type || t < 0) return;
        TensorInfo &info = tinfo_[t];
        if (info.declared && !type_equal(*info.declared, *type)) {
            error(loc, "conflicting types for " + prog_.tensors[t].name + ": " +
                           ir::type_to_string(*type) + " here but " +
                           ir::type_to_string(*info.declared) + " there");
            note(info.declared_loc, prog_.tensors[t].name + " is declared here");
            return;
        }
        if (!info.declared) {
            info.declared = type;
            info.declared_loc = loc;
        }
    };
    for (const ast::Decl &d : modules_[0].ast->decls) {
        if (d.kind == ast::DeclKind::Equation) {
            if (d.targets.size() == 1) {
                Loc at = d.target_locs.empty() ? d.loc : d.target_locs[0];
                int t = get_tensor(d.targets[0], at, false);
                if (t < 0) continue;
                EqSrc s;
                s.decl = &d;
                tinfo_[t].eqs.push_back(s);
                if (d.has_type) declare(t, d.type, d.type.loc);
                continue;
            }
            std::string hname = "(";
            for (size_t k = 0; k < d.targets.size(); ++k)
                hname += (k ? ", " : "") + d.targets[k];
            hname += ")";
            bool dup = false;
            for (size_t k = 0; k < d.targets.size() && !dup; ++k)
                for (size_t j = 0; j < k && !dup; ++j)
                    if (d.targets[j] == d.targets[k]) {
                        error(k < d.target_locs.size() ? d.target_locs[k] : d.loc,
                              "'" + d.targets[k] + "' appears twice in " + hname);
                        dup = true;
                    }
            if (dup) continue;
            int h = get_tensor(hname, d.loc, true);
            EqSrc hs;
            hs.decl = &d;
            tinfo_[h].eqs.push_back(hs);
            if (d.has_type) declare(h, d.type, d.type.loc);
            for (size_t k = 0; k < d.targets.size(); ++k) {
                Loc at = k < d.target_locs.size() ? d.target_locs[k] : d.loc;
                int t = get_tensor(d.targets[k], at, false);
                if (t < 0) continue;
                EqSrc s;
                s.decl = &d;
                s.tuple_elem = static_cast<int>(k);
                s.hidden = h;
                tinfo_[t].eqs.push_back(s);
            }
        } else if (d.kind == ast::DeclKind::TypeDecl) {
            std::string name = d.targets.empty() ? d.name : d.targets[0];
            Loc at = d.target_locs.empty() ? (d.name_loc.valid() ? d.name_loc : d.loc)
                                           : d.target_locs[0];
            int t = get_tensor(name, at, false);
            if (t < 0) continue;
            declare(t, d.type, at);
            TensorInfo &info = tinfo_[t];
            std::vector<int> dims;
            bool ok = true;
            for (const ast::PatternItem &p : d.pattern) {
                int dim = listed_dim(p, "a type declaration");
                if (dim < 0) {
                    ok = false;
                    continue;
                }
                dims.push_back(dim);
            }
            if (!ok) continue;
            if (info.has_decl_dims && info.decl_dims != dims) {
                error(at, "conflicting declarations of the dims of " + name);
                continue;
            }
            info.has_decl_dims = true;
            info.decl_dims = dims;
        } else if (d.kind == ast::DeclKind::Load) {
            Loc at = d.name_loc.valid() ? d.name_loc : d.loc;
            const Entity *e = lookup(0, d.name);
            if (e) {
                error(at, "duplicate definition of '" + d.name + "'");
                note(e->loc, "'" + d.name + "' is first defined here");
                continue;
            }
            int t = get_tensor(d.name, at, false);
            prog_.tensors[t].is_load = true;
            prog_.tensors[t].load_path = d.module;
            tinfo_[t].dims_ok = true;
            if (!d.has_type) {
                error(at, "load of '" + d.name + "' needs a type, e.g. load " + d.name +
                              " : f32[4] from \"" + d.module + "\"");
                continue;
            }
            declare(t, d.type, at);
        }
    }
}

namespace {

bool contains_dim(const ast::Expr &e, Sema &s) {
    if (e.kind == ast::ExprKind::Name) {
        const Entity *ent = s.lookup(0, e.name);
        return ent && ent->kind == EntityKind::Dim;
    }
    for (const ast::ExprPtr &a : e.args)
        if (a && contains_dim(*a, s)) return true;
    return false;
}

}  // namespace

bool Sema::classify(const ast::Expr &e, ir::PatternItem *out) {
    if (e.kind == ast::ExprKind::Name) {
        const Entity *ent = lookup(0, e.name);
        if (!ent) {
            error(e.loc, "unknown dim '" + e.name + "'");
            return false;
        }
        if (ent->kind == EntityKind::Dim) {
            out->kind = ir::PatternItem::Var;
            out->var = ent->index;
            return true;
        }
    }
    if (e.kind == ast::ExprKind::Binary && e.op == ast::OpKind::Add) {
        for (int side = 0; side < 2; ++side) {
            const ast::Expr &d = *e.args[side], &c = *e.args[1 - side];
            const Entity *ent = d.kind == ast::ExprKind::Name ? lookup(0, d.name) : nullptr;
            if (!ent || ent->kind != EntityKind::Dim || contains_dim(c, *this)) continue;
            auto off = eval_int(c, 0, "a shift");
            if (!off) return false;
            if (*off <= 0) {
                error(e.loc, "bad pattern position '" + text(e.loc) +
                                 "': a shift must add a positive constant");
                return false;
            }
            out->kind = ir::PatternItem::Shift;
            out->var = ent->index;
            out->offset = *off;
            return true;
        }
    }
    if (contains_dim(e, *this)) {
        error(e.loc, "bad pattern position '" + text(e.loc) +
                         "': a position is a dim d, a shift d+c with c > 0, or a constant");
        return false;
    }
    auto c = eval_int(e, 0, "a pattern position");
    if (!c) return false;
    if (*c < 0) {
        error(e.loc, "bad pattern position '" + text(e.loc) + "' = " + std::to_string(*c) +
                         ": coordinates are >= 0");
        return false;
    }
    out->kind = ir::PatternItem::Constant;
    out->offset = *c;
    return true;
}

std::string Sema::describe_lhs(const EqSrc &s) {
    std::string out = "(";
    for (size_t k = 0; k < s.cls.size(); ++k) {
        out += k ? ", " : "";
        if (s.cls[k].kind == ir::PatternItem::Constant) out += text(s.decl->pattern[k].loc);
        else out += prog_.dims[s.cls[k].var].name;
    }
    return out + ")";
}

namespace {

/* The range of a left-hand side: from the first token to the closing ']'. */
Loc lhs_loc(const ast::Decl &d, const SourceManager &sm) {
    Loc l = d.loc;
    if (!l.valid()) return l;
    Loc last = d.pattern.empty() ? (d.target_locs.empty() ? d.loc : d.target_locs.back())
                                 : d.pattern.back().loc;
    if (last.line != l.line) return l;
    int end = last.col + last.length;  // one past the last item
    std::string_view line = sm.file(l.file).line(l.line);
    if (!d.pattern.empty()) {
        while (end - 1 < static_cast<int>(line.size()) && line[end - 1] == ' ') ++end;
        if (end - 1 < static_cast<int>(line.size()) && line[end - 1] == ']') ++end;
    }
    l.length = std::max(1, end - l.col);
    return l;
}

}  // namespace

void Sema::infer_domains() {
    for (size_t ti = 0; ti < prog_.tensors.size(); ++ti) {
        ir::Tensor &t = prog_.tensors[ti];
        TensorInfo &info = tinfo_[ti];
        if (t.is_load) continue;
        int arity = -1;
        std::vector<int> dims;
        std::vector<const EqSrc *> from;  // the equation that set each position (null = decl)
        const EqSrc *arity_src = nullptr;
        if (info.has_decl_dims) {
            arity = static_cast<int>(info.decl_dims.size());
            dims = info.decl_dims;
            from.assign(dims.size(), nullptr);
        }
        bool ok = true;
        for (EqSrc &s : info.eqs) {
            const ast::Decl &d = *s.decl;
            s.eq.loc = lhs_loc(d, sm_);
            s.lhs_text = text(s.eq.loc);
            s.cls.assign(d.pattern.size(), ir::PatternItem{});
            s.cls_ok = true;
            for (size_t k = 0; k < d.pattern.size(); ++k)
                s.cls_ok = classify(*d.pattern[k].expr, &s.cls[k]) && s.cls_ok;
            if (!s.cls_ok) {
                ok = false;
                continue;
            }
            for (size_t k = 0; k < s.cls.size(); ++k)
                for (size_t j = 0; j < k; ++j)
                    if (s.cls[k].kind != ir::PatternItem::Constant &&
                        s.cls[j].kind != ir::PatternItem::Constant && s.cls[j].var == s.cls[k].var &&
                        s.cls_ok) {
                        error(d.pattern[k].loc, "dim '" + prog_.dims[s.cls[k].var].name +
                                                    "' appears twice in the pattern of " + t.name);
                        s.cls_ok = false;
                    }
            if (!s.cls_ok) {
                ok = false;
                continue;
            }
            int n = static_cast<int>(s.cls.size());
            if (arity < 0) {
                arity = n;
                arity_src = &s;
                dims.assign(n, -1);
                from.assign(n, nullptr);
            } else if (n != arity) {
                error(s.eq.loc, t.name + " is defined with " + std::to_string(n) +
                                    " indices here but with " + std::to_string(arity) + " there");
                note(arity_src ? arity_src->eq.loc : info.declared_loc,
                     t.name + " is defined with " + std::to_string(arity) + " indices here");
                s.cls_ok = ok = false;
                continue;
            }
            for (int k = 0; k < n; ++k) {
                if (s.cls[k].kind == ir::PatternItem::Constant) continue;
                if (dims[k] < 0) {
                    dims[k] = s.cls[k].var;
                    from[k] = &s;
                } else if (dims[k] != s.cls[k].var) {
                    std::string other;
                    if (from[k]) {
                        other = describe_lhs(*from[k]);
                    } else {
                        other = "(";
                        for (size_t j = 0; j < dims.size(); ++j)
                            other += (j ? ", " : "") + prog_.dims[dims[j]].name;
                        other += ")";
                    }
                    error(s.eq.loc, t.name + " is defined over " + describe_lhs(s) +
                                        " here but over " + other + " there");
                    note(from[k] ? from[k]->eq.loc : info.declared_loc,
                         t.name + " is defined over " + other + " here");
                    s.cls_ok = ok = false;
                    break;
                }
            }
        }
        if (info.eqs.empty()) {
            error(t.loc, t.name + " is declared but has no equation");
            continue;
        }
        if (arity < 0) continue;
        for (int k = 0; k < arity && ok; ++k)
            if (dims[k] < 0) {
                std::string example = t.name + "[";
                for (int j = 0; j < arity; ++j)
                    example += (j ? ", " : "") + (dims[j] >= 0 ? prog_.dims[dims[j]].name : "d");
                example += "] : f32";
                error(t.loc, "the dim of position " + std::to_string(k + 1) + " of " + t.name +
                                 " is unknown: every equation has a constant there; declare it, "
                                 "e.g. `" + example + "`");
                // One equation at a constant point is mostly a recurrence whose step was never
                // written (an optimizer state `opt[0] = optim.adam_init(…)` while `net[i+1] =
                // optim.adam(…)` returns the pair).
                if (info.eqs.size() == 1 && arity == 1)
                    note(info.eqs[0].eq.loc, t.name + " is defined only here; a recurrence also "
                         "needs its step, such as `" + t.name + "[i+1] = …` (with an optimizer "
                         "state, the tuple equation `(net, " + t.name + ")[i+1] = optim.adam(…)`)");
                ok = false;
            }
        if (!ok) continue;
        t.dims = dims;
        info.dims_ok = true;
    }
}

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
                  "x[t+1] = where(" + text(loc) + ", a, b)");
        return;
    }
    note(loc, "a condition that is not affine (every K iterations: 'i % K == 0') can choose in "
              "the body instead: x[i+1] = where(i % K == 0, a[i], b[i])");
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
    if (e.kind != ast::ExprKind::Binary || (e.op != ast::OpKind::Add && e.op != ast::OpKind::Sub))
        return std::nullopt;
    const ast::Expr &a = *e.args[0], &b = *e.args[1];
    if (a.kind == ast::ExprKind::Name && a.name == d && b.kind == ast::ExprKind::IntLit)
        return e.op == ast::OpKind::Add ? b.int_value : -b.int_value;
    if (e.op == ast::OpKind::Add && b.kind == ast::ExprKind::Name && b.name == d &&
        a.kind == ast::ExprKind::IntLit)
        return a.int_value;
    return std::nullopt;
}

}  // namespace

void Sema::note_missing_base_case(int t, const std::vector<int> &pending,
                                  const std::map<int, Loc> &self_reads) {
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
        const ast::Expr *idx = s.decl ? find_index_at(s.decl->value.get(), self_reads.at(k))
                                      : nullptr;
        if (!idx || !s.cls_ok || s.cls.size() != tensor.dims.size() ||
            idx->indices.size() != tensor.dims.size() || s.decl->pattern.size() != s.cls.size())
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
                        item = dim.bound_name.empty() ? std::to_string(dim.bound - 1)
                                                      : dim.bound_name + "-1";
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
                   ": a recurrence needs a base case that does not read " + tensor.name +
                   ", e.g. `" + example + "`");
}

ir::GuardPtr Sema::lower_guard(const ast::Expr &e, Scope &scope) {
    auto g = std::make_shared<ir::Guard>();
    auto bad = [&]() -> ir::GuardPtr {
        error(e.loc, "non-affine guard: '" + text(e.loc) +
                         "'; a guard compares affine expressions of the dims, e.g. t < T - 1");
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
        {ast::OpKind::Lt, ir::BinaryOp::Lt}, {ast::OpKind::Le, ir::BinaryOp::Le},
        {ast::OpKind::Gt, ir::BinaryOp::Gt}, {ast::OpKind::Ge, ir::BinaryOp::Ge},
        {ast::OpKind::Eq, ir::BinaryOp::Eq}, {ast::OpKind::Ne, ir::BinaryOp::Ne}};
    auto it = cmps.find(e.op);
    if (it == cmps.end()) return bad();
    Val a = lower(*e.args[0], scope), b = lower(*e.args[1], scope);
    if (!a.ok() || !b.ok()) return nullptr;
    if (!a.idx || !b.idx || a.idx->kind != ir::IndexExpr::Aff || b.idx->kind != ir::IndexExpr::Aff)
        return bad();
    g->kind = ir::Guard::Cmp;
    g->cmp = it->second;
    g->lhs = a.idx->aff;
    g->rhs = b.idx->aff;
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
                                                  "the dims, e.g. t < T - 1");
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
                    error(s.eq.loc, "`otherwise` needs another equation of " +
                                        prog_.tensors[ti].name +
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
        v = lower(*s.decl->value, scope);
        if (!v.ok()) return false;
        if (tensor.is_hidden) {
            size_t n = s.decl->targets.size();
            if (!v.type().is_tuple || v.type().elems.size() != n) {
                error(s.decl->value->loc, "the value of the tuple equation " + s.lhs_text +
                                              " must be a tuple of " + std::to_string(n) +
                                              " values, got " + type_str(v.type(), scope));
                return false;
            }
        }
    }
    std::function<bool(const ir::Type &)> dynamic = [&](const ir::Type &ty) {
        for (const ir::Extent &x : ty.shape)
            if (!x.is_static()) return true;
        for (const ir::Type &e : ty.elems)
            if (dynamic(e)) return true;
        return false;
    };
    if (dynamic(v.type())) {
        error(s.decl->value->loc, "the value of " + s.lhs_text + " has the shape " +
                                      type_str(v.type(), scope) +
                                      ", which depends on the point; a tensor has one shape");
        return false;
    }
    s.eq.body = v.node;
    s.weak = v.weak;
    s.typed = true;
    return true;
}

std::optional<ir::Type> Sema::tensor_type_for_read(int t, Loc use) {
    TensorInfo &info = tinfo_[t];
    if (info.declared) return info.declared;
    if (info.state == TensorInfo::Untyped) {
        try {
            ensure_typed(t);
        } catch (Deferred &d) {
            // t's remaining equations wait for a tensor that is being typed, typically the
            // hidden tensor of a tuple equation `(p, s)[i+1] = f(p[i], s[i])` whose body reads
            // t: the equations of t typed so far (`s[0] = …`) give the type to use here;
            // check_read_consistency() compares it with t's final type.
            if (info.state == TensorInfo::Untyped && info.partial) return info.partial;
            d.read = use;  // for the catcher: the read in its own equation that led here
            throw;
        }
    }
    if (info.state == TensorInfo::Done) return prog_.tensors[t].type;
    if (info.state == TensorInfo::Failed) return std::nullopt;
    if (info.assumed) {
        info.partial_uses.push_back(*info.assumed);
        return info.assumed;
    }
    if (info.partial) {
        info.partial_uses.push_back(*info.partial);
        return info.partial;
    }
    throw Deferred{t, {}, use};
}

std::optional<ir::Type> Sema::finalize(int t) {
    TensorInfo &info = tinfo_[t];
    const std::string &name = prog_.tensors[t].name;
    std::vector<EqSrc *> typed;
    for (EqSrc &s : info.eqs)
        if (s.typed) typed.push_back(&s);
    if (typed.empty()) return std::nullopt;
    auto str = [&](const ir::Type &ty) { return ir::type_to_string(ty); };
    auto shape_eq = [](const ir::Type &a, const ir::Type &b) {
        return type_equal(with_dtype(a, ir::DType::F32), with_dtype(b, ir::DType::F32));
    };
    bool ok = true;
    ir::Type final_type;
    if (info.declared) {
        final_type = *info.declared;
        for (EqSrc *s : typed) {
            const ir::Type &ty = s->eq.body->type;
            if (!shape_eq(ty, final_type)) {
                error(s->eq.loc, "shape mismatch: " + name + " is declared " + str(final_type) +
                                     " but this equation gives " + str(ty));
                note(info.declared_loc, name + " is declared here");
                ok = false;
            } else if (!type_equal(ty, final_type) &&
                       !(s->weak && dtype_kind(ty.dtype) <= dtype_kind(final_type.dtype))) {
                error(s->eq.loc, std::string("dtype mismatch: ") + name + " is declared " +
                                     ir::dtype_name(final_type.dtype) + " but this equation gives " +
                                     ir::dtype_name(ty.dtype));
                note(info.declared_loc, name + " is declared here");
                ok = false;
            }
        }
    } else {
        const EqSrc *ref = nullptr;
        for (EqSrc *s : typed)
            if (!s->weak) {
                ref = s;
                break;
            }
        bool strong = ref != nullptr;
        if (!ref) ref = typed[0];
        final_type = ref->eq.body->type;
        if (!strong)
            for (EqSrc *s : typed)
                if (!s->eq.body->type.is_tuple && !final_type.is_tuple)
                    final_type.dtype = promote(final_type.dtype, s->eq.body->type.dtype);
        // Report in source order against the reference equation.
        for (EqSrc &s : info.eqs) {
            if (!s.typed || &s == ref) continue;
            const ir::Type &ty = s.eq.body->type;
            if (!shape_eq(ty, final_type)) {
                error(s.eq.loc, "shape mismatch: " + name + " is " + str(ty) + " here but " +
                                    str(ref->eq.body->type) + " in another equation");
                note(ref->eq.loc, name + " is " + str(ref->eq.body->type) + " here");
                // `net[i+1] = optim.adam(…)`: the value is (new params, state).
                if (ty.is_tuple && ty.elems.size() >= 2 && shape_eq(ty.elems[0], final_type))
                    note(s.eq.loc, "element 0 of the value here has " + name + "'s type; a fn "
                         "that returns (params, state), such as optim.adam, needs a tuple "
                         "equation: `(" + name + ", opt)[i+1] = …` with `opt[0] = "
                         "optim.adam_init(" + name + "[0])`");
                ok = false;
            } else if (!type_equal(ty, final_type) &&
                       !(s.weak && dtype_kind(ty.dtype) <= dtype_kind(final_type.dtype))) {
                error(s.eq.loc, std::string("dtype mismatch: ") + name + " is " +
                                    ir::dtype_name(ty.dtype) + " here but " +
                                    ir::dtype_name(final_type.dtype) + " in another equation");
                note(ref->eq.loc, name + " is " + ir::dtype_name(final_type.dtype) + " here");
                ok = false;
            }
        }
    }
    if (!ok) return std::nullopt;
    for (EqSrc *s : typed)
        if (!final_type.is_tuple)
            s->eq.body = convert(Val{s->eq.body, s->weak, nullptr}, final_type.dtype).node;
    return final_type;
}

void Sema::ensure_typed(int t) {
    TensorInfo &info = tinfo_[t];
    if (info.state != TensorInfo::Untyped) return;
    ir::Tensor &tensor = prog_.tensors[t];
    if (tensor.is_load) {
        info.state = info.declared ? TensorInfo::Done : TensorInfo::Failed;
        if (info.declared) tensor.type = *info.declared;
        return;
    }
    if (!info.dims_ok) {
        info.state = TensorInfo::Failed;
        return;
    }
    info.state = TensorInfo::Busy;
    std::vector<int> order;
    for (size_t k = 0; k < info.eqs.size(); ++k)
        if (info.eqs[k].ok) order.push_back(static_cast<int>(k));
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return info.eqs[a].eq.specificity() > info.eqs[b].eq.specificity();
    });
    std::optional<ir::Type> final_type;
    for (int round = 0; round < 3; ++round) {
        info.partial.reset();
        info.partial_strong = false;
        info.partial_uses.clear();
        for (EqSrc &s : info.eqs) s.typed = false;
        std::vector<int> pending = order;
        int blocked_outer = -1;
        std::vector<int> blocked_via, self_via;  // see Deferred::via
        std::map<int, Loc> self_reads;  // equation -> its direct read of t (no type yet)
        while (!pending.empty()) {
            std::vector<int> next;
            bool progress = false;
            for (int k : pending) {
                try {
                    progress = true;
                    if (!lower_equation(t, k)) continue;
                    const EqSrc &s = info.eqs[k];
                    const ir::Type &ty = s.eq.body->type;
                    if (!info.partial || (!info.partial_strong && !s.weak)) {
                        info.partial = ty;
                        info.partial_strong = !s.weak;
                    } else if (!info.partial_strong && !ty.is_tuple && !info.partial->is_tuple) {
                        info.partial->dtype = promote(info.partial->dtype, ty.dtype);
                    }
                } catch (const Deferred &d) {
                    next.push_back(k);
                    if (d.tensor != t) {
                        blocked_outer = d.tensor;
                        blocked_via = d.via;
                    } else {
                        if (self_via.empty()) self_via = d.via;
                        // Direct, or through an element of this tuple equation's hidden
                        // tensor (`(a, b)[t+1] = (a[t] * 2, …)` reads t through a).
                        bool elem = d.via.size() == 1 && !tinfo_[d.via[0]].eqs.empty();
                        for (const EqSrc &e : elem ? tinfo_[d.via[0]].eqs : info.eqs)
                            elem = elem && e.hidden == t;
                        if ((d.via.empty() || elem) && d.read.valid()) self_reads.emplace(k, d.read);
                    }
                }
            }
            if (next.size() == pending.size()) progress = false;
            pending = next;
            if (!progress) break;
        }
        if (!pending.empty()) {
            if (blocked_outer >= 0 && tinfo_[blocked_outer].state == TensorInfo::Busy) {
                info.state = TensorInfo::Untyped;
                for (EqSrc &s : info.eqs) s.typed = false;
                blocked_via.insert(blocked_via.begin(), t);
                throw Deferred{blocked_outer, blocked_via};
            }
            std::string example = tensor.name;
            if (!tensor.dims.empty()) {
                example += "[";
                for (size_t j = 0; j < tensor.dims.size(); ++j)
                    example += (j ? ", " : "") + prog_.dims[tensor.dims[j]].name;
                example += "]";
            }
            // Through other tensors (v reads q, whose equations read v) a cycle of reads is
            // the likelier mistake: name the chain.
            std::string chain;
            for (int w : self_via) chain += prog_.tensors[w].name + ", which reads ";
            if (!chain.empty())
                chain = " (" + tensor.name + " reads " + chain + tensor.name + ")";
            error(info.eqs[pending[0]].eq.loc,
                  "cannot infer the type of " + tensor.name + ": its equations need the type of " +
                      tensor.name + " itself" + chain + "; add a type annotation, e.g. `" +
                      example + " : f32`");
            note_missing_base_case(t, pending, self_reads);
            info.state = TensorInfo::Failed;
            return;
        }
        int errors = diag_.error_count();
        final_type = finalize(t);
        if (!final_type || diag_.error_count() > errors) break;
        bool consistent = true;
        for (const ir::Type &u : info.partial_uses) consistent = consistent && type_equal(u, *final_type);
        if (consistent) break;
        info.assumed = final_type;
        if (round == 2) {
            error(tensor.loc, "cannot infer a consistent type for " + tensor.name +
                                  "; add a type annotation");
            final_type.reset();
        }
    }
    if (!final_type) {
        info.state = TensorInfo::Failed;
        return;
    }
    tensor.type = *final_type;
    tensor.equations.clear();
    for (const EqSrc &s : info.eqs)
        if (s.typed) tensor.equations.push_back(s.eq);
    info.state = TensorInfo::Done;
}

void Sema::type_tensors() {
    for (size_t t = 0; t < prog_.tensors.size(); ++t) {
        try {
            ensure_typed(static_cast<int>(t));
        } catch (const Deferred &d) {
            internal_error("type inference of " + prog_.tensors[t].name +
                               " deferred at the top level (on " + prog_.tensors[d.tensor].name + ")",
                           __FILE__, __LINE__);
        }
    }
}

void Sema::check_read_consistency() {
    std::set<const ir::Node *> seen;
    std::function<void(const ir::NodePtr &)> walk = [&](const ir::NodePtr &n) {
        if (!n || !seen.insert(n.get()).second) return;
        for (const ir::NodePtr &a : n->args) walk(a);
        if (n->kind != ir::NodeKind::Read) return;
        const ir::Tensor &t = prog_.tensors[n->tensor];
        if (tinfo_[n->tensor].state != TensorInfo::Done) return;
        ir::Type tail = n->type;
        size_t slices = 0;
        for (const ir::ReadIndex &ri : n->index) slices += ri.is_slice ? 1 : 0;
        if (!tail.is_tuple && tail.shape.size() >= slices)
            tail.shape.erase(tail.shape.begin(), tail.shape.begin() + slices);
        if (!type_equal(tail, t.type)) {
            error(n->loc, "cannot infer a consistent type for " + t.name + ": it is read as " +
                              ir::type_to_string(tail) + " here while its type was inferred, but " +
                              "it is " + ir::type_to_string(t.type) + "; add a type annotation");
        }
    };
    for (const ir::Tensor &t : prog_.tensors)
        for (const ir::Equation &e : t.equations) walk(e.body);
}

void Sema::lower_externs() {
    for (const ast::Decl *d : extern_decls_) {
        ir::ExternFn f;
        int module = 0;
        for (size_t m = 0; m < modules_.size(); ++m)
            for (const ast::Decl &x : modules_[m].ast->decls)
                if (&x == d) module = static_cast<int>(m);
        bool ok = true;
        for (const ast::Param &p : d->params) {
            if (!p.has_type) {
                error(p.loc, "parameter '" + p.name + "' of extern fn '" + d->name +
                                 "' needs a type, e.g. " + p.name + ": f32[4]");
                ok = false;
                continue;
            }
            auto ty = eval_type(p.type, module);
            if (!ty) {
                ok = false;
                continue;
            }
            f.params.emplace_back(p.name, *ty);
        }
        if (!d->has_type) {
            error(d->name_loc.valid() ? d->name_loc : d->loc,
                  "extern fn '" + d->name + "' needs a result type: -> f32[4]");
            ok = false;
        } else if (auto r = eval_type(d->type, module)) {
            f.result = *r;
        } else {
            ok = false;
        }
        if (ok) {
            f.name = d->name;
            f.header = d->module;
            f.loc = d->name_loc.valid() ? d->name_loc : d->loc;
        }
        prog_.externs.push_back(f);
    }
}

void Sema::lower_outputs() {
    for (const ast::Decl &d : modules_[0].ast->decls) {
        if (d.kind == ast::DeclKind::Emit) {
            ir::Emit em;
            em.stream = d.name;
            em.loc = d.loc;
            Scope scope;
            bool ok = true;
            for (const ast::PatternItem &p : d.pattern) {
                int dim = listed_dim(p, "an emit");
                if (dim < 0) {
                    ok = false;
                    continue;
                }
                if (std::count(em.vars.begin(), em.vars.end(), dim)) {
                    error(p.expr->loc, "dim '" + p.expr->name + "' appears twice in the emit");
                    ok = false;
                    continue;
                }
                em.vars.push_back(dim);
                scope.var_names.push_back(p.expr->name);
            }
            if (!ok) continue;
            scope.vars = em.vars;
            std::string dims;
            for (const std::string &n : scope.var_names) dims += (dims.empty() ? "" : ", ") + n;
            scope.binder = "emit \"" + d.name + "\"" + (dims.empty() ? "" : "[" + dims + "]");
            for (const auto &[key, value] : d.fields) {
                Val v;
                try {
                    v = lower(*value, scope);
                } catch (const Deferred &) {
                    continue;
                }
                if (v.ok()) em.fields.emplace_back(key, v.node);
            }
            if (d.guard) {
                // Unlike an equation's guard, an emit's may read tensors: it defines nothing.
                Val g;
                try {
                    g = lower(*d.guard, scope);
                } catch (const Deferred &) {
                    continue;
                }
                if (!g.ok()) continue;
                const ir::Type &gt = g.type();
                if (gt.is_tuple || gt.dtype != ir::DType::Bool || !gt.shape.empty()) {
                    error(d.guard->loc, "emit guard must be a scalar bool, found " +
                                            ir::type_to_string(gt, scope.var_names));
                    continue;
                }
                em.guard = g.node;
            }
            prog_.emits.push_back(em);
        } else if (d.kind == ast::DeclKind::Save) {
            Scope scope;
            scope.binder = "save (a saved value binds no dims)";
            Val v;
            try {
                v = lower(*d.value, scope);
            } catch (const Deferred &) {
                continue;
            }
            if (!v.ok()) continue;
            if (!check_save_type(d, v.type())) continue;
            ir::Save s;
            s.path = d.module;
            s.value = v.node;
            s.loc = d.loc;
            prog_.saves.push_back(s);
        }
    }
}

/* A saved value must fit its file, which is only written after the whole program has run:
 * `.npy` takes one array, `.npz` an array or a flat tuple of arrays (members arr_0, arr_1, …);
 * a random key has no numpy form.  Reported here, before anything runs. */
bool Sema::check_save_type(const ast::Decl &d, const ir::Type &ty) {
    auto ends = [&](const char *ext) {
        size_t n = std::string(ext).size();
        return d.module.size() >= n && d.module.compare(d.module.size() - n, n, ext) == 0;
    };
    bool npz = ends(".npz");
    if (!npz && !ends(".npy")) {
        error(d.loc, "cannot save to \"" + d.module + "\": the file name must end in .npy (one "
                     "array) or .npz (an array or a tuple of arrays)");
        return false;
    }
    const ast::Expr &e = *d.value;
    if (ty.is_tuple && !npz) {
        error(e.loc, "a tuple cannot be saved to an .npy file; save it to an .npz file (members "
                     "arr_0, arr_1, …)");
        return false;
    }
    std::vector<const ir::Type *> leaves;
    if (ty.is_tuple)
        for (const ir::Type &m : ty.elems) leaves.push_back(&m);
    else
        leaves.push_back(&ty);
    for (size_t k = 0; k < leaves.size(); ++k) {
        std::string what = ty.is_tuple ? "element " + std::to_string(k) + " of the saved tuple" :
                                         std::string("the saved value");
        if (leaves[k]->is_tuple) {
            error(e.loc, "cannot save a nested tuple: " + what + " is a tuple " +
                             ir::type_to_string(*leaves[k], {}) +
                             "; list its arrays in one flat tuple, e.g. save (p[0][0], p[0][1], "
                             "p[1]) to \"" + d.module + "\"");
            return false;
        }
        if (leaves[k]->dtype == ir::DType::Key) {
            error(e.loc, "cannot save a random key: " + what + " is a key (draw numbers from it "
                         "with uniform or normal and save those)");
            return false;
        }
    }
    return true;
}

/* The dim that item "p" of a dims-only list names ("what" lists dims: "an emit", "a type
 * declaration"); -1 after reporting an unknown dim or an item that is not a dim. */
int Sema::listed_dim(const ast::PatternItem &p, const char *what) {
    const Entity *e = p.expr->kind == ast::ExprKind::Name ? lookup(0, p.expr->name) : nullptr;
    if (e && e->kind == EntityKind::Dim) return e->index;
    if (p.expr->kind == ast::ExprKind::Name && !e)
        error(p.expr->loc, "unknown dim '" + p.expr->name + "'");
    else
        error(p.expr->loc, std::string(what) + " lists dims, got '" + text(p.expr->loc) + "'");
    return -1;
}

}  // namespace trlc::sema
