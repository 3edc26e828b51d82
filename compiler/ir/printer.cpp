// printer — the typed IR as text (format and example in ir/printer.h).
//
// Expressions print infix with the .trl precedences (|| < && < comparisons < + - < * / % <
// unary - ! < ** < postfix), parenthesized only where the tree needs it, so `a - (b - c)` keeps
// its parentheses and `(a + b) + c` prints as `a + b + c`.  Bindings are found by counting each
// node's parents in the expression DAG of one equation (emit, save).
#include "ir/printer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "ir/ops.h"

namespace trlc::ir {

const char *unary_name(UnaryOp op) {
    // Operators print as their symbol; every other row of ir/ops.def by its source name (a row
    // added to the table, softplus, prints without a change here).
    if (op == UnaryOp::Neg) return "-";
    if (op == UnaryOp::Not) return "!";
    const char *name = unary_info(op).name;
    return name && *name ? name : "<unary?>";
}

const char *binary_name(BinaryOp op) {
    switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Pow: return "**";
    case BinaryOp::Min: return "min";
    case BinaryOp::Max: return "max";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::And: return "&&";
    case BinaryOp::Or: return "||";
    }
    return "<binary?>";
}

const char *builtin_name(BuiltinOp op) {
    switch (op) {
    case BuiltinOp::Sum: return "sum";
    case BuiltinOp::Mean: return "mean";
    case BuiltinOp::ReduceMax: return "max";
    case BuiltinOp::ReduceMin: return "min";
    case BuiltinOp::Argmax: return "argmax";
    case BuiltinOp::Logsumexp: return "logsumexp";
    case BuiltinOp::Softmax: return "softmax";
    case BuiltinOp::LogSoftmax: return "log_softmax";
    case BuiltinOp::MatMul: return "matmul";
    case BuiltinOp::Transpose: return "transpose";
    case BuiltinOp::Reshape: return "reshape";
    case BuiltinOp::Concat: return "concat";
    case BuiltinOp::Stack: return "stack";
    case BuiltinOp::OneHot: return "one_hot";
    case BuiltinOp::Gather: return "gather";
    case BuiltinOp::Cumsum: return "cumsum";
    case BuiltinOp::DiscountedCumsum: return "discounted_cumsum";
    case BuiltinOp::Arange: return "arange";
    case BuiltinOp::Zeros: return "zeros";
    case BuiltinOp::Ones: return "ones";
    case BuiltinOp::Full: return "full";
    case BuiltinOp::Uniform: return "uniform";
    case BuiltinOp::Normal: return "normal";
    case BuiltinOp::Categorical: return "categorical";
    case BuiltinOp::Clamp: return "clamp";
    case BuiltinOp::FoldIn: return "fold_in";
    case BuiltinOp::Orthogonal: return "orthogonal";
    case BuiltinOp::Permutation: return "permutation";
    case BuiltinOp::ScatterAdd: return "scatter_add";
    }
    return "<builtin?>";
}

namespace {

// Precedence levels of the printed forms; an operand is parenthesized when its level is lower
// than its position needs.
enum Prec { kOr = 1, kAnd, kCmp, kAdd, kMul, kUnary, kPow, kAtom };

int binary_prec(BinaryOp op) {
    switch (op) {
    case BinaryOp::Or: return kOr;
    case BinaryOp::And: return kAnd;
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::Eq:
    case BinaryOp::Ne: return kCmp;
    case BinaryOp::Add:
    case BinaryOp::Sub: return kAdd;
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Mod: return kMul;
    case BinaryOp::Pow: return kPow;
    case BinaryOp::Min:
    case BinaryOp::Max: return kAtom;  // min(a, b)
    }
    return kAtom;
}

/** The shortest decimal that reads back to "v" (as a float when "f32"), with ".0" when it
 *  would read as an integer. */
std::string real_literal(double v, bool f32) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    for (int p = 1; p <= 17; ++p) {
        std::snprintf(buf, sizeof buf, "%.*g", p, v);
        double back = std::strtod(buf, nullptr);
        if (f32 ? static_cast<float>(back) == static_cast<float>(v) : back == v) break;
    }
    std::string s = buf;
    if (s.find('e') != std::string::npos && v == std::floor(v) && std::fabs(v) < 1e16) {
        std::snprintf(buf, sizeof buf, "%.0f", v);  // 10.0, not 1e+01
        s = buf;
    }
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
}

std::string scalar_literal(DType d, double v) {
    switch (d) {
    case DType::Bool: return v != 0 ? "true" : "false";
    case DType::I32:
    case DType::Key: {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
        return buf;
    }
    case DType::F32: return real_literal(v, true);
    case DType::F64: return real_literal(v, false);
    }
    return "?";
}

