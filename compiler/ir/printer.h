#pragma once
// printer — the typed IR (ir/ir.h) as deterministic text close to the .trl surface syntax, for
// `trlc --print-after=PASS` (driver/pipeline.cpp), the verifier's messages and tests.
//
// One line per declaration, in Program order: bounds that no dim uses, dims, extern functions,
// then each tensor with its type and its equations (indented), emits and saves.  A DAG node used
// twice or more (a shared `let`, autodiff's saved forward values) is printed once as a binding
// `%n = expr` on its own line just above the equation that uses it; %n counts from 0 in each
// equation, emit and save, in the order the bindings are needed.  With PrintOptions::types every
// operation gets its own binding line with its type (SSA-like).  Example:
//
//   dim t < T = 16
//   ret[t] : f64
//     ret[15] = rew[15]
//     ret[t] = rew[t] + 0.9 * ret[t+1] when t < 15
//   grad.x[t] : f32  // hidden
//     %0 = exp(x[t])
//     grad.x[t] = %0 * grad.y[t] / (%0 + 1.0)
//   emit "returns"[t] { t: t, ret: ret[t] }
//
// A tuple's element k prints as `.k` (`net[i].0`, written `net[i][0]` in .trl, to tell it from
// spatial indexing); builtins print their attributes as keywords (`sum(x, axis=0)`,
// `zeros(shape=[4])`).  Literals print in the shortest form that reads back to the same value ("0.9", "1.0", "3");
// a literal tagged with a bound (Node::bound) prints as the bound's name.  Malformed IR (an
// index out of range, a missing operand) prints as <...> instead of failing.
#include <ostream>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace trlc::ir {

struct PrintOptions {
    /** Every operation on its own `%n = … : type` line (leaves and scalar literals stay
     *  inline); off: only shared nodes get a binding. */
    bool types = false;
    /** Per Program::dims index, a note printed after the dim as `// note` (e.g. the
     *  vectorize pass's "batch axis"); empty or shorter: no note. */
    std::vector<std::string> dim_notes;
};

/** The whole program as described above. */
void print_program(const Program &prog, std::ostream &out, const PrintOptions &opts = {});

/** One expression without bindings (shared nodes repeated), variables named "vars":
 *  "exp(x[t+1]) * 2.0".  For messages. */
std::string node_to_string(const Program &prog, const Node &node, const std::vector<std::string> &vars);

/** A guard as written in a `when`: "t < 15 && t >= 1". */
std::string guard_to_string(const Guard &g, const std::vector<std::string> &vars);

/** The left-hand side of an equation of tensor "t": "ret[t+1]", "net[0]", "x" (scalar). */
std::string lhs_to_string(const Program &prog, const Tensor &t, const Equation &eq);

/** Surface names of the operators: "exp", "stop_grad", "-" (Neg), "!" (Not), "+", "**",
 *  "min", "&&", "sum", "log_softmax", … */
const char *unary_name(UnaryOp op);
const char *binary_name(BinaryOp op);
const char *builtin_name(BuiltinOp op);

}  // namespace trlc::ir
