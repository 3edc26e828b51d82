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
/** The isl operation budget (isl_ctx_set_max_operations) of each closure step of
 *  check_no_zero_cycle (isl's transitive closure, then the closure by repeated squaring).
 *  An operation took about 0.7 µs here (2026, x86; 20M of them squared for 13.6 s), so a
 *  step gives up after about 1.4 s; the closures of every sample and test program take under
 *  5 ms.  When no step decides: a warning that the check could not, and compilation goes on. */
constexpr unsigned long kCycleCheckOperations = 2000000;

void check_no_zero_cycle(const Pdg &g, Diagnostics &diag, unsigned long operations = kCycleCheckOperations);

}  // namespace trlc