std::string var_name(const std::vector<std::string> &vars, int v) {
    if (v >= 0 && v < static_cast<int>(vars.size())) return vars[v];
    return "<var " + std::to_string(v) + ">";
}

std::string index_text(const IndexExprPtr &e, const std::vector<std::string> &vars) {
    return e ? index_expr_compact(*e, vars) : std::string("<null>");
}

std::string shape_text(const Type &t, const std::vector<std::string> &vars) {
    std::string s = "[";
    for (size_t k = 0; k < t.shape.size(); ++k) {
        s += k ? ", " : "";
        s += t.shape[k].is_static() ? std::to_string(t.shape[k].max_value) : index_text(t.shape[k].dynamic, vars);
    }
    return s + "]";
}

size_t element_count(const Type &t) {
    size_t n = 1;
    for (const Extent &e : t.shape) n *= static_cast<size_t>(e.max_value < 0 ? 0 : e.max_value);
    return n;
}

/* Row-major values of a non-scalar literal as nested lists, the first 16 values only. */
std::string array_literal(const Node &n) {
    const size_t kShown = 16;
    if (n.data.size() > kShown || n.data.size() != element_count(n.type) || n.type.shape.empty()) {
        std::string s = "const(" + type_to_string(n.type) + ":";
        for (size_t k = 0; k < n.data.size() && k < 4; ++k)
            s += (k ? ", " : " ") + scalar_literal(n.type.dtype, n.data[k]);
        return s + (n.data.size() > 4 ? ", …)" : ")");
    }
    std::string s;
    size_t at = 0;
    // Nested lists by the shape's extents, innermost last.
    std::vector<int64_t> ext;
    for (const Extent &e : n.type.shape) ext.push_back(e.max_value);
    std::vector<size_t> pos(ext.size(), 0);
    for (size_t k = 0; k < ext.size(); ++k) s += "[";
    while (at < n.data.size()) {
        s += scalar_literal(n.type.dtype, n.data[at++]);
        size_t d = ext.size();
        int closed = 0;
        while (d > 0 && ++pos[d - 1] == static_cast<size_t>(ext[d - 1])) {
            pos[d - 1] = 0;
            --d;
            ++closed;
        }
        s += std::string(closed, ']');
        if (d == 0) break;
        s += ", ";
        for (int k = 0; k < closed; ++k) s += "[";
    }
    return s;
}

struct Text {
    std::string s;
    int prec = kAtom;
};

/** Prints the expressions of one equation (emit, save): bindings go to "lines". */
class ExprPrinter {
public:
    ExprPrinter(const Program &prog, const std::vector<std::string> &vars, bool types, bool bindings)
        : prog_(prog), vars_(vars), types_(types), bindings_(bindings) {}

    /** Count the parents of every node below "root" (call once per root before text()). */
    void count(const NodePtr &root) {
        if (!root) return;
        ++uses_[root.get()];
        std::vector<const Node *> stack{root.get()};
        seen_.insert(root.get());
        while (!stack.empty()) {
            const Node *n = stack.back();
            stack.pop_back();
            for (const NodePtr &a : n->args) {
                if (!a) continue;
                ++uses_[a.get()];
                if (seen_.insert(a.get()).second) stack.push_back(a.get());
            }
        }
    }

    std::string text(const NodePtr &n) { return n ? expr(*n).s : "<null>"; }

    std::vector<std::string> lines;  // "%0 = exp(x[t])" in the order they are needed

private:
    bool leaf(const Node &n) const {
        if (n.kind == NodeKind::Coord) return true;
        if (n.kind == NodeKind::Const) return n.data.size() <= 1;
        return false;
    }

    bool bind(const Node &n) const {
        if (!bindings_ || leaf(n)) return false;
        if (types_) return true;
        if (n.kind == NodeKind::Read) {  // a point read is as short as its name
            for (const ReadIndex &r : n.index)
                if (r.is_slice) return uses_.count(&n) && uses_.at(&n) >= 2;
            return false;
        }
        auto it = uses_.find(&n);
        return it != uses_.end() && it->second >= 2;
    }

    Text expr(const Node &n) {
        auto done = names_.find(&n);
        if (done != names_.end()) return {done->second, kAtom};
        auto memo = memo_.find(&n);
        if (memo != memo_.end()) return memo->second;
        Text t = compose(n);
        if (bind(n)) {
            std::string name = "%" + std::to_string(names_.size());
            names_[&n] = name;
            std::string line = name + " = " + t.s;
            if (types_) line += " : " + type_to_string(n.type, vars_);
            lines.push_back(line);
            return {name, kAtom};
        }
        // Without bindings a shared node is printed again; keep long repeats bounded.
        if (t.s.size() > 400) t.s = t.s.substr(0, 400) + "…";
        if (!bindings_) memo_[&n] = t;
        return t;
    }

