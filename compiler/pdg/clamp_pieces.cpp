// clamp_pieces — the branches of a read's min/max clamps, as pieces of its consumer's points.
//
// A clamped read `p[u] = ob[max(u - 2, 0)]` is piecewise affine: ob[0] for u <= 1, ob[u - 2]
// for u >= 2.  On each piece the read is affine, so a statement split at these breakpoints can
// get an affine schedule per piece where the whole statement has none (index-set splitting,
// Griebl, Feautrier & Lengauer 2000; schedule/clamp_split.cpp uses the pieces).
//
// Each min/max index expression becomes an isl pw_aff over the equation's variables
// (to_isl.cpp), whose piece domains are its branches; the pieces of all the read's indices
// (point indices and slice ends) are intersected, then mapped through the equation's pattern
// onto the tensor points it effectively defines.
#include <functional>

#include "pdg/pdg_impl.h"
#include "pdg/to_isl.h"

namespace trlc {
namespace {

bool has_clamp(const ir::IndexExpr *e) { return e && e->kind != ir::IndexExpr::Aff; }

/* "parts" refined by the piece domains of "pw": every nonempty intersection of a part with a
 * piece, parts in order, pieces in isl's order within each part. */
std::vector<isl::set> refine(const std::vector<isl::set> &parts, const isl::pw_aff &pw, const isl::set &context) {
    std::vector<isl::set> pieces;
    pw.foreach_piece([&](isl::set dom, isl::multi_aff) { pieces.push_back(dom); });
    std::vector<isl::set> out;
    for (const isl::set &part : parts)
        for (const isl::set &piece : pieces) {
            isl::set both = part.intersect(piece).coalesce();
            if (!both.intersect_params(context).is_empty()) out.push_back(both);
        }
    return out;
}

}  // namespace

std::vector<isl::set> clamp_pieces(const PdgImpl &g, const PdgEdge &e) {
    if (e.consumer < 0 || e.equation < 0) return {};
    const PdgEquation &eq = g.nodes.at(e.consumer).equations.at(e.equation);
    std::vector<const ir::IndexExpr *> clamps;
    for (const ir::ReadIndex &ix : e.index) {
        for (const ir::IndexExpr *x : {ix.point.get(), ix.lo.get(), ix.hi.get()})
            if (has_clamp(x)) clamps.push_back(x);
    }
    if (clamps.empty()) return {};
    int nvars = static_cast<int>(unsigned(eq.vars.tuple_dim()));
    isl::space sp = eq.vars.space();
    // The variables' points where the equation effectively applies.
    isl::set live = eq.pattern.intersect_range(eq.effective).domain();
    std::vector<isl::set> parts{live};
    for (const ir::IndexExpr *x : clamps)
        parts = refine(parts, index_to_pw_aff(sp, *x, nvars).intersect_domain(live), g.context);
    if (parts.size() < 2) return {};
    std::vector<isl::set> out;
    for (const isl::set &part : parts) out.push_back(part.apply(eq.pattern).coalesce());
    return out;
}

}  // namespace trlc
