// verify — the IR's structural invariants (the list is in ir/verify.h).  One walk over each
// equation, emit and save; each node of a DAG is checked once per root (a node shared by two
// roots is checked against each root's variables).
#include "ir/verify.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include "ir/printer.h"

namespace trlc::ir {

namespace {

std::string short_text(const Program &prog, const Node &n, const std::vector<std::string> &vars) {
    std::string s = node_to_string(prog, n, vars);
    return s.size() > 120 ? s.substr(0, 120) + "…" : s;
}

bool is_comparison(BinaryOp op) {
    return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge || op == BinaryOp::Eq ||
           op == BinaryOp::Ne;
}

/** "" when a and b agree in tuple structure, dtype, rank and static extents, else why not. */
std::string type_mismatch(const Type &a, const Type &b) {
    if (a.is_tuple != b.is_tuple) return "tuple vs non-tuple";
    if (a.is_tuple) {
        if (a.elems.size() != b.elems.size()) return "tuples of different sizes";
        for (size_t k = 0; k < a.elems.size(); ++k) {
            std::string m = type_mismatch(a.elems[k], b.elems[k]);
            if (!m.empty()) return "element " + std::to_string(k) + ": " + m;
        }
        return "";
    }
    if (a.dtype != b.dtype) return std::string(dtype_name(a.dtype)) + " vs " + dtype_name(b.dtype);
    if (a.shape.size() != b.shape.size())
        return "rank " + std::to_string(a.shape.size()) + " vs " + std::to_string(b.shape.size());
    for (size_t k = 0; k < a.shape.size(); ++k)
        if (a.shape[k].is_static() && b.shape[k].is_static() && a.shape[k].max_value != b.shape[k].max_value)
            return "extent " + std::to_string(a.shape[k].max_value) + " vs " + std::to_string(b.shape[k].max_value) +
                   " on axis " + std::to_string(k);
    return "";
}

class Verifier {
public:
    Verifier(const Program &prog, const VerifyOptions &opts, size_t limit) : prog_(prog), opts_(opts), limit_(limit) {}

    std::vector<std::string> run() {
        for (size_t d = 0; d < prog_.dims.size(); ++d) check_dim(prog_.dims[d]);
        std::set<std::string> names;
        for (const Tensor &t : prog_.tensors) {
            if (!names.insert(t.name).second) fail("tensor " + t.name + " is defined twice");
            check_tensor(t);
        }
        for (const Emit &e : prog_.emits) check_emit(e);
        for (size_t k = 0; k < prog_.saves.size(); ++k) {
            where_ = prog_.saves[k].label();
            vars_.clear();
            root(prog_.saves[k].value);
        }
        return out_;
    }

private:
    void fail(const std::string &msg) {
        if (out_.size() < limit_) out_.push_back(msg);
    }
    void bad(const Node &n, const std::string &msg) { fail(where_ + ": " + msg + ": " + short_text(prog_, n, vars_)); }

    void check_dim(const Dim &d) {
        if (d.bound < 0) fail("dim " + d.name + " has a negative bound");
        if (d.bound_name.empty()) return;
        auto it = prog_.bounds.find(d.bound_name);
        if (it == prog_.bounds.end())
            fail("dim " + d.name + "'s bound " + d.bound_name + " is not in Program::bounds");
        else if (it->second != d.bound)
            fail("dim " + d.name + " has bound " + std::to_string(d.bound) + " but " + d.bound_name + " = " +
                 std::to_string(it->second));
    }

    bool dim_ok(int d) const { return d >= 0 && d < static_cast<int>(prog_.dims.size()); }

    void check_tensor(const Tensor &t) {
        for (int d : t.dims)
            if (!dim_ok(d)) fail("tensor " + t.name + " has dim index " + std::to_string(d) + " out of range");
        for (size_t e = 0; e < t.equations.size(); ++e) {
            const Equation &eq = t.equations[e];
            where_ = "tensor " + t.name + ", equation " + std::to_string(e + 1);
            if (!set_vars(eq.vars)) continue;
            where_ += " (" + lhs_to_string(prog_, t, eq) + ")";
            check_pattern(t, eq);
            if (eq.guard) check_guard(*eq.guard);
            if (!eq.body) {
                fail(where_ + ": no body");
                continue;
            }
            root(eq.body);
            std::string m = type_mismatch(eq.body->type, t.type);
            if (!m.empty())
                fail(where_ + ": the body's type " + type_to_string(eq.body->type) + " is not the tensor's " +
                     type_to_string(t.type) + " (" + m + ")");
        }
    }

