// expr_memory — ExprEmitter's reads and stores of the arena (codegen/expr_emitter.h): arena
// addresses through the memory plan, reads of tensors (points, slices, loaded tensors), views
// read in place and the copies that break their aliasing (materialize, unalias), stores of a
// value, and the point reads of a tuple element or a flat run of leaves.
#include "codegen/expr_emitter.h"

namespace trlc::codegen {

std::string ExprEmitter::address(int t, const std::vector<std::string> &p) {
    const Buffer &b = plan_.buffers.at(plan_.buffer_of(t));
    std::string slot;
    for (size_t d = 0; d < b.modulus.size() && d < p.size(); ++d) {
        if (b.modulus[d] == 1 || b.stride[d] == 0) continue;
        std::string rel = b.lower[d] == 0 ? p[d] : p[d] + " - " + lit_int(b.lower[d]);
        std::string term = "trl::pmod_i64(" + rel + ", " + lit_int(b.modulus[d]) + ")";
        if (b.stride[d] != 1) term += " * " + lit_int(b.stride[d]);
        slot += (slot.empty() ? "" : " + ") + term;
    }
    std::string a = "arena + " + lit_int(b.offset);
    if (!slot.empty()) a += " + (" + slot + ") * " + lit_int(b.slot_bytes);
    return a;
}

int64_t ExprEmitter::load_leaves(const ir::Type &t, const std::string &src, int64_t off, const Val &dst,
                                 const std::string &at, bool aligned) {
    int64_t n = static_numel(t), sz = leaf_size(t.dtype);
    if (!dst.scalar() && aligned && off % sz == 0 &&
        (t.dtype == DType::F32 || t.dtype == DType::F64 || t.dtype == DType::I32)) {
        // trl::copy_n (trl_ops.h): the per-element loop compiled to scalar moves on the host (the
        // compiler cannot tell a local from the arena), 80% of the attention kernels of
        // samples/transformer_decode.trl copying k[0:t+1] row by row; a memcpy instead was byte
        // loads on the GPU (cuda/ptx-word-loads.test).
        const std::string ct = ctype(t.dtype);
        line("trl::copy_n(&" + dst.name + "[" + at + "], (const " + ct + " *)(" + src + " + " + std::to_string(off) +
             "), " + std::to_string(n) + ");");
        return n * sz;
    }
    std::string k = fresh("k");
    open("for (long long " + k + " = 0; " + k + " < " + std::to_string(n) + "; ++" + k + ")");
    std::string d = dst.scalar() ? dst.name : dst.name + "[" + at + " + " + k + "]";
    std::string s = src + " + " + std::to_string(off) + " + " + k + " * " + std::to_string(sz);
    if (t.dtype == DType::Bool)
        line(d + " = *(const unsigned char *)(" + s + ") != 0;");
    else if (aligned && t.dtype != DType::Key && off % sz == 0)
        line(d + " = *(const " + std::string(ctype(t.dtype)) + " *)(" + s + ");");
    else
        line("memcpy(&" + d + ", " + s + ", " + std::to_string(sz) + ");");
    close();
    return n * sz;
}

Val ExprEmitter::emit_read(const ir::Node &n) {
    const ir::Tensor &x = prog_.tensors.at(n.tensor);
    if (x.is_load) {
        // Loaded tensors have no domain: one value, after the arena tail (trlg_start).
        if (!n.index.empty()) unsupported(n.loc, "indexing the loaded tensor " + x.name + " by points");
        // Read in place (a const view, as a point read of the arena): copying the value into
        // locals cost every kernel that read one layer's weights of a stacked tuple all of them
        // (832 KB per call in samples/transformer_decode.trl).
        int64_t off = load_offsets(prog_).at(n.tensor);
        std::string a = fresh("src");
        line("const char *" + a + " = arena + kLoadBase + " + std::to_string(off) + ";");
        return view_value(x.type, a, 0, n.tensor);
    }
    if (plan_.buffer_of(n.tensor) < 0) unsupported(n.loc, "a read of " + x.name + " without a buffer");
    reads.insert(n.tensor);
    std::vector<std::string> p;
    std::vector<size_t> slice_pos;
    std::vector<std::string> lens, los;
    for (size_t k = 0; k < n.index.size(); ++k) {
        const ir::ReadIndex &ri = n.index[k];
        if (!ri.is_slice) {
            p.push_back(index_c(*ri.point));
            continue;
        }
        std::string lo = fresh("lo"), len = fresh("len");
        line("const long long " + lo + " = " + index_c(*ri.lo) + ";");
        line("const long long " + len + " = trl::max_i64(0LL, " + index_c(*ri.hi) + " - " + lo + ");");
        slice_pos.push_back(k);
        los.push_back(lo);
        lens.push_back(len);
        p.push_back("");
    }
    if (slice_pos.empty()) {
        // One float or i32 array or scalar: its typed pointer (or load) is the only use of the
        // address, which goes in place (one line instead of a `const char *src` and the view).
        // A point-dependent shape is the read's (sema's read_type: the tensor's extents at this
        // index, in this kernel's variables), not the tensor's (in its coordinates).
        const ir::Type &t = ir::has_dynamic_extent(x.type) ? n.type : x.type;
        const DType dt = t.dtype;
        if (!t.is_tuple && (dt == DType::F32 || dt == DType::F64 || dt == DType::I32))
            return view_value(t, address(n.tensor, p), 0, n.tensor);
        std::string a = fresh("src");
        line("const char *" + a + " = " + address(n.tensor, p) + ";");
        return view_value(t, a, 0, n.tensor);
    }
    if (x.type.is_tuple) unsupported(n.loc, "a slice of a tuple-valued tensor");
    std::vector<int64_t> maxs;
    std::vector<std::string> dims;
    for (size_t s = 0; s < slice_pos.size(); ++s) {
        maxs.push_back(s < n.type.shape.size() ? n.type.shape[s].max_value : 0);
        bool fixed = s < n.type.shape.size() && n.type.shape[s].is_static();
        dims.push_back(fixed ? lit_int(n.type.shape[s].max_value) : lens[s]);
    }
    for (const auto &e : x.type.shape) {
        maxs.push_back(e.max_value);
        dims.push_back(lit_int(e.max_value));
    }
    if (Val v; slice_view(n, x, p, slice_pos, los, maxs, dims, v)) return v;
    Val r = declare(x.type.dtype, maxs, dims);
    if (r.scalar()) return r;
    std::vector<std::string> idx;
    for (size_t s = 0; s < slice_pos.size(); ++s) {
        std::string j = fresh("j");
        idx.push_back(j);
        open("for (long long " + j + " = 0; " + j + " < " + lens[s] + "; ++" + j + ")");
        p[slice_pos[s]] = los[s] + " + " + j;
    }
    std::string flat;
    for (size_t s = 0; s < slice_pos.size(); ++s)
        flat = flat.empty() ? idx[s] : "(" + flat + ") * " + lens[s] + " + " + idx[s];
    std::string a = fresh("src");
    line("const char *" + a + " = " + address(n.tensor, p) + ";");
    load_leaves(x.type, a, 0, r, "(" + flat + ") * " + std::to_string(static_numel(x.type)),
                buffer_align(n.tensor) % leaf_size(x.type.dtype) == 0);
    for (size_t s = 0; s < slice_pos.size(); ++s) close();
    return r;
}

bool ExprEmitter::slice_view(const ir::Node &n, const ir::Tensor &x, std::vector<std::string> p,
                             const std::vector<size_t> &slice_pos, const std::vector<std::string> &los,
                             const std::vector<int64_t> &maxs, const std::vector<std::string> &dims, Val &out) {
    // x[.., lo:hi] along one position whose slots are consecutive (stride 1, a block: no wrap
    // for points of the domain) and unpadded (a slot is exactly one value): the points are one
    // run of bytes, read in place (k[r, h, 0:t+1] of the decoder's attention was copied every
    // step).
    const DType dt = x.type.dtype;
    if (slice_pos.size() != 1 || x.type.is_tuple || ir::has_dynamic_extent(x.type) || n.type.is_tuple ||
        !(dt == DType::F32 || dt == DType::F64 || dt == DType::I32))
        return false;
    const Buffer &b = plan_.buffers.at(plan_.buffer_of(n.tensor));
    const size_t s = slice_pos[0];
    if (s >= b.modulus.size() || b.stride[s] != 1 || b.modulus[s] != b.extent[s] ||
        (s < b.batch.size() && b.batch[s]) || b.slot_bytes != static_numel(x.type) * leaf_size(dt) ||
        b.offset % 16 != 0)
        return false;
    p[s] = los[0];
    reads.insert(n.tensor);
    out = Val();
    out.name = fresh("val");
    out.dt = dt;
    out.maxs = maxs;
    out.dims = dims;
    out.buffer = plan_.buffer_of(n.tensor);
    out.view = true;
    const std::string ct = ctype(dt);
    line("const " + ct + " *const " + out.name + " = (const " + ct + " *)(" + address(n.tensor, p) + ");");
    return true;
}

int64_t ExprEmitter::buffer_align(int t) const {
    const Buffer &b = plan_.buffers.at(plan_.buffer_of(t));
    if (b.offset % 16 != 0 || (b.slots > 1 && b.slot_bytes % 16 != 0))
        throw CodegenError{Loc{}, "internal error: buffer of tensor " + std::to_string(t) + " at offset " +
                                      std::to_string(b.offset) + " (slot " + std::to_string(b.slot_bytes) +
                                      " bytes) is not 16-byte aligned"};
    return 16;
}

Val ExprEmitter::view_value(const ir::Type &t, const std::string &src, int64_t off, int tensor) {
    if (t.is_tuple) {
        Val r;
        r.tuple = true;
        for (const auto &e : t.elems) {
            r.elems.push_back(view_value(e, src, off, tensor));
            off += value_bytes(e);
        }
        return r;
    }
    int64_t sz = leaf_size(t.dtype);
    // A loaded tensor starts 16-byte aligned (kLoadBase = kArenaBytes + TRL_ARENA_TAIL, both
    // multiples of 16; load_offsets are multiples of 256); it has no buffer of the plan.
    const bool loaded = prog_.tensors.at(tensor).is_load;
    if (t.dtype == DType::Bool || t.dtype == DType::Key || off % sz != 0 || (!loaded && buffer_align(tensor) % sz != 0))
        return load_value(t, src, off);
    Val r;
    r.name = fresh("val");
    r.dt = t.dtype;
    r.maxs = maxs_of(t);
    r.dims = dims_of(t);
    r.buffer = loaded ? -1 : plan_.buffer_of(tensor);
    r.view = true;
    std::string ct = ctype(t.dtype), at = off ? src + " + " + std::to_string(off) : src;
    if (r.scalar())
        line("const " + ct + " " + r.name + " = *(const " + ct + " *)(" + at + ");");
    else
        line("const " + ct + " *const " + r.name + " = (const " + ct + " *)(" + at + ");");
    return r;
}

Val ExprEmitter::materialize(const Val &v) {
    if (v.tuple) {
        Val r = v;
        for (auto &e : r.elems) e = materialize(e);
        return r;
    }
    if (v.lazy) {
        if (v.scalar()) {  // one statement: "float val7 = a + b;"
            Val r = v;
            r.lazy = nullptr;
            r.buffer = -1;
            r.view = false;
            std::string e = v.lazy(Ix{"0", {}});
            r.name = fresh("val");
            line(std::string(ctype(v.dt)) + " " + r.name + " = " + e + ";");
            return r;
        }
        Val r = declare(v.dt, v.maxs, v.dims);
        r.split = v.split;
        for_nd(r, [&](const Ix &ix) { line(r.at(ix.flat) + " = " + v.lazy(ix) + ";"); });
        return r;
    }
    if (v.buffer < 0) return v;
    Val r = declare(v.dt, v.maxs, v.dims);
    for_elems(r, [&](const std::string &i) { line(r.at(i) + " = " + v.at(i) + ";"); });
    return r;
}

bool ExprEmitter::overlap(int a, int b) const { return plan_.overlap(a, b); }

Val ExprEmitter::unalias(const Val &v, int dst) {
    if (v.tuple) {
        Val r = v;
        for (auto &e : r.elems) e = unalias(e, dst);
        return r;
    }
    return overlap(v.buffer, dst) ? materialize(v) : v;
}

Val ExprEmitter::load_value(const ir::Type &t, const std::string &src, int64_t off) {
    if (t.is_tuple) {
        Val r;
        r.tuple = true;
        for (const auto &e : t.elems) {
            r.elems.push_back(load_value(e, src, off));
            off += value_bytes(e);
        }
        return r;
    }
    Val r = declare(t.dtype, maxs_of(t), dims_of(t));
    load_leaves(t, src, off, r, "0");
    return r;
}

int64_t ExprEmitter::store_value(const ir::Type &t, const Val &v, const std::string &dst, int64_t off, const Loc &loc) {
    if (t.is_tuple) {
        if (!v.tuple || v.elems.size() != t.elems.size())
            unsupported(loc, "storing a value that does not match its tuple type");
        for (size_t k = 0; k < t.elems.size(); ++k) off = store_value(t.elems[k], v.elems[k], dst, off, loc);
        return off;
    }
    if (v.tuple) unsupported(loc, "storing a tuple into a non-tuple tensor");
    if (row_mode() && !v.split) {  // a whole value of a row-split kernel: thread 0 stores it
        open("if (trl_r0 == 0)");
        Val whole = v;
        row_split_ = nullptr;  // (so that the recursive call does not guard again)
        int64_t end = store_value(t, whole, dst, off, loc);
        row_split_ = saved_row_split_;
        close();
        return end;
    }
    int64_t n = static_numel(t), sz = leaf_size(t.dtype);
    // The elements stored: all, or this thread's rows of a split value.
    std::string k0 = "0", k1 = std::to_string(n);
    if (v.split) {
        if (v.maxs.empty() || v.maxs[0] <= 0 || n % v.maxs[0] != 0) throw RowSplitUnsupported{"a split store"};
        std::string row = std::to_string(n / v.maxs[0]);
        k0 = mul_c("trl_r0", row), k1 = mul_c("trl_r1", row);
    }
    if (t.dtype != DType::Bool && t.dtype != DType::Key && off % sz == 0) {
        // In place, through a typed pointer (the buffer is 16-byte aligned, buffer_align).
        std::string ct = ctype(t.dtype), d = fresh("out");
        line(ct + " *const " + d + " = (" + ct + " *)(" + dst + (off ? " + " + std::to_string(off) : "") + ");");
        if (v.scalar() && !v.lazy && n == 1) {
            line("*" + d + " = " + conv(v.name, v.dt, t.dtype) + ";");
        } else if (v.lazy) {  // an elementwise chain computed as it is stored (static shape)
            for_nd(v, [&](const Ix &ix) { line(d + "[" + ix.flat + "] = " + conv(v.lazy(ix), v.dt, t.dtype) + ";"); });
        } else {
            std::string k = fresh("k");
            line("for (long long " + k + " = " + k0 + "; " + k + " < " + k1 + "; ++" + k + ") " + d + "[" + k +
                 "] = " + conv(v.scalar() ? v.name : v.name + "[" + k + "]", v.dt, t.dtype) + ";");
        }
        return off + value_bytes(t);
    }
    if (v.lazy) return store_value(t, materialize(v), dst, off, loc);
    std::string k = fresh("k");
    open("for (long long " + k + " = " + k0 + "; " + k + " < " + k1 + "; ++" + k + ")");
    std::string x = conv(v.scalar() ? v.name : v.name + "[" + k + "]", v.dt, t.dtype);
    std::string d = dst + " + " + std::to_string(off) + " + " + k + " * " + std::to_string(sz);
    if (t.dtype == DType::Bool) {
        line("*(unsigned char *)(" + d + ") = " + x + " ? 1 : 0;");
    } else {
        line(std::string(ctype(t.dtype)) + " y = " + x + ";");
        line("memcpy(" + d + ", &y, " + std::to_string(sz) + ");");
    }
    close();
    return off + value_bytes(t);
}

bool ExprEmitter::point_read_part(const ir::Node &e, const ir::Node *&b, const ir::Type *&t, int64_t &off) {
    b = &e;
    std::vector<int64_t> path;
    while (b->kind == NodeKind::TupleGet) {
        if (memo_.count(b)) return false;
        path.push_back(b->int_attr);
        b = b->args.at(0).get();
    }
    if (b->kind != NodeKind::Read || memo_.count(b)) return false;
    const ir::Tensor &x = prog_.tensors.at(b->tensor);
    if (x.is_load || plan_.buffer_of(b->tensor) < 0) return false;
    for (const auto &ri : b->index)
        if (ri.is_slice) return false;
    t = &x.type;
    off = 0;
    for (size_t k = path.size(); k-- > 0;) {
        if (!t->is_tuple || path[k] < 0 || path[k] >= static_cast<int64_t>(t->elems.size())) return false;
        for (int64_t q = 0; q < path[k]; ++q) off += value_bytes(t->elems[q]);
        t = &t->elems[path[k]];
    }
    return true;
}

bool ExprEmitter::try_tuple_part(const ir::Node &n, Val &out) {
    const ir::Node *b = nullptr;
    const ir::Type *t = nullptr;
    int64_t off = 0;
    if (!point_read_part(n, b, t, off)) return false;
    reads.insert(b->tensor);
    std::vector<std::string> p;
    for (const auto &ri : b->index) p.push_back(index_c(*ri.point));
    std::string a = fresh("src");
    line("const char *" + a + " = " + address(b->tensor, p) + ";");
    out = view_value(*t, a, off, b->tensor);
    return true;
}

Val ExprEmitter::flat_view(const ir::Node &read, int64_t off, DType dt, int64_t n) {
    reads.insert(read.tensor);
    std::vector<std::string> p;
    for (const auto &ri : read.index) p.push_back(index_c(*ri.point));
    std::string a = fresh("src");
    line("const char *" + a + " = " + address(read.tensor, p) + ";");
    ir::Type t;
    t.dtype = dt;
    t.shape = {ir::Extent{n, nullptr}};
    return view_value(t, a, off, read.tensor);
}

}  // namespace trlc::codegen
