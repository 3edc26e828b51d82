// storage_kinds — the modular storage mapping of one tensor, and the size of a point.
//
// Storage mapping: successive modulo (Lefebvre & Feautrier, "Automatic storage
// management for parallel programs", Parallel Computing 24, 1998; Darte, Schreiber &
// Villard, "Lattice-based memory allocation", IEEE TC 54(10), 2005, §3 "successive
// modulo").  Two points p != q of a tensor *conflict* when both are alive at some
// time (live_ranges.cpp: W(p) <= L(q) and W(q) <= L(p), minus donation pairs).
// Along the domain positions in order,
//
//   modulus_d = 1 + max |p_d - q_d|  over conflicting pairs with p_k = q_k for k < d
//
// (1 when there is no such pair), capped at the extent of the tensor's domain along
// d; batch positions keep their whole extent.  slot(p) = Σ_d ((p_d - lower_d) mod
// modulus_d) · stride_d is collision-free on conflicting pairs: if two conflicting
// points shared a slot then p_0 ≡ q_0 (mod modulus_0) with |p_0 - q_0| < modulus_0,
// so p_0 = q_0; then the same argument for position 1 among pairs equal at 0; and
// so on, so p = q.  (Restricting to pairs equal on the earlier positions, as the
// successive method does, only lowers moduli: for x[i, t] with i outer, the pair
// (x[i, T-1], x[i+1, 0]) bounds modulus_i, not modulus_t.)
//
// Everything is computed exactly with isl on concrete (parameter-free) relations.
//
// Kind: point (every non-batch modulus is 1), window (some modulus strictly between
// 1 and the extent, even if another position is whole), block otherwise.
//
// Bytes of one point: ir::slot_bytes (ir/ir.cpp).
#include "memory/memplan_impl.h"

namespace trlc {

namespace {

int64_t val_to_int(const isl::val &v) {
    TRLC_ASSERT(v.is_int()) << "storage: non-integer bound " << isl_text(v);
    return v.get_num_si();
}

}  // namespace

void storage_from_conflicts(const isl::set &domain, const isl::map &conflict, const std::vector<bool> &batch,
                            Buffer *buf) {
    const int n = static_cast<int>(domain.tuple_dim());
    buf->lower.assign(n, 0);
    buf->modulus.assign(n, 1);
    buf->stride.assign(n, 1);
    std::vector<int64_t> extent(n, 1);
    if (!domain.is_empty()) {
        for (int d = 0; d < n; ++d) {
            buf->lower[d] = val_to_int(domain.dim_min_val(d));
            extent[d] = val_to_int(domain.dim_max_val(d)) - buf->lower[d] + 1;
        }
    }
    isl::set deltas = conflict.deltas();
    for (int d = 0; d < n; ++d) {
        int64_t m = 1;
        if (d < static_cast<int>(batch.size()) && batch[d]) {
            m = extent[d];
        } else if (!deltas.is_empty()) {
            m = 1 + val_to_int(deltas.dim_max_val(d));  // symmetric: max Δ = max |Δ|
        }
        buf->modulus[d] = std::min(std::max<int64_t>(m, 1), extent[d]);
        deltas = isl::manage(isl_set_fix_si(deltas.release(), isl_dim_set, d, 0));  // successive
    }
    int64_t slots = 1;
    buf->extent = extent;
    buf->batch.assign(n, false);
    for (int d = 0; d < n && d < static_cast<int>(batch.size()); ++d) buf->batch[d] = batch[d];
    for (int d = n - 1; d >= 0; --d) {
        buf->stride[d] = slots;
        slots *= buf->modulus[d];
    }
    buf->slots = slots;
    bool window = false, block = false;
    for (int d = 0; d < n; ++d) {
        if (d < static_cast<int>(batch.size()) && batch[d]) continue;
        if (buf->modulus[d] == 1) continue;
        if (buf->modulus[d] < extent[d])
            window = true;
        else
            block = true;
    }
    buf->kind = window ? Buffer::Window : block ? Buffer::Block : Buffer::Point;
}

int64_t Buffer::slot_of(const std::vector<int64_t> &p) const {
    int64_t s = 0;
    for (size_t d = 0; d < modulus.size() && d < p.size(); ++d) {
        int64_t r = (p[d] - lower[d]) % modulus[d];
        if (r < 0) r += modulus[d];
        s += r * stride[d];
    }
    return s;
}

}  // namespace trlc
