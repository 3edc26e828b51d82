#pragma once
// verify — the structural invariants of the typed IR (ir/ir.h), checked between passes.
//
// The pipeline (driver/pipeline.cpp) runs verify() after every pass that builds or rewrites the
// Program (sema, autodiff, incrementalize), in every build and so in every test (`--no-verify`
// turns it off; about 1.3M instructions a run on the PPO sample, whose front end is 62M);
// a violation is a compiler bug, reported as an internal error that names the pass.  Checked, each where it can fail:
//   * indices in range: a tensor's dims, an equation's / emit's variables, a Read's tensor, a
//     Coord's variable, a pattern's variable, an affine form's coefficients (none on a variable
//     the equation does not bind), an Extern's function;
//   * shape of the program: pattern arity = tensor rank, a pattern position's variable is the
//     tensor's dim at that position, shifts > 0, constants >= 0 (`V[T]` may define the point
//     past the bound), Read index count = tensor rank, a bound name's value in Program::bounds;
//   * operand counts per node kind (Unary 1, Binary 2, Where 3, …), no null operand;
//   * types consistent with operands: comparisons and logic give bool, elementwise results have
//     the broadcast rank of their operands, a cast keeps the shape, a tuple's element types are
//     its operands', a Read gives the tensor's dtype with one leading axis per slice, an
//     equation's body has its tensor's type, a literal has one value per element;
//   * no Grad node once autodiff has run (VerifyOptions::allow_grad false).
// Example message: "tensor x, equation 1 (x[t]): Read of y has 1 index for y's 2 dims: y[t]".
#include <string>
#include <vector>

#include "ir/ir.h"

namespace trlc::ir {

struct VerifyOptions {
    bool allow_grad = true;  // false after autodiff: every grad(y, x) must be gone
};

/** The violations of the invariants above, one sentence each, in program order (at most
 *  "limit"); empty when "prog" is well formed. */
std::vector<std::string> verify(const Program &prog, const VerifyOptions &opts = {}, size_t limit = 20);

}  // namespace trlc::ir
