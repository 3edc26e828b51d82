// ast_order — the order in which the loop nest really runs the statement instances, checked
// against the dependences (never trust isl's AST blindly).
//
// isl's AST generator is meant to scan the domain in schedule order, but it does not always:
// on REINFORCE with I = 3 under the outer-coincidence schedule it runs mask_0(i, t) before
// fin_1(i, 0) at c1 == 38 although the schedule map orders fin_1[0, 0] first (session notes
// s6-isl-ast-order, s7-isl-bug-report.md).  So the LoopNode tree that trlc will run — the tree
// itself, after conversion from isl's AST (build_ast.cpp) — is turned back into an isl
// relation, its *iteration schedule*, and the dependences are checked under it with isl,
// exactly (no enumeration of instances):
//
//   each tree node on the path from the root to a User node adds one time dim:
//     Block → the child's position, If → 0 (then) / 1 (else), For → its iterator;
//   a User node `S(e0, e1)` under loops c0, c1 with conditions C gives
//     { S[e0(c), e1(c)] -> [p0, c0, p1, c1, ..., 0, 0] : C(c) }   (padded with 0)
//
// Lexicographic order of these vectors is the order of the walk: two instances share the
// path down to their lowest common node; each common For runs its smaller iterator value
// first (isl's loops count up by a positive constant step, checked), a Block runs its
// children in order, an If runs one branch per point.  A For's iterator set is
// { c : c >= init, c ≡ init (mod step), cond(c) }, which is what the loop runs when cond is
// a prefix condition (true from init up to some value, then false): that too is checked.
//
// check_loop_nest_order then requires that every statement instance of the domain runs
// exactly once (the iteration schedule's domain is the statement domain, and it is a
// function) and that every flow dependence runs its producer strictly first.  Cost: one isl
// relation per User node and one subset test over the flow dependences (PPO CartPole: see
// check_loop_nest_order's comment in schedule_impl.h).
#include <isl/aff.h>
#include <isl/map.h>
#include <isl/set.h>
#include <isl/union_map.h>

#include <algorithm>
#include <functional>
#include <map>

#include "pdg/pdg_impl.h"
#include "schedule/schedule_impl.h"

namespace trlc {

namespace {

/** Thrown when a loop nest uses a construct whose order the check cannot express. */
struct Unsupported {
    std::string what;
};

class Times {
public:
    Times(const Schedule &s, isl::ctx ctx, const std::vector<std::string> &params)
        : s_(s), ctx_(ctx.get()), params_(params) {}

    isl::union_map build(const LoopNode &root) {
        depth_ = 0;
        iters_ = 0;
        measure(root, 1);
        isl_space *sp = isl_space_set_alloc(ctx_, static_cast<unsigned>(params_.size()), static_cast<unsigned>(iters_));
        for (size_t k = 0; k < params_.size(); ++k)
            sp = isl_space_set_dim_name(sp, isl_dim_param, static_cast<unsigned>(k), params_[k].c_str());
        iter_space_ = isl::manage(sp);
        out_ = isl::union_map::empty(isl::ctx(ctx_));
        std::vector<std::pair<bool, int64_t>> path;  // (is iterator, var or constant)
        walk(root, isl::manage(isl_set_universe(iter_space_.copy())), path);
        return out_;
    }

    int depth() const { return depth_; }

private:
    void measure(const LoopNode &n, int d) {
        depth_ = std::max(depth_, d);
        if (n.kind == LoopNode::For) iters_ = std::max(iters_, n.var + 1);
        for (const LoopNodePtr &c : n.children) measure(*c, d + 1);
    }

    isl_local_space *ls() const { return isl_local_space_from_space(iter_space_.copy()); }

    // Leaves are made with the C API (the C++ bindings lack local spaces) and owned at once;
    // everything above them uses the bindings, so an Unsupported thrown midway leaks nothing.
    isl::pw_aff constant(int64_t v) const {
        return isl::manage(isl_pw_aff_from_aff(isl_aff_val_on_domain(ls(), isl_val_int_from_si(ctx_, v))));
    }

    isl::pw_aff var(enum isl_dim_type type, int pos) const {
        return isl::manage(isl_pw_aff_from_aff(isl_aff_var_on_domain(ls(), type, static_cast<unsigned>(pos))));
    }

