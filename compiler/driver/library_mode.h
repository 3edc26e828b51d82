#pragma once
// library_mode — the driver's side of `input` / `output` (dsl/README §7.10): which commands
// may compile a program that has them, the --input files of --interpret, and the files of
// `trlc prog.trl --emit=library -o DIR/NAME` (the header NAME.h; the source and the shared
// library are the codegen and build stages').  Example:
//   trlc policy.trl --emit=library -o out/policy   →  out/policy.h, out/policy.cu, out/libpolicy.so
//   trlc policy.trl --interpret --input obs=obs.npy  →  {"act":1}
#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace trlc {

/** Whether "prog" fits how it is compiled: a library (library) needs an output and has no
 *  emit or save; a program built or printed as an executable's source (!library) has no
 *  input and no output.  Errors at the declarations; false after any. */
bool check_io_usage(const ir::Program &prog, bool library, Diagnostics &diag);

/** "--input NAME=FILE" arguments into name -> file, each naming an input of "prog"; false
 *  after an error (a malformed argument, an unknown or repeated name). */
bool parse_inputs(const std::vector<std::string> &args, const ir::Program &prog,
                  std::map<std::string, std::string> *out, Diagnostics &diag);

/** Check that NAME of -o DIR/NAME is a C identifier; false after an error. */
bool check_library_name(const std::string &name, Diagnostics &diag);

/** Write "text" to "path"; false after an error. */
bool write_text_file(const std::string &path, const std::string &text, Diagnostics &diag);

}  // namespace trlc
