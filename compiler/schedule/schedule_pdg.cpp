// schedule_pdg — the isl schedule of the statements (issue 3 §2).
//
// Constraints (isl manual, "Scheduling" and "Schedule Constraints"; the TimeRL paper,
// Silvestre & Pietzuch, arXiv 2501.05408, on scheduling the PDG with isl):
// * validity = the flow dependences, plus, per scheduled tensor x, a deallocation
//   statement D_x (instances = x's points without batch dims) that runs after the
//   writer of each point and after every reader of it;
// * coincidence = validity (isl then prefers dims that carry no dependence: parallel /
//   batchable loops), for the fallbacks only (Feautrier, outer coincidence, index-set
//   splitting): the first attempts leave it out.  trlc's parallelism is its batch dims
//   (codegen), not isl's coincident band members, and without it the scheduler's ILPs are
//   smaller: PPO CartPole 4.34 → 3.42 s, REINFORCE 1.27 → 1.02 s, with the same generated
//   source for every sample and the 226 lit programs that compile (measured 2026-11-27);
// * a reader of x through a window of at least kWideRead points along one dim (a replay
//   buffer) gets neither reader → D_x constraint, only its "last element" proximity below:
//   before: D_ob[t] after loss[t'] for t' in [t, t + N - 1], a schedule constant of N - 1
//   that isl's ILP pays for in pivots (N = 10,000: over budget, Feautrier's schedule, two
//   loops, T-point buffers); after: one loop, ob a window of N slots;
// * proximity = writer → D_x and reader → D_x (short live ranges), plus each
//   read in "last element" form: a consumer instance is tied to the lexicographically
//   last producer instance it reads (for a window r[t:min(t+n, T)], r[t+n-1]),
//   with min/max clamps dropped so the relation is one affine piece.  The exact
//   window relation as proximity keeps acting and learning in two loops (O(T)
//   storage); this form interleaves them (O(n)).
// * isl options: schedule_serialize_sccs = 0, schedule_whole_component = 0,
//   schedule_separate_components = 1, schedule_maximize_band_depth = 0.
// * Each of isl's scheduling ILPs (isl_tab_basic_set_non_trivial_lexmin) runs under an
//   operation budget of kIlpOperations tableau pivots (isl_ctx_set_max_operations),
//   reset per ILP.  At some sizes one ILP runs away: REINFORCE with I = 3 iterations
//   spends hours in one ILP over a merged cluster of 39 statements, ~3 ms a pivot,
//   while every ILP of the samples and lit programs takes at most 5,405 pivots
//   (a budget for the whole scheduler cannot tell them apart: the samples spend 7M
//   cheap pivots in total, the runaway spends 370k before it starts).  An attempt
//   over its budget gives way to Feautrier's algorithm, then to
//   schedule_outer_coincidence = 1.  Pivots, not seconds: the schedule is a function of
//   the program and the flags (and isl's version), never of the machine's speed.
// * the outer band first (schedule/outer_band.h, --outer-band): trlc fixes the outermost loop
//   at the program's outer dim and isl schedules one outer time's statements under the
//   constraints above restricted to it (PPO CartPole 3.6 s -> 0.55 s); isl schedules the whole
//   program, as described here, when no dim can be that band.
// Negative coefficients come for free: `ret[t]` reading `ret[t+1]` is scheduled
// at time -t (the loop runs backwards).  The D_x statements are dropped from the
// final schedule (they do nothing at run time; the memory plan computes live
// ranges from reads and schedule_map).
//
// --load-schedule=FILE replaces isl's scheduler by a schedule tree in isl's YAML
// (what --emit=schedule prints).  It must cover every statement instance and
// respect every flow dependence (producer time lexicographically before consumer
// time), else "loaded schedule violates dependence ...".
#include <dlfcn.h>

#include <climits>
#include <optional>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <isl/options.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/vec.h>

