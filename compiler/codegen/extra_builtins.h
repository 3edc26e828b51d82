#pragma once
// extra_builtins — code for builtins added after the core set of expr_emitter.h.
// Included at the end of codegen/expr_emitter.h; defines ExprEmitter::emit_extra_builtin.
#include "codegen/expr_emitter.h"

namespace trlc::codegen {

inline Val ExprEmitter::emit_extra_builtin(const ir::Node &n) { unsupported(n.loc, "this builtin"); }

}  // namespace trlc::codegen
