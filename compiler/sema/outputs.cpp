// outputs — the program's externs, emits and saves (sema's last step on equations).
//
// 5. lower_outputs: emits and saves.  An emit's `when` guard is any scalar bool
//    expression of its variables (it may read tensors: an emit defines nothing); its
//    quasi-affine part, when it has one, is also kept as a Guard (quiet_field_guard), where
//    alone the fields are read:
//      emit "train"[u] { l: loss[u] } when flag[u] && u >= 5   →   field_guard u >= 5
//    A saved nested tuple becomes the flat tuple of its leaves (flat_leaves):
//      save ((W1, b1), (W2, b2)) to "n.npz"   →   save (W1, b1, W2, b2)
// lower_externs lowers the `extern` declarations' signatures, check_save_type what a `save`
// may hold.
#include <algorithm>
#include <functional>

#include "sema/sema_impl.h"

namespace trlc::sema {

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
                error(p.loc, "parameter '" + p.name + "' of extern fn '" + d->name + "' needs a type, e.g. " + p.name +
                                 ": f32[4]");
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

namespace {

/** Whether "e" is built only of what a quasi-affine guard may hold (names, int and bool
 *  literals, operators, floor): lowering it again has no effect but its value. */
bool guard_shaped(const ast::Expr &e) {
    switch (e.kind) {
    case ast::ExprKind::IntLit:
    case ast::ExprKind::BoolLit:
    case ast::ExprKind::Name: return true;
    case ast::ExprKind::Member: return !e.args.empty() && e.args[0]->kind == ast::ExprKind::Name;
    case ast::ExprKind::Unary:
    case ast::ExprKind::Binary:
        for (const ast::ExprPtr &a : e.args)
            if (!a || !guard_shaped(*a)) return false;
        return true;
    case ast::ExprKind::Call:
        return e.args.size() == 2 && e.kwargs.empty() && e.args[0]->kind == ast::ExprKind::Name &&
               e.args[0]->name == "floor" && guard_shaped(*e.args[1]);
    default: return false;
    }
}

}  // namespace

ir::GuardPtr Sema::quiet_field_guard(const ast::Expr &e, Scope &scope) {
    // `a && b`: the fields are read only where both hold, so within each quasi-affine one
    // (`done[t] && t >= LS` restricts to t >= LS); null stands for "no restriction".
    if (e.kind == ast::ExprKind::Binary && e.op == ast::OpKind::And)
        return ir::guard_and(quiet_field_guard(*e.args[0], scope), quiet_field_guard(*e.args[1], scope));
    if (!guard_shaped(e)) return nullptr;
    bool was = silent_;
    silent_ = true;
    ir::GuardPtr g;
    try {
        g = lower_guard(e, scope);
    } catch (const Deferred &) {
        g = nullptr;
    }
    silent_ = was;
    last_suppressed_ = false;
    return g;
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
                    error(d.guard->loc,
                          "emit guard must be a scalar bool, found " + ir::type_to_string(gt, scope.var_names));
                    continue;
                }
                em.guard = g.node;
                em.field_guard = quiet_field_guard(*d.guard, scope);
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
            s.value = flat_leaves(v.node);
            s.loc = d.loc;
            prog_.saves.push_back(s);
        } else if (d.kind == ast::DeclKind::Output) {
            lower_output(d);
        }
    }
}

/* `output act = expr` (or `output act`, the tensor act): a Save with an output name.  The value
 * binds no dims; it must be one array or scalar (the C API's buffer), named once. */
void Sema::lower_output(const ast::Decl &d) {
    Loc at = d.name_loc.valid() ? d.name_loc : d.loc;
    for (const ir::Save &o : prog_.saves)
        if (o.output == d.name) {
            error(at, "duplicate output '" + d.name + "'");
            note(o.loc, "'" + d.name + "' is first declared here");
            return;
        }
    int t = prog_.tensor_index(d.name);
    if (t >= 0 && prog_.tensors[t].is_input) {
        error(at, "output '" + d.name + "' has the name of an input (the C API names its buffers after both)");
        note(prog_.tensors[t].loc, "input '" + d.name + "' is declared here");
        return;
    }
    Scope scope;
    scope.binder = "output " + d.name + " (an output binds no dims: its value is one array)";
    Val v;
    try {
        v = lower(*d.value, scope);
    } catch (const Deferred &) {
        return;
    }
    if (!v.ok() || !check_io_type(d.value->loc, "output " + d.name, v.type())) return;
    ir::Save s;
    s.output = d.name;
    s.value = v.node;
    s.loc = at;
    prog_.saves.push_back(s);
}

/* An input or output is one array or scalar of bool, i32, f32 or f64 with a static shape (a
 * caller's buffer), named by a C identifier that is no C or C++ keyword. */
