#pragma once
// cse — common subexpression elimination on the IR (pipeline stage "cse", after incrementalize,
// before the PDG; -fno-cse turns it off).
//
// Within one equation body (or one emit's fields and guard, or one save's value), two nodes of
// the same kind, type, attributes and (already merged) operands compute the same value, so the
// second is replaced by the first: the DAG keeps one node, and the code generator (which emits a
// shared node once, codegen/expr_emitter.h) and the interpreter compute it once.  `extern` calls
// are never merged (a C++ function may have effects); `rng` keys and random draws are pure
// functions of their key (dsl/README §8), so equal ones are merged.  The merged node keeps the
// first occurrence's source location (where a run-time error in it is reported).
//
//   before:  lp  = log_softmax(logits)            (categorical_log_prob)
//            ent = -sum(where(p > 0, p * log_softmax(logits), 0))
//   after:   both read one log_softmax(logits) node
//
// Every operation is the same operation on the same operands in the same order, so every value
// is bit for bit what it was.
#include "ir/ir.h"

namespace trlc {

/** Merge equal subexpressions of every equation body, emit and save of "prog"; returns the
 *  number of nodes merged away. */
int eliminate_common_subexpressions(ir::Program &prog);

}  // namespace trlc
