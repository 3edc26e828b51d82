// clamp_split — index-set splitting at clamped reads (Griebl, Feautrier & Lengauer 2000,
// "Index set splitting"), the scheduler's last resort before "no schedule found".
//
// A padded copy `p[u] = ob[max(u - (K - 1), 0)]` read by a window `l[t] = sum(p[t:t+K] ...)`
// of a recurrence over t has no affine schedule: p[u] must run at step u - (K - 1) (l[t]
// reads p[t + K - 1] = ob[t] in step t), but p[0..K-2] read ob[0], so its time would be
// max(u - (K - 1), 0).  Split at the clamp's breakpoint, each piece is affine:
//     p_0[u] : u <= K - 2   reads ob[0]            time 0
//     p_0[u] : u >= K - 1   reads ob[u - (K - 1)]  time u - (K - 1)
// The split is made only for isl's scheduler: every statement with a clamped read that
// changes branch on its instances becomes one statement per piece (named <stmt>_c<k>) in
// the schedule constraints, which are renamed accordingly; the schedule tree found is copied
// back onto the original statements (bands and filters composed with the renaming: copy_tree,
// since isl_schedule_pullback_union_pw_multi_aff refuses two pieces of one statement), each
// of which then has a piecewise schedule.  Statements, reads, dependences and the memory plan are those of
// the program as written, and programs that schedule without a split never come here, so
// their schedules are unchanged.
//
// Rule (deterministic): statements in order; a statement's clamped reads in body order, except
// reads of tensors computed from constants and loads only (they can always run first); each
// read's pieces from pdg clamp_pieces (every min/max of its indices, nested ones too),
// mapped onto the statement's instances; the statement's partition is refined by each read in
// turn while it stays within kClampSplitMaxPieces pieces.  A read whose pieces overlap on the
// instances (its clamp varies along a batch dim, which an instance covers whole) or would
// exceed the cap is not split on; if isl still finds no schedule, the error names it.
#include "schedule/clamp_split.h"

#include <isl/aff.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>

#include <algorithm>
#include <map>
#include <set>

#include "pdg/pdg_impl.h"

namespace trlc {
namespace {

/* A clamped read of one statement: its PDG edge and its pieces. */
struct ClampedRead {
    int edge = -1;
    std::vector<isl::set> points;     // parametric, in the consumer's tensor (emit) space
    std::vector<isl::set> instances;  // the same pieces as statement instances (concrete)
    bool split = false;               // the statement's partition was refined by it
    std::string why_not;              // when not split
};

struct StatementSplit {
    int stmt = -1;
    int node = -1;  // PdgImpl::nodes index
    std::vector<ClampedRead> reads;
    std::vector<isl::set> parts;  // the statement's instances, partitioned (one part: no split)
};

int pdg_node_of(const PdgImpl &g, const Statement &st) {
    for (size_t n = 0; n < g.nodes.size(); ++n) {
        const PdgNode &pn = g.nodes[n];
        bool kind = (st.kind == Statement::Tensor && pn.kind == PdgNode::Tensor) ||
                    (st.kind == Statement::Emit && pn.kind == PdgNode::Emit) ||
                    (st.kind == Statement::Save && pn.kind == PdgNode::Save);
        if (kind && pn.ir_index == st.index) return static_cast<int>(n);
    }
    return -1;
}

std::string tuple_name(const isl::set &s) {
    const char *name = isl_set_get_tuple_name(s.get());
    return name ? name : "";
}

/* True when "sets" are pairwise disjoint and their union is "whole". */
bool is_partition(const std::vector<isl::set> &sets, const isl::set &whole) {
    isl::set all = isl::set::empty(whole.space());
    for (const isl::set &x : sets) {
        if (!all.intersect(x).is_empty()) return false;
        all = all.unite(x);
    }
    return all.is_equal(whole);
}

/* Per PDG node: whether it is computed from constants and loads only (its reads, transitively,
 * end at loads).  Such a tensor can always run first, so a clamped read of it never needs a
 * piecewise time and is not split at. */
std::vector<bool> free_nodes(const PdgImpl &g) {
    std::vector<bool> free(g.nodes.size(), false);
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t n = 0; n < g.nodes.size(); ++n) {
            if (free[n]) continue;
            bool all = true;
            for (const PdgEquation &eq : g.nodes[n].equations)
                for (int e : eq.edges) all = all && free[g.edges.at(e).producer];
            if (all) free[n] = changed = true;
        }
    }
    return free;
}

