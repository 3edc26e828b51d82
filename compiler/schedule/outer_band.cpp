// outer_band — the outermost schedule band fixed by the program's outer dim, isl's scheduler
// below it (issue 14 §1: a scheduling cost that grows with the program).
//
// What: an RL program is one loop over iterations (or time steps) around everything else, and
// every schedule isl found for the samples starts with that band: each statement's outer dim
// plus a constant.  Scheduled whole, isl's clustering still merges one iteration's statements
// into ever larger clusters and solves an ILP for each merge: PPO CartPole's largest has 227
// variables and takes 1.5 of the scheduler's 3.6 s.  This file fixes the outer band itself,
//     sigma(S[.., d, ..]) = d + shift_S        (S without the dim d: sigma = shift_S),
// with the least non-negative shifts that order every validity pair: one difference
// constraint per validity relation, shift_dst - shift_src >= -min(d_dst - d_src), solved by
// longest paths (Bellman-Ford; a positive cycle: no such band).  Then isl schedules what runs
// at one outer time: the validity and proximity pairs with equal sigma, the dim projected out
// of every instance.  Its problem falls apart into the phases of one iteration (rollout,
// advantages, minibatch loop), which isl schedules one component at a time.  The schedule is
// the band sigma over isl's inner schedule pulled back onto the full instances.  Projecting
// the dim out may relate instances of different outer times: the inner problem then has more
// validity pairs than needed, never fewer, so its order is valid at every outer time.
// Proximity pairs carried by the band (a value read at the next iteration) do not reach isl;
// adding them as inner proximity was measured and made PPO's arena larger (416 KB vs 351 KB).
//
// When: schedule_pdg.cpp's compute(), before isl schedules the whole program, for the dims of
// outer_band_candidates in turn; a result must pass the checks isl's own results pass (every
// flow dependence ordered, the loop nest in order).  When no candidate gives a schedule — a
// loop that runs backwards (ret[t] = r[t] + g * ret[t+1]), a dim that is not outermost in
// every recurrence (transformer_decode's layer dim r), a distance without a bound — isl
// schedules the whole program as before.  Not on --load-schedule trees.
//
// Before/after (samples/ppo_cartpole.trl, one core): isl's scheduler 3.57 s (ILPs of up to 227
// variables) → 0.55 s; the memory plan's arena 367,888 → 350,736 bytes; the same log bytes.
//     before: isl on { act_0[i, t]; ...; p_1[i, k]; D_p[i, k]; ... } (69 statements + 47 D_x)
//     after:  band { S[i, ..] -> [i]; D_p[i, k] -> [i + 1]; save_0[] -> [977] } over isl on
//             { act_0[t]; ...; p_1[k]; D_p[k]; ...; save_0[] } (pairs at the same i only)
#include "schedule/outer_band.h"

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <set>

#include <isl/schedule.h>

#include "support/time_passes.h"

