// domains — the tensors of a program and their domains (sema's first two steps on equations).
//
// 1. collect_tensors: every equation target, type declaration and `load`
//    names a tensor; a tuple equation `(a, b)[p] = e` adds a hidden tensor
//    "(a, b)" holding e, and a = TupleGet(0, "(a, b)"[p]), b = TupleGet(1, …).
// 2. infer_domains: each pattern position is a dim `t`, a shift `t+c` (c > 0)
//    or a constant; position k's dim comes from any equation with a dim
//    there (or from a type declaration), and all equations must agree.
// The equations themselves are built in equations.cpp, typed in tensor_types.cpp, and the
// emits and saves lowered in outputs.cpp; listed_dim (a dims-only list) is shared by type
// declarations here and emits there.
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
            error(loc, "conflicting types for " + prog_.tensors[t].name + ": " + ir::type_to_string(*type) +
                           " here but " + ir::type_to_string(*info.declared) + " there");
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
            for (size_t k = 0; k < d.targets.size(); ++k) hname += (k ? ", " : "") + d.targets[k];
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
            // A tuple literal of the targets' arity (and no declared type) is one equation per
            // target: `(net, opt)[t+1] = (net[t], opt[t]) otherwise` is `net[t+1] = net[t]
            // otherwise` and `opt[t+1] = opt[t] otherwise`, the same values at the same points,
            // without the hidden tuple's copy and the two copies out of it (a step of the DQN
            // sample copied 262 KB for the optimizer state it does not update).
            const bool literal = d.value && d.value->kind == ast::ExprKind::Tuple &&
                                 d.value->args.size() == d.targets.size() && !d.has_type;
            int h = -1;
            if (!literal) {
                h = get_tensor(hname, d.loc, true);
                EqSrc hs;
                hs.decl = &d;
                tinfo_[h].eqs.push_back(hs);
                if (d.has_type) declare(h, d.type, d.type.loc);
            }
            for (size_t k = 0; k < d.targets.size(); ++k) {
                Loc at = k < d.target_locs.size() ? d.target_locs[k] : d.loc;
                int t = get_tensor(d.targets[k], at, false);
                if (t < 0) continue;
                EqSrc s;
                s.decl = &d;
                if (literal) {
                    s.value = d.value->args[k].get();
                } else {
                    s.tuple_elem = static_cast<int>(k);
                    s.hidden = h;
                }
                tinfo_[t].eqs.push_back(s);
            }
        } else if (d.kind == ast::DeclKind::TypeDecl) {
            std::string name = d.targets.empty() ? d.name : d.targets[0];
            Loc at = d.target_locs.empty() ? (d.name_loc.valid() ? d.name_loc : d.loc) : d.target_locs[0];
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
                error(at, "load of '" + d.name + "' needs a type, e.g. load " + d.name + " : f32[4] from \"" +
                              d.module + "\"");
                continue;
            }
            declare(t, d.type, at);
        } else if (d.kind == ast::DeclKind::Input) {
            Loc at = d.name_loc.valid() ? d.name_loc : d.loc;
            if (const Entity *e = lookup(0, d.name)) {
                error(at, "duplicate definition of '" + d.name + "'");
                note(e->loc, "'" + d.name + "' is first defined here");
                continue;
            }
            int t = get_tensor(d.name, at, false);
            prog_.tensors[t].is_load = true;  // a value from outside, as a load's (library mode)
            prog_.tensors[t].is_input = true;
            tinfo_[t].dims_ok = true;
            declare(t, d.type, at);
            check_io_type(at, "input " + d.name, tinfo_[t].declared);
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
                error(e.loc, "bad pattern position '" + text(e.loc) + "': a shift must add a positive constant");
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
        error(e.loc, "bad pattern position '" + text(e.loc) + "' = " + std::to_string(*c) + ": coordinates are >= 0");
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
        if (s.cls[k].kind == ir::PatternItem::Constant)
            out += text(s.decl->pattern[k].loc);
        else
            out += prog_.dims[s.cls[k].var].name;
    }
    return out + ")";
}

namespace {

/* The range of a left-hand side: from the first token to the closing ']'. */
Loc lhs_loc(const ast::Decl &d, const SourceManager &sm) {
    Loc l = d.loc;
    if (!l.valid()) return l;
    Loc last = d.pattern.empty() ? (d.target_locs.empty() ? d.loc : d.target_locs.back()) : d.pattern.back().loc;
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
                    if (s.cls[k].kind != ir::PatternItem::Constant && s.cls[j].kind != ir::PatternItem::Constant &&
                        s.cls[j].var == s.cls[k].var && s.cls_ok) {
                        error(d.pattern[k].loc,
                              "dim '" + prog_.dims[s.cls[k].var].name + "' appears twice in the pattern of " + t.name);
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
                error(s.eq.loc, t.name + " is defined with " + std::to_string(n) + " indices here but with " +
                                    std::to_string(arity) + " there");
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
                        for (size_t j = 0; j < dims.size(); ++j) other += (j ? ", " : "") + prog_.dims[dims[j]].name;
                        other += ")";
                    }
                    error(s.eq.loc,
                          t.name + " is defined over " + describe_lhs(s) + " here but over " + other + " there");
                    note(from[k] ? from[k]->eq.loc : info.declared_loc, t.name + " is defined over " + other + " here");
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
                                 "e.g. `" +
                                 example + "`");
                // One equation at a constant point is mostly a recurrence whose step was never
                // written (an optimizer state `opt[0] = optim.adam_init(…)` while `net[i+1] =
                // optim.adam(…)` returns the pair).
                if (info.eqs.size() == 1 && arity == 1)
                    note(info.eqs[0].eq.loc, t.name +
                                                 " is defined only here; a recurrence also "
                                                 "needs its step, such as `" +
                                                 t.name +
                                                 "[i+1] = …` (with an optimizer "
                                                 "state, the tuple equation `(net, " +
                                                 t.name + ")[i+1] = optim.adam(…)`)");
                ok = false;
            }
        if (!ok) continue;
        t.dims = dims;
        info.dims_ok = true;
    }
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
