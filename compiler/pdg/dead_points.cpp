// dead_points — the dead-points pass: every tensor equation keeps only the points that an
// output (emit, save) needs, directly or through the tensors that read it (pipeline stage
// "dead-points", after the checks and vectorize; -fno-dead-points turns it off).
//
// Liveness over the PDG, backwards from the outputs, on the parametric isl sets (so the
// run-time loop nest of driver/runtime_bounds.cpp sees the same domains as the schedule):
//   live(output)  = its domain (every point is printed or saved)
//   live(x)       = ∪ over the reads e of x by consumer c:  access_e(live(c))
// taken over the strongly connected components of the read graph, consumers first.  An
// acyclic tensor keeps exactly the points read.  A component with a cycle (a recurrence:
// p[i, k+1] reads p[i, k]) that anything outside reads keeps what outside reads ask for and
// what its own kept points read, taken at every step of each member's outer dim
// (trim_unread_tails: a greatest fixpoint from the whole domains), so an unread tail inside
// each step goes and the outer dim, whose bound may change at run time, stays whole.  A
// tensor (or cycle) that no other tensor and no output reads is kept whole (it is the result
// a --emit or a test shows).  Each equation's effective domain is intersected with its
// tensor's live points, and the accesses of its reads with its new effective domain.
//
// Example (samples/ppo_cartpole.trl): the minibatch loss mbloss[i, k] is defined for the 16
// updates k of every iteration, but only `emit "train"[i] { loss: mbloss[i, KP-2] }` reads it
// (its gradient is computed by the adjoint tensors from saved forward values), so
//   before: { mbloss[i, k] : 0 <= i < I and 0 <= k <= 15 }
//   after:  { mbloss[i, k] : 0 <= i < I and k = 15 }
// and the loss kernel runs once per iteration instead of 16 times.  Its update loop
// p[i, k+1] = adam(p[i, k], ...) defines p up to k = KP, but net[i+1] reads p[i, KP-1]: the
// last update of every iteration, and the gradient at k = KP-1 that only it reads, are an
// unread tail of the cycle through net:
//   before: { tuple__p__o_[i, k] : 0 <= i < I and 0 < k <= 17 }
//   after:  { tuple__p__o_[i, k] : 0 <= i < I and 0 < k <= 16 }
// so one Adam step per iteration is not computed, and p and o keep one point each, not two.
#include "pdg/pdg_impl.h"

