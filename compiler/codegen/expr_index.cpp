// expr_index — ExprEmitter's indexing (codegen/expr_emitter.h): numpy indexing by ints, slices
// and index arrays (checked once per array), one element of a point read, and gather.
#include "codegen/expr_emitter.h"

namespace trlc::codegen {

void ExprEmitter::check_index(const std::string &v, const std::string &size, int64_t axis, const Loc &loc) {
    open("if (" + v + " < -(long long)(" + size + ") || " + v + " >= (long long)(" + size + "))");
    line(raise("TRLG_E_INDEX", loc, v, std::to_string(axis), size));
    line(v + " = 0;");
    close();
    line("if (" + v + " < 0) " + v + " += " + size + ";");
}

bool ExprEmitter::try_index_element(const ir::Node &n, Val &out) {
    const ir::Node *b = nullptr;
    const ir::Type *t = nullptr;
    int64_t off = 0;
    if (!point_read_part(*n.args.at(0), b, t, off)) return false;
    if (t->is_tuple || t->dtype == DType::Key || t->shape.empty() || n.sindex.size() != t->shape.size()) return false;
    for (size_t d = 0; d < t->shape.size(); ++d)
        if (!t->shape[d].is_static() || n.sindex[d].kind != ir::SpatialIndex::Scalar) return false;
    for (const auto &si : n.sindex)
        if (si.value->type.is_tuple || si.value->type.dtype == DType::Key || !si.value->type.shape.empty())
            return false;
    reads.insert(b->tensor);
    std::string flat;
    for (size_t d = 0; d < n.sindex.size(); ++d) {
        Val v = emit_cast(emit(*n.sindex[d].value), DType::I32, n.loc);
        std::string f = fresh("ix"), size = std::to_string(t->shape[d].max_value);
        line("long long " + f + " = " + v.name + ";");
        check_index(f, size, static_cast<int64_t>(d), n.loc);
        flat = flat.empty() ? f : "(" + flat + ") * " + size + " + " + f;
    }
    std::vector<std::string> p;
    for (const auto &ri : b->index) p.push_back(index_c(*ri.point));
    std::string a = fresh("src");
    line("const char *" + a + " = " + address(b->tensor, p) + " + " + std::to_string(off) + " + (" + flat + ") * " +
         std::to_string(leaf_size(t->dtype)) + ";");
    ir::Type et;
    et.dtype = t->dtype;
    out = off % leaf_size(t->dtype) == 0 ? view_value(et, a, 0, b->tensor) : load_value(et, a);
    return true;
}

bool ExprEmitter::try_index_view(const ir::Node &n, const Val &x, Val &out) {
    // x[i, j, ...] fixing leading axes of a view (stored bytes, row-major): the rest is a view
    // of the same bytes, x + ((i)·d1 + j)·(d2·...), e.g. one layer's weights w[3][r] of a loaded
    // tuple, read in place instead of copied.  Leading scalar indices only, then full axes.
    if (!x.view || x.lazy || x.tuple || x.split || x.scalar() || x.dt == DType::Bool || x.dt == DType::Key)
        return false;
    size_t fixed = 0;
    while (fixed < n.sindex.size() && n.sindex[fixed].kind == ir::SpatialIndex::Scalar) ++fixed;
    if (fixed == 0 || fixed >= x.dims.size()) return false;
    for (size_t d = fixed; d < n.sindex.size(); ++d)
        if (n.sindex[d].kind != ir::SpatialIndex::Full) return false;
    for (size_t d = 0; d < fixed; ++d) {
        if (n.sindex[d].value->type.is_tuple || n.sindex[d].value->type.dtype == DType::Key ||
            !n.sindex[d].value->type.shape.empty())
            return false;
    }
    for (size_t d = fixed; d < x.maxs.size(); ++d)
        if (x.dims[d] != lit_int(x.maxs[d])) return false;  // a static shape: rows are contiguous
    std::string flat;
    for (size_t d = 0; d < fixed; ++d) {
        Val v = emit_cast(emit(*n.sindex[d].value), DType::I32, n.loc);
        std::string f = fresh("ix");
        line("long long " + f + " = " + v.name + ";");
        check_index(f, x.dims[d], static_cast<int64_t>(d), n.loc);
        flat = flat.empty() ? f : "(" + flat + ") * " + x.dims[d] + " + " + f;
    }
    int64_t row = 1;
    for (size_t d = fixed; d < x.maxs.size(); ++d) row *= x.maxs[d];
    out = x;
    out.name = fresh("val");
    out.maxs.erase(out.maxs.begin(), out.maxs.begin() + static_cast<long>(fixed));
    out.dims.erase(out.dims.begin(), out.dims.begin() + static_cast<long>(fixed));
    const std::string ct = ctype(x.dt);
    line("const " + ct + " *const " + out.name + " = " + x.name + " + (" + flat + ") * " + lit_int(row) + ";");
    return true;
}

Val ExprEmitter::emit_index(const ir::Node &n) {
    if (Val r; try_index_element(n, r)) return r;
    Val x = emit(*n.args.at(0));
    if (x.tuple) unsupported(n.loc, "indexing a tuple");
    if (Val r; try_index_view(n, x, r)) return r;
    size_t rank = x.dims.size();
    if (n.sindex.size() > rank) unsupported(n.loc, "this indexing");
    // Per axis: kind 0 a range lo + j of length len, 1 a scalar index, 2 an index array.
    std::vector<int> kind(rank, 0);
    std::vector<std::string> lo(rank, "0"), len(rank), fixed(rank);
    std::vector<Val> arr(rank);
    bool any_array = false;
    for (size_t d = 0; d < rank; ++d) {
        std::string size = x.dims[d];
        len[d] = size;
        if (d >= n.sindex.size() || n.sindex[d].kind == ir::SpatialIndex::Full) continue;
        const ir::SpatialIndex &si = n.sindex[d];
        if (si.kind == ir::SpatialIndex::Slice) {
            std::string l = fresh("lo"), h = fresh("hi");
            auto norm = [&](const ir::IndexExprPtr &e, const std::string &dflt, const std::string &name) {
                if (!e) {
                    line("const long long " + name + " = " + dflt + ";");
                    return;
                }
                line("long long " + name + " = " + index_c(*e) + ";");
                line("if (" + name + " < 0) " + name + " += " + size + ";");
                line(name + " = trl::min_i64(trl::max_i64(" + name + ", 0LL), (long long)" + size + ");");
            };
            norm(si.lo, "0", l);
            norm(si.hi, size, h);
            std::string ln = fresh("len");
            line("const long long " + ln + " = trl::max_i64(0LL, " + h + " - " + l + ");");
            lo[d] = l;
            len[d] = ln;
            continue;
        }
        Val v = emit(*si.value);
        if (v.tuple || v.dt == DType::Key) unsupported(n.loc, "this index value");
        v = emit_cast(v, DType::I32, n.loc);
        if (v.scalar()) {
            std::string f = fresh("ix");
            line("long long " + f + " = " + v.name + ";");
            check_index(f, size, static_cast<int64_t>(d), n.loc);
            fixed[d] = f;
            kind[d] = 1;
            continue;
        }
        // An index array: checked and made non-negative in a copy, once per array, shape and
        // axis length (a later gather by the same indices, a minibatch's six columns, reuses
        // it: the first check has raised any error they hold).
        std::string key = v.name + "[";  // a reshape is the same array under other dims
        for (const auto &dim : v.dims) key += dim + ",";
        key += "] < " + size;
        if (auto it = checked_index_.find(key); it != checked_index_.end()) {
            arr[d] = it->second;
            kind[d] = 2;
            any_array = true;
            continue;
        }
        Val c = declare(DType::I32, v.maxs, v.dims);
        for_elems(c, [&](const std::string &i) {
            std::string k = fresh("ix");
            line("long long " + k + " = " + v.at(i) + ";");
            check_index(k, size, static_cast<int64_t>(d), n.loc);
            line(c.at(i) + " = (int32_t)" + k + ";");
        });
        arr[d] = c;
        checked_index_[key] = c;
        kind[d] = 2;
        any_array = true;
    }
    // The broadcast shape of the advanced indices (scalars are advanced of shape []).
    std::vector<size_t> adv;
    std::vector<std::string> bdims;
    std::vector<int64_t> bmaxs;
    if (any_array) {
        for (size_t d = 0; d < rank; ++d) {
            if (kind[d] == 0) continue;
            adv.push_back(d);
            if (kind[d] != 2) continue;
            const Val &a = arr[d];
            size_t r = std::max(bdims.size(), a.dims.size());
            std::vector<std::string> nd(r);
            std::vector<int64_t> nm(r);
            for (size_t q = 0; q < r; ++q) {
                bool ha = q + a.dims.size() >= r, hb = q + bdims.size() >= r;
                std::string da = ha ? a.dims[q + a.dims.size() - r] : "1", db = hb ? bdims[q + bdims.size() - r] : "1";
                int64_t ma = ha ? a.maxs[q + a.dims.size() - r] : 1, mb = hb ? bmaxs[q + bmaxs.size() - r] : 1;
                if (ma == 1 && da == "1")
                    nd[q] = db, nm[q] = mb;
                else if (mb == 1 && db == "1")
                    nd[q] = da, nm[q] = ma;
                else if (da == db)
                    nd[q] = da, nm[q] = ma;
                else
                    unsupported(n.loc, "index arrays whose shapes broadcast only at run time");
            }
            bdims = nd;
            bmaxs = nm;
        }
    }
    bool adjacent = true;
    for (size_t k = 1; k < adv.size(); ++k) adjacent = adjacent && adv[k] == adv[k - 1] + 1;
    // Output dims: (0, d) = range axis d; (1, q) = dim q of the advanced shape.
    std::vector<std::pair<int, size_t>> odims;
    std::vector<int64_t> maxs;
    std::vector<std::string> dims;
    auto push_adv = [&] {
        for (size_t q = 0; q < bdims.size(); ++q) {
            odims.push_back({1, q});
            maxs.push_back(bmaxs[q]);
            dims.push_back(bdims[q]);
        }
    };
    if (!adv.empty() && !adjacent) push_adv();
    for (size_t d = 0; d < rank; ++d) {
        if (!adv.empty() && adjacent && d == adv[0]) push_adv();
        if (kind[d] == 0) {
            odims.push_back({0, d});
            maxs.push_back(x.maxs[d]);
            dims.push_back(len[d]);
        }
    }
    Val r = declare(x.dt, maxs, dims);
    auto xst = strides_c(x.dims), bst = strides_c(bdims);
    std::vector<std::string> idx;
    for (size_t k = 0; k < dims.size(); ++k) {
        std::string j = fresh("j");
        idx.push_back(j);
        open("for (long long " + j + " = 0; " + j + " < " + dims[k] + "; ++" + j + ")");
    }
    // Flat index of the advanced block (the loop coordinates of its output dims).
    std::string bflat;
    for (size_t k = 0; k < odims.size(); ++k)
        if (odims[k].first == 1) {
            std::string t = mul_c(idx[k], bst[odims[k].second]);
            bflat = bflat.empty() ? t : bflat + " + " + t;
        }
    if (bflat.empty()) bflat = "0";
    std::string src, dst;
    for (size_t d = 0; d < rank; ++d) {
        std::string c;
        if (kind[d] == 0) {
            size_t k = 0;
            while (!(odims[k].first == 0 && odims[k].second == d)) ++k;
            c = lo[d] == "0" ? idx[k] : lo[d] + " + " + idx[k];
        } else if (kind[d] == 1) {
            c = fixed[d];
        } else {
            c = arr[d].name + "[" + bcast_flat(arr[d].dims, arr[d].maxs, bdims, bflat) + "]";
        }
        src += (src.empty() ? "" : " + ") + mul_c(paren(c), xst[d]);
    }
    for (size_t k = 0; k < dims.size(); ++k) dst = dst.empty() ? idx[k] : "(" + dst + ") * " + dims[k] + " + " + idx[k];
    line(r.at(dst.empty() ? "0" : dst) + " = " + x.at(src.empty() ? "0" : src) + ";");
    for (size_t k = 0; k < dims.size(); ++k) close();
    return r;
}

bool ExprEmitter::gather_from_slice(const ir::Node &n, Val *out) {
    const ir::Node &rd = *n.args.at(0);
    const ir::Node &in = *n.args.at(1);
    if (rd.kind != ir::NodeKind::Read || rd.type.is_tuple || in.type.is_tuple || in.type.shape.empty()) return false;
    if (in.type.dtype != DType::I32) return false;
    const ir::Tensor &x = prog_.tensors.at(rd.tensor);
    if (x.is_load || x.type.is_tuple || x.type.dtype == DType::Key || plan_.buffer_of(rd.tensor) < 0) return false;
    size_t pos = 0;
    int slices = 0;
    for (size_t k = 0; k < rd.index.size(); ++k)
        if (rd.index[k].is_slice) {
            ++slices;
            pos = k;
        }
    if (slices != 1 || rd.type.shape.empty() || !rd.type.shape[0].is_static()) return false;
    int64_t rank = static_cast<int64_t>(rd.type.shape.size());
    if (norm_axis(n.has_axes && !n.axes.empty() ? n.axes[0] : 0, rank, n.loc) != 0) return false;
    Val idx = emit_cast(emit(in), DType::I32, n.loc);
    reads.insert(rd.tensor);
    std::vector<std::string> p;
    std::string lo = fresh("lo");
    for (size_t k = 0; k < rd.index.size(); ++k) p.push_back(rd.index[k].is_slice ? "" : index_c(*rd.index[k].point));
    line("const long long " + lo + " = " + index_c(*rd.index[pos].lo) + ";");
    std::vector<int64_t> maxs(idx.maxs);
    std::vector<std::string> dims(idx.dims);
    for (const auto &e : x.type.shape) {
        maxs.push_back(e.max_value);
        dims.push_back(lit_int(e.max_value));
    }
    Val r = declare(x.type.dtype, maxs, dims);
    std::string q = fresh("p"), k = fresh("ix"), a = fresh("src");
    open("for (long long " + q + " = 0; " + q + " < " + idx.numel() + "; ++" + q + ")");
    line("long long " + k + " = " + idx.at(q) + ";");
    check_index(k, lit_int(rd.type.shape[0].max_value), 0, n.loc);
    p[pos] = lo + " + " + k;
    line("const char *" + a + " = " + address(rd.tensor, p) + ";");
    load_leaves(x.type, a, 0, r, q + " * " + std::to_string(static_numel(x.type)),
                buffer_align(rd.tensor) % leaf_size(x.type.dtype) == 0);
    close();
    *out = r;
    return true;
}

Val ExprEmitter::emit_gather(const ir::Node &n) {
    if (Val r; gather_from_slice(n, &r)) return r;
    Val x = emit(*n.args.at(0)), idx0 = emit(*n.args.at(1));
    if (x.tuple || idx0.tuple || idx0.dt == DType::Key || x.scalar()) unsupported(n.loc, "gather of these values");
    Val idx = emit_cast(idx0, DType::I32, n.loc);
    int64_t rank = static_cast<int64_t>(x.dims.size());
    int64_t axis = norm_axis(n.has_axes && !n.axes.empty() ? n.axes[0] : 0, rank, n.loc);
    std::vector<int64_t> maxs(x.maxs.begin(), x.maxs.begin() + axis);
    std::vector<std::string> dims(x.dims.begin(), x.dims.begin() + axis);
    maxs.insert(maxs.end(), idx.maxs.begin(), idx.maxs.end());
    dims.insert(dims.end(), idx.dims.begin(), idx.dims.end());
    maxs.insert(maxs.end(), x.maxs.begin() + axis + 1, x.maxs.end());
    dims.insert(dims.end(), x.dims.begin() + axis + 1, x.dims.end());
    Val r = declare(x.dt, maxs, dims);
    std::string outer = prod_c(x.dims, 0, axis), N = x.dims[axis], inner = prod_c(x.dims, axis + 1, x.dims.size());
    std::string o = fresh("o"), p = fresh("p"), in = fresh("in"), k = fresh("ix");
    open("for (long long " + o + " = 0; " + o + " < " + outer + "; ++" + o + ")");
    open("for (long long " + p + " = 0; " + p + " < " + idx.numel() + "; ++" + p + ")");
    line("long long " + k + " = " + idx.at(p) + ";");
    check_index(k, N, axis, n.loc);
    line("for (long long " + in + " = 0; " + in + " < " + inner + "; ++" + in + ") " +
         r.at("(" + o + " * " + idx.numel() + " + " + p + ") * " + inner + " + " + in) + " = " + x.name + "[(" + o +
         " * " + N + " + " + k + ") * " + inner + " + " + in + "];");
    close();
    close();
    return r;
}

}  // namespace trlc::codegen
