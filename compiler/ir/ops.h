#pragma once
// ops — the table of elementwise unary operations (ir/ops.def) as data: for each ir::UnaryOp
// its source name, typing rule, and the names of the element kernels (runtime/trl_ops.h,
// trl_math.h, libm) that the interpreter calls and generated code calls.  Sema looks builtins
// up by name here; code generation emits the kernel names; passes/autodiff and interp/value.cpp
// expand ops.def themselves (adjoint formulas, kernel calls).
//
// Example: unary_by_name("tanh")->op == UnaryOp::Tanh, its typing Float (an i32 operand
// computes in f32), unary_info(UnaryOp::Tanh).f32 == "trl::tanh_f32".
#include <string>

#include "ir/ir.h"

namespace trlc::ir {

/** How a unary builtin types its operand (ops.def's Typing column). */
enum class UnaryTyping {
    Float,     // i32/bool operands are converted to f32 first (exp, log, tanh, …)
    Same,      // the result has the operand's dtype; bool becomes i32 (relu, abs, floor, …)
    Any,       // stop_grad: any value (tuple, bool) passes unchanged
    Operator,  // -x, `not x`: an operator of the language, not a builtin name
};

/** One row of ops.def. */
struct UnaryInfo {
    UnaryOp op;
    const char *name;  // the builtin's source name ("" for operators)
    UnaryTyping typing;
    const char *f32, *f64;  // element kernel on float / double ("-" negation, "" identity)
    const char *i32;        // element kernel on an integer in long long (not for Float rows)
    const char *i32_check;  // "" or the operation named when the result leaves the i32 range
    bool transcendental;    // one element costs a transcendental call
};

/** The row of "op". */
const UnaryInfo &unary_info(UnaryOp op);
/** The row whose builtin name is "name", or null (operators have no name). */
const UnaryInfo *unary_by_name(const std::string &name);

}  // namespace trlc::ir