namespace trlc {

namespace {

/** "d" (points of "x") counted at every value of position j: { x[.., c_j, ..] in x's domain
 *  : x[.., c'_j, ..] in d for some c'_j }. */
isl::set along(const isl::set &d, const PdgNode &x, unsigned j) {
    isl::set wide = isl::manage(isl_set_project_out(d.copy(), isl_dim_set, j, 1));
    wide = isl::manage(isl_set_insert_dims(wide.release(), isl_dim_set, j, 1));
    wide = isl::manage(isl_set_set_tuple_id(wide.release(), isl_set_get_tuple_id(x.domain.get())));
    return wide.intersect(x.domain);
}

/** What the trimming of a cycle keeps whole, per tensor node: its first position that is not a
 *  batch axis (an iteration or time dim; -1: none).  Its bound is the one a run-time loop nest
 *  changes: a tail at the end of it would make the kept points follow the compiled value (and
 *  isl schedules a statement left with one last point at a constant time), so `--bound I=`
 *  would be lost; the tails inside each of its steps go. */
std::vector<int> outer_positions(const ir::Program &prog, const std::vector<bool> &batch_dims, const PdgImpl &g) {
    std::vector<int> out(g.nodes.size(), -1);
    for (size_t v = 0; v < g.nodes.size(); ++v) {
        const PdgNode &x = g.nodes[v];
        if (x.kind != PdgNode::Tensor || x.is_load) continue;
        const std::vector<int> &dims = prog.tensors.at(x.ir_index).dims;
        for (size_t j = 0; j < dims.size() && out[v] < 0; ++j)
            if (dims[j] >= static_cast<int>(batch_dims.size()) || !batch_dims[dims[j]]) out[v] = static_cast<int>(j);
    }
    return out;
}

/** What consumer points "live_consumer" of edge "ed" read, as a cycle's trimming counts it:
 *  along the whole of any position the access fixes to a constant c within one of the compiled
 *  value v of the position's bound (`save net[I]` is net[977] in the IR at I = 977; the
 *  run-time loop nest reads such a constant as c - v + I, runtime_loop_nest.cpp: shift_access). */
isl::set demand_at_every_bound(const ir::Program &prog, const PdgImpl &g, const PdgEdge &ed,
                               const isl::set &live_consumer) {
    isl::set d = ed.access.intersect_domain(live_consumer).range();
    const PdgNode &pn = g.nodes.at(ed.producer);
    if (pn.kind != PdgNode::Tensor || pn.is_load) return d;
    const std::vector<int> &dims = prog.tensors.at(pn.ir_index).dims;
    for (size_t j = 0; j < dims.size(); ++j) {
        auto v = prog.bounds.find(prog.dims.at(dims[j]).bound_name);
        if (v == prog.bounds.end() || v->second < 2) continue;
        isl_val *c = isl_map_plain_get_val_if_fixed(ed.access.get(), isl_dim_out, static_cast<unsigned>(j));
        const bool fixed = c && isl_val_is_int(c) == isl_bool_true;
        const int64_t cv = fixed ? isl_val_get_num_si(c) : 0;
        isl_val_free(c);
        if (fixed && cv >= v->second - 1 && cv <= v->second + 1) d = along(d, pn, static_cast<unsigned>(j));
    }
    return d.coalesce();
}

/** The cycle "members" (one strongly connected component, read from outside) keeps the greatest
 *  fixpoint of
 *    live(x) = domain(x) ∩ W_x(demand(x) ∪ ∪ over reads e of x inside the cycle: access_e(live(c)))
 *  instead of every point, where W_x counts a set along the whole of x's outer position
 *  (outer_positions).  Iterating from the whole domains, a round drops the points that nothing
 *  outside asks for and no kept point of the cycle reads, at no step of the outer dim, so an
 *  unread tail inside each step (PPO's update p[i, KP] after the last one read, and the
 *  gradient only it read) goes one link per round.  Each round keeps every point a kept point
 *  reads (the sets only shrink), so stopping early, at kMaxRounds or when a round costs more
 *  than kMaxOps isl operations, leaves a safe superset.  The sets are parametric (the run-time
 *  loop nest of driver/runtime_bounds.cpp uses them at other bound values); the fixpoint is
 *  judged at the context's values, where PPO CartPole's cycle of 47 tensors converges in 5
 *  rounds. */
void trim_unread_tails(const PdgImpl &g, const std::vector<int> &members, const std::vector<int> &comp,
                       const std::vector<std::vector<int>> &readers, const std::vector<std::vector<int>> &reads,
                       const std::vector<int> &outer, const std::vector<isl::set> &demand,
                       std::vector<isl::set> &live) {
    constexpr int kMaxRounds = 32;
    constexpr unsigned long kMaxOps = 2000000;
    // A member is recomputed when a reader of it inside the cycle lost points in the last round
    // (all of them in the first): a set computed from larger readers' sets is still safe.
    std::vector<char> dirty(g.nodes.size(), 0);
    for (int v : members) dirty[v] = 1;
    for (int round = 0; round < kMaxRounds; ++round) {
        std::vector<std::pair<int, isl::set>> next;
        const bool ok = with_operation_budget(g.isl.ctx().get(), kMaxOps, [&] {
            for (size_t k = 0; k < members.size(); ++k) {
                const int v = members[k];
                const PdgNode &x = g.nodes[v];
                if (!dirty[v] || x.kind != PdgNode::Tensor || x.is_load) continue;
                isl::set d = demand[k];
                for (int e : readers[v]) {
                    const PdgEdge &ed = g.edges[e];
                    if (comp[ed.consumer] == comp[v])
                        d = d.unite(ed.access.intersect_domain(live[ed.consumer]).range());
                }
                if (outer[v] >= 0) d = along(d, x, static_cast<unsigned>(outer[v]));
                d = d.intersect(live[v]).coalesce();
                // Changes for parameter values outside the context (a symbolic bound beside a
                // constant) would go on for ever: only points at the context's values count.
                if (concrete(g, d).is_equal(concrete(g, live[v]))) continue;
                next.emplace_back(v, d);
            }
        });
        if (!ok || next.empty()) return;
        std::fill(dirty.begin(), dirty.end(), 0);
        for (auto &[v, d] : next) {
            live[v] = d;
            for (int e : reads[v])
                if (comp[g.edges[e].producer] == comp[v]) dirty[g.edges[e].producer] = 1;
        }
    }
}

}  // namespace

int restrict_to_needed_points(const ir::Program &prog, const std::vector<bool> &batch_dims, Pdg &pdg) {
    PdgImpl &g = pdg.impl();
    const size_t n = g.nodes.size();
    std::vector<std::vector<int>> readers(n), reads(n);  // edge indices by producer / consumer
    for (size_t e = 0; e < g.edges.size(); ++e) {
        readers.at(g.edges[e].producer).push_back(static_cast<int>(e));
        reads.at(g.edges[e].consumer).push_back(static_cast<int>(e));
    }
    // Components over consumer -> producer: each completes after every component it reads,
    // so the reverse order has consumers first.
    std::vector<std::vector<int>> succ(n);
    for (size_t v = 0; v < n; ++v)
        for (int e : reads[v]) succ[v].push_back(g.edges[e].producer);
    std::vector<std::vector<int>> comps = strongly_connected_components(static_cast<int>(n), succ);
    std::vector<int> comp(n, -1);
    for (size_t c = 0; c < comps.size(); ++c)
        for (int v : comps[c]) comp[v] = static_cast<int>(c);

    std::vector<isl::set> live(n);
    std::vector<int> outer;  // outer_positions, when a cycle is trimmed
    for (auto c = comps.rbegin(); c != comps.rend(); ++c) {
        bool cyclic = c->size() > 1, read_outside = false;
        std::vector<isl::set> demand;
        for (int v : *c) {
            const PdgNode &x = g.nodes[v];
            isl::set d = x.domain.subtract(x.domain);  // empty, in x's space
            for (int e : readers[v]) {
                const PdgEdge &ed = g.edges[e];
                if (comp[ed.consumer] == comp[v]) {
                    cyclic = true;
                    continue;
                }
                read_outside = true;
                d = d.unite(ed.access.intersect_domain(live[ed.consumer]).range());
            }
            demand.push_back(d.coalesce());
        }
        bool trim = false;  // a cycle that outside reads ask points of: its unread tails go (below)
        if (cyclic && read_outside)
            for (const isl::set &d : demand) trim = trim || !concrete(g, d).is_empty();
        for (size_t k = 0; k < c->size(); ++k) {
            int v = (*c)[k];
            const PdgNode &x = g.nodes[v];
            bool whole = x.kind != PdgNode::Tensor || x.is_load || !read_outside;
            if (whole || trim)
                live[v] = x.domain;
            else if (cyclic)
                live[v] = x.domain.subtract(x.domain);  // nothing outside needs it
            else
                live[v] = demand[k];
        }
        if (trim) {
            std::vector<isl::set> outside;  // demand, constants at a bound's value widened
            for (int v : *c) {
                isl::set d = g.nodes[v].domain.subtract(g.nodes[v].domain);
                for (int e : readers[v])
                    if (comp[g.edges[e].consumer] != comp[v])
                        d = d.unite(demand_at_every_bound(prog, g, g.edges[e], live[g.edges[e].consumer]));
                outside.push_back(d.coalesce());
            }
            if (outer.empty()) outer = outer_positions(prog, batch_dims, g);
            trim_unread_tails(g, *c, comp, readers, reads, outer, outside, live);
        }
    }

    int restricted = 0;
    for (size_t v = 0; v < n; ++v) {
        PdgNode &x = g.nodes[v];
        if (x.kind != PdgNode::Tensor || x.is_load) continue;
        for (PdgEquation &eq : x.equations) {
            isl::set kept = eq.effective.intersect(live[v]).coalesce();
            if (kept.is_equal(eq.effective)) continue;
            eq.dead = eq.effective.subtract(kept).coalesce();
            eq.effective = kept;
            ++restricted;
        }
    }
    if (restricted == 0) return 0;
    for (PdgEdge &e : g.edges) {
        const PdgNode &c = g.nodes.at(e.consumer);
        if (c.kind != PdgNode::Tensor || c.is_load) continue;
        e.access = e.access.intersect_domain(c.equations.at(e.equation).effective).coalesce();
    }
    return restricted;
}

}  // namespace trlc