#include "pdg/pdg_impl.h"
#include "schedule/clamp_split.h"
#include "schedule/outer_band.h"
#include "schedule/schedule_cache.h"
#include "schedule/schedule_impl.h"
#include "support/time_passes.h"

namespace trlc {
namespace {

/* The tableau pivots one scheduling ILP may take (isl counts one operation per pivot).
 * The largest ILP of the samples at their sizes and of the lit programs takes 5,405
 * pivots (lit memplan/reinforce-mc; REINFORCE with I = 5 and T = 40: 8,808, 15 s); the
 * runaway one of REINFORCE with I = 3 (177 variables, 655 constraints) takes ~3 ms a
 * pivot, so reaching the budget costs it ~30 s of CPU. */
constexpr unsigned long kIlpOperations = 10000;

/* A read whose window spans at least this many points along one producer dim (a replay
 * buffer, ob[t-N+1:t+1]) gets no deallocation constraint (file comment): it would ask
 * isl for a schedule constant of N - 1 (D_ob[t] after the read at t + N - 1), and the
 * pivots of isl's ILPs grow with that constant — the DQN sample (N = 10,000) ran over the
 * budget above and fell back to Feautrier's schedule, which moved acting and learning
 * into separate loops with T-point buffers; with N = 2,000 it still scheduled in 0.6 s.
 * The widest window of the other samples and lit programs spans 999 points
 * (memplan/reinforce-mc), so their schedules do not change. */
constexpr long kWideRead = 1024;

/* The budget in force while compute() runs isl's scheduler (0: none), and whether an
 * ILP ran out of it since the last reset. */
unsigned long g_ilp_budget = 0;
bool g_ilp_over_budget = false;

}  // namespace
}  // namespace trlc

struct isl_trivial_region;

/* isl's scheduler solves each of its ILPs with this function of libisl (internal, exported).
 * It runs libisl's own under the per-ILP budget above: operations reset to 0,
 * max_operations = g_ilp_budget; past it isl fails the ILP with isl_error_quota and the
 * scheduler returns null.  Against a shared libisl (the system's), isl_scheduler.c calls it
 * through the PLT, so a definition of that name in the executable takes its place and finds
 * libisl's with dlsym(RTLD_NEXT).  Against the static one tools/setup.sh builds
 * (TRLC_ISL_STATIC), the linker's --wrap=isl_tab_basic_set_non_trivial_lexmin sends
 * isl_scheduler.o's calls to __wrap_… and __real_… names libisl's (CMakeLists.txt). */
#if defined(TRLC_ISL_STATIC)
#define TRLC_ILP_WRAPPER __wrap_isl_tab_basic_set_non_trivial_lexmin
extern "C" isl_vec *__real_isl_tab_basic_set_non_trivial_lexmin(isl_basic_set *bset, int n_op, int n_region,
                                                                struct isl_trivial_region *region,
                                                                int (*conflict)(int con, void *user), void *user);
#else
#define TRLC_ILP_WRAPPER isl_tab_basic_set_non_trivial_lexmin
#endif
extern "C" isl_vec *TRLC_ILP_WRAPPER(isl_basic_set *bset, int n_op, int n_region, struct isl_trivial_region *region,
                                     int (*conflict)(int con, void *user), void *user) {
    using Fn = isl_vec *(*)(isl_basic_set *, int, int, struct isl_trivial_region *, int (*)(int, void *), void *);
#if defined(TRLC_ISL_STATIC)
    static Fn real = &__real_isl_tab_basic_set_non_trivial_lexmin;
#else
    static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "isl_tab_basic_set_non_trivial_lexmin"));