/* Every statement's clamped reads and its partition, by the rule in the header comment. */
std::vector<StatementSplit> plan_splits(const PdgImpl &g, const Schedule &s) {
    const ScheduleImpl &im = s.impl();
    std::vector<bool> free = free_nodes(g);
    std::vector<StatementSplit> out;
    for (size_t i = 0; i < s.statements.size(); ++i) {
        const Statement &st = s.statements[i];
        StatementSplit sp;
        sp.stmt = static_cast<int>(i);
        sp.node = pdg_node_of(g, st);
        if (sp.node < 0) continue;
        int q = st.kind == Statement::Tensor ? st.equation : 0;
        const PdgNode &node = g.nodes[sp.node];
        if (q < 0 || q >= static_cast<int>(node.equations.size())) continue;
        const isl::set &dom = im.stmt_domain[i];
        isl::map to_inst = im.stmt_points[i].reverse();
        sp.parts = {dom};
        for (int e : node.equations[q].edges) {
            if (free[g.edges.at(e).producer]) continue;
            ClampedRead r;
            r.edge = e;
            r.points = clamp_pieces(g, g.edges.at(e));
            if (r.points.empty()) continue;
            for (const isl::set &p : r.points)
                r.instances.push_back(concrete(g, p).apply(to_inst).intersect(dom).coalesce());
            if (!is_partition(r.instances, dom)) {
                r.why_not = "its clamp varies along a batch dim";
            } else {
                std::vector<isl::set> refined;
                for (const isl::set &part : sp.parts)
                    for (const isl::set &piece : r.instances) {
                        isl::set both = part.intersect(piece).coalesce();
                        if (!both.is_empty()) refined.push_back(both);
                    }
                if (refined.size() > static_cast<size_t>(kClampSplitMaxPieces)) {
                    r.why_not =
                        "splitting at it too would make more than " + std::to_string(kClampSplitMaxPieces) + " pieces";
                } else {
                    r.split = refined.size() > sp.parts.size();
                    if (!r.split) r.why_not = "its branches are those of reads before it";
                    sp.parts = refined;
                }
            }
            sp.reads.push_back(std::move(r));
        }
        if (!sp.reads.empty()) out.push_back(std::move(sp));
    }
    return out;
}

/* Text of the pieces of a clamped read: "u in [0, 1] and u in [2, 7]", ordered by first
 * point. */
std::string describe_pieces(const PdgImpl &g, const ClampedRead &r, const PdgNode &n) {
    std::vector<std::pair<std::vector<int64_t>, std::string>> parts;
    for (const isl::set &p : r.points)
        parts.push_back({first_point(concrete(g, p)), describe_points(g, p, n.dim_names)});
    std::sort(parts.begin(), parts.end());
    std::string out;
    for (size_t k = 0; k < parts.size(); ++k)
        out += (k == 0 ? "" : k + 1 == parts.size() ? " and " : ", ") + parts[k].second;
    return out;
}

