#include "frontend/ast_printer.h"
#include "frontend/diagnostics.h"
namespace trlc {
void print_ast(const ast::Module &, const SourceManager &, std::ostream &) {
    internal_error("ast printer not implemented yet", __FILE__, __LINE__);
}
}  // namespace trlc