bool Sema::check_io_type(Loc at, const std::string &what, const std::optional<ir::Type> &ty) {
    static const char *const kKeywords[] = {
        "auto",    "bool",     "break",    "case",     "char",   "class",   "const",  "continue",
        "default", "delete",   "do",       "double",   "else",   "enum",    "extern", "float",
        "for",     "goto",     "if",       "inline",   "int",    "long",    "new",    "operator",
        "private", "public",   "register", "restrict", "return", "short",   "signed", "sizeof",
        "static",  "struct",   "switch",   "template", "this",   "typedef", "union",  "unsigned",
        "void",    "volatile", "while",    "ctx",      "err",    "errlen"};
    std::string name = what.substr(what.find(' ') + 1);
    for (const char *k : kKeywords)
        if (name == k) {
            error(at, what + ": '" + name +
                          "' cannot name a parameter of the generated C API (a C/C++ keyword "
                          "or one of its own parameters); rename it");
            return false;
        }
    if (!ty) return false;
    if (ty->is_tuple) {
        error(at, what + " is a tuple " + ir::type_to_string(*ty) +
                      "; an input or output is one array or scalar (declare one per element)");
        return false;
    }
    if (ty->dtype == ir::DType::Key) {
        error(at, what + " is a random key; an input or output is an array of bool, i32, f32 or f64");
        return false;
    }
    for (const ir::Extent &e : ty->shape)
        if (!e.is_static()) {
            error(at, what + " has the dynamic shape " + ir::type_to_string(*ty) +
                          "; an input or output needs a static shape");
            return false;
        }
    return true;
}

/* "v" when it is an array or a flat tuple; a nested tuple (a network's parameters) as the flat
 * tuple of its leaves, depth first (the order of jax.tree_util.tree_leaves): a `save` writes
 * them as arr_0, arr_1, … */
ir::NodePtr Sema::flat_leaves(const ir::NodePtr &v) {
    const ir::Type &ty = v->type;
    bool nested = ty.is_tuple && std::any_of(ty.elems.begin(), ty.elems.end(), [](const ir::Type &e) { return e.is_tuple; });
    if (!nested) return v;
    ir::Node flat;
    flat.kind = ir::NodeKind::Tuple;
    flat.loc = v->loc;
    flat.type.is_tuple = true;
    std::function<void(const ir::NodePtr &)> add = [&](const ir::NodePtr &x) {
        if (!x->type.is_tuple) {
            flat.args.push_back(x);
            flat.type.elems.push_back(x->type);
            return;
        }
        for (size_t i = 0; i < x->type.elems.size(); ++i) {
            if (x->kind == ir::NodeKind::Tuple) {
                add(x->args[i]);
                continue;
            }
            ir::Node g;
            g.kind = ir::NodeKind::TupleGet;
            g.type = x->type.elems[i];
            g.loc = x->loc;
            g.args = {x};
            g.int_attr = static_cast<int64_t>(i);
            add(make_node(std::move(g)));
        }
    };
    add(v);
    return make_node(std::move(flat));
}

/* A saved value must fit its file, which is only written after the whole program has run:
 * `.npy` takes one array, `.npz` an array or a tuple of arrays, nested or not (members arr_0,
 * arr_1, … of its leaves, flat_leaves); a random key has no numpy form.  Reported here, before
 * anything runs. */
bool Sema::check_save_type(const ast::Decl &d, const ir::Type &ty) {
    auto ends = [&](const char *ext) {
        size_t n = std::string(ext).size();
        return d.module.size() >= n && d.module.compare(d.module.size() - n, n, ext) == 0;
    };
    bool npz = ends(".npz");
    if (!npz && !ends(".npy")) {
        error(d.loc, "cannot save to \"" + d.module +
                         "\": the file name must end in .npy (one "
                         "array) or .npz (an array or a tuple of arrays)");
        return false;
    }
    const ast::Expr &e = *d.value;
    if (ty.is_tuple && !npz) {
        error(e.loc, "a tuple cannot be saved to an .npy file; save it to an .npz file (members "
                     "arr_0, arr_1, …)");
        return false;
    }
    // The leaves, depth first, with their paths ("element 1.0.2 of the saved tuple").
    std::vector<std::pair<const ir::Type *, std::string>> leaves;
    std::function<void(const ir::Type &, const std::string &)> walk = [&](const ir::Type &t, const std::string &path) {
        if (!t.is_tuple) {
            leaves.push_back({&t, path});
            return;
        }
        for (size_t i = 0; i < t.elems.size(); ++i)
            walk(t.elems[i], path + (path.empty() ? "" : ".") + std::to_string(i));
    };
    walk(ty, "");
    for (size_t k = 0; k < leaves.size(); ++k) {
        std::string what = ty.is_tuple ? "element " + leaves[k].second + " of the saved tuple" : std::string("the saved value");
        if (leaves[k].first->dtype == ir::DType::Key) {
            error(e.loc, "cannot save a random key: " + what +
                             " is a key (draw numbers from it "
                             "with uniform or normal and save those)");
            return false;
        }
    }
    return true;
}

}  // namespace trlc::sema