namespace trlc {

namespace {

/** The least value of dim 0 of the one-dim set "s" (taken), or false when it has none (empty,
 *  unbounded). */
bool least(isl::set s, long *out) {
    isl::val v = isl::manage(isl_set_dim_min_val(s.release(), 0));
    if (v.is_null() || !v.is_int()) return false;
    *out = v.get_num_si();
    return true;
}

}  // namespace

std::vector<std::string> outer_band_candidates(const isl::union_set &domain) {
    std::map<std::string, std::pair<int, int>> count;  // name -> (first dim of, dim of)
    domain.foreach_set([&](isl::set st) {
        isl_size n = isl_set_dim(st.get(), isl_dim_set);
        for (isl_size k = 0; k < n; ++k) {
            const char *name = isl_set_get_dim_name(st.get(), isl_dim_set, k);
            if (!name) continue;
            std::pair<int, int> &c = count[name];
            c.first += k == 0;
            c.second += 1;
        }
    });
    std::vector<std::pair<std::pair<int, int>, std::string>> order;
    for (const auto &kv : count) order.push_back({kv.second, kv.first});
    std::sort(order.begin(), order.end(), [](const auto &a, const auto &b) {
        if (a.first != b.first) return a.first > b.first;
        return a.second < b.second;
    });
    std::vector<std::string> out;
    for (const auto &o : order)
        if (out.size() < kOuterBandCandidates) out.push_back(o.second);
    return out;
}

isl::schedule schedule_under_outer_band(const isl::union_set &domain, const isl::union_map &validity,
                                        const isl::union_map &proximity, const std::string &dim,
                                        isl::schedule (*attempt)(const isl::schedule_constraints &sc,
                                                                 const std::string &label, bool *over_budget),
                                        const std::set<std::string> &records, std::string *why_not) {
    why_not->clear();
    isl::ctx ctx = domain.ctx();
    std::optional<PassTimer> timer(std::in_place, "outer band over " + dim + " (constants, pairs at one time)");
    // Per statement: its outer coordinate (S[.., d, ..] -> [d], or S[..] -> [0] without the dim)
    // and the projection of its instances onto the inner problem's (S[.., d, ..] -> S[.., ..]).
    std::map<std::string, isl::map> outer, project;
    std::set<std::string> has_dim;
    isl::union_map projection = isl::union_map::empty(ctx);
    domain.foreach_set([&](isl::set st) {
        std::string name = isl_set_get_tuple_name(st.get());
        isl_size n = isl_set_dim(st.get(), isl_dim_set);
        int k = isl_set_find_dim_by_name(st.get(), isl_dim_set, dim.c_str());
        isl_map *id = isl_set_identity(st.copy());
        if (k < 0) {
            project[name] = isl::manage(id);
            projection = projection.unite(isl::union_map(project[name]));
            isl_set *zero = isl_set_read_from_str(ctx.get(), "{ [0] }");
            outer[name] = isl::manage(isl_map_from_domain_and_range(st.copy(), zero));
            return;
        }
        has_dim.insert(name);
        isl_map *inner = isl_map_project_out(isl_map_copy(id), isl_dim_out, k, 1);
        inner = isl_map_set_tuple_name(inner, isl_dim_out, name.c_str());
        project[name] = isl::manage(inner);
        projection = projection.unite(isl::union_map(project[name]));
        isl_map *coord = isl_map_project_out(id, isl_dim_out, k + 1, n - k - 1);
        coord = isl_map_project_out(coord, isl_dim_out, 0, k);
        outer[name] = isl::manage(isl_map_reset_tuple_id(coord, isl_dim_out));
    });
    if (has_dim.empty()) {
        *why_not = "no statement has a dim named " + dim;
        return isl::schedule();
    }
    // shift_dst >= shift_src + need, need = -min(d_dst - d_src) over the relation's pairs.
    struct Constraint {
        std::string src, dst;
        long need;
    };
    std::vector<Constraint> constraints;
    bool unbounded = false;
    validity.foreach_map([&](isl::map m) {
        if (unbounded) return;
        std::string src = isl_map_get_tuple_name(m.get(), isl_dim_in);
        std::string dst = isl_map_get_tuple_name(m.get(), isl_dim_out);
        isl::map coords = m.apply_domain(outer.at(src)).apply_range(outer.at(dst));
        long least_distance = 0;
        if (!least(coords.deltas(), &least_distance)) {
            unbounded = !coords.is_empty();
            return;
        }
        constraints.push_back({src, dst, -least_distance});
    });
    if (unbounded) {
        *why_not = "a dependence's distance along it has no bound";
        return isl::schedule();
    }
    std::map<std::string, long> shift;
    for (const auto &kv : outer) shift[kv.first] = 0;
    bool changed = true;
    for (size_t round = 0; changed && round <= outer.size(); ++round) {
        changed = false;
        for (const Constraint &c : constraints)
            if (shift[c.dst] < shift[c.src] + c.need) {
                shift[c.dst] = shift[c.src] + c.need;
                changed = true;
            }
    }
    if (changed) {  // a positive cycle
        *why_not = "a dependence runs backwards along it (a loop in reverse, or a recurrence through another dim)";
        return isl::schedule();
    }
    // Then each record statement (emit, save) as late as its successors allow (the
    // deallocation statements of what it reads, which have none, stay where the earliest shifts
    // put them): a record runs when what it reads is last needed (forward recurrence: h_1(t)
    // and emit_h(t - 1) in one loop from t = 1, after h_0, instead of guards on both in a loop
    // from 0).  Not tensor statements: moving p[i, k]'s recurrence to the step of its reader
    // w[i+1] ordered the two by isl's constants below the band, which hold at one value of k's
    // bound only, so K stopped being a run-time bound (lit dead-points/recurrence-tail.trl).
    std::map<std::string, bool> has_successor;
    for (const Constraint &c : constraints)
        if (c.src != c.dst) has_successor[c.src] = true;
    std::map<std::string, long> late;
    for (const auto &kv : outer)
        late[kv.first] = has_successor[kv.first] && records.count(kv.first) ? LONG_MAX : shift[kv.first];
    changed = true;
    while (changed) {  // terminates: the earliest shifts satisfy every constraint
        changed = false;
        for (const Constraint &c : constraints) {
            if (c.src == c.dst || late[c.dst] == LONG_MAX) continue;
            if (late[c.src] > late[c.dst] - c.need) {
                late[c.src] = late[c.dst] - c.need;
                changed = true;
            }
        }
    }
    for (const auto &kv : late)
        if (kv.second != LONG_MAX) shift[kv.first] = kv.second;
    isl::union_map sigma = isl::union_map::empty(ctx);
    std::map<std::string, isl::map> time;  // S -> [sigma]
    for (const auto &kv : outer) {
        isl_aff *plus =
            isl_aff_read_from_str(ctx.get(), ("{ [d] -> [(d + " + std::to_string(shift[kv.first]) + ")] }").c_str());
        time[kv.first] = kv.second.apply_range(isl::manage(isl_map_from_aff(plus)));
        sigma = sigma.unite(isl::union_map(time[kv.first]));
    }
    // The pairs isl orders below the band: those at one outer time, projected (relation by
    // relation: the union of all statement pairs at one time would be quadratic).
    auto inner = [&](const isl::union_map &pairs) {
        isl::union_map out = isl::union_map::empty(ctx);
        pairs.foreach_map([&](isl::map m) {
            std::string src = isl_map_get_tuple_name(m.get(), isl_dim_in);
            std::string dst = isl_map_get_tuple_name(m.get(), isl_dim_out);
            isl::map now = m.intersect(time.at(src).apply_range(time.at(dst).reverse()));
            if (!now.is_empty())
                out = out.unite(isl::union_map(now.apply_domain(project.at(src)).apply_range(project.at(dst))));
        });
        return out;
    };
    isl::schedule_constraints sc = isl::schedule_constraints::on_domain(domain.apply(projection))
                                       .set_validity(inner(validity))
                                       .set_proximity(inner(proximity));
    timer.reset();
    bool over = false;
    isl::schedule below = attempt(sc, "isl scheduler (below the outer band over " + dim + ")", &over);
    if (below.is_null()) {
        *why_not = over ? "an ILP of isl's scheduler below it ran over its budget" : "isl finds no schedule below it";
        return below;
    }
    isl_union_pw_multi_aff *pull = isl_union_pw_multi_aff_from_union_map(projection.copy());
    isl_schedule *full = isl_schedule_pullback_union_pw_multi_aff(below.release(), pull);
    full = isl_schedule_insert_partial_schedule(full, isl_multi_union_pw_aff_from_union_map(sigma.copy()));
    // One member, so trivially permutable (what isl marks its own outer band).
    isl_schedule_node *band = isl_schedule_node_child(isl_schedule_get_root(full), 0);
    band = isl_schedule_node_band_set_permutable(band, 1);
    isl_schedule_free(full);
    full = isl_schedule_node_get_schedule(band);
    isl_schedule_node_free(band);
    return isl::manage(full);
}

}  // namespace trlc