    std::string operand(const NodePtr &a, int min_prec) {
        if (!a) return "<null>";
        Text t = expr(*a);
        return t.prec >= min_prec ? t.s : "(" + t.s + ")";
    }

    std::string arg(const Node &n, size_t k) { return k < n.args.size() ? operand(n.args[k], 0) : "<missing operand>"; }

    std::string call(const std::string &name, const Node &n, size_t from = 0) {
        std::string s = name + "(";
        for (size_t k = from; k < n.args.size(); ++k) s += (k > from ? ", " : "") + arg(n, k);
        return s;  // caller closes
    }

    std::string axes_text(const Node &n) const {
        if (n.axes.size() == 1) return std::to_string(n.axes[0]);
        std::string s = "(";
        for (size_t k = 0; k < n.axes.size(); ++k) s += (k ? ", " : "") + std::to_string(n.axes[k]);
        return s + (n.axes.size() == 1 ? ",)" : ")");
    }

    Text compose(const Node &n) {
        switch (n.kind) {
        case NodeKind::Const:
            if (!n.bound.empty()) return {n.bound, kAtom};
            if (n.type.shape.empty() && !n.type.is_tuple && n.data.size() == 1) {
                std::string s = scalar_literal(n.type.dtype, n.data[0]);
                return {s, s[0] == '-' ? kUnary : kAtom};
            }
            return {array_literal(n), kAtom};
        case NodeKind::Coord: return {var_name(vars_, n.var), kAtom};
        case NodeKind::Read: {
            std::string s = n.tensor >= 0 && n.tensor < static_cast<int>(prog_.tensors.size())
                                ? prog_.tensors[n.tensor].name
                                : "<tensor " + std::to_string(n.tensor) + ">";
            if (n.index.empty()) return {s, kAtom};
            s += "[";
            for (size_t k = 0; k < n.index.size(); ++k) {
                const ReadIndex &r = n.index[k];
                s += k ? ", " : "";
                s += r.is_slice ? index_text(r.lo, vars_) + ":" + index_text(r.hi, vars_) : index_text(r.point, vars_);
            }
            return {s + "]", kAtom};
        }
        case NodeKind::Unary:
            if (n.uop == UnaryOp::Neg || n.uop == UnaryOp::Not)
                return {std::string(unary_name(n.uop)) +
                            (n.args.empty() ? "<missing operand>" : operand(n.args[0], kUnary + 1)),
                        kUnary};
            return {call(unary_name(n.uop), n) + ")", kAtom};
        case NodeKind::Binary: {
            int p = binary_prec(n.bop);
            if (p == kAtom) return {call(binary_name(n.bop), n) + ")", kAtom};
            if (n.args.size() != 2) return {call(binary_name(n.bop), n) + ")", kAtom};
            // Left-associative, except ** (right); comparisons do not chain in .trl.
            int left = n.bop == BinaryOp::Pow || p == kCmp ? p + 1 : p;
            int right = n.bop == BinaryOp::Pow ? p : p + 1;
            if (n.bop == BinaryOp::Pow) left = kAtom;  // (-x)**2, (a**b)**c
            return {operand(n.args[0], left) + " " + binary_name(n.bop) + " " + operand(n.args[1], right), p};
        }
        case NodeKind::Where: return {call("where", n) + ")", kAtom};
        case NodeKind::Cast: return {call(dtype_name(n.type.dtype), n) + ")", kAtom};
        case NodeKind::Builtin: return {builtin(n), kAtom};
        case NodeKind::Index: {
            std::string s = n.args.empty() ? "<missing operand>" : operand(n.args[0], kAtom);
            s += "[";
            for (size_t k = 0; k < n.sindex.size(); ++k) {
                const SpatialIndex &x = n.sindex[k];
                s += k ? ", " : "";
                if (x.kind == SpatialIndex::Full)
                    s += ":";
                else if (x.kind == SpatialIndex::Slice)
                    s += index_text(x.lo, vars_) + ":" + index_text(x.hi, vars_);
                else
                    s += x.value ? operand(x.value, 0) : "<null>";
            }
            return {s + "]", kAtom};
        }
        case NodeKind::Tuple: return {call("", n) + (n.args.size() == 1 ? ",)" : ")"), kAtom};
        case NodeKind::TupleGet:
            return {(n.args.empty() ? "<missing operand>" : operand(n.args[0], kAtom)) + "." +
                        std::to_string(n.int_attr),
                    kAtom};
        case NodeKind::Rng: return {call("rng", n) + ")", kAtom};
        case NodeKind::Extern: return {call(n.name, n) + ")", kAtom};
        case NodeKind::Grad: return {call("grad", n) + ")", kAtom};
        }
        return {"<node kind " + std::to_string(static_cast<int>(n.kind)) + ">", kAtom};
    }

