// modules — imports and global names.
//
// `import std.x.y` reads <stdlib_dir>/std/x/y.trl (then each -I dir);
// `import "p.trl"` reads p relative to the importing file, then each -I dir.
// An import names a .trl module: `import "lib/util"` means lib/util.trl, and a path with
// another extension (`import "/etc/passwd.txt"`) is one error at the import, the file unread.
// Under --import-root DIR a path import must resolve, symbolic links followed, to a file
// inside DIR; an absolute path or one that leaves DIR is refused unread (a service compiling
// other people's programs must not read, nor echo in diagnostics, files outside their tree).
// Diagnostics inside a module carry a note at the import that loaded it (Diagnostics).
// Every file is loaded and parsed once (import cycles are fine).  Each module
// gets a table of its global names; a name defined twice in one module is an
// error with a note at the first definition.  Imported modules may contain
// only import, const, fn and extern declarations.
#include <filesystem>

#include "frontend/parser.h"
#include "sema/sema_impl.h"

namespace trlc::sema {

namespace fs = std::filesystem;

void Sema::error(Loc loc, const std::string &msg) {
    if (silent_) {
        last_suppressed_ = true;
        return;
    }
    auto key = std::make_tuple(loc.file, loc.line, loc.col, msg);
    if (!reported_.insert(key).second) {
        last_suppressed_ = true;
        return;
    }
    last_suppressed_ = false;
    diag_.set_import_notes(call_stack_.empty());  // else the call notes below lead to the user
    diag_.error(loc, msg);
    diag_.set_import_notes(true);
    // An error inside an inlined fn body (a std-library fn, typically) points into that body;
    // the notes lead back to the user's call, innermost call first.
    for (size_t k = call_stack_.size(); k-- > 0;)
        diag_.note(call_stack_[k].second, "in this call of fn '" + fns_[call_stack_[k].first].decl->name + "'");
}

void Sema::note(Loc loc, const std::string &msg) {
    if (!last_suppressed_ && !silent_) diag_.note(loc, msg);
}

std::string Sema::text(Loc loc) const {
    if (!loc.valid() || loc.file >= sm_.size()) return "";
    std::string_view line = sm_.file(loc.file).line(loc.line);
    size_t start = loc.col > 0 ? static_cast<size_t>(loc.col - 1) : 0;
    if (start >= line.size()) return "";
    return std::string(line.substr(start, static_cast<size_t>(std::max(loc.length, 1))));
}

const Entity *Sema::lookup(int module, const std::string &name) const {
    const auto &names = modules_[module].names;
    auto it = names.find(name);
    return it == names.end() ? nullptr : &it->second;
}

bool Sema::define(int module, const std::string &name, Entity e) {
    auto &names = modules_[module].names;
    auto it = names.find(name);
    if (it != names.end()) {
        // Names are collected kind by kind; report at the later of the two in the file.
        Loc first = it->second.loc, second = e.loc;
        if (first.file == second.file &&
            (first.line > second.line || (first.line == second.line && first.col > second.col)))
            std::swap(first, second);
        error(second, "duplicate definition of '" + name + "'");
        note(first, "'" + name + "' is first defined here");
        return false;
    }
    names.emplace(name, e);
    return true;
}

namespace {

/* The files an import may name, in search order. */
std::vector<std::string> candidates(const ast::Decl &d, const std::string &importer, const SemaOptions &opts) {
    std::vector<std::string> out;
    if (d.is_path) {
        fs::path p(d.module);
        if (!p.has_extension()) p += ".trl";  // the extension is implied
        if (p.is_absolute()) return {p.lexically_normal().string()};
        out.push_back((fs::path(importer).parent_path() / p).lexically_normal().string());
        for (const std::string &dir : opts.include_dirs) out.push_back((fs::path(dir) / p).lexically_normal().string());
        return out;
    }
    std::string rel = d.module;
    for (char &c : rel)
        if (c == '.') c = '/';
    rel += ".trl";
    if (!opts.stdlib_dir.empty()) out.push_back((fs::path(opts.stdlib_dir) / rel).lexically_normal().string());
    for (const std::string &dir : opts.include_dirs) out.push_back((fs::path(dir) / rel).lexically_normal().string());
    return out;
}

std::string canonical(const std::string &path) {
    std::error_code ec;
    fs::path c = fs::weakly_canonical(path, ec);
    return ec ? path : c.string();
}

/** Whether canonical path "p" lies inside directory "root" (canonical, no trailing '/'). */
bool inside(const std::string &p, const std::string &root) {
    return p.size() > root.size() && p.compare(0, root.size(), root) == 0 &&
           (root.back() == '/' || p[root.size()] == '/');
}

}  // namespace

void Sema::load_modules(const ast::Module &main) {
    ModuleInfo m;
    m.name = "main";
    m.file = main.file;
    m.ast = &main;
    m.is_main = true;
    modules_.push_back(m);
    std::map<std::string, int> by_path;  // canonical path → module
    if (main.file >= 0) by_path[canonical(sm_.file(main.file).path)] = 0;
    std::string root;  // canonical --import-root, "" when not confined
    if (!opts_.import_root.empty()) {
        root = canonical(opts_.import_root);
        while (root.size() > 1 && root.back() == '/') root.pop_back();
    }

    for (size_t mi = 0; mi < modules_.size(); ++mi) {
        const ast::Module *mod = modules_[mi].ast;
        std::string importer = mod->file >= 0 ? sm_.file(mod->file).path : std::string();
        for (const ast::Decl &d : mod->decls) {
            if (d.kind != ast::DeclKind::Import) continue;
            if (d.is_path && fs::path(d.module).has_extension() && fs::path(d.module).extension() != ".trl") {
                error(d.loc, "an import names a .trl module, and \"" + d.module + "\" is not one");
                continue;
            }
            if (d.is_path && !root.empty() && fs::path(d.module).is_absolute()) {
                error(d.loc, "import \"" + d.module + "\" is an absolute path, which --import-root " +
                                 opts_.import_root + " does not allow");
                note(Loc{}, "write a path relative to the importing file, inside the import root");
                continue;
            }
            std::vector<std::string> paths = candidates(d, importer, opts_);
            int target = -1;
            bool refused = false;
            for (const std::string &p : paths) {
                std::error_code ec;
                if (!fs::is_regular_file(p, ec)) continue;
                std::string key = canonical(p);
                if (d.is_path && !root.empty() && !inside(key, root)) {
                    error(d.loc,
                          "import \"" + d.module + "\" resolves to " + key + ", outside the import root " + root);
                    note(Loc{}, "--import-root confines path imports to that directory tree "
                                "('..' and symbolic links leading out of it are refused)");
                    refused = true;
                    break;
                }
                auto it = by_path.find(key);
                if (it != by_path.end()) {
                    target = it->second;
                    break;
                }
                std::string err;
                int file = sm_.load(p, &err);
                if (file < 0) {
                    error(d.loc, err);
                    break;
                }
                sm_.set_imported_at(file, d.loc);
                owned_.push_back(std::make_unique<ast::Module>(parse(sm_, file, diag_)));
                owned_.back()->file = file;
                ModuleInfo info;
                info.name = d.is_path ? p : d.module;
                info.file = file;
                info.ast = owned_.back().get();
                target = static_cast<int>(modules_.size());
                by_path[key] = target;
                modules_.push_back(info);
                break;
            }
            if (refused) continue;
            if (target < 0) {
                std::string what = d.is_path ? "\"" + d.module + "\"" : "'" + d.module + "'";
                error(d.loc, "module " + what + " not found");
                std::string list;
                for (const std::string &p : paths) list += (list.empty() ? "" : ", ") + p;
                note(Loc{}, "searched: " + list);
                continue;
            }
            std::string alias = d.alias;
            if (alias.empty()) {
                if (d.is_path)
                    alias = fs::path(d.module).stem().string();
                else
                    alias = d.module.substr(d.module.rfind('.') + 1);
            }
            define(static_cast<int>(mi), alias, {EntityKind::Module, target, d.loc});
        }
    }
}

void Sema::collect_names() {
    for (size_t mi = 0; mi < modules_.size(); ++mi) {
        int m = static_cast<int>(mi);
        for (const ast::Decl &d : modules_[mi].ast->decls) {
            Loc at = d.name_loc.valid() ? d.name_loc : d.loc;
            switch (d.kind) {
            case ast::DeclKind::Import: break;
            case ast::DeclKind::Const: {
                ConstInfo ci;
                ci.decl = &d;
                ci.module = m;
                consts_.push_back(ci);
            }
                define(m, d.name, {EntityKind::Const, static_cast<int>(consts_.size()) - 1, at});
                break;
            case ast::DeclKind::Fn:
                fns_.push_back({&d, m});
                define(m, d.name, {EntityKind::Fn, static_cast<int>(fns_.size()) - 1, at});
                break;
            case ast::DeclKind::Extern:
                extern_decls_.push_back(&d);
                define(m, d.name, {EntityKind::Extern, static_cast<int>(extern_decls_.size()) - 1, at});
                break;
            default:
                if (!modules_[mi].is_main)
                    error(d.loc, "an imported module may only contain import, const, fn and "
                                 "extern declarations");
                break;
            }
        }
        if (!modules_[mi].is_main)
            for (const ast::Region &r : modules_[mi].ast->regions)
                error(r.loc, "an imported module may only contain import, const, fn and extern declarations, "
                             "not a region (name regions in the main file)");
    }
}

}  // namespace trlc::sema
