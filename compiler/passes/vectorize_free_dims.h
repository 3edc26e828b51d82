#pragma once
// vectorize_free_dims — choose the dims that become batch axes (TimeRL §4.2,
// research/tempo.md §4.1).
//
// A dim d becomes a batch axis when no dependence is carried along it: every
// read of a tensor that has d, by a consumer that has d, maps d to itself
// (d' = d), every pattern position of d is the plain dim (no shift, no
// constant), and no guard mentions d.  Reads over the whole range of d
// (`x[0:B, i]`) by consumers without d are fine: they run after the batch.
// A statement then runs once for all values of its batch dims, as one tensor
// operation.
//
//   before:  act_0[b, i, t]        (B·I·T instances)
//   after:   act_0[i, t] × batch b (I·T instances, each over all of b)
#include <vector>

#include "ir/ir.h"
#include "pdg/pdg.h"

namespace trlc {

/** Per Program::dims index: true when the dim is a batch axis.  All false when
 *  "enabled" is false (-fno-vectorize). */
std::vector<bool> vectorize_free_dims(const ir::Program &prog, const Pdg &pdg, bool enabled);

}  // namespace trlc
