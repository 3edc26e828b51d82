#pragma once
// extern_call — code for a call of an `extern` function (LANGUAGE.md §6) inside a kernel.
// Included at the end of codegen/expr_emitter.h; defines ExprEmitter::emit_extern.
#include "codegen/expr_emitter.h"

namespace trlc::codegen {

inline Val ExprEmitter::emit_extern(const ir::Node &n) { unsupported(n.loc, "extern functions"); }

}  // namespace trlc::codegen