    int64_t int_of(const AstExpr &e) const {
        if (e.op == AstExpr::Int) return e.value;
        if (e.op == AstExpr::Neg && e.args.size() == 1 && e.args[0]->op == AstExpr::Int) return -e.args[0]->value;
        throw Unsupported{"a non-constant divisor or factor"};
    }

    /** The value of "e" as a piecewise quasi-affine function of the iterators. */
    isl::pw_aff value(const AstExpr &e) const {
        auto arg = [&](size_t k) { return value(*e.args.at(k)); };
        switch (e.op) {
        case AstExpr::Int: return constant(e.value);
        case AstExpr::Var: return var(isl_dim_set, e.var);
        case AstExpr::Bound:
            if (e.var < 0 || e.var >= static_cast<int>(params_.size()))
                throw Unsupported{"a bound that is no parameter"};
            return var(isl_dim_param, e.var);
        case AstExpr::Neg: return arg(0).neg();
        case AstExpr::Add: return arg(0).add(arg(1));
        case AstExpr::Sub: return arg(0).sub(arg(1));
        case AstExpr::Mul: {
            const AstExpr &a = *e.args.at(0), &b = *e.args.at(1);
            bool a_const = a.op == AstExpr::Int || (a.op == AstExpr::Neg && a.args.at(0)->op == AstExpr::Int);
            if (a_const) return arg(1).scale(int_of(a));
            return arg(0).scale(int_of(b));
        }
        case AstExpr::FloorDiv: {
            int64_t d = int_of(*e.args.at(1));
            if (d == 0) throw Unsupported{"a division by zero"};
            return arg(0).scale_down(d).floor();
        }
        case AstExpr::Mod: {
            int64_t m = int_of(*e.args.at(1));
            if (m <= 0) throw Unsupported{"a modulo by a non-positive number"};
            return arg(0).mod(m);
        }
        case AstExpr::Min:
        case AstExpr::Max: {
            isl::pw_aff v = arg(0);
            for (size_t k = 1; k < e.args.size(); ++k) v = e.op == AstExpr::Min ? v.min(arg(k)) : v.max(arg(k));
            return v;
        }
        case AstExpr::Select: return cond(*e.args.at(0)).indicator_function().cond(arg(1), arg(2));
        case AstExpr::Lt:
        case AstExpr::Le:
        case AstExpr::Gt:
        case AstExpr::Ge:
        case AstExpr::Eq:
        case AstExpr::And:
        case AstExpr::Or: return cond(e).indicator_function();
        }
        throw Unsupported{"an unknown expression"};
    }

    /** The iterator values where "e" is true (non-zero). */
    isl::set cond(const AstExpr &e) const {
        auto arg = [&](size_t k) { return value(*e.args.at(k)); };
        switch (e.op) {
        case AstExpr::Lt: return arg(0).lt_set(arg(1));
        case AstExpr::Le: return arg(0).le_set(arg(1));
        case AstExpr::Gt: return arg(0).gt_set(arg(1));
        case AstExpr::Ge: return arg(0).ge_set(arg(1));
        case AstExpr::Eq: return arg(0).eq_set(arg(1));
        case AstExpr::And: {
            isl::set s = isl::set::universe(iter_space_);
            for (const AstExprPtr &a : e.args) s = s.intersect(cond(*a));
            return s;
        }
        case AstExpr::Or: {
            isl::set s = isl::set::empty(iter_space_);
            for (const AstExprPtr &a : e.args) s = s.unite(cond(*a));
            return s;
        }
        default: return value(e).ne_set(constant(0));
        }
    }