#endif
    TRLC_ASSERT(real) << "libisl has no isl_tab_basic_set_non_trivial_lexmin to wrap";
    if (trlc::g_ilp_budget == 0 || !bset) return real(bset, n_op, n_region, region, conflict, user);
    isl_ctx *ctx = isl_basic_set_get_ctx(bset);
    unsigned long outer = isl_ctx_get_max_operations(ctx);
    isl_ctx_reset_operations(ctx);
    isl_ctx_set_max_operations(ctx, trlc::g_ilp_budget);
    isl_vec *sol = real(bset, n_op, n_region, region, conflict, user);
    if (!sol && isl_ctx_last_error(ctx) == isl_error_quota) trlc::g_ilp_over_budget = true;
    isl_ctx_set_max_operations(ctx, outer);
    isl_ctx_reset_operations(ctx);
    return sol;
}

namespace trlc {

namespace {

isl::map rename_out(isl::map m, const std::string &name) {
    return isl::manage(isl_map_set_tuple_name(m.release(), isl_dim_out, name.c_str()));
}

/* The "last element" form of a dependence p → c: each c instance tied to the lexmax
 * p instance it reads, as a single affine piece when the lexmax is piecewise
 * (pieces from clamps: keep the piece with the most consumer instances). */
isl::map last_element(const isl::map &rel) {
    isl::map last = rel.reverse().lexmax().coalesce();  // c -> p
    if (last.n_basic_map() <= 1) return last.reverse();
    isl::basic_map best;
    size_t best_size = 0;
    last.foreach_basic_map([&](isl::basic_map bm) {
        isl::set d = isl::map(bm).domain();
        isl::val card = isl::manage(isl_set_count_val(d.get()));  // __isl_keep set
        size_t n = card.is_int() ? static_cast<size_t>(card.get_num_si()) : 0;
        if (best.is_null() || n > best_size) {
            best = bm;
            best_size = n;
        }
    });
    // Drop the piece's domain constraints (the clamp condition): keep the affine form,
    // restricted to the instances that exist.
    isl::map aff = isl::map(best).reverse();  // p -> c
    isl::map hull = isl::map(aff.affine_hull());
    return hull.intersect_domain(rel.domain()).intersect_range(rel.range());
}

/* The widest extent, along any one producer dim, of the producer points a single consumer
 * instance reads through "rel" (p → c): 0 for a point read, n - 1 for a window of n points
 * (r[t-n+1:t+1]).  Unbounded or not computable: a huge value. */
long read_span(const isl::map &rel) {
    long widest = 0;
    for (long k : read_spans(rel.reverse())) widest = std::max(widest, k);
    return widest;
}

/* Scheduler options.  "bounded": schedule coefficients in [-1, 1] — the dims of a
 * .trl program step by one, so unit coefficients (identity, shifts, unit skews)
 * suffice for nearly every program, and the bound keeps isl's ILPs small (the
 * PPO-shaped benchmark: minutes → seconds); compute() retries unbounded when no
 * bounded schedule exists.  "feautrier": Feautrier's algorithm (compute()'s first
 * fallback when an ILP runs over its budget); "outer": schedule_outer_coincidence
 * (the last one). */
void set_options(isl::ctx ctx, bool bounded, bool outer = false, bool feautrier = false) {
    isl_ctx *c = ctx.get();
    isl_options_set_schedule_max_coefficient(c, bounded ? 1 : -1);
    isl_options_set_schedule_serialize_sccs(c, 0);
    isl_options_set_schedule_whole_component(c, 0);
    isl_options_set_schedule_separate_components(c, 1);
    isl_options_set_schedule_maximize_band_depth(c, 0);
    isl_options_set_schedule_outer_coincidence(c, outer ? 1 : 0);
    isl_options_set_schedule_algorithm(c, feautrier ? ISL_SCHEDULE_ALGORITHM_FEAUTRIER : ISL_SCHEDULE_ALGORITHM_ISL);
}

/* One run of isl's scheduler on "sc" under the options "set" and the per-ILP budget;
 * "over_budget": an ILP ran out of it (the result is then null).  Timed under "label". */
isl::schedule attempt(const isl::schedule_constraints &sc, const std::string &label, bool *over_budget) {
    isl_ctx *ctx = sc.ctx().get();
    PassTimer timer(label);
    g_ilp_budget = kIlpOperations;
    g_ilp_over_budget = false;
    isl_schedule *raw = isl_schedule_constraints_compute_schedule(sc.copy());
    *over_budget = g_ilp_over_budget;
    g_ilp_budget = 0;
    g_ilp_over_budget = false;
    isl_ctx_reset_error(ctx);
    return raw ? isl::manage(raw) : isl::schedule();
}

/* The subtree at "node" as a schedule over "domain" (taken), with every set node
 * turned into a sequence node in the same child order: isl's AST generator may run
 * the children of a set node in any order, while schedule_map (what the memory plan
 * reads) orders them as listed; a sequence makes both agree.  With "storage" (the
 * statements and dependences of the schedule), each sequence's children are put in
 * storage_order (sequence_order.cpp). */
isl_schedule *rebuild(isl_schedule_node *node, isl_union_set *domain, const Schedule *storage = nullptr) {
    enum isl_schedule_node_type type = isl_schedule_node_get_type(node);
    auto child = [&](int i, isl_union_set *dom) {
        isl_schedule_node *c = isl_schedule_node_get_child(node, i);
        isl_schedule *r = rebuild(c, dom, storage);
        isl_schedule_node_free(c);
        return r;
    };
    if (storage && (type == isl_schedule_node_sequence || type == isl_schedule_node_set)) {
        std::vector<int> order = storage_order(node, *storage);
        return sequence_children(node, domain, child, &order);
    }
    switch (type) {
    case isl_schedule_node_leaf: return isl_schedule_from_domain(domain);
    case isl_schedule_node_filter:
        return child(0, isl_union_set_intersect(domain, isl_schedule_node_filter_get_filter(node)));
    case isl_schedule_node_band:
        return insert_band_like(child(0, domain), isl_schedule_node_band_get_partial_schedule(node), node);
    case isl_schedule_node_sequence:
    case isl_schedule_node_set: return sequence_children(node, domain, child);
    case isl_schedule_node_domain:
    default:
        if (isl_schedule_node_has_children(node) == isl_bool_true) return child(0, domain);
        return isl_schedule_from_domain(domain);
    }
}

isl::schedule sequence_sets(const isl::schedule &s, const Schedule *storage = nullptr) {
    isl_schedule_node *root = isl_schedule_get_root(s.get());
    isl_schedule *r = rebuild(root, isl_schedule_get_domain(s.get()), storage);
    isl_schedule_node_free(root);
    return isl::manage(r);
}

/* "sched" (taken; deallocation statements dropped, set nodes made sequences, each
 * sequence's children in storage_order) as impl().schedule, its schedule_map, and the loop
 * nest (build_loop_nest: throws AstOrderError when isl's AST of it breaks a flow dependence;
 * isl's own child order is tried before giving up on "sched"). */
void finish(Schedule &s, isl::schedule sched) {
    ScheduleImpl &im = s.impl();
    isl::schedule plain = sequence_sets(isl::manage(isl_schedule_intersect_domain(sched.release(), im.domain.copy())));
    isl::schedule ordered;
    {
        PassTimer timer("sequence order (readers before writers)");
        ordered = sequence_sets(plain, &s);
    }
    for (const isl::schedule &candidate : {ordered, plain}) {
        im.schedule = candidate;
        im.schedule_map = im.schedule.get_map().intersect_domain(im.domain).coalesce();
        // Self-check: every flow pair is ordered in time (a loaded schedule was checked
        // with a diagnostic; isl's own result must satisfy this by construction).
        isl::map bad = first_unordered(im.flow, im.schedule_map);
        TRLC_ASSERT(bad.is_null()) << "schedule violates a flow dependence: " << isl_text(bad);
        PassTimer timer("loop nest (isl AST, order checked)");
        try {
            build_loop_nest(s);
            return;
        } catch (const AstOrderError &) {
            if (candidate.get() == plain.get()) throw;
        }
    }
}

/* "sched" (from the schedule cache) schedules every statement instance of "s" and orders every
 * flow dependence: what finish() asserts of isl's own results, checked here so that a damaged
 * cache entry is ignored, never an internal error. */
bool covers_and_orders(const Schedule &s, const isl::schedule &sched) {
    const ScheduleImpl &im = s.impl();
    isl::union_set covered = sched.domain();
    if (!im.domain.is_subset(covered)) return false;
    isl::union_map time = sched.get_map().intersect_domain(im.domain);
    return first_unordered(im.flow, time).is_null();
}

std::string constraints_text(const isl::schedule_constraints &sc) {
    char *text = isl_schedule_constraints_to_str(sc.get());
    std::string out = text ? text : "";
    free(text);
    return out;
}

bool compute(const Pdg &pdg, Schedule &s, const std::string &cache_dir, const std::string &outer_band,
             Diagnostics &diag) {
    ScheduleImpl &im = s.impl();
    isl::ctx ctx = pdg.impl().isl.ctx();
    std::optional<PassTimer> constraints_timer(std::in_place, "constraints (deallocation statements, proximity)");
    isl::union_set domain = im.domain;
    isl::union_map validity = im.flow;
    isl::union_map proximity = isl::union_map::empty(ctx);
    // Deallocation statements, one per tensor (named after its first statement's tensor).
    std::vector<std::string> dname(s.statements.size());
    std::set<std::string> taken;
    for (const Statement &st : s.statements) taken.insert(st.name);
    for (const PdgNode &n : pdg.impl().nodes) taken.insert(n.tuple);
    std::map<int, std::string> tensor_dname;
    for (size_t i = 0; i < s.statements.size(); ++i) {
        const Statement &st = s.statements[i];
        if (st.kind != Statement::Tensor) continue;
        auto it = tensor_dname.find(st.index);
        if (it == tensor_dname.end()) {
            std::string name = "D_" + pdg.impl().nodes.at(st.index).tuple;
            while (taken.count(name)) name += "_";
            taken.insert(name);
            it = tensor_dname.emplace(st.index, name).first;
        }
        dname[i] = it->second;
        isl::map to_d = rename_out(isl::manage(isl_set_identity(im.stmt_domain[i].copy())), dname[i]);
        domain = domain.unite(isl::union_set(to_d.range()));
        validity = validity.unite(isl::union_map(to_d));
        proximity = proximity.unite(isl::union_map(to_d));
    }
    for (const FlowDep &d : im.deps) {
        if (dname[d.src].empty()) continue;
        if (read_span(d.rel) >= kWideRead) {
            proximity = proximity.unite(isl::union_map(last_element(d.rel)));
            continue;
        }
        isl::map reader_to_d = rename_out(d.rel.reverse(), dname[d.src]);
        validity = validity.unite(isl::union_map(reader_to_d));
        proximity = proximity.unite(isl::union_map(reader_to_d));
        proximity = proximity.unite(isl::union_map(last_element(d.rel)));
    }
    isl::schedule_constraints sc =
        isl::schedule_constraints::on_domain(domain).set_validity(validity).set_coincidence(validity).set_proximity(
            proximity);
    constraints_timer.reset();
    // Bounded coefficients, then unbounded when no bounded schedule exists; an attempt
    // with an ILP over its budget gives way to Feautrier's algorithm (any valid schedule,
    // fast; it may keep more live), then to the outer-coincidence options.  Each schedule
    // found is accepted only when the loop nest isl's AST generator makes of it runs the
    // flow dependences in order (finish, ast_order.cpp); otherwise the next attempt of the
    // same chain (Feautrier, then outer coincidence) is tried.  Feautrier before outer
    // coincidence: on REINFORCE with I = 3 the outer-coincidence schedule (strided, skewed
    // loops) is valid, but isl's AST generator emits mask_0(i, t) before fin_1(i, 0)
    // although the schedule map orders them the other way (session notes s6-isl-ast-order,
    // s7-isl-bug-report.md); the Feautrier schedule's loop nest is in order.
    std::string ast_wrong;  // the first schedule whose loop nest breaks a dependence
    auto accept = [&](const isl::schedule &sched) {
        if (sched.is_null()) return false;
        try {
            finish(s, sched);
            return true;
        } catch (const AstOrderError &e) {
            if (ast_wrong.empty()) ast_wrong = e.what();
            return false;
        }
    };
    bool over = false;
    // Without coincidence constraints first (file comment).
    isl::schedule_constraints plain =
        isl::schedule_constraints::on_domain(domain).set_validity(validity).set_proximity(proximity);
    set_options(ctx, true);
    // The schedule cache (schedule_cache.h): the constraints of both kinds of attempt below
    // are the key; the clamp-splitting fallback's results are not cached.
    std::string cache_key;
    if (!cache_dir.empty()) {
        PassTimer timer("schedule cache lookup");
        cache_key = schedule_cache_key("outer band: " + outer_band + "\n" + constraints_text(plain) + "\n" +
                                       constraints_text(sc));
        isl::schedule hit = fetch_cached_schedule(cache_dir, cache_key, ctx);
        if (!hit.is_null() && covers_and_orders(s, hit) && accept(hit)) return true;
    }
    auto store = [&](const isl::schedule &sched) {
        if (!cache_key.empty()) store_cached_schedule(cache_dir, cache_key, sched);
    };
    isl::schedule sched;
    bool done = false;
    // The outer band first (outer_band.h): isl then schedules one outer time's statements.  A
    // candidate's failure (no such band, no inner schedule, a result the checks refuse) leaves
    // no trace: isl schedules the whole program as before.
    std::vector<std::string> outer_dims;
    if (outer_band == "auto")
        outer_dims = outer_band_candidates(domain);
    else if (outer_band != "none")
        outer_dims = {outer_band};
    std::set<std::string> records;  // emits and saves
    for (const Statement &st : s.statements)
        if (st.kind != Statement::Tensor) records.insert(st.name);
    for (const std::string &dim : outer_dims) {
        std::string why_not;
        isl::schedule outer = schedule_under_outer_band(domain, validity, proximity, dim, attempt, records, &why_not);
        std::string wrong = ast_wrong;
        if (!outer.is_null()) {
            PassTimer timer("outer band's schedule checked (every flow dependence in order)");
            if (!covers_and_orders(s, outer)) why_not = "a dependence runs backwards under it";
        }
        if (why_not.empty() && !accept(outer)) why_not = "isl's loop nest of it breaks a dependence";
        ast_wrong = wrong;
        if (why_not.empty()) {
            sched = outer;
            done = true;
            break;
        }
        if (outer_band != "auto")
            diag.warning(Loc{}, "--outer-band " + dim + ": " + why_not + "; isl schedules the whole program");
    }
    if (!done) {
        sched = attempt(plain, "isl scheduler (coefficients in [-1, 1])", &over);
        done = accept(sched);
    }
    if (!done && sched.is_null() && !over) {
        set_options(ctx, false);
        sched = attempt(plain, "isl scheduler (unbounded coefficients)", &over);
        done = accept(sched);
    }
    bool gave_up = over;
    if (!done && (over || !ast_wrong.empty())) {
        std::string why = over ? "an ILP ran over its budget" : "isl's AST breaks a dependence";
        set_options(ctx, false, false, true);
        sched = attempt(sc, "isl scheduler (Feautrier: " + why + ")", &over);
        gave_up = over;
        done = accept(sched);
        if (!done) {
            set_options(ctx, true, true);
            sched = attempt(sc, "isl scheduler (outer coincidence: Feautrier's failed)", &over);
            gave_up = gave_up || over;
            done = accept(sched);
        }
    }
    set_options(ctx, true);
    if (done) store(sched);
    if (!done && !gave_up && ast_wrong.empty())  // index-set splitting (schedule/clamp_split.h)
        return schedule_split_clamps(pdg, s, sc, set_options, attempt, accept, diag);
    if (!done && !ast_wrong.empty())
        internal_error(ast_wrong + "; no other schedule tried has a loop nest in order", __FILE__, __LINE__);
    if (!done) {
        if (gave_up)
            diag.error("no schedule found: isl's scheduler ran over its budget of " + std::to_string(kIlpOperations) +
                       " pivots per ILP under every set of options tried");
        else
            diag.error("no schedule found: isl could not order the statements under their "
                       "dependences (a dependence cycle within one statement instance?)");
        return false;
    }
    return true;
}

/* Report the first violated dependence of a loaded schedule. */
bool check_loaded(const Pdg &pdg, Schedule &s, Diagnostics &diag) {
    ScheduleImpl &im = s.impl();
    const PdgImpl &g = pdg.impl();
    isl::union_set covered = im.schedule.domain();
    if (!im.domain.is_subset(covered)) {
        isl::union_set missing = im.domain.subtract(covered);
        diag.error("loaded schedule does not cover every statement instance: missing " +
                   sorted_union_text(isl_text(missing.coalesce())));
        return false;
    }
    im.schedule = isl::manage(isl_schedule_intersect_domain(im.schedule.release(), im.domain.copy()));
    isl::union_map time = im.schedule.get_map().intersect_domain(im.domain);
    for (const FlowDep &d : im.deps) {
        // Pairs (p, c) whose times are not p ≺ c.
        isl::union_map tt = isl::union_map(d.rel).apply_domain(time).apply_range(time);
        isl::union_map bad_times = isl::union_map::empty(g.isl.ctx());
        tt.foreach_map([&](isl::map m) {
            isl::space sp = m.space().domain();
            isl::map ge = isl::manage(isl_map_lex_ge(sp.release()));
            bad_times = bad_times.unite(isl::union_map(m.intersect(ge)));
        });
        if (bad_times.is_empty()) continue;
        isl::union_map bad = isl::union_map(d.rel).intersect(time.apply_range(bad_times).apply_range(time.reverse()));
        isl::map example = isl::map(isl::manage(isl_map_from_union_map(bad.release())).sample());
        const PdgEdge &e = g.edges.at(d.edge);
        diag.error("loaded schedule violates dependence " + sorted_union_text(isl_text(d.rel)) + ": " +
                   isl_text(example).substr(2, isl_text(example).size() - 4) +
                   " runs the consumer no later than the producer");
        diag.note(e.loc, "the read " + e.text + " is here");
        return false;
    }
    return true;
}

bool load(const ScheduleOptions &opts, const Pdg &pdg, Schedule &s, Diagnostics &diag) {
    std::ifstream in(opts.load_schedule);
    if (!in) {
        diag.error("cannot open schedule file '" + opts.load_schedule + "'");
        return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    isl::schedule sched;
    try {
        sched = isl::schedule(pdg.impl().isl.ctx(), text);
    } catch (const isl::exception &) {}
    if (sched.is_null()) {
        diag.error("cannot read schedule file '" + opts.load_schedule +
                   "': not an isl schedule tree (YAML, as printed by --emit=schedule)");
        return false;
    }
    s.impl().schedule = sched;
    return check_loaded(pdg, s, diag);
}

}  // namespace

bool build_schedule(const ir::Program &prog, const Pdg &pdg, const ScheduleOptions &opts, Diagnostics &diag,
                    Schedule &s) {
    if (opts.load_schedule.empty()) return compute(pdg, s, opts.cache_dir, opts.outer_band, diag);
    if (!load(opts, pdg, s, diag)) return false;
    try {
        finish(s, s.impl().schedule);
    } catch (const AstOrderError &e) {
        internal_error(e.what(), __FILE__, __LINE__);
    }
    return true;
}

}  // namespace trlc
