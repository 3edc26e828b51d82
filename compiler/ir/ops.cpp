// ops — the rows of ir/ops.def as a constant array and the lookups of ir/ops.h.
#include "ir/ops.h"

namespace trlc::ir {

namespace {

#define TRL_STR(x) #x
const UnaryInfo kUnary[] = {
#define TRL_UNARY(E, name, typing, f32, f64, i32, check, adjoint, transcendental)                                      \
    {UnaryOp::E, name, UnaryTyping::typing, TRL_STR(f32), TRL_STR(f64), TRL_STR(i32), check, transcendental != 0},
#include "ir/ops.def"
};
#undef TRL_STR

}  // namespace

const UnaryInfo &unary_info(UnaryOp op) { return kUnary[static_cast<int>(op)]; }

const UnaryInfo *unary_by_name(const std::string &name) {
    if (name.empty()) return nullptr;
    for (const UnaryInfo &u : kUnary)
        if (name == u.name) return &u;
    return nullptr;
}

// kUnary[k] is the row of UnaryOp k: the enum (ir.h) is made from the same rows in order.

}  // namespace trlc::ir