    void walk(const LoopNode &n, isl::set where, std::vector<std::pair<bool, int64_t>> &path) {
        if (where.is_empty()) return;
        switch (n.kind) {
        case LoopNode::Block:
            for (size_t k = 0; k < n.children.size(); ++k) {
                path.push_back({false, static_cast<int64_t>(k)});
                walk(*n.children[k], where, path);
                path.pop_back();
            }
            return;
        case LoopNode::If: {
            isl::set c = cond(*n.if_cond);
            path.push_back({false, 0});
            walk(*n.children.at(0), where.intersect(c), path);
            path.pop_back();
            if (n.children.size() > 1) {
                path.push_back({false, 1});
                walk(*n.children[1], where.subtract(c), path);
                path.pop_back();
            }
            return;
        }
        case LoopNode::For: {
            if (n.step->op != AstExpr::Int || n.step->value <= 0)
                throw Unsupported{"a loop whose step is not a positive constant"};
            int64_t step = n.step->value;
            unsigned v = static_cast<unsigned>(n.var);
            isl::pw_aff it = var(isl_dim_set, n.var);
            isl::pw_aff init = value(*n.init);
            isl::set c = cond(*n.cond);
            // { c : c >= init and c = init + step * k for some k >= 0 }
            isl::set from = it.ge_set(init);
            if (step > 1) from = from.intersect(it.sub(init).mod(step).eq_set(constant(0)));
            // cond must be a prefix condition: no c past init where cond holds but not at c - step.
            isl::set outer = where;  // the loop's own iterator is free in "where"
            isl::set prev_false = c.complement().preimage(isl::manage(shift_var(v, -step)));
            isl::set gap =
                outer.intersect(from).intersect(c).intersect(prev_false).intersect(it.ge_set(init.add(constant(step))));
            if (!gap.is_empty()) throw Unsupported{"a loop condition that is not an upper bound"};
            path.push_back({true, n.var});
            walk(*n.children.at(0), where.intersect(from).intersect(c), path);
            path.pop_back();
            return;
        }
        case LoopNode::User: user(n, where, path); return;
        }
    }

    /** A set space of "n" dims with the iterator space's parameters. */
    isl_space *set_space(int n) const {
        isl_space *sp = isl_space_set_from_params(isl_space_params(iter_space_.copy()));
        return isl_space_add_dims(sp, isl_dim_set, static_cast<unsigned>(n));
    }

    /** The multi_aff iterators → iterators that adds "delta" to iterator "v". */
    isl_multi_aff *shift_var(unsigned v, int64_t delta) const {
        isl_multi_aff *ma = isl_multi_aff_identity_on_domain_space(iter_space_.copy());
        isl_aff *a = isl_multi_aff_get_aff(ma, static_cast<int>(v));
        a = isl_aff_add_constant_si(a, static_cast<int>(delta));
        return isl_multi_aff_set_aff(ma, static_cast<int>(v), a);
    }

    void user(const LoopNode &n, const isl::set &where, const std::vector<std::pair<bool, int64_t>> &path) {
        if (n.stmt < 0) return;
        const Statement &st = s_.statements.at(n.stmt);
        // iterators -> time
        isl_space *tsp = isl_space_map_from_domain_and_range(iter_space_.copy(), set_space(depth_));
        isl_multi_aff *time = isl_multi_aff_zero(tsp);
        for (size_t k = 0; k < path.size(); ++k) {
            isl_aff *a = path[k].first ? isl_aff_var_on_domain(ls(), isl_dim_set, static_cast<unsigned>(path[k].second))
                                       : isl_aff_val_on_domain(ls(), isl_val_int_from_si(ctx_, path[k].second));
            time = isl_multi_aff_set_aff(time, static_cast<int>(k), a);
        }
        isl::map to_time = isl::manage(isl_map_from_multi_aff(time)).intersect_domain(where);
        // iterators -> instance
        isl_space *isp = isl_space_map_from_domain_and_range(iter_space_.copy(), set_space(0));
        isl::map inst = isl::manage(isl_map_universe(isp));
        for (const AstExprPtr &a : n.args) {
            isl::pw_aff v = value(*a);  // may throw Unsupported: hold nothing raw across it
            inst = isl::manage(isl_map_flat_range_product(inst.release(), isl_map_from_pw_aff(v.release())));
        }
        inst = isl::manage(isl_map_set_tuple_name(inst.release(), isl_dim_out, st.name.c_str()));
        isl::map to_inst = inst.intersect_domain(where);
        out_ = out_.unite(isl::union_map(to_inst.reverse().apply_range(to_time)));
    }

