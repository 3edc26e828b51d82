// reads_defined — prove with isl that every read hits a defined point.
//
// For each edge y --access--> x of the PDG (access already restricted to the
// consumer equation's effective domain), under the context:
//   undefined = range(access) \ domain(x)
// must be empty.  Otherwise the error is at the Read node and states both sets
// concretely (bounds substituted):
//   x[t+1] reads x at t = 8, but x is defined for t in [0, 7]
//   note: x is defined here
// Each Read node is one edge, so each failing read is reported once.
// Requires: build_pdg.
#include "checks/checks.h"
#include "pdg/pdg_impl.h"

namespace trlc {

void check_reads_defined(const Pdg &pdg, Diagnostics &diag) {
    const PdgImpl &g = pdg.impl();
    for (const PdgEdge &e : g.edges) {
        const PdgNode &x = g.nodes[e.producer];
        isl::set defined = x.domain.intersect_params(g.context);
        // The access range carries primed dim names; describe with the producer's own.
        isl::set reads = e.access.intersect_params(g.context).range();
        isl::set undefined = reads.subtract(defined);
        if (undefined.is_empty()) continue;
        std::string msg = e.text + " reads " + x.name;
        if (x.dim_names.empty()) {
            msg += ", but " + x.name + " is not defined";
        } else {
            msg += " at " + describe_points(g, undefined, x.dim_names) + ", but " + x.name;
            msg += defined.is_empty() ? " is not defined at any point"
                                      : " is defined for " + describe_points(g, defined, x.dim_names);
        }
        diag.error(e.loc, msg);
        diag.note(x.loc, x.name + " is defined here");
        const PdgNode &c = g.nodes[e.consumer];
        if (!c.read_note.empty()) diag.note(c.loc, c.read_note);
    }
}

}  // namespace trlc