/* The error when no schedule exists even split (or nothing could be split). */
void report(const PdgImpl &g, const Schedule &s, const std::vector<StatementSplit> &splits, bool over_budget,
            Diagnostics &diag) {
    std::vector<std::pair<const StatementSplit *, const ClampedRead *>> clamped;
    for (const StatementSplit &sp : splits)
        for (const ClampedRead &r : sp.reads) clamped.push_back({&sp, &r});
    if (clamped.empty()) {
        // A dependence inside one instance can only come from a batch dim (the checks proved
        // the points acyclic); otherwise the order needs a schedule isl cannot express.
        const ScheduleImpl &im = s.impl();
        bool self = false;
        im.flow.foreach_map([&](isl::map m) {
            const char *a = isl_map_get_tuple_name(m.get(), isl_dim_in);
            const char *b = isl_map_get_tuple_name(m.get(), isl_dim_out);
            if (self || !a || !b || std::string(a) != b) return;
            isl::map id = isl::manage(isl_map_identity(isl_map_get_space(m.get())));
            if (!m.intersect(id).is_empty()) self = true;
        });
        if (self)
            diag.error("no schedule found: a statement instance reads a value it computes itself "
                       "(a dependence along a batch dim; try -fno-vectorize)");
        else
            diag.error("no schedule found: isl found no affine schedule that orders the "
                       "statements under their dependences (the checks proved the dependences "
                       "acyclic; the order needs a non-affine schedule)");
        return;
    }
    // The reads left whole (past the cap, along a batch dim) first: the likelier cause.
    std::stable_partition(clamped.begin(), clamped.end(), [](const auto &c) { return !c.second->split; });
    size_t nsplit = 0;
    for (const StatementSplit &sp : splits) nsplit += sp.parts.size() > 1 ? 1 : 0;
    const ClampedRead &first = *clamped.front().second;
    const PdgEdge &fe = g.edges.at(first.edge);
    std::string what = nsplit ? "even with " + std::to_string(nsplit) + " statement" + (nsplit == 1 ? "" : "s") +
                                    " split where its clamped reads change branch"
                              : "and no statement could be split at its clamped reads";
    diag.error(fe.loc, "no schedule found: isl found no affine schedule of the statements under "
                       "their dependences, " +
                           what +
                           "; the dependences are acyclic (checked), "
                           "so a clamped read such as " +
                           fe.text + " may need a piecewise schedule");
    if (over_budget)
        diag.note(fe.loc, "isl's scheduler ran over its budget of pivots per ILP on the split "
                          "statements");
    const PdgNode &fn = g.nodes.at(clamped.front().first->node);
    diag.note(fe.loc, "workaround: " + fe.text + " changes branch between " + describe_pieces(g, first, fn) +
                          (first.split ? "" : " (not split: " + first.why_not + ")") + "; give " + fn.name +
                          " one equation per branch, each with a `when` guard and an "
                          "affine index in place of the clamp, reading the same points");
    const size_t kShown = 6;
    for (size_t k = 1; k < clamped.size() && k < kShown; ++k) {
        const PdgNode &n = g.nodes.at(clamped[k].first->node);
        const ClampedRead &r = *clamped[k].second;
        const PdgEdge &e = g.edges.at(r.edge);
        diag.note(e.loc, "clamped read " + e.text + " of " + n.name + " changes branch between " +
                             describe_pieces(g, r, n) +
                             (r.split ? " (split there)" : " (not split: " + r.why_not + ")"));
    }
    if (clamped.size() > kShown)
        diag.note(fe.loc, std::to_string(clamped.size() - kShown) + " more clamped read" +
                              (clamped.size() - kShown == 1 ? "" : "s") + " not shown");
}

/* A band's partial schedule "mupa" (taken) of the pieces pulled back onto the original
 * statements through "rename" (original -> piece; not taken), simplified against the
 * statements' instances "dom" (not taken): a split statement gets the union of its pieces'
 * schedules, a piecewise schedule. */
isl_multi_union_pw_aff *pull_back_band(isl_multi_union_pw_aff *mupa, isl_union_map *rename, isl_union_set *dom) {
    isl_union_map *m = isl_union_map_from_multi_union_pw_aff(mupa);
    m = isl_union_map_apply_range(isl_union_map_copy(rename), m);
    isl_multi_union_pw_aff *out = isl_multi_union_pw_aff_from_union_map(m);
    out = isl_multi_union_pw_aff_coalesce(out);
    return isl_multi_union_pw_aff_gist(out, isl_union_set_copy(dom));
}

