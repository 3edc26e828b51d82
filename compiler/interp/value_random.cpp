// value_random — random draws and random initializers on interpreter values (interp/value.h):
// uniform, normal, orthogonal, permutation and categorical, from a key made by rng(...), with the
// runtime's own generators (runtime/trl_ops.h, trl_linalg.h), so that the interpreter and
// generated programs draw the same numbers.
#include "interp/value_impl.h"

#include "ir/ops.h"

#include "trl_linalg.h"
#include "trl_ops.h"

namespace trlc::interp {

using ir::BinaryOp;
using ir::BuiltinOp;
using ir::UnaryOp;
using namespace value_detail;

// ---- random ---------------------------------------------------------------------------------------

static const trl::RngKey &key_of(const Value &key) {
    if (key.is_tuple || key.dtype != DType::Key || key.keys.size() != 1)
        fail("expected a random key made by rng(...), got " + value_type_string(key));
    return key.keys[0];
}

Value uniform(const Value &key, const Shape &shape, DType dt) {
    const trl::RngKey &k = key_of(key);
    Value r = Value::zeros(dt, shape);
    for (size_t j = 0; j < r.data.size(); ++j) {
        if (dt == DType::F32)
            r.data[j] = trl::uniform_f32(k, j);
        else if (dt == DType::F64)
            r.data[j] = trl::uniform_f64(k, j);
        else
            fail("uniform() draws f32 or f64 values");
    }
    return r;
}

Value normal(const Value &key, const Shape &shape, DType dt) {
    const trl::RngKey &k = key_of(key);
    Value r = Value::zeros(dt, shape);
    for (size_t j = 0; j < r.data.size(); ++j) {
        if (dt == DType::F32)
            r.data[j] = trl::normal_f32(k, j);
        else if (dt == DType::F64)
            r.data[j] = trl::normal_f64(k, j);
        else
            fail("normal() draws f32 or f64 values");
    }
    return r;
}

Value orthogonal(const Value &key, const Shape &shape, const Value &gain, DType dt) {
    const trl::RngKey &k = key_of(key);
    if (shape.size() != 2 || shape[0] < 1 || shape[1] < 1) fail("orthogonal() needs a [rows, cols] shape");
    if (gain.is_tuple || gain.numel() != 1) fail("orthogonal() needs a scalar gain");
    std::vector<double> out(static_cast<size_t>(shape[0] * shape[1]));
    std::vector<double> work(2 * out.size());
    trl::orthogonal_f64(k, shape[0], shape[1], cast(gain, DType::F64).data[0], out.data(), work.data());
    Value r = Value::zeros(DType::F64, shape);
    r.data = out;
    return cast(r, dt);
}

Value permutation(const Value &key, int64_t n) {
    const trl::RngKey &k = key_of(key);
    std::vector<int32_t> p(static_cast<size_t>(n));
    trl::permutation_i32(k, n, p.data());
    Value r = Value::zeros(DType::I32, {n});
    for (int64_t i = 0; i < n; ++i) r.data[i] = p[i];
    return r;
}

Value categorical(const Value &key, const Value &logits) {
    const trl::RngKey &k = key_of(key);
    if (logits.is_tuple || logits.dtype == DType::Key || logits.shape.empty())
        fail("categorical() needs logits of rank >= 1, got " + value_type_string(logits));
    int64_t n = logits.shape.back();
    if (n == 0) fail("categorical() over zero classes");
    Shape out(logits.shape.begin(), logits.shape.end() - 1);
    Value r = Value::zeros(DType::I32, out);
    for (size_t row = 0; row < r.data.size(); ++row)
        r.data[row] = trl::categorical(k, row, logits.data.data() + row * n, n);
    return r;
}

}  // namespace trlc::interp
