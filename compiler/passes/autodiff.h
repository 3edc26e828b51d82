#pragma once
// autodiff — `grad(y, x)` by reverse-mode differentiation of the recurrence equations
// (issue 5 §1; the design is in compiler/passes/autodiff.cpp's header comment).
//
// Runs after sema and before the PDG is built.  Every ir::NodeKind::Grad node is replaced by a
// Read of a hidden *adjoint tensor* (a Tuple of Reads for a tuple x); the adjoint tensors are
// ordinary tensors with ordinary equations, so the PDG, the checks, the schedule, the memory plan,
// the interpreter and codegen handle them unchanged.
#include <ostream>

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace trlc {

/** Replace every grad(y, x) of "prog" by adjoint tensors.  Unsupported uses (see the cpp) are
 *  reported as errors at the grad call or at the read that makes it unsupported; returns false
 *  when an error was reported.  A program without grad is left unchanged. */
bool differentiate(ir::Program &prog, Diagnostics &diag);

/** The tensors made by differentiate() (their names start with "grad."), one per line with
 *  domain, type and the number of equations, in creation order: what `trl-opt
 *  --print-adjoints` prints. */
void print_adjoints(const ir::Program &prog, std::ostream &out);

}  // namespace trlc
