// dead_points — the dead-points pass: every tensor equation keeps only the points that an
// output (emit, save) needs, directly or through the tensors that read it (pipeline stage
// "dead-points", after the checks and vectorize; -fno-dead-points turns it off).
//
// Liveness over the PDG, backwards from the outputs, on the parametric isl sets (so the
// run-time loop nest of driver/runtime_bounds.cpp sees the same domains as the schedule):
//   live(output)  = its domain (every point is printed or saved)
//   live(x)       = ∪ over the reads e of x by consumer c:  access_e(live(c))
// taken over the strongly connected components of the read graph, consumers first.  A
// component with a cycle (a recurrence: p[i, k+1] reads p[i, k]) keeps all its points when
// anything outside it reads any of them, since its members need each other; an acyclic
// tensor keeps exactly the points read.  A tensor (or cycle) that no other tensor and no
// output reads is kept whole (it is the result a --emit or a test shows).  Each equation's effective domain is intersected with its
// tensor's live points, and the accesses of its reads with its new effective domain.
//
// Example (samples/ppo_cartpole.trl): the minibatch loss mbloss[i, k] is defined for the 16
// updates k of every iteration, but only `emit "train"[i] { loss: mbloss[i, KP-2] }` reads it
// (its gradient is computed by the adjoint tensors from saved forward values), so
//   before: { mbloss[i, k] : 0 <= i < I and 0 <= k <= 15 }
//   after:  { mbloss[i, k] : 0 <= i < I and k = 15 }
// and the loss kernel runs once per iteration instead of 16 times.
#include "pdg/pdg_impl.h"

namespace trlc {

int restrict_to_needed_points(Pdg &pdg) {
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
        for (size_t k = 0; k < c->size(); ++k) {
            int v = (*c)[k];
            const PdgNode &x = g.nodes[v];
            bool whole = x.kind != PdgNode::Tensor || x.is_load || !read_outside;
            if (cyclic && !whole)  // all or nothing: the members need each other
                for (const isl::set &d : demand)
                    if (!concrete(g, d).is_empty()) whole = true;
            if (whole)
                live[v] = x.domain;
            else if (cyclic)
                live[v] = x.domain.subtract(x.domain);  // nothing outside needs it
            else
                live[v] = demand[k];
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
