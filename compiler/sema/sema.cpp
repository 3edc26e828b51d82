#include "sema/sema.h"
namespace trlc {
std::optional<ir::Program> analyze(const ast::Module &, SourceManager &, Diagnostics &, const SemaOptions &) {
    internal_error("sema not implemented yet", __FILE__, __LINE__);
}
void print_types(const ir::Program &, std::ostream &) {}
}  // namespace trlc