    std::string builtin(const Node &n) {
        std::string s = call(builtin_name(n.builtin), n);
        auto keyword = [&](const std::string &k, const std::string &v) {
            s += (s.back() == '(' ? "" : ", ") + k + "=" + v;
        };
        switch (n.builtin) {
        case BuiltinOp::Reshape:
        case BuiltinOp::Arange:
        case BuiltinOp::Zeros:
        case BuiltinOp::Ones:
        case BuiltinOp::Full:
        case BuiltinOp::Uniform:
        case BuiltinOp::Normal:
        case BuiltinOp::Orthogonal:
        case BuiltinOp::Permutation: keyword("shape", shape_text(n.type, vars_)); break;
        case BuiltinOp::OneHot:
        case BuiltinOp::ScatterAdd:
            keyword(n.builtin == BuiltinOp::OneHot ? "depth" : "size", std::to_string(n.int_attr));
            break;
        default: break;
        }
        switch (n.builtin) {  // the dtype comes from the result type (f32 unless written)
        case BuiltinOp::Arange:
        case BuiltinOp::Zeros:
        case BuiltinOp::Ones:
        case BuiltinOp::Full:
        case BuiltinOp::Uniform:
        case BuiltinOp::Normal:
        case BuiltinOp::Orthogonal:
            if (!n.type.is_tuple && n.type.dtype != DType::F32) keyword("dtype", dtype_name(n.type.dtype));
            break;
        default: break;
        }
        if (n.has_axes) keyword(n.builtin == BuiltinOp::Transpose ? "axes" : "axis", axes_text(n));
        return s + ")";
    }

    const Program &prog_;
    const std::vector<std::string> &vars_;
    bool types_, bindings_;
    std::map<const Node *, int> uses_;
    std::set<const Node *> seen_;
    std::map<const Node *, std::string> names_;
    std::map<const Node *, Text> memo_;
};

std::vector<std::string> names_of(const Program &prog, const std::vector<int> &dims) {
    std::vector<std::string> out;
    for (int d : dims)
        out.push_back(d >= 0 && d < static_cast<int>(prog.dims.size()) ? prog.dims[d].name
                                                                       : "<dim " + std::to_string(d) + ">");
    return out;
}

/* One side of a guard comparison: "t", "t % 10", "(t - 3) / 4". */
std::string quasi_text(const Affine &a, Guard::Quasi q, int64_t d, const std::vector<std::string> &vars) {
    std::string s = affine_compact(a, vars);
    if (q == Guard::Plain) return s;
    bool atom = s.find_first_of("+-*", 1) == std::string::npos;
    std::string t = (atom ? s : "(" + s + ")") + (q == Guard::Mod ? " % " : " / ") + std::to_string(d);
    return q == Guard::FloorDiv ? "floor(" + t + ")" : t;
}

std::string guard_text(const Guard &g, const std::vector<std::string> &vars, int min_prec) {
    std::string s;
    int p = kAtom;
    switch (g.kind) {
    case Guard::True: return "true";
    case Guard::Cmp:
        s = quasi_text(g.lhs, g.lhs_quasi, g.lhs_divisor, vars) + " " + binary_name(g.cmp) + " " +
            quasi_text(g.rhs, g.rhs_quasi, g.rhs_divisor, vars);
        p = kCmp;
        break;
    case Guard::And:
    case Guard::Or:
        p = g.kind == Guard::And ? kAnd : kOr;
        s = (g.a ? guard_text(*g.a, vars, p) : "<null>") + (g.kind == Guard::And ? " && " : " || ") +
            (g.b ? guard_text(*g.b, vars, p + 1) : "<null>");
        break;
    case Guard::Not:
        s = "!" + (g.a ? guard_text(*g.a, vars, kAtom) : std::string("<null>"));
        p = kUnary;
        break;
    }
    return p >= min_prec ? s : "(" + s + ")";
}

void print_lines(std::ostream &out, const ExprPrinter &p, const char *indent) {
    for (const std::string &l : p.lines) out << indent << l << "\n";
}

}  // namespace

