#pragma once
// checks — isl proofs on the PDG, reported as diagnostics.
//
// check_reads_defined: every read's access relation maps into the producer's
//   defined points; otherwise "x[t+1] reads x at t = 8, but x is defined for t in [0, 7]".
// check_no_zero_cycle: no point depends on itself; otherwise the error names
//   the tensors on the cycle.
#include "pdg/pdg.h"
#include "support/diagnostics.h"

namespace trlc {

void check_reads_defined(const Pdg &g, Diagnostics &diag);
void check_no_zero_cycle(const Pdg &g, Diagnostics &diag);

}  // namespace trlc
