// to_isl — the one place where IR index expressions, guards and patterns become
// isl objects, plus the helpers that turn isl sets back into text for dumps and
// messages.  Objects are built programmatically (never by parsing text), so any
// tensor name is a valid tuple name.  The C++ bindings lack dim naming and
// `var_on_domain`; those few calls go through the C API with isl::manage().
#include <isl/aff.h>
#include <isl/local_space.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/set.h>
#include <isl/space.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <sstream>

#include "pdg/pdg_impl.h"
#include "pdg/to_isl.h"

namespace trlc {

IslContext::IslContext() : raw_(isl_ctx_alloc()) {
    // Report errors through isl::exception only (no warnings on stderr).
    isl_options_set_on_error(raw_, ISL_ON_ERROR_CONTINUE);
}

IslContext::~IslContext() { isl_ctx_free(raw_); }

std::string loc_string(const Loc &loc) { return std::to_string(loc.line) + ":" + std::to_string(loc.col); }

// ---- building -------------------------------------------------------------------------

isl::space param_space(const PdgImpl &g) {
    isl::space sp = isl::space::unit(g.isl.ctx());
    for (const auto &p : g.params) sp = sp.add_param(p.first);
    return sp;
}

isl::space set_space(const PdgImpl &g, const std::string &tuple, const std::vector<std::string> &names) {
    isl::space sp = param_space(g);
    unsigned n = static_cast<unsigned>(names.size());
    sp = tuple.empty() ? sp.add_unnamed_tuple(n) : sp.add_named_tuple(tuple, n);
    isl_space *raw = sp.release();
    for (unsigned i = 0; i < n; ++i) raw = isl_space_set_dim_name(raw, isl_dim_set, i, names[i].c_str());
    return isl::manage(raw);
}

isl::space map_space(const isl::space &domain, const isl::space &range) {
    return isl::manage(isl_space_map_from_domain_and_range(domain.copy(), range.copy()));
}

isl::aff var_aff(const isl::space &space, int pos) {
    isl_local_space *ls = isl_local_space_from_space(space.copy());
    return isl::manage(isl_aff_var_on_domain(ls, isl_dim_set, pos));
}

isl::aff const_aff(const isl::space &space, int64_t c) {
    return space.zero_aff_on_domain().add_constant(isl::val(space.ctx(), static_cast<long>(c)));
}

isl::aff affine_to_aff(const isl::space &space, const ir::Affine &a, int nvars) {
    isl::aff r = const_aff(space, a.constant);
    for (int v = 0; v < nvars; ++v) {
        int64_t c = a.coef_of(v);
        if (c != 0) r = r.add(var_aff(space, v).scale(isl::val(space.ctx(), static_cast<long>(c))));
    }
    return r;
}

isl::pw_aff index_to_pw_aff(const isl::space &space, const ir::IndexExpr &e, int nvars) {
    switch (e.kind) {
    case ir::IndexExpr::Aff: return isl::pw_aff(affine_to_aff(space, e.aff, nvars));
    case ir::IndexExpr::Min:
    case ir::IndexExpr::Max: {
        TRLC_ASSERT(e.a && e.b) << "min/max index without operands";
        isl::pw_aff a = index_to_pw_aff(space, *e.a, nvars);
        isl::pw_aff b = index_to_pw_aff(space, *e.b, nvars);
        return e.kind == ir::IndexExpr::Min ? a.min(b) : a.max(b);
    }
    }
    internal_error("bad index kind", __FILE__, __LINE__);
}

isl::set guard_to_set(const isl::space &space, const ir::Guard *g, int nvars) {
    if (!g) return space.universe_set();
    switch (g->kind) {
    case ir::Guard::True: return space.universe_set();
    case ir::Guard::Cmp: {
        // A quasi-affine side: isl's floored remainder / quotient (an integer division in the
        // set's constraints; isl manual, "Quasi-affine expressions").  A `/` side is exact:
        // num / den, compared as l.num * r.den cmp r.num * l.den (isl's comparisons of
        // pw_affs assume integer values: a rational t/4 < 2 would read as t/4 <= 1).
        auto side = [&](const ir::Affine &a, ir::Guard::Quasi q, int64_t d) -> std::pair<isl::pw_aff, long> {
            isl::pw_aff p(affine_to_aff(space, a, nvars));
            if (q == ir::Guard::Mod) return {p.mod(isl::val(space.ctx(), static_cast<long>(d))), 1};
            if (q == ir::Guard::Div) return {p, static_cast<long>(d)};
            if (q == ir::Guard::FloorDiv) return {p.div(isl::pw_aff(const_aff(space, d))).floor(), 1};
            return {p, 1};
        };
        auto ls = side(g->lhs, g->lhs_quasi, g->lhs_divisor);
        auto rs = side(g->rhs, g->rhs_quasi, g->rhs_divisor);
        isl::pw_aff l = rs.second == 1 ? ls.first : ls.first.scale(isl::val(space.ctx(), rs.second));
        isl::pw_aff r = ls.second == 1 ? rs.first : rs.first.scale(isl::val(space.ctx(), ls.second));
        switch (g->cmp) {
        case ir::BinaryOp::Lt: return l.lt_set(r);
        case ir::BinaryOp::Le: return l.le_set(r);
        case ir::BinaryOp::Gt: return l.gt_set(r);
        case ir::BinaryOp::Ge: return l.ge_set(r);
        case ir::BinaryOp::Eq: return l.eq_set(r);
        case ir::BinaryOp::Ne: return l.ne_set(r);
        default: internal_error("guard comparison with a non-comparison operator", __FILE__, __LINE__);
        }
    }
    case ir::Guard::And:
        return guard_to_set(space, g->a.get(), nvars).intersect(guard_to_set(space, g->b.get(), nvars));
    case ir::Guard::Or: return guard_to_set(space, g->a.get(), nvars).unite(guard_to_set(space, g->b.get(), nvars));
    case ir::Guard::Not: return space.universe_set().subtract(guard_to_set(space, g->a.get(), nvars));
    }
    internal_error("bad guard kind", __FILE__, __LINE__);
}

/* Return { [v] : 0 <= v_i < bound_i and guard } where each bound is the
 * parameter of its bound name when the program has one, else its value. */
isl::set var_domain(const PdgImpl &g, const ir::Program &prog, const std::vector<int> &vars, const ir::Guard *guard) {
    std::vector<std::string> names;
    for (int d : vars) names.push_back(prog.dims.at(d).name);
    isl::space sp = set_space(g, "", names);
    isl::set s = sp.universe_set();
    for (size_t i = 0; i < vars.size(); ++i) {
        const ir::Dim &dim = prog.dims.at(vars[i]);
        isl::pw_aff v(var_aff(sp, static_cast<int>(i)));
        bool is_param =
            std::any_of(g.params.begin(), g.params.end(), [&](const auto &p) { return p.first == dim.bound_name; });
        isl::pw_aff bound(is_param ? sp.param_aff_on_domain(dim.bound_name) : const_aff(sp, dim.bound));
        s = s.intersect(v.ge_set(isl::pw_aff(const_aff(sp, 0)))).intersect(v.lt_set(bound));
    }
    return s.intersect(guard_to_set(sp, guard, static_cast<int>(vars.size())));
}

/* Return { [v] -> x[p] : p_k = pattern_k(v) } on "vars". */
isl::map pattern_map(const isl::set &vars, const isl::space &tensor_space,
                     const std::vector<ir::PatternItem> &pattern) {
    int nv = static_cast<int>(unsigned(vars.tuple_dim()));
    isl::space w = map_space(vars.space(), tensor_space).wrap();
    isl::set s = w.universe_set();
    for (size_t k = 0; k < pattern.size(); ++k) {
        const ir::PatternItem &it = pattern[k];
        isl::aff p = var_aff(w, nv + static_cast<int>(k));
        isl::aff val = it.kind == ir::PatternItem::Constant ? const_aff(w, it.offset)
                       : it.kind == ir::PatternItem::Shift
                           ? var_aff(w, it.var).add_constant(isl::val(w.ctx(), long(it.offset)))
                           : var_aff(w, it.var);
        s = s.intersect(isl::pw_aff(p).eq_set(isl::pw_aff(val)));
    }
    return s.unwrap().intersect_domain(vars);
}

/* Return { [v] -> x[p] } for the domain indices of a Read node: a point index
 * gives p_k = index(v) (piecewise for min/max), a slice lo(v) <= p_k < hi(v). */
isl::map read_map(const isl::set &vars, const isl::space &producer_space, const std::vector<ir::ReadIndex> &index) {
    int nv = static_cast<int>(unsigned(vars.tuple_dim()));
    isl::space w = map_space(vars.space(), producer_space).wrap();
    isl::set s = w.universe_set();
    for (size_t k = 0; k < index.size(); ++k) {
        const ir::ReadIndex &ix = index[k];
        isl::pw_aff p(var_aff(w, nv + static_cast<int>(k)));
        if (ix.is_slice) {
            TRLC_ASSERT(ix.lo && ix.hi) << "slice without ends";
            s = s.intersect(index_to_pw_aff(w, *ix.lo, nv).le_set(p))
                    .intersect(p.lt_set(index_to_pw_aff(w, *ix.hi, nv)));
        } else {
            TRLC_ASSERT(ix.point) << "point index without expression";
            s = s.intersect(p.eq_set(index_to_pw_aff(w, *ix.point, nv)));
        }
    }
    return s.unwrap().intersect_domain(vars);
}

isl::map rename_map_dims(isl::map m, const std::vector<std::string> &in, const std::vector<std::string> &out) {
    isl_map *raw = m.release();
    for (size_t i = 0; i < in.size(); ++i)
        raw = isl_map_set_dim_name(raw, isl_dim_in, static_cast<unsigned>(i), in[i].c_str());
    for (size_t i = 0; i < out.size(); ++i)
        raw = isl_map_set_dim_name(raw, isl_dim_out, static_cast<unsigned>(i), out[i].c_str());
    return isl::manage(raw);
}

isl::set rename_set_dims(isl::set s, const std::vector<std::string> &names) {
    isl_set *raw = s.release();
    for (size_t i = 0; i < names.size(); ++i)
        raw = isl_set_set_dim_name(raw, isl_dim_set, static_cast<unsigned>(i), names[i].c_str());
    return isl::manage(raw);
}

// ---- reading back ----------------------------------------------------------------------

isl::set concrete(const PdgImpl &g, const isl::set &s) {
    return s.intersect_params(g.context).project_out_all_params().coalesce();
}

isl::map concrete(const PdgImpl &g, const isl::map &m) {
    return m.intersect_params(g.context).project_out_all_params().coalesce();
}

namespace {

/* Join the pieces of an isl text `{ A; B }` given one per piece, sorted. */
std::string join_pieces(std::vector<std::string> pieces, const std::string &empty) {
    if (pieces.empty()) return empty;
    for (std::string &p : pieces) {
        // "{ h[t] : 0 <= t <= 7 }" -> "h[t] : 0 <= t <= 7"
        if (p.size() >= 4 && p.compare(0, 2, "{ ") == 0 && p.compare(p.size() - 2, 2, " }") == 0)
            p = p.substr(2, p.size() - 4);
        // A piece without constraints prints as "w[] :  ": keep just "w[]".
        while (!p.empty() && p.back() == ' ') p.pop_back();
        if (!p.empty() && p.back() == ':') p.pop_back();
        while (!p.empty() && p.back() == ' ') p.pop_back();
    }
    std::sort(pieces.begin(), pieces.end());
    std::string out = "{ ";
    for (size_t i = 0; i < pieces.size(); ++i) out += (i ? "; " : "") + pieces[i];
    return out + " }";
}

int64_t val_to_int(const isl::val &v) { return static_cast<int64_t>(v.get_num_si()); }

bool is_box(const isl::set &s, std::vector<std::pair<int64_t, int64_t>> *ranges) {
    unsigned n = unsigned(s.tuple_dim());
    ranges->clear();
    isl_set *box = isl_set_universe(isl_set_get_space(s.get()));
    for (unsigned k = 0; k < n; ++k) {
        isl::val lo = s.dim_min_val(static_cast<int>(k));
        isl::val hi = s.dim_max_val(static_cast<int>(k));
        if (!lo.is_int() || !hi.is_int()) {
            isl_set_free(box);
            return false;
        }
        ranges->push_back({val_to_int(lo), val_to_int(hi)});
        box = isl_set_lower_bound_val(box, isl_dim_set, k, lo.copy());
        box = isl_set_upper_bound_val(box, isl_dim_set, k, hi.copy());
    }
    return isl::manage(box).is_subset(s);
}

std::string describe_box(const std::vector<std::pair<int64_t, int64_t>> &r, const std::vector<std::string> &names) {
    bool point = std::all_of(r.begin(), r.end(), [](const auto &x) { return x.first == x.second; });
    std::string out;
    if (point && r.size() == 1) return names[0] + " = " + std::to_string(r[0].first);
    if (point) {
        std::string lhs = "(", rhs = "(";
        for (size_t k = 0; k < r.size(); ++k) {
            lhs += (k ? ", " : "") + names[k];
            rhs += (k ? ", " : "") + std::to_string(r[k].first);
        }
        return lhs + ") = " + rhs + ")";
    }
    for (size_t k = 0; k < r.size(); ++k)
        out += (k ? ", " : "") + names[k] + " in [" + std::to_string(r[k].first) + ", " + std::to_string(r[k].second) +
               "]";
    return out;
}

}  // namespace

std::string set_to_string(const PdgImpl &g, const isl::set &s) {
    isl::set c = concrete(g, s);
    std::vector<std::string> pieces;
    c.foreach_basic_set([&](isl::basic_set b) { pieces.push_back(isl_text(b)); });
    return join_pieces(pieces, isl_text(c));
}

std::string map_to_string(const PdgImpl &g, const isl::map &m) {
    isl::map c = concrete(g, m);
    std::vector<std::string> pieces;
    c.foreach_basic_map([&](isl::basic_map b) { pieces.push_back(isl_text(b)); });
    return join_pieces(pieces, isl_text(c));
}

std::vector<std::vector<int>> strongly_connected_components(int n, const std::vector<std::vector<int>> &succ) {
    std::vector<int> index(n, -1), low(n, 0), stack;
    std::vector<bool> on(n, false);
    std::vector<std::vector<int>> out;
    int counter = 0;
    std::function<void(int)> visit = [&](int v) {
        index[v] = low[v] = counter++;
        stack.push_back(v);
        on[v] = true;
        for (int w : succ[v]) {
            if (index[w] < 0) {
                visit(w);
                low[v] = std::min(low[v], low[w]);
            } else if (on[w]) {
                low[v] = std::min(low[v], index[w]);
            }
        }
        if (low[v] != index[v]) return;
        std::vector<int> comp;
        int w;
        do {
            w = stack.back();
            stack.pop_back();
            on[w] = false;
            comp.push_back(w);
        } while (w != v);
        std::sort(comp.begin(), comp.end());
        out.push_back(comp);
    };
    for (int v = 0; v < n; ++v)
        if (index[v] < 0) visit(v);
    return out;
}

std::vector<int64_t> first_point(const isl::set &s) {
    isl::set p = s.lexmin();
    std::vector<int64_t> out;
    unsigned n = unsigned(p.tuple_dim());
    for (unsigned k = 0; k < n; ++k) out.push_back(val_to_int(p.dim_min_val(static_cast<int>(k))));
    return out;
}

std::string describe_points(const PdgImpl &g, const isl::set &s, const std::vector<std::string> &names) {
    isl::set c = concrete(g, s);
    if (c.is_empty()) return "no point";
    if (names.empty()) return "the single point";
    std::vector<std::pair<int64_t, int64_t>> ranges;
    if (is_box(c, &ranges)) return describe_box(ranges, names);
    // A union of a few boxes: "t in [0, 2] or t in [4, 7]", ordered by first point.
    std::vector<std::pair<std::vector<int64_t>, std::string>> parts;
    bool all_boxes = true;
    c.foreach_basic_set([&](isl::basic_set b) {
        isl::set bs(b);
        std::vector<std::pair<int64_t, int64_t>> r;
        if (!all_boxes || !is_box(bs, &r)) {
            all_boxes = false;
            return;
        }
        std::string d = describe_box(r, names);
        if (names.size() > 1) d = "(" + d + ")";
        parts.push_back({first_point(bs), d});
    });
    if (all_boxes && !parts.empty() && parts.size() <= 4) {
        std::sort(parts.begin(), parts.end());
        std::string out;
        for (size_t i = 0; i < parts.size(); ++i) out += (i ? " or " : "") + parts[i].second;
        return out;
    }
    return set_to_string(g, rename_set_dims(s, names));
}

std::vector<long> read_spans(const isl::map &reads) {
    isl_size n = isl_map_dim(reads.get(), isl_dim_out);
    std::vector<long> spans(n > 0 ? n : 0, 0);
    for (isl_size k = 0; k < n; ++k) {
        isl_map *one = isl_map_project_out(reads.copy(), isl_dim_out, k + 1, n - k - 1);
        one = isl_map_project_out(one, isl_dim_out, 0, k);  // c -> p_k
        isl_pw_multi_aff *max = isl_map_lexmax_pw_multi_aff(isl_map_copy(one));
        isl_pw_multi_aff *min = isl_map_lexmin_pw_multi_aff(one);
        isl_pw_aff *hi = isl_pw_multi_aff_get_pw_aff(max, 0);  // __isl_keep
        isl_pw_aff *lo = isl_pw_multi_aff_get_pw_aff(min, 0);
        isl_pw_multi_aff_free(max);
        isl_pw_multi_aff_free(min);
        isl_val *v = isl_pw_aff_max_val(isl_pw_aff_sub(hi, lo));
        if (!v || isl_val_is_int(v) != isl_bool_true)
            spans[k] = LONG_MAX;
        else
            spans[k] = isl_val_get_num_si(v);
        isl_val_free(v);
    }
    return spans;
}

}  // namespace trlc
