// extern_call — code for a call of an `extern` function (dsl/README.md §7.6) inside a kernel:
// ExprEmitter::emit_extern (declared in codegen/expr_emitter.h).
//
// The ABI (checked against the header by externs/extern_check.cpp, documented in externs.h and
// dsl/README.md): inputs by value (scalars) or as arrays (the argument's local, row-major), then
// one output per result element, a local array or the address of a local scalar:
//
//     double val7[4]; float val8; bool val9;
//     cartpole_step(val3, val5, val7, &val8, &val9);
//
// The header is #included by externs/source_output.cpp (finish_source).
#include "codegen/expr_emitter.h"

namespace trlc::codegen {

Val ExprEmitter::emit_extern(const ir::Node &n) {
    const ir::ExternFn *f = nullptr;
    for (const ir::ExternFn &e : prog_.externs)
        if (e.name == n.name) f = &e;
    if (!f || f->params.size() != n.args.size()) unsupported(n.loc, "this extern call");
    std::vector<std::string> args;
    for (size_t k = 0; k < n.args.size(); ++k) {
        const ir::Type &want = f->params[k].second;
        Val v = emit(*n.args[k]);
        if (v.tuple || v.dt == DType::Key || want.is_tuple) unsupported(n.loc, "this extern argument");
        if (want.shape.empty()) {
            if (!v.scalar()) unsupported(n.loc, "an array where the extern fn takes a scalar");
            args.push_back(conv(v.name, v.dt, want.dtype));
            continue;
        }
        if (v.scalar() || v.max_numel() != static_numel(want) || v.dt != want.dtype)
            unsupported(n.loc, "this extern argument (its shape or dtype differs)");
        args.push_back(v.name);
    }
    std::vector<ir::Type> results = f->result.is_tuple ? f->result.elems : std::vector<ir::Type>{f->result};
    std::vector<Val> outs;
    for (const ir::Type &t : results) {
        if (t.is_tuple || t.dtype == DType::Key) unsupported(n.loc, "this extern result");
        Val r = declare(t.dtype, maxs_of(t), dims_of(t));
        args.push_back(r.scalar() ? "&" + r.name : r.name);
        outs.push_back(r);
    }
    std::string call = f->name + "(";
    for (size_t k = 0; k < args.size(); ++k) call += (k ? ", " : "") + args[k];
    line(call + ");");
    if (!f->result.is_tuple) return outs[0];
    Val r;
    r.tuple = true;
    r.elems = outs;
    return r;
}

}  // namespace trlc::codegen