    bool set_vars(const std::vector<int> &vars) {
        vars_.clear();
        for (int d : vars) {
            if (!dim_ok(d)) {
                fail(where_ + ": variable dim index " + std::to_string(d) + " out of range");
                return false;
            }
            vars_.push_back(prog_.dims[d].name);
        }
        return true;
    }

    void check_pattern(const Tensor &t, const Equation &eq) {
        if (eq.pattern.size() != t.dims.size()) {
            fail(where_ + ": the pattern has " + std::to_string(eq.pattern.size()) + " positions for " +
                 std::to_string(t.dims.size()) + " dims");
            return;
        }
        for (size_t k = 0; k < eq.pattern.size(); ++k) {
            const PatternItem &p = eq.pattern[k];
            std::string at = where_ + ": pattern position " + std::to_string(k + 1);
            if (p.kind == PatternItem::Constant) {  // V[T] may define a point past the bound
                if (p.offset < 0) fail(at + " is the negative constant " + std::to_string(p.offset));
                continue;
            }
            if (p.var < 0 || p.var >= static_cast<int>(eq.vars.size())) {
                fail(at + " names variable " + std::to_string(p.var) + " of " + std::to_string(eq.vars.size()));
                continue;
            }
            if (eq.vars[p.var] != t.dims[k]) fail(at + " binds " + vars_[p.var] + ", not the tensor's dim there");
            if (p.kind == PatternItem::Shift && p.offset <= 0)
                fail(at + " has shift " + std::to_string(p.offset) + " (must be > 0)");
        }
    }

    void check_affine(const Affine &a, const std::string &what) {
        for (size_t v = vars_.size(); v < a.coef.size(); ++v)
            if (a.coef[v] != 0) {
                fail(where_ + ": " + what + " uses variable " + std::to_string(v) + " of " +
                     std::to_string(vars_.size()));
                return;
            }
    }

    void check_index(const IndexExprPtr &e, const std::string &what) {
        if (!e) {
            fail(where_ + ": " + what + " is missing");
            return;
        }
        if (e->kind == IndexExpr::Aff) return check_affine(e->aff, what);
        check_index(e->a, what);
        check_index(e->b, what);
    }

    void check_guard(const Guard &g) {
        switch (g.kind) {
        case Guard::True: return;
        case Guard::Cmp:
            if (!is_comparison(g.cmp)) fail(where_ + ": a guard compares with a non-comparison");
            check_affine(g.lhs, "a guard");
            check_affine(g.rhs, "a guard");
            if ((g.lhs_quasi != Guard::Plain && g.lhs_divisor <= 0) || (g.rhs_quasi != Guard::Plain && g.rhs_divisor <= 0))
                fail(where_ + ": a guard's % or / has a divisor that is not positive");
            return;
        case Guard::And:
        case Guard::Or:
            if (!g.a || !g.b) return fail(where_ + ": an and/or guard lacks an operand");
            check_guard(*g.a);
            check_guard(*g.b);
            return;
        case Guard::Not:
            if (!g.a) return fail(where_ + ": a not guard lacks its operand");
            check_guard(*g.a);
            return;
        }
    }

    void check_emit(const Emit &e) {
        where_ = "emit \"" + e.stream + "\"";
        if (!set_vars(e.vars)) return;
        for (const auto &f : e.fields) {
            if (!f.second)
                fail(where_ + ": field " + f.first + " has no value");
            else
                root(f.second);
        }
        if (!e.guard) return;
        root(e.guard);
        if (e.guard->type.is_tuple || e.guard->type.dtype != DType::Bool || !e.guard->type.shape.empty())
            fail(where_ + ": the guard is " + type_to_string(e.guard->type) + ", not a bool scalar");
    }

