#pragma once
// sema — names, imports, dims and bounds, fn inlining, shapes and dtypes:
// the AST of the main file (and its imports) becomes one checked ir::Program.
//
// Imports: `import std.x.y` reads <stdlib_dir>/std/x/y.trl; `import "p.trl"`
// reads p relative to the importing file, then each include dir.  Names of an
// imported module are reached as `alias.name`.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "ir/ir.h"
#include "support/diagnostics.h"

namespace trlc {

struct SemaOptions {
    /** -D NAME=VALUE overrides of bound defaults (and consts), already parsed. */
    std::map<std::string, int64_t> defines;
    std::vector<std::string> include_dirs;  // -I
    std::string stdlib_dir;                 // directory holding std/
    /** --import-root DIR: every `import "path"` must resolve (symbolic links followed) to a
     *  file inside DIR; absolute paths and paths leaving DIR are refused.  `import std.x`
     *  still reads the compiler's standard library.  Empty: no confinement. */
    std::string import_root;
};

/** Check "main" (file of "sm"); returns the program, or nullopt when an error
 *  was reported.  Loads and parses imported files into "sm". */
std::optional<ir::Program> analyze(const ast::Module &main, SourceManager &sm, Diagnostics &diag,
                                   const SemaOptions &opts);

/** `--emit=types`: every tensor with its domain and inferred type, sorted by name. */
void print_types(const ir::Program &prog, std::ostream &out);

}  // namespace trlc