std::string node_to_string(const Program &prog, const Node &node, const std::vector<std::string> &vars) {
    ExprPrinter p(prog, vars, false, false);
    std::shared_ptr<const Node> alias(std::shared_ptr<const Node>(), &node);  // non-owning
    return p.text(alias);
}

std::string guard_to_string(const Guard &g, const std::vector<std::string> &vars) { return guard_text(g, vars, 0); }

std::string lhs_to_string(const Program &prog, const Tensor &t, const Equation &eq) {
    std::vector<std::string> vars = names_of(prog, eq.vars);
    std::string s = t.name;
    if (eq.pattern.empty()) return s;
    s += "[";
    for (size_t k = 0; k < eq.pattern.size(); ++k) {
        const PatternItem &p = eq.pattern[k];
        s += k ? ", " : "";
        if (p.kind == PatternItem::Constant)
            s += std::to_string(p.offset);
        else
            s += var_name(vars, p.var);
        if (p.kind == PatternItem::Shift) s += "+" + std::to_string(p.offset);
    }
    return s + "]";
}

void print_program(const Program &prog, std::ostream &out, const PrintOptions &opts) {
    std::set<std::string> dim_bounds;
    for (const Dim &d : prog.dims) dim_bounds.insert(d.bound_name);
    for (const auto &b : prog.bounds)
        if (!dim_bounds.count(b.first)) out << "bound " << b.first << " = " << b.second << "\n";
    for (size_t k = 0; k < prog.dims.size(); ++k) {
        const Dim &d = prog.dims[k];
        out << "dim " << d.name << " < ";
        if (!d.bound_name.empty()) out << d.bound_name << " = ";
        out << d.bound;
        if (k < opts.dim_notes.size() && !opts.dim_notes[k].empty()) out << "  // " << opts.dim_notes[k];
        out << "\n";
    }
    for (const ExternFn &f : prog.externs) {
        out << "extern \"" << f.header << "\" fn " << f.name << "(";
        for (size_t k = 0; k < f.params.size(); ++k)
            out << (k ? ", " : "") << f.params[k].first << ": " << type_to_string(f.params[k].second);
        out << ") -> " << type_to_string(f.result) << "\n";
    }
    for (const Tensor &t : prog.tensors) {
        std::vector<std::string> dims = names_of(prog, t.dims);
        out << t.name;
        if (!dims.empty()) {
            out << "[";
            for (size_t k = 0; k < dims.size(); ++k) out << (k ? ", " : "") << dims[k];
            out << "]";
        }
        out << " : " << type_to_string(t.type);
        if (t.is_input)
            out << "  // input";
        else if (t.is_load)
            out << " from \"" << t.load_path << "\"";
        if (t.is_hidden) out << "  // hidden";
        if (t.allreduce_mean) out << "  // mean over the ranks";
        if (t.rank_keyed) out << "  // per rank";
        if (!t.stream_name.empty()) out << "  // draws from " << t.stream_name << "'s streams";
        out << "\n";
        for (const Equation &eq : t.equations) {
            std::vector<std::string> vars = names_of(prog, eq.vars);
            ExprPrinter p(prog, vars, opts.types, true);
            p.count(eq.body);
            std::string body = p.text(eq.body);
            print_lines(out, p, "  ");
            out << "  " << lhs_to_string(prog, t, eq) << " = " << body;
            if (eq.guard) out << " when " << guard_to_string(*eq.guard, vars);
            if (eq.otherwise) out << "  // otherwise";
            out << "\n";
        }
    }
    for (const Emit &e : prog.emits) {
        std::vector<std::string> vars = names_of(prog, e.vars);
        ExprPrinter p(prog, vars, opts.types, true);
        for (const auto &f : e.fields) p.count(f.second);
        p.count(e.guard);
        std::string s = "emit \"" + e.stream + "\"";
        if (!vars.empty()) {
            s += "[";
            for (size_t k = 0; k < vars.size(); ++k) s += (k ? ", " : "") + vars[k];
            s += "]";
        }
        s += " {";
        for (size_t k = 0; k < e.fields.size(); ++k)
            s += (k ? ", " : " ") + e.fields[k].first + ": " + p.text(e.fields[k].second);
        s += " }";
        if (e.guard) s += " when " + p.text(e.guard);
        print_lines(out, p, "");
        out << s << "\n";
    }
    for (const Save &s : prog.saves) {
        std::vector<std::string> none;
        ExprPrinter p(prog, none, opts.types, true);
        p.count(s.value);
        std::string v = p.text(s.value);
        print_lines(out, p, "");
        if (!s.output.empty())
            out << "output " << s.output << " = " << v << "\n";
        else
            out << "save " << v << " to \"" << s.path << "\"\n";
    }
}

}  // namespace trlc::ir
