// ir — helpers of the typed IR: dtype names, affine forms, type printing,
// guard constructors, equation specificity and tensor lookup (the contract is in ir/ir.h).
#include "ir/ir.h"

#include "trl_ops.h"

#include <algorithm>
#include <sstream>

namespace trlc::ir {

bool has_dynamic_extent(const Type &t) {
    for (const Extent &x : t.shape)
        if (!x.is_static()) return true;
    for (const Type &e : t.elems)
        if (has_dynamic_extent(e)) return true;
    return false;
}

int64_t slot_bytes(const Type &t) {
    if (t.is_tuple) {
        int64_t sum = 0;
        for (const Type &e : t.elems) sum += slot_bytes(e);
        return sum;
    }
    int64_t n = 1;
    for (const Extent &e : t.shape) n *= std::max<int64_t>(e.max_value, 0);
    int64_t size = 8;
    switch (t.dtype) {
    case DType::Bool: size = 1; break;
    case DType::I32: size = 4; break;
    case DType::F32: size = 4; break;
    case DType::F64: size = 8; break;
    case DType::Key: size = 16; break;
    }
    return (n * size + 15) / 16 * 16;
}

const char *dtype_name(DType d) {
    switch (d) {
    case DType::Bool: return "bool";
    case DType::I32: return "i32";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::Key: return "key";
    }
    return "?";
}

bool Affine::is_constant() const {
    for (int64_t c : coef)
        if (c != 0) return false;
    return true;
}

bool Affine::operator==(const Affine &o) const {
    if (constant != o.constant) return false;
    size_t n = std::max(coef.size(), o.coef.size());
    for (size_t v = 0; v < n; ++v)
        if (coef_of(static_cast<int>(v)) != o.coef_of(static_cast<int>(v))) return false;
    return true;
}

std::pair<int64_t, int64_t> quasi_value(Guard::Quasi q, int64_t v, int64_t d) {
    if (q == Guard::Plain) return {v, 1};
    if (q == Guard::Div) return {v, d};
    // Floored, as the interpreter's and the generated code's i32 `%` and the isl AST's divisions.
    return {q == Guard::FloorDiv ? trl::floordiv_i64(v, d) : trl::pmod_i64(v, d), 1};
}

GuardPtr guard_cmp(BinaryOp op, Affine lhs, Affine rhs) {
    auto g = std::make_shared<Guard>();
    g->kind = Guard::Cmp;
    g->cmp = op;
    g->lhs = std::move(lhs);
    g->rhs = std::move(rhs);
    return g;
}

GuardPtr guard_and(GuardPtr a, GuardPtr b) {
    if (!a) return b;
    if (!b) return a;
    auto g = std::make_shared<Guard>();
    g->kind = Guard::And;
    g->a = std::move(a);
    g->b = std::move(b);
    return g;
}

namespace {

std::string var_name(int v, const std::vector<std::string> &names) {
    if (v < static_cast<int>(names.size())) return names[v];
    return "v" + std::to_string(v);
}

/* Print "a" with positive terms first, so that T - t reads "8 - t", not "-t + 8". */
std::string affine_to_string(const Affine &a, const std::vector<std::string> &names) {
    std::vector<std::pair<int64_t, std::string>> terms;  // (coef, var name or "" for constant)
    for (size_t v = 0; v < a.coef.size(); ++v)
        if (a.coef[v] != 0) terms.emplace_back(a.coef[v], var_name(static_cast<int>(v), names));
    if (a.constant != 0 || terms.empty()) terms.emplace_back(a.constant, "");
    std::stable_partition(terms.begin(), terms.end(), [](const auto &t) { return t.first >= 0; });
    std::ostringstream ss;
    for (size_t k = 0; k < terms.size(); ++k) {
        int64_t c = terms[k].first;
        const std::string &n = terms[k].second;
        int64_t mag = c < 0 ? -c : c;
        if (k == 0)
            ss << (c < 0 ? "-" : "");
        else
            ss << (c < 0 ? " - " : " + ");
        if (n.empty())
            ss << mag;
        else if (mag == 1)
            ss << n;
        else
            ss << mag << "*" << n;
    }
    return ss.str();
}

std::string index_to_string(const IndexExpr &e, const std::vector<std::string> &names) {
    if (e.kind == IndexExpr::Aff) return affine_to_string(e.aff, names);
    return std::string(e.kind == IndexExpr::Min ? "min(" : "max(") + index_to_string(*e.a, names) + ", " +
           index_to_string(*e.b, names) + ")";
}

}  // namespace

std::string index_expr_to_string(const IndexExpr &e, const std::vector<std::string> &var_names) {
    return index_to_string(e, var_names);
}

std::string type_to_string(const Type &t, const std::vector<std::string> &var_names) {
    std::ostringstream ss;
    if (t.is_tuple) {
        ss << "(";
        for (size_t k = 0; k < t.elems.size(); ++k) ss << (k ? ", " : "") << type_to_string(t.elems[k], var_names);
        if (t.elems.size() == 1) ss << ",";
        ss << ")";
        return ss.str();
    }
    ss << dtype_name(t.dtype);
    if (!t.shape.empty()) {
        ss << "[";
        for (size_t k = 0; k < t.shape.size(); ++k) {
            ss << (k ? ", " : "");
            if (t.shape[k].is_static())
                ss << t.shape[k].max_value;
            else
                ss << index_to_string(*t.shape[k].dynamic, var_names);
        }
        ss << "]";
    }
    return ss.str();
}

int Equation::specificity() const {
    int s = 0;
    for (const PatternItem &p : pattern)
        s += p.kind == PatternItem::Constant ? 2 : p.kind == PatternItem::Shift ? 1 : 0;
    return s;
}

int Program::tensor_index(const std::string &name) const {
    for (size_t k = 0; k < tensors.size(); ++k)
        if (tensors[k].name == name) return static_cast<int>(k);
    return -1;
}

std::string affine_compact(const Affine &a, const std::vector<std::string> &vars) {
    std::string s;
    for (size_t v = 0; v < vars.size(); ++v) {
        int64_t c = a.coef_of(static_cast<int>(v));
        if (c == 0) continue;
        if (c < 0)
            s += "-";
        else if (!s.empty())
            s += "+";
        int64_t m = c < 0 ? -c : c;
        if (m != 1) s += std::to_string(m) + "*";
        s += vars[v];
    }
    if (s.empty()) return std::to_string(a.constant);
    if (a.constant > 0) s += "+" + std::to_string(a.constant);
    if (a.constant < 0) s += std::to_string(a.constant);
    return s;
}

std::string index_expr_compact(const IndexExpr &e, const std::vector<std::string> &vars) {
    if (e.kind == IndexExpr::Aff || !e.a || !e.b) return affine_compact(e.aff, vars);
    return std::string(e.kind == IndexExpr::Min ? "min(" : "max(") + index_expr_compact(*e.a, vars) + ", " +
           index_expr_compact(*e.b, vars) + ")";
}

}  // namespace trlc::ir
