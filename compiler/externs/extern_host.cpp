// extern_host — compiles the headers of extern fns for the interpreter and loads them (see
// extern_host.h).  The wrapper of `extern "h.cuh" fn f(s: f64[4], a: i32) -> (f64[4], bool)`:
//
//     #include "/abs/h.cuh"
#include "support/install_dirs.h"
//     extern "C" void trlc_extern_f(const double *const *in, double *const *out) {
//         double a0[4]; for (int i = 0; i < 4; ++i) a0[i] = (double)in[0][i];
//         int32_t a1 = (int32_t)in[1][0];
//         double r0[4]; bool r1;
//         f(a0, a1, r0, &r1);
//         for (int i = 0; i < 4; ++i) out[0][i] = (double)r0[i];
//         out[1][0] = (double)r1;
//     }
#include "externs/extern_host.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>

#include "externs/externs.h"
#include "externs/subprocess.h"

namespace trlc {

namespace {

std::map<std::string, HostExternFn> &registry() {
    static std::map<std::string, HostExternFn> r;
    return r;
}

const char *c_type(ir::DType d) {
    switch (d) {
    case ir::DType::Bool: return "bool";
    case ir::DType::I32: return "int32_t";
    case ir::DType::F32: return "float";
    case ir::DType::F64: return "double";
    case ir::DType::Key: break;
    }
    return "double";
}

int64_t count(const ir::Type &t) {
    int64_t n = 1;
    for (const ir::Extent &e : t.shape) n *= e.max_value;
    return n;
}

std::string wrapper(const ir::ExternFn &f) {
    std::string s = "extern \"C\" void trlc_extern_" + f.name + "(const double *const *in, double *const *out) {\n";
    std::vector<std::string> args;
    for (size_t k = 0; k < f.params.size(); ++k) {
        const ir::Type &t = f.params[k].second;
        std::string a = "a" + std::to_string(k), ct = c_type(t.dtype);
        if (t.shape.empty()) {
            s += "    " + ct + " " + a + " = (" + ct + ")in[" + std::to_string(k) + "][0];\n";
        } else {
            std::string n = std::to_string(count(t));
            s += "    " + ct + " " + a + "[" + n + "];\n    for (long i = 0; i < " + n + "; ++i) " + a + "[i] = (" +
                 ct + ")in[" + std::to_string(k) + "][i];\n";
        }
        args.push_back(a);
    }
    std::vector<ir::Type> results = f.result.is_tuple ? f.result.elems : std::vector<ir::Type>{f.result};
    std::string copy_out;
    for (size_t k = 0; k < results.size(); ++k) {
        const ir::Type &t = results[k];
        std::string r = "r" + std::to_string(k), ct = c_type(t.dtype), o = std::to_string(k);
        if (t.shape.empty()) {
            s += "    " + ct + " " + r + " = 0;\n";
            args.push_back("&" + r);
            copy_out += "    out[" + o + "][0] = (double)" + r + ";\n";
        } else {
            std::string n = std::to_string(count(t));
            s += "    " + ct + " " + r + "[" + n + "] = {};\n";
            args.push_back(r);
            copy_out += "    for (long i = 0; i < " + n + "; ++i) out[" + o + "][i] = (double)" + r + "[i];\n";
        }
    }
    s += "    " + f.name + "(";
    for (size_t k = 0; k < args.size(); ++k) s += (k ? ", " : "") + args[k];
    return s + ");\n" + copy_out + "}\n";
}

}  // namespace

std::vector<std::string> extern_include_args(const std::vector<std::string> &headers,
                                             const std::vector<std::string> &include_dirs) {
    std::vector<std::string> args;
    for (const std::string &h : headers) {
        size_t s = h.rfind('/');
        args.push_back("-I" + h.substr(0, s == std::string::npos ? 0 : s));
    }
    args.push_back("-I" + runtime_dir());
    for (const std::string &d : include_dirs) args.push_back("-I" + d);
    return args;
}

bool load_host_externs(const ir::Program &prog, const SourceManager &sm, const std::vector<std::string> &include_dirs,
                       Diagnostics &diag) {
    const ir::ExternFn *first = nullptr;
    std::string src = "// trlc: extern fns for the interpreter\n#include <stdint.h>\n";
    std::vector<std::string> headers;
    for (const ir::ExternFn &f : prog.externs) {
        if (f.name.empty() || registry().count(f.name)) continue;
        std::string h = extern_header_path(f, sm, include_dirs);
        if (h.empty()) continue;  // check_externs reported it
        if (!first) first = &f;
        src += "#include \"" + h + "\"\n";
        headers.push_back(h);
    }
    if (!first) return true;
    for (const ir::ExternFn &f : prog.externs)
        if (!f.name.empty() && !registry().count(f.name)) src += wrapper(f);

    const std::string dir = make_temp_dir("trlc-extern");
    if (dir.empty()) {
        diag.error(first->loc, std::string("cannot create a temporary directory for the extern "
                                           "fns of the interpreter: ") +
                                   strerror(errno));
        return false;
    }
    const std::string cpp = dir + "/externs.cpp", so = dir + "/externs.so", log = dir + "/log.txt";
    std::ofstream(cpp) << src;
    const char *cxx = getenv("CXX");
    std::vector<std::string> argv = {
        cxx && *cxx ? cxx : "c++", "-std=c++17", "-O2", "-ffp-contract=off", "-fPIC", "-shared", "-w"};
    for (const std::string &a : extern_include_args(headers, include_dirs)) argv.push_back(a);
    for (const std::string &a : {cpp, std::string("-o"), so}) argv.push_back(a);
    ToolRun run = run_tool(argv, log);
    int status = run.started ? run.exit_status : -1;
    std::string output = run.started ? run.output : "cannot run '" + argv[0] + "': " + strerror(run.spawn_errno);
    void *lib = status == 0 ? dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
    std::string dl_error = status == 0 && !lib ? dlerror() : "";
    for (const std::string &f : {cpp, so, log}) std::remove(f.c_str());
    rmdir(dir.c_str());
    if (status != 0 || !lib) {
        std::string cmd = command_text(argv);
        diag.error(first->loc, "cannot compile the header of extern fn '" + first->name +
                                   "' for the interpreter with the host C++ compiler" +
                                   (status == 0 ? " (dlopen: " + dl_error + ")" : ""));
        std::cerr << "  command: " << cmd << "\n";
        if (!output.empty()) std::cerr << "  its output:\n" << output;
        return false;
    }
    for (const ir::ExternFn &f : prog.externs) {
        if (f.name.empty() || registry().count(f.name)) continue;
        void *sym = dlsym(lib, ("trlc_extern_" + f.name).c_str());
        if (sym) registry()[f.name] = reinterpret_cast<HostExternFn>(sym);
    }
    return true;
}

HostExternFn host_extern(const std::string &name) {
    auto it = registry().find(name);
    return it == registry().end() ? nullptr : it->second;
}

}  // namespace trlc