/* A filter "f" (taken) of the pieces pulled back the same way. */
isl_union_set *pull_back_filter(isl_union_set *f, isl_union_map *rename, isl_union_set *dom) {
    f = isl_union_set_apply(f, isl_union_map_reverse(isl_union_map_copy(rename)));
    return isl_union_set_gist(isl_union_set_coalesce(f), isl_union_set_copy(dom));
}

/* Copy the subtree at "src" (the schedule of the pieces) into the leaf "dst" of the tree being
 * built over the original statements; returns the node at dst's position (null on an isl
 * error or a node kind isl's scheduler does not make).  isl_schedule_pullback_union_pw_multi_aff
 * cannot do this: it keeps one part per statement and refuses a second piece. */
isl_schedule_node *copy_tree(isl_schedule_node *src, isl_schedule_node *dst, isl_union_map *rename,
                             isl_union_set *dom) {
    if (!dst) return nullptr;
    switch (isl_schedule_node_get_type(src)) {
    case isl_schedule_node_leaf: return dst;
    case isl_schedule_node_band: {
        isl_size n = isl_schedule_node_band_n_member(src);
        dst = isl_schedule_node_insert_partial_schedule(
            dst, pull_back_band(isl_schedule_node_band_get_partial_schedule(src), rename, dom));
        dst = isl_schedule_node_band_set_permutable(dst, isl_schedule_node_band_get_permutable(src) == isl_bool_true);
        for (isl_size i = 0; i < n; ++i)
            dst = isl_schedule_node_band_member_set_coincident(
                dst, i, isl_schedule_node_band_member_get_coincident(src, i) == isl_bool_true);
        isl_schedule_node *c = isl_schedule_node_get_child(src, 0);
        dst = copy_tree(c, isl_schedule_node_child(dst, 0), rename, dom);
        isl_schedule_node_free(c);
        return dst ? isl_schedule_node_parent(dst) : nullptr;
    }
    case isl_schedule_node_sequence:
    case isl_schedule_node_set: {
        isl_size n = isl_schedule_node_n_children(src);
        isl_union_set_list *filters = isl_union_set_list_alloc(isl_schedule_node_get_ctx(src), n);
        for (isl_size i = 0; i < n; ++i) {
            isl_schedule_node *f = isl_schedule_node_get_child(src, i);
            filters =
                isl_union_set_list_add(filters, pull_back_filter(isl_schedule_node_filter_get_filter(f), rename, dom));
            isl_schedule_node_free(f);
        }
        // A set node becomes a sequence in the same child order (as schedule_pdg does).
        dst = isl_schedule_node_insert_sequence(dst, filters);
        for (isl_size i = 0; dst && i < n; ++i) {
            isl_schedule_node *f = isl_schedule_node_get_child(src, i);
            isl_schedule_node *c = isl_schedule_node_get_child(f, 0);
            dst = isl_schedule_node_child(isl_schedule_node_child(dst, i), 0);
            dst = copy_tree(c, dst, rename, dom);
            if (dst) dst = isl_schedule_node_parent(isl_schedule_node_parent(dst));
            isl_schedule_node_free(c);
            isl_schedule_node_free(f);
        }
        return dst;
    }
    default: isl_schedule_node_free(dst); return nullptr;
    }
}

/* "sched" (the schedule of the pieces) as a schedule over "domain" (taken) of the original
 * statements; null on failure. */
isl_schedule *pull_back(const isl::schedule &sched, isl_union_set *domain, isl_union_map *rename) {
    isl_schedule_node *root = isl_schedule_get_root(sched.get());  // the domain node
    isl_schedule_node *top = isl_schedule_node_get_child(root, 0);
    domain = isl_union_set_coalesce(domain);
    isl_schedule_node *dst = isl_schedule_node_from_domain(isl_union_set_copy(domain));
    dst = copy_tree(top, isl_schedule_node_child(dst, 0), rename, domain);
    isl_union_set_free(domain);
    isl_schedule_node_free(top);
    isl_schedule_node_free(root);
    if (!dst) return nullptr;
    isl_schedule *out = isl_schedule_node_get_schedule(dst);
    isl_schedule_node_free(dst);
    return out;
}

}  // namespace

