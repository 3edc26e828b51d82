#pragma once
// ast_printer — `--emit=ast`: an indented, stable tree dump with line:col of each node.
#include <ostream>

#include "frontend/ast.h"

namespace trlc {

void print_ast(const ast::Module &m, const SourceManager &sm, std::ostream &out);

}  // namespace trlc
