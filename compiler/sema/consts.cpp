// consts — compile-time values: bounds and dims, `const`s, type annotations.
//
// Bounds: `dim t < T = 8` names bound T with default 8 (-D T=… overrides it);
// `dim s < T` shares an existing bound or takes it from -D; `dim k < 2*T` has
// an anonymous bound (an integer expression of bounds and consts).  Every
// bound is an integer >= 1.  -D NAME=… also overrides an integer `const` of
// the program (`const W = T`, -D W=4).  Consts are folded to an int or a float, lazily
// (a const may use consts defined later; a cycle is an error).  In an integer
// context a float that is a whole number is accepted (T/2 with T even).
#include <cmath>

#include "sema/sema_impl.h"
#include "trl_math.h"

namespace trlc::sema {

namespace {

bool checked(bool overflow, Loc loc, Sema &s) {
    if (overflow) s.error(loc, "integer overflow in constant expression");
    return !overflow;
}

}  // namespace

std::optional<ConstValue> Sema::const_value(int c, Loc use) {
    ConstInfo &ci = consts_[c];
    if (ci.state == ConstInfo::Done) return ci.value;
    if (ci.state == ConstInfo::Failed) return std::nullopt;
    if (ci.state == ConstInfo::Busy) {
        error(use, "const '" + ci.decl->name + "' depends on itself");
        return std::nullopt;
    }
    ci.state = ConstInfo::Busy;
    std::optional<ConstValue> v;
    if (ci.decl->value) v = eval_const(*ci.decl->value, ci.module);
    // -D NAME=VALUE overrides an integer const of the program (not of an imported module).
    auto over = ci.module == 0 ? opts_.defines.find(ci.decl->name) : opts_.defines.end();
    if (v && over != opts_.defines.end()) {
        if (v->is_int) {
            v->i = over->second;
        } else {
            error(ci.decl->name_loc.valid() ? ci.decl->name_loc : ci.decl->loc,
                  "-D " + ci.decl->name + "=" + std::to_string(over->second) + ": '" + ci.decl->name +
                      "' is a float const; -D sets bounds and integer consts");
            v.reset();
        }
    }
    consts_[c].state = v ? ConstInfo::Done : ConstInfo::Failed;
    if (v) consts_[c].value = *v;
    return v;
}

std::optional<ConstValue> Sema::eval_const(const ast::Expr &e, int module) {
    using ast::ExprKind;
    ConstValue r;
    switch (e.kind) {
    case ExprKind::IntLit: r.i = e.int_value; return r;
    case ExprKind::FloatLit:
        r.is_int = false;
        r.f = e.float_value;
        return r;
    case ExprKind::Name: {
        const Entity *ent = lookup(module, e.name);
        if (!ent) {
            error(e.loc, "unknown name '" + e.name + "'");
            return std::nullopt;
        }
        if (ent->kind == EntityKind::Const) return const_value(ent->index, e.loc);
        if (ent->kind == EntityKind::Bound) {
            auto it = prog_.bounds.find(e.name);
            if (it == prog_.bounds.end()) {
                error(e.loc, "bound '" + e.name + "' is used before its dim is declared");
                return std::nullopt;
            }
            r.i = it->second;
            return r;
        }
        error(e.loc, "'" + e.name + "' is not a constant");
        return std::nullopt;
    }
    case ExprKind::Member: {
        const ast::Expr &obj = *e.args[0];
        const Entity *m = obj.kind == ExprKind::Name ? lookup(module, obj.name) : nullptr;
        if (!m || m->kind != EntityKind::Module) {
            error(obj.loc, "'" + text(obj.loc) + "' is not a module");
            return std::nullopt;
        }
        const Entity *ent = lookup(m->index, e.name);
        if (!ent) {
            error(e.loc, "module '" + obj.name + "' has no member '" + e.name + "'");
            return std::nullopt;
        }
        if (ent->kind != EntityKind::Const) {
            error(e.loc, "'" + obj.name + "." + e.name + "' is not a constant");
            return std::nullopt;
        }
        return const_value(ent->index, e.loc);
    }
    case ExprKind::Unary: {
        auto a = eval_const(*e.args[0], module);
        if (!a) return a;
        if (e.op == ast::OpKind::Plus) return a;
        if (e.op == ast::OpKind::Neg) {
            if (a->is_int) {
                if (!checked(__builtin_sub_overflow(int64_t(0), a->i, &a->i), e.loc, *this)) return std::nullopt;
            } else {
                a->f = -a->f;
            }
            return a;
        }
        break;
    }
    case ExprKind::Binary: {
        auto a = eval_const(*e.args[0], module);
        if (!a) return a;
        auto b = eval_const(*e.args[1], module);
        if (!b) return b;
        bool ints = a->is_int && b->is_int;
        double x = a->as_double(), y = b->as_double();
        switch (e.op) {
        case ast::OpKind::Add:
            if (ints)
                return checked(__builtin_add_overflow(a->i, b->i, &r.i), e.loc, *this) ? std::optional<ConstValue>(r)
                                                                                       : std::nullopt;
            r.is_int = false;
            r.f = x + y;
            return r;
        case ast::OpKind::Sub:
            if (ints)
                return checked(__builtin_sub_overflow(a->i, b->i, &r.i), e.loc, *this) ? std::optional<ConstValue>(r)
                                                                                       : std::nullopt;
            r.is_int = false;
            r.f = x - y;
            return r;
        case ast::OpKind::Mul:
            if (ints)
                return checked(__builtin_mul_overflow(a->i, b->i, &r.i), e.loc, *this) ? std::optional<ConstValue>(r)
                                                                                       : std::nullopt;
            r.is_int = false;
            r.f = x * y;
            return r;
        case ast::OpKind::Div:
            if (y == 0.0) {
                error(e.loc, "division by zero in constant expression");
                return std::nullopt;
            }
            r.is_int = false;
            r.f = x / y;
            return r;
        case ast::OpKind::Mod:
            if (y == 0.0) {
                error(e.loc, "modulo by zero in constant expression");
                return std::nullopt;
            }
            if (ints) {
                r.i = a->i % b->i;
                if (r.i != 0 && ((r.i < 0) != (b->i < 0))) r.i += b->i;
                return r;
            }
            r.is_int = false;
            r.f = x - std::floor(x / y) * y;
            return r;
        case ast::OpKind::Pow:
            if (ints && b->i >= 0 && b->i < 64) {
                r.i = 1;
                for (int64_t k = 0; k < b->i; ++k)
                    if (!checked(__builtin_mul_overflow(r.i, a->i, &r.i), e.loc, *this)) return std::nullopt;
                return r;
            }
            r.is_int = false;
            r.f = trl::pow_f64(x, y);  // the bits generated code computes
            return r;
        default: break;
        }
        break;
    }
    case ExprKind::Call: {
        const ast::Expr &callee = *e.args[0];
        if (callee.kind == ExprKind::Name && (callee.name == "min" || callee.name == "max") && e.args.size() == 3 &&
            e.kwargs.empty()) {
            auto a = eval_const(*e.args[1], module);
            if (!a) return a;
            auto b = eval_const(*e.args[2], module);
            if (!b) return b;
            bool less = a->as_double() < b->as_double();
            bool pick_a = callee.name == "min" ? less : !less;
            ConstValue out = pick_a ? *a : *b;
            if (!(a->is_int && b->is_int)) {
                out.f = out.as_double();
                out.is_int = false;
            }
            return out;
        }
        break;
    }
    default: break;
    }
    error(e.loc, "not a constant expression: '" + text(e.loc) + "'");
    return std::nullopt;
}

std::optional<int64_t> Sema::eval_int(const ast::Expr &e, int module, const std::string &what) {
    auto v = eval_const(e, module);
    if (!v) return std::nullopt;
    if (v->is_int) return v->i;
    if (std::isfinite(v->f) && v->f == std::floor(v->f) && std::fabs(v->f) < 9.0e15) return static_cast<int64_t>(v->f);
    error(e.loc, what + " must be an integer, but '" + text(e.loc) + "' is " + std::to_string(v->f));
    return std::nullopt;
}

void Sema::eval_dims() {
    std::map<std::string, Loc> bound_value_loc;  // where each bound got its value
    for (const ast::Decl &d : modules_[0].ast->decls) {
        if (d.kind != ast::DeclKind::Dim) continue;
        ir::Dim dim;
        dim.name = d.name;
        dim.loc = d.name_loc.valid() ? d.name_loc : d.loc;
        int64_t value = 1;
        // `dim k < n` with a const n is an anonymous bound, like `dim k < 2*n`.
        const Entity *as_const = d.bound_expr ? nullptr : lookup(0, d.bound);
        if (as_const && as_const->kind != EntityKind::Const) as_const = nullptr;
        if (d.bound_expr || as_const) {
            ast::Expr name_expr;
            name_expr.kind = ast::ExprKind::Name;
            name_expr.name = d.bound;
            name_expr.loc = d.bound_loc;
            const ast::Expr &be = d.bound_expr ? *d.bound_expr : name_expr;
            auto v = eval_int(be, 0, "a dim bound");
            if (v && *v < 1)
                error(be.loc,
                      "bad bound value: " + text(be.loc) + " = " + std::to_string(*v) + "; bounds must be at least 1");
            else if (v)
                value = *v;
        } else {
            dim.bound_name = d.bound;
            const Entity *prev = lookup(0, d.bound);
            bool shared = prev && prev->kind == EntityKind::Bound && prog_.bounds.count(d.bound);
            std::optional<int64_t> def;
            if (d.value) def = eval_int(*d.value, 0, "the default of a bound");
            auto over = opts_.defines.find(d.bound);
            Loc where = d.value ? d.value->loc : (d.bound_loc.valid() ? d.bound_loc : d.loc);
            if (shared) {
                value = prog_.bounds[d.bound];
                if (def && over == opts_.defines.end() && *def != value) {
                    error(d.value->loc, "bound '" + d.bound + "' already has the value " + std::to_string(value));
                    note(prev->loc, "'" + d.bound + "' is first defined here");
                }
            } else {
                std::optional<int64_t> v = over != opts_.defines.end() ? std::optional<int64_t>(over->second) : def;
                if (over != opts_.defines.end()) where = d.bound_loc.valid() ? d.bound_loc : d.loc;
                if (!v && !d.value) {
                    error(d.bound_loc.valid() ? d.bound_loc : d.loc,
                          "bound '" + d.bound + "' has no value: give a default (dim " + d.name + " < " + d.bound +
                              " = 100) or pass -D " + d.bound + "=<n>");
                } else if (v && *v < 1) {
                    error(where,
                          "bad bound value: " + d.bound + " = " + std::to_string(*v) + "; bounds must be at least 1");
                } else if (v) {
                    value = *v;
                }
                if (define(0, d.bound, {EntityKind::Bound, -1, d.bound_loc.valid() ? d.bound_loc : d.loc}))
                    prog_.bounds[d.bound] = value;
            }
        }
        dim.bound = value;
        prog_.dims.push_back(dim);
        define(0, d.name, {EntityKind::Dim, static_cast<int>(prog_.dims.size()) - 1, dim.loc});
    }
    for (const auto &[name, v] : opts_.defines) {
        const Entity *ent = lookup(0, name);
        if (ent && ent->kind == EntityKind::Const) {
            const_value(ent->index, ent->loc);  // folds the override in (and reports a float const)
        } else if (!prog_.bounds.count(name)) {
            diag_.error("-D " + name + "=" + std::to_string(v) + ": there is no bound or integer const named '" + name +
                        "'");
        }
    }
}

std::optional<ir::Type> Sema::eval_type(const ast::TypeAnnot &t, int module) {
    ir::Type out;
    if (t.is_tuple) {
        out.is_tuple = true;
        for (const ast::TypeAnnot &e : t.elems) {
            auto et = eval_type(e, module);
            if (!et) return std::nullopt;
            out.elems.push_back(*et);
        }
        return out;
    }
    static const std::map<std::string, ir::DType> names = {
        {"f32", ir::DType::F32}, {"f64", ir::DType::F64}, {"i32", ir::DType::I32}, {"bool", ir::DType::Bool}};
    auto it = names.find(t.dtype);
    if (it == names.end()) {
        error(t.loc, "unknown dtype '" + t.dtype + "'; expected f32, f64, i32 or bool");
        return std::nullopt;
    }
    out.dtype = it->second;
    for (const ast::ExprPtr &e : t.shape) {
        auto n = eval_int(*e, module, "an extent");
        if (!n) return std::nullopt;
        if (*n < 0) {
            error(e->loc, "bad extent " + std::to_string(*n) + ": extents must be >= 0");
            return std::nullopt;
        }
        ir::Extent x;
        x.max_value = *n;
        out.shape.push_back(x);
    }
    return out;
}

}  // namespace trlc::sema