    void root(const NodePtr &n) {
        if (!n) return fail(where_ + ": a missing expression");
        seen_.clear();
        visit(*n);
    }

    void visit(const Node &n) {
        if (!seen_.insert(&n).second) return;
        for (const NodePtr &a : n.args)
            if (!a) return bad(n, "a null operand");
        for (const NodePtr &a : n.args) visit(*a);
        check_node(n);
    }

    static size_t arity(NodeKind k) {
        switch (k) {
        case NodeKind::Unary:
        case NodeKind::Cast:
        case NodeKind::TupleGet: return 1;
        case NodeKind::Binary:
        case NodeKind::Grad: return 2;
        case NodeKind::Where: return 3;
        case NodeKind::Const:
        case NodeKind::Coord: return 0;
        default: return SIZE_MAX;  // variadic
        }
    }

    static bool is_bool_of(const Type &t) { return !t.is_tuple && t.dtype == DType::Bool; }

    /** Elementwise result: rank = the largest operand rank, static extents broadcast. */
    void check_broadcast(const Node &n, size_t first) {
        size_t rank = 0;
        for (size_t k = first; k < n.args.size(); ++k) {
            if (n.args[k]->type.is_tuple) return bad(n, "a tuple operand of an elementwise operation");
            rank = std::max(rank, n.args[k]->type.shape.size());
        }
        if (n.type.is_tuple || n.type.shape.size() != rank)
            return bad(n, "result " + type_to_string(n.type, vars_) + " is not the operands' broadcast rank " +
                              std::to_string(rank));
        for (size_t k = first; k < n.args.size(); ++k) {
            const auto &s = n.args[k]->type.shape;
            for (size_t a = 0; a < s.size(); ++a) {
                const Extent &x = s[a], &r = n.type.shape[rank - s.size() + a];
                if (x.is_static() && r.is_static() && x.max_value != 1 && x.max_value != r.max_value)
                    return bad(n, "operand " + std::to_string(k + 1) + " of type " +
                                      type_to_string(n.args[k]->type, vars_) + " does not broadcast to " +
                                      type_to_string(n.type, vars_));
            }
        }
    }

