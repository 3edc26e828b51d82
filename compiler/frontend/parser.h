#pragma once
// parser — `.trl` text to ast::Module (recursive descent; grammar in dsl/README.md).
//
// Errors are reported to "diag" ("expected ']' after index list", …) and the
// parser recovers at the next declaration, so one run reports several errors.
// Never crashes or hangs: nesting deeper than kMaxNesting is an error.
#include "frontend/ast.h"
#include "support/diagnostics.h"

namespace trlc {

constexpr int kMaxNesting = 256;

/** Parse file "file" of "sm".  Always returns a module; it is complete only
 *  when no error was reported. */
ast::Module parse(const SourceManager &sm, int file, Diagnostics &diag);

}  // namespace trlc
