// expr_emitter — the core of ExprEmitter (codegen/expr_emitter.h): emit / emit_ew and the
// fusion of elementwise chains (count_uses, lazy_ok), the lines and locals it writes (line,
// declare), shapes as C expressions and numpy broadcasting (bcast_flat, ew_shape, elem), and
// the loops over a value's elements (for_elems, for_nd).
#include "codegen/expr_emitter.h"

namespace trlc::codegen {

Val ExprEmitter::emit(const ir::Node &n) {
    Val v = emit_ew(n);
    if (v.lazy) {
        v = materialize(v);
        memo_[&n] = v;
    }
    return v;
}

Val ExprEmitter::emit_ew(const ir::Node &n) {
    auto it = memo_.find(&n);
    if (it != memo_.end()) return it->second;
    const bool saved = cur_split_;
    cur_split_ = row_split_ && row_split_->nodes.count(&n) && n.kind != NodeKind::Tuple;
    Val v = emit_uncached(n);
    cur_split_ = saved;
    if (row_split_ && row_split_->published.count(&n) && v.split && !v.tuple && !v.scalar() && publish_bytes)
        v = publish(v);
    if (row_split_) check_split(n, v);
    memo_[&n] = v;
    return v;
}

void ExprEmitter::check_split(const ir::Node &n, const Val &v) {
    const bool planned = row_split_->nodes.count(&n) > 0;
    if (v.split && !planned) throw RowSplitUnsupported{"a value split by rows outside the plan"};
    if (planned) return;  // a split node reads split or whole operands; a root tuple its elements
    for (const auto &a : n.args) {
        auto m = a ? memo_.find(a.get()) : memo_.end();
        if (m != memo_.end() && m->second.split) throw RowSplitUnsupported{"a split value read by a whole one"};
    }
}

Val ExprEmitter::publish(const Val &v) {
    Val m = v.lazy ? materialize(v) : v;  // this thread's rows (materialize keeps the split)
    if (m.buffer >= 0) {                  // a view of stored bytes: whole already
        m.split = false;
        return m;
    }
    const int64_t off = (*publish_bytes + 15) / 16 * 16;
    *publish_bytes = off + m.max_numel() * leaf_size(m.dt);
    Val pub = m;
    pub.name = fresh("pub");
    const std::string ct = ctype(m.dt);
    const std::string row = prod_c(m.dims, 1, m.dims.size());
    line("TRLG_PUBLISH(" + ct + ", " + pub.name + ", " + publish_base + " + " + std::to_string(off) + ", " + m.name +
         ", " + mul_c("trl_r0", row) + ", " + mul_c("trl_r1", row) + ");");
    pub.split = false;
    return pub;
}

void ExprEmitter::count_uses(const ir::Node &root) {
    fuse_ = true;
    std::set<const ir::Node *> seen;
    std::function<void(const ir::Node &)> walk = [&](const ir::Node &n) {
        if (!seen.insert(&n).second) return;
        for (const auto &a : n.args)
            if (a) ++uses_[a.get()], walk(*a);
        for (const auto &si : n.sindex)
            if (si.value) ++uses_[si.value.get()], walk(*si.value);
    };
    ++uses_[&root];
    walk(root);
}

bool ExprEmitter::lazy_ok(const ir::Node &n, const Val &r) const {
    auto it = uses_.find(&n);
    if (!fuse_ || r.tuple || r.scalar() || it == uses_.end() || it->second != 1) return false;
    auto fp = [](DType d) { return d == DType::F32 || d == DType::F64; };
    if (!fp(n.type.dtype) && n.type.dtype != DType::Bool) return false;
    for (size_t k = 0; k < n.args.size(); ++k) {
        const auto &a = n.args[k];
        bool cond = n.kind == NodeKind::Where && k == 0 && a && a->type.dtype == DType::Bool;
        if (!a || a->type.is_tuple || !(fp(a->type.dtype) || cond)) return false;
    }
    return true;
}

void ExprEmitter::line(const std::string &s) {
    std::string pad(indent_ * 4, ' ');
    // On a line of its own: libFormat keeps an upper-case macro alone on its line as a
    // statement, so the loop is formatted as usual below it.
    if (sequential_loop(s)) out_ += pad + "TRLG_SEQ\n";
    out_ += pad + s + "\n";
}

bool ExprEmitter::sequential_loop(const std::string &s) {
    if (s.compare(0, 5, "for (") != 0) return false;
    size_t semi = s.find(';');
    size_t lt = s.find(" < ", semi == std::string::npos ? 0 : semi);
    size_t end = lt == std::string::npos ? lt : s.find(';', lt);
    if (end == std::string::npos) return true;
    std::string bound = s.substr(lt + 3, end - lt - 3);
    return !(static_dim(bound) && bound.size() < 10 && std::stoll(bound) <= 4);
}

Val ExprEmitter::declare(DType dt, const std::vector<int64_t> &maxs, const std::vector<std::string> &dims) {
    Val v;
    v.name = fresh("val");
    v.dt = dt;
    v.maxs = maxs;
    v.dims = dims;
    int64_t n = std::max<int64_t>(1, v.max_numel());
    if (v.scalar())
        line(std::string(ctype(dt)) + " " + v.name + ";");
    else
        line(local_array(ctype(dt), v.name, n, leaf_size(dt)) + ";");
    return v;
}

std::string ExprEmitter::local_array(const std::string &ct, const std::string &name, int64_t n, int64_t elem_bytes) {
    const int64_t bytes = n * elem_bytes;
    const std::string count = std::to_string(n);
    if (frame && frame->priv + bytes > kDevicePrivateBytes) {
        const int64_t off = (frame->at + 15) / 16 * 16;
        frame->at = off + bytes;
        frame->max = std::max(frame->max, (frame->at + 15) / 16 * 16);
        return std::string(bytes > kStackArrayBytes ? "TRLG_LARGE_LOCAL(" : "TRLG_LOCAL(") + ct + ", " + name + ", " +
               count + ", " + std::to_string(off) + ")";
    }
    if (frame) frame->priv += bytes;
    if (bytes > kStackArrayBytes) return "TRLG_HEAP_LOCAL(" + ct + ", " + name + ", " + count + ")";
    return ct + " " + name + "[" + count + "]";
}

std::vector<int64_t> ExprEmitter::maxs_of(const ir::Type &t) {
    std::vector<int64_t> m;
    for (const auto &e : t.shape) m.push_back(e.max_value);
    return m;
}

std::vector<std::string> ExprEmitter::dims_of(const ir::Type &t) {
    std::vector<std::string> d;
    for (const auto &e : t.shape)
        d.push_back(e.is_static() ? lit_int(e.max_value) : "trl::max_i64(0LL, " + index_c(*e.dynamic) + ")");
    return d;
}

std::string ExprEmitter::mul_c(const std::string &a, const std::string &b) {
    if (a == "1") return b;
    if (b == "1") return a;
    if (a == "0" || b == "0") return "0";
    if (static_dim(a) && static_dim(b)) return std::to_string(std::stoll(a) * std::stoll(b));
    return "(" + a + " * " + b + ")";
}

std::string ExprEmitter::paren(const std::string &e) {
    bool simple =
        !e.empty() &&
        e.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos;
    return simple ? e : "(" + e + ")";
}

bool ExprEmitter::simple_operand(const std::string &e) {
    if (e.empty()) return false;
    size_t b = e.find('[');
    std::string head = e.substr(0, b);
    if (head.empty() ||
        head.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != std::string::npos)
        return false;
    if (b == std::string::npos) return true;
    if (e.back() != ']') return false;
    int depth = 0;
    for (size_t k = b; k < e.size(); ++k) {
        if (e[k] == '[')
            ++depth;
        else if (e[k] == ']' && --depth == 0 && k + 1 != e.size())
            return false;
    }
    return true;
}

std::string ExprEmitter::bcast_flat(const std::vector<std::string> &adims, const std::vector<int64_t> &amaxs,
                                    const std::vector<std::string> &rdims, const std::string &i) {
    if (adims.empty()) return "0";
    if (adims == rdims) return i;
    size_t rr = rdims.size(), ar = adims.size();
    auto rst = strides_c(rdims), ast = strides_c(adims);
    std::string s;
    for (size_t d = 0; d < ar; ++d) {
        if (amaxs[d] == 1 || d + rr < ar) continue;
        size_t od = rr - ar + d;
        std::string c = coord_c(i, rdims, rst, od);
        if (!static_dim(adims[d]) && adims[d] != rdims[od]) c = "(" + adims[d] + " == 1 ? 0LL : " + c + ")";
        std::string term = mul_c(c, ast[d]);
        s = s.empty() ? term : s + " + " + term;
    }
    return s.empty() ? "0" : s;
}

std::string ExprEmitter::operand_at(const Val &a, const Val &r, const std::string &i, const Loc &) {
    if (a.scalar()) return a.name;
    if (a.static_one()) return a.name + "[0]";
    return a.name + "[" + bcast_flat(a.dims, a.maxs, r.dims, i) + "]";
}

std::pair<std::vector<int64_t>, std::vector<std::string>> ExprEmitter::ew_shape(const std::vector<const Val *> &ops,
                                                                                const ir::Type &t) {
    const Val *full = nullptr;
    bool same = true;
    for (const Val *o : ops) {
        if (o->scalar() || o->static_one()) continue;
        if (!full)
            full = o;
        else if (o->dims != full->dims)
            same = false;
    }
    if (full && same && full->maxs.size() == t.shape.size()) return {full->maxs, full->dims};
    return {maxs_of(t), dims_of(t)};
}

void ExprEmitter::for_elems(const Val &r, const std::function<void(const std::string &)> &body) {
    if (r.scalar()) {
        open("");
        body("0");
        close();
        return;
    }
    std::string i = fresh("i");
    if (r.split) {  // this thread's rows
        std::string row = prod_c(r.dims, 1, r.dims.size());
        open("for (long long " + i + " = " + mul_c("trl_r0", row) + "; " + i + " < " + mul_c("trl_r1", row) + "; ++" +
             i + ")");
        body(i);
        close();
        return;
    }
    open("for (long long " + i + " = 0; " + i + " < " + r.numel() + "; ++" + i + ")");
    body(i);
    close();
}

void ExprEmitter::for_nd(const Val &r, const std::function<void(const Ix &)> &body) {
    if (r.scalar()) {
        open("");
        body(Ix{"0", {}});
        close();
        return;
    }
    Ix ix;
    for (size_t d = 0; d < r.dims.size(); ++d) {
        std::string c = fresh("i");
        if (d == 0 && r.split)  // this thread's rows
            open("for (long long " + c + " = trl_r0; " + c + " < trl_r1; ++" + c + ")");
        else
            open("for (long long " + c + " = 0; " + c + " < " + r.dims[d] + "; ++" + c + ")");
        ix.c.push_back(c);
        ix.flat = d == 0 ? c : mul_c(paren(ix.flat), r.dims[d]) + " + " + c;
    }
    body(ix);
    for (size_t d = 0; d < r.dims.size(); ++d) close();
}

std::string ExprEmitter::elem(const Val &a, const Val &r, const Ix &ix) {
    if (a.lazy) return a.lazy(ix);
    if (a.scalar()) return a.name;
    if (a.static_one()) return a.name + "[0]";
    if (a.dims == r.dims) return a.name + "[" + ix.flat + "]";
    if (ix.c.size() != r.dims.size()) return a.name + "[" + bcast_flat(a.dims, a.maxs, r.dims, ix.flat) + "]";
    size_t rr = r.dims.size(), ar = a.dims.size();
    auto ast = strides_c(a.dims);
    std::string s;
    for (size_t d = 0; d < ar; ++d) {
        if (a.maxs[d] == 1 || d + rr < ar) continue;
        size_t od = rr - ar + d;
        std::string c = ix.c[od];
        if (!static_dim(a.dims[d]) && a.dims[d] != r.dims[od]) c = "(" + a.dims[d] + " == 1 ? 0LL : " + c + ")";
        std::string term = mul_c(c, ast[d]);
        s = s.empty() ? term : s + " + " + term;
    }
    return a.name + "[" + (s.empty() ? "0" : s) + "]";
}

}  // namespace trlc::codegen
