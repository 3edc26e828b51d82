// library_mode — checks and files of `input` / `output` programs (see library_mode.h).
// Example: `trlc policy.trl -o policy` of a program with `input obs : f32[4]` stops with
//   policy.trl:3:7: error: obs is an input (supplied by the caller): build a library with
//   --emit=library -o DIR/NAME, or run it with --interpret --input obs=FILE.npy
#include "driver/library_mode.h"

#include <cctype>
#include <fstream>

#include "driver/pipeline.h"

namespace trlc {

LibraryPaths library_paths(const std::string &output) {
    LibraryPaths p;
    size_t slash = output.rfind('/');
    std::string dir = slash == std::string::npos ? "" : output.substr(0, slash + 1);
    p.name = slash == std::string::npos ? output : output.substr(slash + 1);
    p.header = dir + p.name + ".h";
    p.source = dir + p.name + ".cu";
    p.shared = dir + "lib" + p.name + ".so";
    return p;
}

bool check_io_usage(const ir::Program &prog, bool library, Diagnostics &diag) {
    bool ok = true;
    if (library) {
        bool outputs = false;
        for (const ir::Emit &e : prog.emits) {
            diag.error(e.loc, "a library call prints nothing: return the value with `output NAME = …` instead of "
                              "emit \"" +
                                  e.stream + "\" (--emit=library)");
            ok = false;
        }
        for (const ir::Save &s : prog.saves) {
            outputs = outputs || !s.output.empty();
            if (s.output.empty()) {
                diag.error(s.loc, "a library call writes no files: declare `output NAME = …` instead of this save "
                                  "(--emit=library)");
                ok = false;
            }
        }
        if (!outputs && ok) {
            diag.error(Loc{0, 1, 1, 1}, "a library needs an output: declare one with `output NAME = expr` "
                                        "(--emit=library)");
            ok = false;
        }
        return ok;
    }
    for (const ir::Tensor &t : prog.tensors)
        if (t.is_input) {
            diag.error(t.loc, t.name +
                                  " is an input (supplied by the caller): build a library with --emit=library "
                                  "-o DIR/NAME, or run it with --interpret --input " +
                                  t.name + "=FILE.npy");
            return false;
        }
    for (const ir::Save &s : prog.saves)
        if (!s.output.empty()) {
            diag.error(s.loc, "output " + s.output +
                                  " is returned to a caller: build a library with --emit=library "
                                  "-o DIR/NAME (--interpret prints it)");
            return false;
        }
    return true;
}

bool parse_inputs(const std::vector<std::string> &args, const ir::Program &prog,
                  std::map<std::string, std::string> *out, Diagnostics &diag) {
    std::string names;
    for (const ir::Tensor &t : prog.tensors)
        if (t.is_input) names += (names.empty() ? "" : ", ") + t.name;
    for (const std::string &a : args) {
        size_t eq = a.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == a.size()) {
            diag.error("invalid --input '" + a + "': expected NAME=FILE.npy, e.g. --input obs=obs.npy");
            return false;
        }
        std::string name = a.substr(0, eq);
        int t = prog.tensor_index(name);
        if (t < 0 || !prog.tensors[t].is_input) {
            diag.error("--input " + a + ": the program has no input '" + name + "' (" +
                       (names.empty() ? std::string("it has none") : "its inputs: " + names) + ")");
            return false;
        }
        if (!out->emplace(name, a.substr(eq + 1)).second) {
            diag.error("--input " + a + ": input '" + name + "' is given twice");
            return false;
        }
    }
    return true;
}

bool check_library_name(const std::string &name, Diagnostics &diag) {
    bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
    for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok)
        diag.error("--emit=library -o DIR/NAME: '" + name +
                   "' is not a C identifier (it prefixes the C API: NAME_create, NAME_run, …)");
    return ok;
}

bool write_text_file(const std::string &path, const std::string &text, Diagnostics &diag) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    f.close();
    if (!f) diag.error("cannot write '" + path + "' (does its directory exist?)");
    return static_cast<bool>(f);
}

}  // namespace trlc