    const Schedule &s_;
    isl_ctx *ctx_;
    std::vector<std::string> params_;
    isl::space iter_space_;
    int depth_ = 0;
    int iters_ = 0;
    isl::union_map out_;
};

/** A single point as "S[0, 0]" (no dim names). */
std::string point_text(const isl::set &p) {
    const char *name = isl_set_get_tuple_name(p.get());
    std::string t = std::string(name ? name : "") + "[";
    isl_size n = isl_set_dim(p.get(), isl_dim_set);
    for (isl_size k = 0; k < n; ++k) {
        isl_val *v = isl_set_plain_get_val_if_fixed(p.get(), isl_dim_set, k);
        t += (k ? ", " : "") + std::to_string(isl_val_get_num_si(v));
        isl_val_free(v);
    }
    return t + "]";
}

/** The lexicographically smallest pair of "m" (non-empty, concrete). */
isl::map first_pair(const isl::map &m) {
    isl::set w = isl::manage(isl_set_lexmin(isl_map_wrap(m.copy())));
    return isl::manage(isl_set_unwrap(w.release()));
}

/** The time vector of point "p" under "times", as "[5, 1, 38, 0, 34, 0]". */
std::string time_of(const isl::union_map &times, const isl::set &p) {
    isl::set t = isl::manage(isl_set_from_union_set(isl::union_set(p).apply(times).release()));
    return point_text(t);
}

}  // namespace

isl::union_map loop_nest_schedule(const Schedule &s, const LoopNode &root, isl::ctx ctx,
                                  const std::vector<std::string> &params, std::string *why) {
    try {
        Times t(s, ctx, params);
        return t.build(root);
    } catch (const Unsupported &u) {
        if (why) *why = "the loop nest has " + u.what;
        return isl::union_map();
    }
}

std::string check_loop_nest_order(const Schedule &s, const LoopNode &root, const isl::union_set &domain,
                                  const isl::union_map &flow,
                                  const std::map<std::string, std::pair<int, int64_t>> &params) {
    std::vector<std::string> names;
    for (const auto &p : params) {
        if (p.second.first < 0) continue;
        if (static_cast<size_t>(p.second.first) >= names.size()) names.resize(p.second.first + 1);
        names[p.second.first] = p.first;
    }
    for (size_t k = 0; k < names.size(); ++k)
        if (names[k].empty()) names[k] = "trlc_unused_bound_" + std::to_string(k);
    std::string why;
    isl::union_map ast = loop_nest_schedule(s, root, domain.ctx(), names, &why);
    if (ast.is_null()) return "cannot check the order of isl's AST: " + why;
    ast = ast.intersect_params(isl::manage(isl_union_set_params(domain.copy())));  // context
    if (!ast.domain().is_equal(domain))
        return "isl's AST does not run exactly the domain: " +
               isl_text(ast.domain().subtract(domain).unite(domain.subtract(ast.domain())));
    if (!ast.is_single_valued()) return "isl's AST runs a statement instance more than once";
    return first_unordered(flow, ast).is_null() ? "" : "isl's AST breaks a flow dependence at some value of the bounds";
}

std::string check_loop_nest_order(const Schedule &s) {
    const ScheduleImpl &im = s.impl();
    if (!s.root) return "";
    isl::ctx ctx = im.domain.ctx();
    std::string why;
    isl::union_map ast = loop_nest_schedule(s, *s.root, ctx, {}, &why);
    if (ast.is_null()) return "cannot check the order of isl's AST: " + why;
    isl::union_set ran = ast.domain();
    if (!ran.is_subset(im.domain))
        return "isl's AST runs instances outside the statement domain: " +
               sorted_union_text(isl_text(ran.subtract(im.domain).coalesce()));
    if (!im.domain.is_subset(ran))
        return "isl's AST never runs " + sorted_union_text(isl_text(im.domain.subtract(ran).coalesce()));
    if (!ast.is_single_valued()) return "isl's AST runs a statement instance more than once";
    if (first_unordered(im.flow, ast).is_null()) return "";
    // Name the first violated dependence, in statement order.
    for (const FlowDep &d : im.deps) {
        isl::union_map ap = ast.intersect_domain(isl::union_set(im.stmt_domain[d.src]));
        isl::union_map ac = ast.intersect_domain(isl::union_set(im.stmt_domain[d.dst]));
        isl::union_map ge = isl::union_map::empty(ctx);
        ap.range().foreach_set(
            [&](isl::set t) { ge = ge.unite(isl::union_map(isl::manage(isl_map_lex_ge(t.space().release())))); });
        isl::union_map bad = isl::union_map(d.rel).intersect(ap.apply_range(ge).apply_range(ac.reverse()));
        if (bad.is_empty()) continue;
        isl::map b = isl::manage(isl_map_from_union_map(bad.release()));
        isl::map pc = first_pair(b);
        std::string p = point_text(pc.domain()), c = point_text(pc.range());
        return "isl's AST runs " + c + " before " + p + " which it reads (the schedule map " + "orders " + p + " at " +
               time_of(im.schedule_map, pc.domain()) + " before " + c + " at " + time_of(im.schedule_map, pc.range()) +
               ")";
    }
    return "isl's AST breaks a flow dependence";
}

}  // namespace trlc
