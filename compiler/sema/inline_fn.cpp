// inline_fn — `fn` calls are inlined: the arguments (typed values of the call
// site) are bound to the parameters and the body is lowered again at each
// call, so fns are shape-polymorphic.  A `let` is lowered once and shared by
// its uses (the IR is a DAG).  `let (a, b) = e` destructures a tuple.  A fn
// body sees its own module's names and its parameters, but no dims.  A call
// of a fn that is already being inlined is recursion: an error naming the
// call chain.  `extern` calls check their arguments against the declared
// parameter types.
#include "sema/sema_impl.h"

namespace trlc::sema {

Val Sema::inline_fn(int fn, const ast::Expr &call, Scope &scope) {
    const FnInfo &f = fns_[fn];
    const ast::Decl &d = *f.decl;
    Loc def_loc = d.name_loc.valid() ? d.name_loc : d.loc;
    for (size_t k = 0; k < call_stack_.size(); ++k) {
        if (call_stack_[k].first != fn) continue;
        std::string chain;
        for (size_t j = k; j < call_stack_.size(); ++j) chain += fns_[call_stack_[j].first].decl->name + " -> ";
        chain += d.name;
        error(call.loc, "recursive call of fn '" + d.name + "'");
        note(def_loc, "fn '" + d.name + "' is defined here");
        note(call_stack_[k].second, "call chain: " + chain);
        return {};
    }
    // Bind arguments: positional first, then keywords by parameter name.
    size_t npos = call.args.size() - 1;
    if (npos > d.params.size()) {
        error(call.loc, "fn '" + d.name + "' takes " + std::to_string(d.params.size()) + " argument" +
                            (d.params.size() == 1 ? "" : "s") + ", got " + std::to_string(npos + call.kwargs.size()));
        note(def_loc, "fn '" + d.name + "' is defined here");
        return {};
    }
    std::vector<const ast::Expr *> bound(d.params.size(), nullptr);
    for (size_t k = 0; k < npos; ++k) bound[k] = call.args[k + 1].get();
    for (const ast::KeywordArg &kw : call.kwargs) {
        size_t p = 0;
        while (p < d.params.size() && d.params[p].name != kw.name) ++p;
        if (p == d.params.size()) {
            error(kw.loc, "fn '" + d.name + "' has no parameter named '" + kw.name + "'");
            note(def_loc, "fn '" + d.name + "' is defined here");
            return {};
        }
        if (bound[p]) {
            error(kw.loc, "argument '" + kw.name + "' of fn '" + d.name + "' is given twice");
            return {};
        }
        bound[p] = kw.value.get();
    }
    for (size_t p = 0; p < d.params.size(); ++p)
        if (!bound[p]) {
            error(call.loc, "missing argument '" + d.params[p].name + "' in call of fn '" + d.name + "'");
            note(def_loc, "fn '" + d.name + "' is defined here");
            return {};
        }
    Scope inner;
    inner.module = f.module;
    inner.vars = scope.vars;
    inner.var_names = scope.var_names;
    inner.dims_visible = false;
    inner.binder = scope.binder;
    inner.fn_name = d.name;
    bool ok = true;
    for (size_t p = 0; p < d.params.size(); ++p) {
        Val v = lower(*bound[p], scope);
        ok = ok && v.ok();
        inner.locals[d.params[p].name] = v;
    }
    if (!ok) return {};
    call_stack_.emplace_back(fn, call.loc);
    struct Pop {  // a Deferred exception may unwind through here
        std::vector<std::pair<int, Loc>> &stack;
        ~Pop() { stack.pop_back(); }
    } pop{call_stack_};
    Val result;
    bool returned = false;
    for (const ast::FnStmt &s : d.body) {
        if (!s.value) continue;
        Val v = lower(*s.value, inner);
        if (s.kind == ast::FnStmt::Return) {
            result = v;
            returned = true;
            break;
        }
        if (s.names.size() == 1) {
            inner.locals[s.names[0]] = v;
            continue;
        }
        if (v.ok() && (!v.type().is_tuple || v.type().elems.size() != s.names.size())) {
            error(s.value->loc, "cannot destructure " + type_str(v.type(), inner) + " into " +
                                    std::to_string(s.names.size()) + " names");
            v = Val{};
        }
        for (size_t k = 0; k < s.names.size(); ++k) inner.locals[s.names[k]] = v.ok() ? tuple_get(v, k) : Val{};
    }
    if (!returned) error(def_loc, "fn '" + d.name + "' has no return statement");
    return result;
}

Val Sema::call_extern(int ext, const ast::Expr &call, Scope &scope) {
    if (ext >= static_cast<int>(prog_.externs.size())) return {};
    const ir::ExternFn &f = prog_.externs[ext];
    if (f.name.empty()) return {};  // its declaration had an error
    size_t npos = call.args.size() - 1;
    if (!call.kwargs.empty()) {
        error(call.kwargs[0].loc, "extern fn '" + f.name + "' takes no keyword arguments");
        return {};
    }
    if (npos != f.params.size()) {
        error(call.loc, "extern fn '" + f.name + "' takes " + std::to_string(f.params.size()) + " arguments, got " +
                            std::to_string(npos));
        note(f.loc, "extern fn '" + f.name + "' is declared here");
        return {};
    }
    ir::Node n;
    n.kind = ir::NodeKind::Extern;
    n.name = f.name;
    n.loc = call.loc;
    n.type = f.result;
    for (size_t k = 0; k < npos; ++k) {
        const ast::Expr &a = *call.args[k + 1];
        Val v = lower(a, scope);
        if (!v.ok()) return {};
        const ir::Type &want = f.params[k].second;
        if (v.weak && !v.type().is_tuple && !want.is_tuple && dtype_kind(v.type().dtype) <= dtype_kind(want.dtype))
            v = convert(v, want.dtype);
        if (!type_equal(v.type(), want)) {
            error(a.loc, "argument '" + f.params[k].first + "' of extern fn '" + f.name + "' is " +
                             type_str(want, scope) + ", got " + type_str(v.type(), scope));
            note(f.loc, "extern fn '" + f.name + "' is declared here");
            return {};
        }
        n.args.push_back(v.node);
    }
    return {make_node(std::move(n)), false, nullptr};
}

}  // namespace trlc::sema
