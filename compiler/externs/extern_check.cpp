// extern_check — reads the header of each `extern` fn with Clang's libTooling and checks the
// C++ function against the ABI of externs.h.  The header is parsed as CUDA, host side only,
// without the CUDA installation (-nocudainc -nocudalib); a small prelude defines __host__ and
// __device__ as Clang's attributes (and __CUDACC__, so trl_rt.h's TRL_HOST_DEVICE expands to
// them), so FunctionDecl::hasAttr<CUDAHostAttr/CUDADeviceAttr> tell where it is callable.
// Clang's diagnostics go to a collector: the first error becomes a note, nothing else prints.
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/Type.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/ASTUnit.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/ADT/SmallString.h>
#include <map>
#include <memory>
#include <set>

#include "externs/externs.h"
#include "support/install_dirs.h"

namespace trlc {

namespace {

bool file_exists(const std::string &p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string absolute(const std::string &p) {
    char buf[PATH_MAX];
    if (realpath(p.c_str(), buf)) return buf;
    return p;
}

std::string dir_of(const std::string &p) {
    size_t s = p.rfind('/');
    return s == std::string::npos ? "." : s == 0 ? "/" : p.substr(0, s);
}

/** The first error Clang reports (message and presumed position); everything else is dropped. */
class FirstError : public clang::DiagnosticConsumer {
public:
    std::string message, file;
    unsigned line = 0, col = 0;

    void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic &info) override {
        DiagnosticConsumer::HandleDiagnostic(level, info);
        if (level < clang::DiagnosticsEngine::Error || !message.empty()) return;
        llvm::SmallString<256> text;
        info.FormatDiagnostic(text);
        message = std::string(text.str());
        if (info.hasSourceManager() && info.getLocation().isValid()) {
            const clang::SourceManager &csm = info.getSourceManager();
            clang::PresumedLoc p = csm.getPresumedLoc(csm.getFileLoc(info.getLocation()));
            if (p.isValid()) {
                file = p.getFilename();
                line = p.getLine();
                col = p.getColumn();
            }
        }
    }
};

/** A C++ type as trlc expects it: the element type of a dtype. */
clang::QualType element_type(clang::ASTContext &ctx, ir::DType d) {
    switch (d) {
    case ir::DType::Bool: return ctx.BoolTy;
    case ir::DType::I32: return ctx.IntTy;  // int32_t
    case ir::DType::F32: return ctx.FloatTy;
    case ir::DType::F64: return ctx.DoubleTy;
    case ir::DType::Key: break;
    }
    return {};
}

const char *c_name(ir::DType d) {
    switch (d) {
    case ir::DType::Bool: return "bool";
    case ir::DType::I32: return "int32_t";
    case ir::DType::F32: return "float";
    case ir::DType::F64: return "double";
    case ir::DType::Key: break;
    }
    return "?";
}

/** One C++ parameter the ABI asks for. */
struct WantParam {
    std::string name;  // s, a, out0, ...
    std::string what;  // "parameter 's' (f64[4])" / "result 1 (f32)"
    ir::Type type;     // not a tuple
    bool output = false;
};

/** The declaration the ABI asks for, as C++ ("const double s[4]", "float *out1"). */
std::string spelled(const WantParam &w) {
    if (w.type.shape.empty()) return std::string(c_name(w.type.dtype)) + (w.output ? " *" : " ") + w.name;
    int64_t n = 1;
    for (const ir::Extent &e : w.type.shape) n *= e.max_value;
    return std::string(w.output ? "" : "const ") + c_name(w.type.dtype) + " " + w.name + "[" + std::to_string(n) + "]";
}

/** Why parameter "p" does not fit "w" ("" when it does). */
std::string mismatch(clang::ASTContext &ctx, const clang::ParmVarDecl *p, const WantParam &w) {
    clang::QualType elem = element_type(ctx, w.type.dtype);
    clang::QualType t = p->getOriginalType();
    if (w.type.shape.empty()) {
        if (!w.output) {
            clang::QualType v = t.getNonReferenceType();
            if (t->isReferenceType() && !v.isConstQualified()) return "it is a non-const reference";
            if (!ctx.hasSameType(v.getUnqualifiedType(), elem)) return "its type differs";
            return "";
        }
        clang::QualType pointee;
        if (t->isPointerType())
            pointee = t->getPointeeType();
        else
            return "an output must be a pointer";
        if (pointee.isConstQualified()) return "an output must not be const";
        if (!ctx.hasSameType(pointee.getUnqualifiedType(), elem)) return "its type differs";
        return "";
    }
    // Arrays: the declared extents live behind the DecayedType, on the original type.
    std::vector<int64_t> extents;
    clang::QualType at = t;
    while (const clang::ConstantArrayType *a = ctx.getAsConstantArrayType(at)) {
        extents.push_back(a->getSize().getSExtValue());
        at = a->getElementType();
    }
    if (extents.empty()) {
        if (t->isPointerType() || t->isIncompleteArrayType()) return "it has no extent: declare it as an array";
        return "an array must be passed as an array";
    }
    // A const array's element type carries the const (const double[4] = array of const double).
    if (!w.output && !at.isConstQualified()) return "an input array must be const";
    if (w.output && at.isConstQualified()) return "an output must not be const";
    if (!ctx.hasSameType(at.getUnqualifiedType(), elem)) return "its element type differs";
    int64_t flat = 1;
    for (const ir::Extent &e : w.type.shape) flat *= e.max_value;
    if (extents.size() > 1) return "arrays are passed flat, in row-major order";
    if (extents[0] == flat) return "";
    return "its extent differs";
}

/** A trlc Loc for a Clang location (the file added to "sm"), or an invalid Loc. */
Loc to_loc(const clang::SourceManager &csm, clang::SourceLocation at, SourceManager &sm, int length) {
    if (at.isInvalid()) return {};
    clang::PresumedLoc p = csm.getPresumedLoc(csm.getFileLoc(at));
    if (!p.isValid()) return {};
    std::string path = p.getFilename();
    int id = sm.find(path);
    if (id < 0) id = sm.load(path, nullptr);
    if (id < 0) return {};
    return Loc{id, static_cast<int>(p.getLine()), static_cast<int>(p.getColumn()), std::max(1, length)};
}

Loc file_loc(SourceManager &sm, const std::string &path, unsigned line, unsigned col) {
    if (path.empty() || line == 0) return {};
    int id = sm.find(path);
    if (id < 0) id = sm.load(path, nullptr);
    if (id < 0) return {};
    return Loc{id, static_cast<int>(line), static_cast<int>(std::max(1u, col)), 1};
}

std::string type_text(clang::ASTContext &ctx, clang::QualType t) {
    clang::PrintingPolicy pp(ctx.getLangOpts());
    pp.SuppressTagKeyword = true;
    return t.getAsString(pp);
}

/** Functions of the header (not of system headers) whose names resemble "name". */
std::vector<const clang::FunctionDecl *> similar(clang::ASTContext &ctx, const std::string &name) {
    std::vector<std::pair<unsigned, const clang::FunctionDecl *>> found;
    std::set<std::string> seen;
    const clang::SourceManager &csm = ctx.getSourceManager();
    llvm::StringRef want(name);
    for (const clang::Decl *d : ctx.getTranslationUnitDecl()->decls()) {
        const auto *fd = llvm::dyn_cast<clang::FunctionDecl>(d);
        if (!fd || !fd->getIdentifier() || csm.isInSystemHeader(fd->getLocation())) continue;
        if (!csm.getFileEntryForID(csm.getFileID(csm.getFileLoc(fd->getLocation())))) continue;
        std::string n = fd->getName().str();
        if (n.rfind("__", 0) == 0 || seen.count(n)) continue;
        unsigned limit = static_cast<unsigned>(std::max<size_t>(1, name.size() / 3));
        unsigned dist = want.edit_distance(n, true, limit);  // limit + 1 when farther
        bool close = dist <= limit || want.equals_insensitive(n) ||
                     (name.size() >= 4 && llvm::StringRef(n).contains_insensitive(want)) ||
                     (n.size() >= 4 && want.contains_insensitive(n));
        if (!close) continue;
        seen.insert(n);
        found.push_back({dist, fd});
    }
    std::stable_sort(found.begin(), found.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    std::vector<const clang::FunctionDecl *> r;
    for (const auto &f : found) r.push_back(f.second);
    return r;
}

class Checker {
public:
    Checker(const ir::ExternFn &f, const std::string &header_path, clang::ASTContext &ctx, SourceManager &sm,
            Diagnostics &diag)
        : f_(f), path_(header_path), ctx_(ctx), csm_(ctx.getSourceManager()), sm_(sm), diag_(diag) {}

    bool run() {
        const std::string &hdr = f_.header;
        clang::IdentifierInfo &id = ctx_.Idents.get(f_.name);
        std::vector<const clang::FunctionDecl *> fns;
        for (const clang::NamedDecl *d : ctx_.getTranslationUnitDecl()->lookup(&id)) {
            if (const auto *fd = llvm::dyn_cast<clang::FunctionDecl>(d))
                fns.push_back(fd);
            else if (llvm::isa<clang::FunctionTemplateDecl>(d)) {
                diag_.error(f_.loc, "extern fn '" + f_.name + "' is a function template in '" + hdr +
                                        "'; trlc calls a plain function");
                diag_.note(where(d), "declared here");
                return false;
            }
        }
        if (fns.empty()) {
            diag_.error(f_.loc, "'" + hdr + "' declares no function '" + f_.name + "'");
            std::vector<const clang::FunctionDecl *> near = similar(ctx_, f_.name);
            if (!near.empty()) {
                std::string names;
                for (size_t k = 0; k < near.size() && k < 4; ++k)
                    names += (k ? ", '" : "'") + near[k]->getName().str() + "'";
                diag_.note(where(near[0]),
                           std::string("did you mean ") + (near.size() > 1 ? "one of " : "") + names + "?");
            }
            return false;
        }
        if (fns.size() > 1) {
            // Overloads: the one with the right number of parameters, if it is unique.
            std::vector<const clang::FunctionDecl *> fit;
            for (const clang::FunctionDecl *fd : fns)
                if (fd->getNumParams() == wanted().size()) fit.push_back(fd);
            if (fit.size() != 1) {
                diag_.error(f_.loc, "'" + hdr + "' declares " + std::to_string(fns.size()) + " overloads of '" +
                                        f_.name + "'; trlc calls one plain function");
                diag_.note(where(fns[0]), "one is declared here");
                return false;
            }
            fns = fit;
        }
        const clang::FunctionDecl *fd = fns[0];
        if (const clang::FunctionDecl *def = fd->getDefinition()) fd = def;
        return check(fd);
    }

private:
    Loc where(const clang::Decl *d) {
        const auto *nd = llvm::dyn_cast<clang::NamedDecl>(d);
        int len = nd && nd->getIdentifier() ? static_cast<int>(nd->getName().size()) : 1;
        return to_loc(csm_, d->getLocation(), sm_, len);
    }

    std::vector<WantParam> wanted() const {
        std::vector<WantParam> w;
        for (const auto &p : f_.params)
            w.push_back(
                {p.first, "parameter '" + p.first + "' (" + ir::type_to_string(p.second) + ")", p.second, false});
        std::vector<ir::Type> results = f_.result.is_tuple ? f_.result.elems : std::vector<ir::Type>{f_.result};
        for (size_t k = 0; k < results.size(); ++k) {
            std::string what = f_.result.is_tuple ? "result " + std::to_string(k) + " (" : "the result (";
            w.push_back({"out" + std::to_string(k), what + ir::type_to_string(results[k]) + ")", results[k], true});
        }
        return w;
    }

    std::string signature(const std::vector<WantParam> &want) const {
        std::string s = "void " + f_.name + "(";
        for (size_t k = 0; k < want.size(); ++k) s += (k ? ", " : "") + spelled(want[k]);
        return s + ")";
    }

    bool check(const clang::FunctionDecl *fd) {
        const std::string &hdr = f_.header;
        std::string fn = "extern fn '" + f_.name + "'";
        std::vector<WantParam> want = wanted();
        for (const WantParam &w : want) {
            if (w.type.is_tuple || w.type.dtype == ir::DType::Key) {
                diag_.error(f_.loc, fn + ": " + w.what +
                                        " cannot cross into C++ (only f32, f64, i32 and bool "
                                        "scalars and arrays can)");
                return false;
            }
            for (const ir::Extent &e : w.type.shape)
                if (!e.is_static()) {
                    diag_.error(f_.loc, fn + ": " + w.what + " needs static extents");
                    return false;
                }
        }
        bool host = fd->hasAttr<clang::CUDAHostAttr>(), device = fd->hasAttr<clang::CUDADeviceAttr>();
        if (fd->hasAttr<clang::CUDAGlobalAttr>()) {
            diag_.error(f_.loc,
                        fn + " is a __global__ kernel in '" + hdr + "'; trlc calls a __host__ __device__ function");
            diag_.note(where(fd), "declared here");
            return false;
        }
        if (!host || !device) {
            diag_.error(f_.loc, fn + " must be callable on the host and the device, but '" + hdr + "' declares it " +
                                    (device ? "__device__ only" : "without __host__ __device__"));
            diag_.note(where(fd), "declared here; write TRL_HOST_DEVICE (trl_rt.h) or "
                                  "__host__ __device__ before it");
            return false;
        }
        if (!fd->isDefined()) {
            diag_.error(f_.loc, fn + " is declared in '" + hdr +
                                    "' but not defined there; trlc "
                                    "compiles only the header, so define it in the header");
            diag_.note(where(fd), "declared here");
            return false;
        }
        bool ok = true;
        if (!fd->getReturnType()->isVoidType()) {
            diag_.error(f_.loc, fn +
                                    " returns its results through its last parameters, so its "
                                    "C++ function returns void, not '" +
                                    type_text(ctx_, fd->getReturnType()) + "'");
            diag_.note(where(fd), "declared here; expected " + signature(want));
            ok = false;
        }
        if (fd->getNumParams() != want.size() || fd->isVariadic()) {
            diag_.error(f_.loc, fn + " needs a C++ function of " + std::to_string(want.size()) + " parameters (" +
                                    std::to_string(f_.params.size()) + " inputs, then one output per result), but '" +
                                    hdr + "' declares " + std::to_string(fd->getNumParams()) +
                                    (fd->isVariadic() ? " and '...'" : ""));
            diag_.note(where(fd), "declared here; expected " + signature(want));
            return false;
        }
        for (size_t k = 0; k < want.size(); ++k) {
            const clang::ParmVarDecl *p = fd->getParamDecl(static_cast<unsigned>(k));
            std::string why = mismatch(ctx_, p, want[k]);
            if (why.empty()) continue;
            std::string pname = p->getName().empty() ? "" : " '" + p->getName().str() + "'";
            diag_.error(f_.loc, fn + ": " + want[k].what + " is passed as '" + spelled(want[k]) +
                                    "', but C++ parameter " + std::to_string(k + 1) + pname + " does not match (" +
                                    why + ")");
            Loc at =
                to_loc(csm_, p->getLocation(), sm_, p->getIdentifier() ? static_cast<int>(p->getName().size()) : 1);
            diag_.note(at, "declared here as '" + type_text(ctx_, p->getOriginalType()) + "'");
            ok = false;
        }
        return ok;
    }

    const ir::ExternFn &f_;
    std::string path_;
    clang::ASTContext &ctx_;
    const clang::SourceManager &csm_;
    SourceManager &sm_;
    Diagnostics &diag_;
};

const char *kPrelude = "#define __host__ __attribute__((host))\n"
                       "#define __device__ __attribute__((device))\n"
                       "#define __global__ __attribute__((global))\n"
                       "#define __shared__ __attribute__((shared))\n"
                       "#define __constant__ __attribute__((constant))\n"
                       "#define __forceinline__ __inline__ __attribute__((always_inline))\n"
                       "#define __noinline__ __attribute__((noinline))\n"
                       "#define __CUDACC__ 1\n";

}  // namespace

std::string extern_header_path(const ir::ExternFn &f, const SourceManager &sm,
                               const std::vector<std::string> &include_dirs) {
    if (f.header.empty()) return "";
    if (f.header[0] == '/') return file_exists(f.header) ? absolute(f.header) : "";
    std::vector<std::string> dirs;
    if (f.loc.valid() && f.loc.file < sm.size()) dirs.push_back(dir_of(sm.file(f.loc.file).path));
    for (const std::string &d : include_dirs) dirs.push_back(d);
    for (const std::string &d : dirs) {
        std::string p = d + "/" + f.header;
        if (file_exists(p)) return absolute(p);
    }
    return "";
}

bool check_externs(const ir::Program &prog, SourceManager &sm, const std::vector<std::string> &include_dirs,
                   Diagnostics &diag) {
    std::string runtime = runtime_dir();
    bool ok = true;
    // One parse per header, shared by the externs it declares.
    std::map<std::string, std::vector<const ir::ExternFn *>> by_header;
    for (const ir::ExternFn &f : prog.externs) {
        if (f.name.empty()) continue;  // sema reported its declaration
        std::string path = extern_header_path(f, sm, include_dirs);
        if (path.empty()) {
            std::string searched = f.loc.valid() && f.loc.file < sm.size() ? dir_of(sm.file(f.loc.file).path) : ".";
            for (const std::string &d : include_dirs) searched += ", " + d;
            diag.error(f.loc, "cannot find header '" + f.header + "' of extern fn '" + f.name + "' (searched " +
                                  searched + ")");
            ok = false;
            continue;
        }
        by_header[path].push_back(&f);
    }
    for (const auto &[path, fns] : by_header) {
        std::vector<std::string> args = {"-x",
                                         "cuda",
                                         "--cuda-host-only",
                                         "-nocudainc",
                                         "-nocudalib",
                                         "-std=c++17",
                                         "-Wno-unknown-cuda-version",
                                         "-resource-dir=" TRLC_CLANG_RESOURCE_DIR,
                                         "-w",
                                         "-I" + dir_of(path),
                                         "-I" + runtime};
        for (const std::string &d : include_dirs) args.push_back("-I" + d);
        std::string code = std::string(kPrelude) + "#include \"" + path + "\"\n";
        FirstError errors;
        std::unique_ptr<clang::ASTUnit> ast = clang::tooling::buildASTFromCodeWithArgs(
            code, args, "trlc-extern-check.cu", "trlc", std::make_shared<clang::PCHContainerOperations>(),
            clang::tooling::getClangStripDependencyFileAdjuster(), clang::tooling::FileContentMappings(), &errors);
        if (!ast || errors.getNumErrors() > 0) {
            const ir::ExternFn &f = *fns[0];
            diag.error(f.loc,
                       "cannot read header '" + f.header + "' of extern fn '" + f.name + "': Clang reports an error");
            Loc at = file_loc(sm, errors.file, errors.line, errors.col);
            diag.note(at, errors.message.empty() ? "(no message)" : "clang: " + errors.message);
            ok = false;
            continue;
        }
        for (const ir::ExternFn *f : fns) ok &= Checker(*f, path, ast->getASTContext(), sm, diag).run();
    }
    return ok;
}

}  // namespace trlc