    void check_node(const Node &n) {
        size_t want = arity(n.kind);
        if (want != SIZE_MAX && n.args.size() != want)
            return bad(n, std::to_string(n.args.size()) + " operands where " + std::to_string(want) + " are needed");
        switch (n.kind) {
        case NodeKind::Const: {
            size_t count = 1;
            for (const Extent &e : n.type.shape) count *= static_cast<size_t>(std::max<int64_t>(e.max_value, 0));
            if (n.type.is_tuple || n.data.size() != count)
                bad(n, "a literal of type " + type_to_string(n.type) + " with " + std::to_string(n.data.size()) +
                           " values");
            if (!n.bound.empty() && !prog_.bounds.count(n.bound))
                bad(n, "a literal tagged with unknown bound " + n.bound);
            break;
        }
        case NodeKind::Coord:
            if (n.var < 0 || n.var >= static_cast<int>(vars_.size()))
                bad(n, "variable " + std::to_string(n.var) + " of " + std::to_string(vars_.size()));
            if (n.type.is_tuple || n.type.dtype != DType::I32 || !n.type.shape.empty())
                bad(n, "a coordinate of type " + type_to_string(n.type));
            break;
        case NodeKind::Read: check_read(n); break;
        case NodeKind::Unary:
            if (n.uop == UnaryOp::Not && !is_bool_of(n.type)) bad(n, "! gives " + type_to_string(n.type));
            check_broadcast(n, 0);
            break;
        case NodeKind::Binary:
            if ((is_comparison(n.bop) || n.bop == BinaryOp::And || n.bop == BinaryOp::Or) && !is_bool_of(n.type))
                bad(n, std::string(binary_name(n.bop)) + " gives " + type_to_string(n.type));
            check_broadcast(n, 0);
            break;
        case NodeKind::Where:
            if (!is_bool_of(n.args[0]->type)) bad(n, "the condition is " + type_to_string(n.args[0]->type));
            check_broadcast(n, 0);
            break;
        case NodeKind::Cast:
            if (n.type.is_tuple || n.args[0]->type.is_tuple || n.type.shape.size() != n.args[0]->type.shape.size())
                bad(n, "a cast from " + type_to_string(n.args[0]->type) + " to " + type_to_string(n.type));
            break;
        case NodeKind::Tuple: {
            if (!n.type.is_tuple || n.type.elems.size() != n.args.size())
                return bad(n, "a tuple of " + std::to_string(n.args.size()) + " of type " + type_to_string(n.type));
            for (size_t k = 0; k < n.args.size(); ++k) {
                std::string m = type_mismatch(n.args[k]->type, n.type.elems[k]);
                if (!m.empty()) bad(n, "element " + std::to_string(k) + " " + m);
            }
            break;
        }
        case NodeKind::TupleGet: {
            const Type &t = n.args[0]->type;
            if (!t.is_tuple || n.int_attr < 0 || n.int_attr >= static_cast<int64_t>(t.elems.size()))
                return bad(n, "element " + std::to_string(n.int_attr) + " of " + type_to_string(t));
            std::string m = type_mismatch(n.type, t.elems[n.int_attr]);
            if (!m.empty()) bad(n, "element type " + m);
            break;
        }
        case NodeKind::Index:
            if (n.args.empty()) return bad(n, "indexing without an operand");
            for (const SpatialIndex &s : n.sindex) {
                if (s.kind == SpatialIndex::Scalar && !s.value) bad(n, "a scalar index without a value");
                if (s.kind == SpatialIndex::Slice) {
                    check_index(s.lo, "a slice's start");
                    check_index(s.hi, "a slice's end");
                }
            }
            break;
        case NodeKind::Extern: {
            const ExternFn *f = nullptr;
            for (const ExternFn &x : prog_.externs)
                if (x.name == n.name) f = &x;
            if (!f)
                bad(n, "a call of undeclared extern " + n.name);
            else if (f->params.size() != n.args.size())
                bad(n, std::to_string(n.args.size()) + " arguments for " + std::to_string(f->params.size()) +
                           " parameters");
            break;
        }
        case NodeKind::Grad:
            if (!opts_.allow_grad) bad(n, "grad() is still there after autodiff");
            break;
        case NodeKind::Builtin:
        case NodeKind::Rng: break;
        }
    }

    void check_read(const Node &n) {
        if (n.tensor < 0 || n.tensor >= static_cast<int>(prog_.tensors.size()))
            return bad(n, "a read of tensor index " + std::to_string(n.tensor) + " of " +
                              std::to_string(prog_.tensors.size()));
        const Tensor &t = prog_.tensors[n.tensor];
        if (n.index.size() != t.dims.size())
            return bad(n, "a read of " + t.name + " with " + std::to_string(n.index.size()) + " indices for its " +
                              std::to_string(t.dims.size()) + " dims");
        size_t slices = 0;
        for (const ReadIndex &r : n.index) {
            if (r.is_slice) {
                ++slices;
                check_index(r.lo, "a slice's start");
                check_index(r.hi, "a slice's end");
            } else {
                check_index(r.point, "an index");
            }
        }
        if (t.type.is_tuple) {
            if (slices == 0 && !type_mismatch(n.type, t.type).empty())
                bad(n, "a read of type " + type_to_string(n.type) + " of a " + type_to_string(t.type) + " tensor");
            return;
        }
        if (n.type.is_tuple || n.type.dtype != t.type.dtype || n.type.shape.size() != slices + t.type.shape.size())
            bad(n, "a read of type " + type_to_string(n.type, vars_) + " of a " + type_to_string(t.type) +
                       " tensor through " + std::to_string(slices) + " slices");
    }

    const Program &prog_;
    const VerifyOptions &opts_;
    size_t limit_;
    std::vector<std::string> out_;
    std::string where_;
    std::vector<std::string> vars_;
    std::set<const Node *> seen_;
};

}  // namespace

std::vector<std::string> verify(const Program &prog, const VerifyOptions &opts, size_t limit) {
    return Verifier(prog, opts, limit).run();
}

}  // namespace trlc::ir
