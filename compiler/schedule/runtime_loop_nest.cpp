// runtime_loop_nest — a loop nest whose integers are affine in some program bounds, found by
// comparing the loop nests isl builds at different values of those bounds (issue 4 §3,
// `--bound NAME=V` of generated programs; driver/runtime_bounds.cpp decides which bounds).
//
// The loop nest of a schedule is concrete: `for (c0 = 0; c0 <= 9; c0 += 1) net_0(c0)` for
// I = 10.  Built again at I = 11 it reads `c0 <= 10`: the same tree with one integer moved by
// 1.  fit_loop_nest records, for every integer of the base tree, its change per unit of the
// bound (the slope); loop_nest_matches checks a tree built at other values against the
// prediction base + slope · delta (so the fit is checked at several values, not assumed);
// parametrize_loop_nest rewrites each moving integer c as (c - Σ slope_b · value_b) +
// Σ slope_b · Bound_b, which code generation prints as a read of the run-time bound.
// Any difference in structure (node kinds, iterators, statements, operators) is a mismatch.
#include <sstream>

#include "schedule/schedule.h"

namespace trlc {

namespace {

const char *kind_name(LoopNode::Kind k) {
    switch (k) {
    case LoopNode::For: return "for";
    case LoopNode::If: return "if";
    case LoopNode::Block: return "block";
    case LoopNode::User: return "statement";
    }
    return "?";
}

/** Walks two trees in parallel; "leaf" decides about each pair of Int nodes. */
class Walker {
public:
    using Leaf = std::function<bool(const AstExpr &base, const AstExpr &other, std::string *why)>;
    explicit Walker(Leaf leaf) : leaf_(std::move(leaf)) {}

    bool expr(const AstExpr &a, const AstExpr &b, std::string *why) {
        if (a.op != b.op || a.args.size() != b.args.size() ||
            (a.op == AstExpr::Var && a.var != b.var)) {
            *why = "a loop bound or index has a different form";
            return false;
        }
        if (a.op == AstExpr::Int) return leaf_(a, b, why);
        for (size_t k = 0; k < a.args.size(); ++k)
            if (!expr(*a.args[k], *b.args[k], why)) return false;
        return true;
    }

    bool optional(const AstExprPtr &a, const AstExprPtr &b, std::string *why) {
        if (!a || !b) {
            if (a || b) *why = "a loop has a different form";
            return !a && !b;
        }
        return expr(*a, *b, why);
    }

    bool node(const LoopNode &a, const LoopNode &b, std::string *why) {
        if (a.kind != b.kind || a.children.size() != b.children.size() || a.var != b.var ||
            a.stmt != b.stmt || a.args.size() != b.args.size()) {
            std::ostringstream ss;
            ss << "the loop nest has a different structure (" << kind_name(a.kind) << " vs "
               << kind_name(b.kind) << ")";
            *why = ss.str();
            return false;
        }
        if (!optional(a.init, b.init, why) || !optional(a.cond, b.cond, why) ||
            !optional(a.step, b.step, why) || !optional(a.if_cond, b.if_cond, why))
            return false;
        for (size_t k = 0; k < a.args.size(); ++k)
            if (!expr(*a.args[k], *b.args[k], why)) return false;
        for (size_t k = 0; k < a.children.size(); ++k)
            if (!node(*a.children[k], *b.children[k], why)) return false;
        return true;
    }

private:
    Leaf leaf_;
};

AstExprPtr int_expr(int64_t v) {
    auto e = std::make_shared<AstExpr>();
    e->op = AstExpr::Int;
    e->value = v;
    return e;
}

AstExprPtr binary(AstExpr::Op op, AstExprPtr a, AstExprPtr b) {
    auto e = std::make_shared<AstExpr>();
    e->op = op;
    e->args = {std::move(a), std::move(b)};
    return e;
}

class Rewriter {
public:
    Rewriter(const LoopNestFit &fit, const std::map<int, int64_t> &values)
        : fit_(fit), values_(values) {}

    AstExprPtr expr(const AstExprPtr &e) {
        if (!e) return e;
        if (e->op == AstExpr::Int) {
            auto f = fit_.slopes.find(e.get());
            if (f == fit_.slopes.end()) return e;
            int64_t c = e->value;
            AstExprPtr sum;
            for (const auto &s : f->second) {
                if (s.second == 0) continue;
                int64_t value = values_.at(s.first);
                c -= s.second * value;
                auto b = std::make_shared<AstExpr>();
                b->op = AstExpr::Bound;
                b->var = s.first;
                b->value = value;
                AstExprPtr term = s.second == 1 ? AstExprPtr(b) : binary(AstExpr::Mul, int_expr(s.second), b);
                sum = sum ? binary(AstExpr::Add, sum, term) : term;
            }
            if (!sum) return e;
            if (c == 0) return sum;
            return c > 0 ? binary(AstExpr::Add, sum, int_expr(c)) : binary(AstExpr::Sub, sum, int_expr(-c));
        }
        auto out = std::make_shared<AstExpr>(*e);
        for (auto &a : out->args) a = expr(a);
        return out;
    }

    LoopNodePtr node(const LoopNode &n) {
        auto out = std::make_shared<LoopNode>(n);
        out->init = expr(n.init);
        out->cond = expr(n.cond);
        out->step = expr(n.step);
        out->if_cond = expr(n.if_cond);
        for (auto &a : out->args) a = expr(a);
        for (auto &c : out->children) c = node(*c);
        return out;
    }

private:
    const LoopNestFit &fit_;
    const std::map<int, int64_t> &values_;
};

}  // namespace

bool fit_loop_nest(const LoopNode &base, const LoopNode &other, int bound, LoopNestFit &fit,
                   std::string *why) {
    Walker w([&](const AstExpr &a, const AstExpr &b, std::string *) {
        fit.slopes[&a][bound] = b.value - a.value;
        return true;
    });
    return w.node(base, other, why);
}

bool loop_nest_matches(const LoopNode &base, const LoopNestFit &fit,
                       const std::map<int, int64_t> &delta, const LoopNode &other,
                       std::string *why) {
    Walker w([&](const AstExpr &a, const AstExpr &b, std::string *why) {
        int64_t want = a.value;
        auto f = fit.slopes.find(&a);
        if (f != fit.slopes.end())
            for (const auto &s : f->second) {
                auto d = delta.find(s.first);
                if (d != delta.end()) want += s.second * d->second;
            }
        if (want == b.value) return true;
        *why = "a loop bound is not an affine function of the bound (" + std::to_string(b.value) +
               " where " + std::to_string(want) + " was predicted)";
        return false;
    });
    return w.node(base, other, why);
}

LoopNodePtr parametrize_loop_nest(const LoopNode &base, const LoopNestFit &fit,
                                  const std::map<int, int64_t> &values) {
    return Rewriter(fit, values).node(base);
}

}  // namespace trlc
