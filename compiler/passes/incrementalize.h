#pragma once
// incrementalize — sums over slices of single-use tensors become running sums
// (TimeRL's incrementalization, arXiv 2501.05408, with block size 1).
//
// Runs after autodiff, before the PDG is built.  Pattern: a float array tensor C of static shape
// (any equations, without rng or extern calls) whose only reader in the whole program is one
// `sum` in one equation of R that reduces a read of C over full slices of some of C's dims:
//
//   before:  C[b, i, t]     = body_C
//            R[i]           = … sum(C[0:B, i, 0:T], axis=(0, 1)) …
//   after:   C.acc[b, i, t] = body_C                        when t == 0
//            C.acc[b, i, t] = C.acc[b, i, t-1] + body_C     when t >= 1
//            R[i]           = … sum(C.acc[0:B, i, T-1], axis=0) …
//
// Each equation of C gives C.acc equations with the same pattern and guard: its body at the
// first point of x (guard `x == first` added; a constant pattern at x gives one equation), the
// previous point plus its body elsewhere (`x > first` or `x < first`), so the specificity rule
// picks the same equation of C.acc at each point as it did of C.
// The running sum goes along the last sliced dim x along which some equation of the program
// carries a dependence (a shift: `st[t+1]`, `h[t-1]`); without one, nothing is rewritten (x would
// be a batch axis, and a running sum would serialize it).  It runs downwards (from x = X-1, reading
// x+1, R reading x = 0) when body_C reads, transitively through reads at the same x, a tensor
// whose equations read along x at a positive shift (a reverse recurrence, like the adjoints of
// backprop through time); otherwise upwards.  C.acc takes C's place in Program::tensors (same
// index), so no other read changes; C disappears.  Each step keeps one slice of C instead of X.
//
// Every matching tensor is rewritten, whatever its size (kIncrementalizeMinBytes); with a
// threshold (--incrementalize-min-bytes), only those of at least that many bytes over their domain.
//
// Floating point: the sum along x becomes sequential in the accumulation order, the remaining
// sliced dims are summed by the same `sum` as before.  The interpreter and the host build run
// the rewritten program, so they still agree with each other bit for bit.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace trlc {

/** Tensors C smaller than this over their whole domain (points × element bytes) are left
 *  alone.  0 by default: every matching tensor is rewritten.  A threshold over the whole domain
 *  (1 MB, Tempo's, until 2026-11-29) grows with the iteration bound, so the statements changed
 *  with it: n-step CartPole rewrote 12 gradient sums at I = 4000 and 10 at I = 100, and its
 *  run-time `--bound I` was refused below its compiled value (driver/runtime_bounds.cpp part
 *  3); without one, the samples rewrite at every size what they rewrote at their compiled sizes
 *  (n-step 12, REINFORCE 6, the others none), so their programs there are unchanged.  Measured
 *  with the bytes of the slice one sum reads instead (1 MB: n-step rewrites 2): n-step trained
 *  25 % slower (3.7 -> 4.7 s, I = 4000, one core) and its arena grew 706 -> 1,171 KB, so the
 *  small per-step gradients gain from running sums too. */
constexpr int64_t kIncrementalizeMinBytes = 0;

/** Rewrite every matching tensor of "prog" (see above).  When "log" is given, one line per
 *  rewrite is appended: "grad.x[b, i, t]: running sum along t (up), read by y at 12:3".
 *  Returns the number of rewrites. */
int incrementalize(ir::Program &prog, std::vector<std::string> *log = nullptr,
                   int64_t min_bytes = kIncrementalizeMinBytes);

}  // namespace trlc
