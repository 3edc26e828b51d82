#pragma once
// to_isl — building isl objects from IR patterns, guards and read indices
// (private to compiler/pdg; see pdg_impl.h).  Spaces carry every program bound
// as a parameter; variables are unnamed tuples with the dims' names.
#include <string>
#include <vector>

#include "ir/ir.h"
#include "pdg/pdg_impl.h"

namespace trlc {

/** [B, T] -> { : } (no constraints). */
isl::space param_space(const PdgImpl &g);
/** [T] -> { tuple[names...] } ("tuple" empty: an unnamed tuple). */
isl::space set_space(const PdgImpl &g, const std::string &tuple, const std::vector<std::string> &names);
/** The map space domain -> range. */
isl::space map_space(const isl::space &domain, const isl::space &range);

/** { [v] : guard } on "space", whose first "nvars" set dims are the guard's variables. */
isl::set guard_to_set(const isl::space &space, const ir::Guard *g, int nvars);
/** [T] -> { [t] : 0 <= t < T and guard } for an equation's (or emit's) variables. */
isl::set var_domain(const PdgImpl &g, const ir::Program &prog, const std::vector<int> &vars, const ir::Guard *guard);
/** { [t] -> x[p] : p = pattern(t) } restricted to "vars". */
isl::map pattern_map(const isl::set &vars, const isl::space &tensor_space, const std::vector<ir::PatternItem> &pattern);
/** { [t] -> y[q] } for a Read's domain indices (points, clamps, slices) on "vars". */
isl::map read_map(const isl::set &vars, const isl::space &producer_space, const std::vector<ir::ReadIndex> &index);

/** The piecewise value of "e" (min/max become pieces) on a set space whose first "nvars"
 *  dims are the equation's variables. */
isl::pw_aff index_to_pw_aff(const isl::space &space, const ir::IndexExpr &e, int nvars);

isl::map rename_map_dims(isl::map m, const std::vector<std::string> &in, const std::vector<std::string> &out);
isl::set rename_set_dims(isl::set s, const std::vector<std::string> &names);

}  // namespace trlc