bool schedule_split_clamps(const Pdg &pdg, const Schedule &s, const isl::schedule_constraints &sc,
                           void (*set_options)(isl::ctx ctx, bool bounded, bool outer, bool feautrier),
                           isl::schedule (*attempt)(const isl::schedule_constraints &sc, const std::string &label,
                                                    bool *over_budget),
                           const std::function<bool(isl::schedule)> &accept, Diagnostics &diag) {
    const PdgImpl &g = pdg.impl();
    isl::ctx ctx = g.isl.ctx();
    std::vector<StatementSplit> splits = plan_splits(g, s);
    bool any = std::any_of(splits.begin(), splits.end(), [](const StatementSplit &sp) { return sp.parts.size() > 1; });
    if (!any) {
        report(g, s, splits, false, diag);
        return false;
    }
    // rename: original instance -> piece instance (identity for the statements not split,
    // deallocation statements included).
    isl::union_set domain = sc.domain();
    std::set<std::string> taken;
    domain.foreach_set([&](isl::set d) { taken.insert(tuple_name(d)); });
    std::map<std::string, const StatementSplit *> by_name;
    for (const StatementSplit &sp : splits)
        if (sp.parts.size() > 1) by_name[s.statements.at(sp.stmt).name] = &sp;
    isl::union_map rename = isl::union_map::empty(ctx);
    domain.foreach_set([&](isl::set d) {
        auto it = by_name.find(tuple_name(d));
        if (it == by_name.end()) {
            rename = rename.unite(isl::union_map(isl::manage(isl_set_identity(d.copy()))));
            return;
        }
        const std::vector<isl::set> &parts = it->second->parts;
        for (size_t k = 0; k < parts.size(); ++k) {
            std::string name = it->first + "_c" + std::to_string(k);
            while (taken.count(name)) name += "_";
            taken.insert(name);
            isl::map m = isl::manage(isl_set_identity(parts[k].intersect(d).release()));
            m = isl::manage(isl_map_set_tuple_name(m.release(), isl_dim_out, name.c_str()));
            rename = rename.unite(isl::union_map(m));
        }
    });
    auto both = [&](const isl::union_map &m) { return m.apply_domain(rename).apply_range(rename); };
    isl::schedule_constraints split = isl::schedule_constraints::on_domain(domain.apply(rename))
                                          .set_validity(both(sc.validity()))
                                          .set_coincidence(both(sc.coincidence()))
                                          .set_proximity(both(sc.proximity()));
    // As compute() does: bounded, then unbounded coefficients; Feautrier's algorithm when an
    // ILP ran over its budget or the loop nest of a schedule found was refused by "accept".
    auto accepted = [&](const isl::schedule &sched) {
        if (sched.is_null()) return false;
        isl_schedule *back = pull_back(sched, domain.copy(), rename.get());
        return back && accept(isl::manage(back));
    };
    bool over = false, done = false;
    set_options(ctx, true, false, false);
    isl::schedule sched = attempt(split, "isl scheduler (index-set split, coefficients in [-1, 1])", &over);
    done = accepted(sched);
    if (!done && sched.is_null() && !over) {
        set_options(ctx, false, false, false);
        sched = attempt(split, "isl scheduler (index-set split, unbounded coefficients)", &over);
        done = accepted(sched);
    }
    if (!done && (over || !sched.is_null())) {
        set_options(ctx, false, false, true);
        sched = attempt(split, "isl scheduler (index-set split, Feautrier)", &over);
        done = accepted(sched);
    }
    set_options(ctx, true, false, false);
    if (done) return true;
    report(g, s, splits, over, diag);
    return false;
}

}  // namespace trlc
