#pragma once
// builtin_call — one call of a builtin being lowered, private to sema/.
//
// Sema::lower_builtin (builtins.cpp) makes a BuiltinCall and hands it to one function per
// family of builtins, in turn: elementwise and reductions (builtins_math.cpp), shapes
// (builtins_shapes.cpp), constructors, randomness, pytree helpers and initializers
// (builtins_make.cpp).  It holds the call and the checks every family uses: the arity, the
// keywords allowed, `axis=` and `dtype=` keywords, numeric and key arguments.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "sema/sema_impl.h"

namespace trlc::sema {

/** A call of builtin "name" with positional arguments call.args[1..] (call.args[0] is the
 *  callee), lowered in "scope".  Errors are reported through "s". */
struct BuiltinCall {
    BuiltinCall(Sema &s, const std::string &name, const ast::Expr &call, Scope &scope)
        : s(s), name(name), call(call), scope(scope), loc(call.loc), npos(call.args.size() - 1) {}

    Sema &s;
    const std::string &name;
    const ast::Expr &call;
    Scope &scope;
    Loc loc;
    size_t npos;  // the number of positional arguments

    /** Positional argument k. */
    const ast::Expr &pos(size_t k) const { return *call.args[k + 1]; }
    /** lo..hi positional arguments (hi > 100: at least lo); reports otherwise. */
    bool arity(size_t lo, size_t hi) const;
    /** Every keyword is one of "allowed"; reports otherwise. */
    bool keywords(std::initializer_list<const char *> allowed) const;
    /** The keyword argument "k", or null. */
    const ast::KeywordArg *kw(const char *k) const;
    /** Positional argument k, lowered. */
    Val value(size_t k) const { return s.lower(pos(k), scope); }
    /** "v" is a numeric array (not a tuple or a key); reports at "at" otherwise. */
    bool numeric(const Val &v, Loc at) const;
    /** A value holding node "n" at the call's location. */
    Val make(ir::Node n, const Val &like, bool weak) const;
    /** axis=: one int or a list; normalized against "rank", sorted into "out". */
    bool axes_of(const ast::KeywordArg *k, size_t rank, std::vector<int64_t> *out) const;
    /** dtype=: "def" when absent. */
    bool dtype_kw(ir::DType def, ir::DType *out) const;
    /** A Builtin node "op" of type "t" at the call's location. */
    ir::Node builtin_node(ir::BuiltinOp op, ir::Type t, std::vector<ir::NodePtr> args) const;
    /** "k" is a scalar random key made by rng(…); reports at "at" otherwise. */
    bool key_arg(const Val &k, Loc at) const;
};

/** The float dtype a math builtin computes in for inputs of dtype "d" (f64 stays, else f32). */
inline ir::DType float_of(ir::DType d) { return d == ir::DType::F64 ? d : ir::DType::F32; }

}  // namespace trlc::sema
