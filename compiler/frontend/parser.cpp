#include "frontend/parser.h"
namespace trlc {
ast::Module parse(const SourceManager &, int file, Diagnostics &) {
    internal_error("parser not implemented yet", __FILE__, __LINE__);
}
}  // namespace trlc
