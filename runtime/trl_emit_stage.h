#pragma once
// trl_emit_stage — emits of a device build without a wait per emitted step (issue 18 point 3):
// an emit statement is a kernel (codegen/emit_program.cpp) whose threads, one per point, compute
// the record's fields on the device and write them, self-described, into a slot of the stage
// (device memory, trl_stage); the host copies the stage once and writes its records
// (trl_emit / trl_emit_skip, in launch and point order) when it looks anyway: at TRLG_SYNC
// (before a save, at the end of each iteration of the outermost loop, at the end of the run), or
// when the stage is full.  On the host (no TRL_CUDA_EMU) the same kernel text is a function that
// the emit calls directly on the calling thread, writing each record at once.  Included by
// trl_gen.h (after the error record's definitions); not a standalone header.
//
// A slot, 8-byte aligned (codegen/emit_program.cpp sizes it from the fields' static maximum
// shapes): a trlg_emit_head, then per field, in order: int32 dtype, int32 rank (a tuple: its
// element count), int32 key length, int32 0, the key's bytes and a NUL (padded to 8), then for
// a tuple its elements as fields, else rank int64 extents and the data (row-major, padded to 8).
//
// Errors keep the interpreter's order.  A point's own failing check (an i32 overflow in a field)
// records its error in the point's slot (trlg_earena, in place of the arena's error record); a
// point whose launch starts after an earlier launch raised an error marks its slot stale.  The
// flush writes the records in order up to the first slot with an error (reported, exit 1) or
// stale (the arena's error is reported), so no record after the first failing point is written.
//
// Example (generated, the "episode" emit of samples/ppo_cartpole.trl, 4 points per step):
//   TRL_KERNEL k_emit_episode(TRL_KERNEL_RANGE, TRLG_EMIT_PARAM, const char *arena, ...) {
//       TRL_KERNEL_INDEX(e, n) {  TRLG_EMIT_POINT(e, 200)  ...  TRLG_EMIT(0, index, fields, 4); }
//   }
//   TRLG_EMIT_LAUNCH(k_emit_episode, 4, 200, 0, s_emit_episode, c0, (c1 - 126));
#include <stdint.h>
#include <string.h>

#include <deque>
#include <vector>

/** The head of a staged record: the point's own error (kind 0: none), what the slot holds
 *  (TRLG_STAGED_*), the number of fields and the point's index in its stream. */
struct trlg_emit_head {
    trlg_error_rec err;
    int status, num_fields;
    long long index;
};
// codegen sizes slots with this head's size (codegen/program_emitter.h, kStagedHeadBytes).
static_assert(sizeof(trlg_emit_head) == 56, "trlg_emit_head must stay 56 bytes: kStagedHeadBytes");
enum { TRLG_STAGED_RECORD = 0, TRLG_STAGED_SKIP = 1, TRLG_STAGED_STALE = 2, TRLG_STAGED_OVERFLOW = 3 };

/** The pointer p with p + kArenaBytes == slot: the "arena" argument of an emit point's checks,
 *  so that trlg_raise records its error in the slot's head (an address computation through
 *  uintptr_t; nothing is read or written below the slot). */
TRL_HOST_DEVICE inline const char *trlg_error_base(char *slot) {
    return (const char *)((uintptr_t)slot - (uintptr_t)kArenaBytes);
}

/** Writes n bytes of src at slot + at when they fit cap; returns the next 8-aligned offset.
 *  Whole 4-byte words when src and n allow (slot + at is 8-aligned: the stage is 256-aligned,
 *  slots and offsets multiples of 8), else bytes (bool data). */
TRL_HOST_DEVICE inline long long trlg_put_bytes(char *slot, long long at, long long cap, const void *src, long long n) {
    if (at + n <= cap) {
        if ((uintptr_t)src % 4 == 0 && n % 4 == 0) {
            for (long long i = 0; i < n / 4; ++i) ((uint32_t *)(slot + at))[i] = ((const uint32_t *)src)[i];
        } else {
            for (long long i = 0; i < n; ++i) slot[at + i] = ((const char *)src)[i];
        }
    }
    return (at + n + 7) / 8 * 8;
}
TRL_HOST_DEVICE inline long long trlg_dtype_bytes(int dtype) {
    return dtype == TRL_BOOL ? 1 : dtype == TRL_F64 ? 8 : 4;
}
/** The deepest tuple nesting a staged record may have (a field of a tuple of a tuple ... is
 *  depth 2); deeper records are marked overflowed (an internal error at the flush). */
#define TRLG_TUPLE_DEPTH 16
/** Writes the n fields (tuples with their elements, in order) at slot + at; returns the offset
 *  after them, or more than cap when they do not fit or nest deeper than TRLG_TUPLE_DEPTH.
 *  A loop over an explicit stack of the open tuples, not a recursion: a recursive device
 *  function has no static stack size, and the CUDA driver runs it on the default 1 KiB stack,
 *  which the kernel's own arrays already fill (samples/cartpole_rollout.trl's "episodes" emit
 *  overflowed it on an H200: `Stack overflow` in compute-sanitizer, an unspecified launch
 *  failure without).  One out-of-line copy on the device: the emit kernels stay small, and its
 *  byte copies of the keys stay out of them (lit cuda/ptx-word-loads.test). */
TRL_HOST_DEVICE TRLG_DEVICE_NOINLINE inline long long trlg_put_fields(char *slot, long long at, long long cap,
                                                                      const trl_field *fields, int n) {
    const trl_field *next[TRLG_TUPLE_DEPTH];  // per open tuple (0: the record): its next field
    int left[TRLG_TUPLE_DEPTH];               // and how many of its fields are still to write
    int depth = 0;
    next[0] = fields;
    left[0] = n;
    while (depth >= 0) {
        if (left[depth] == 0) {
            --depth;
            continue;
        }
        const trl_field *f = next[depth]++;
        --left[depth];
        int key_len = 0;
        while (f->key && f->key[key_len]) ++key_len;
        const int head[4] = {f->dtype, f->rank, key_len, 0};
        at = trlg_put_bytes(slot, at, cap, head, sizeof head);
        for (int k = 0; k <= key_len && at + k < cap; ++k) slot[at + k] = k < key_len ? f->key[k] : 0;
        at += (key_len + 8) / 8 * 8;  // the key and its NUL, padded to 8
        if (f->dtype == TRL_TUPLE) {  // its elements next, then the rest of this level
            if (depth + 1 == TRLG_TUPLE_DEPTH) return cap + 1;
            ++depth;
            next[depth] = (const trl_field *)f->data;
            left[depth] = f->rank;
            continue;
        }
        long long count = 1;
        for (int k = 0; k < f->rank; ++k) count *= f->shape[k];
        at = trlg_put_bytes(slot, at, cap, f->shape, 8LL * f->rank);
        at = trlg_put_bytes(slot, at, cap, f->data, count * trlg_dtype_bytes(f->dtype));
    }
    return at;
}
/** A point's record (fields) or skip (fields == nullptr) in its slot of cap bytes. */
TRL_HOST_DEVICE inline void trlg_put_record(char *slot, long long cap, long long index, const trl_field *fields,
                                            int num_fields) {
    trlg_emit_head *h = (trlg_emit_head *)slot;
    const long long at = trlg_put_fields(slot, (long long)sizeof(trlg_emit_head), cap, fields, fields ? num_fields : 0);
    h->num_fields = num_fields;
    h->index = index;
    h->status = at > cap ? TRLG_STAGED_OVERFLOW : fields ? TRLG_STAGED_RECORD : TRLG_STAGED_SKIP;
}
/** Clears the slot's error (the stage is reused), then: true (and the slot marked stale) when
 *  an earlier launch has raised an error. */
TRL_HOST_DEVICE inline bool trlg_stale(const char *arena, char *slot) {
    ((trlg_emit_head *)slot)->err.kind = 0;
    const volatile int *kind = &((const trlg_error_rec *)(arena + kArenaBytes))->kind;
    if (*kind == 0) return false;
    ((trlg_emit_head *)slot)->status = TRLG_STAGED_STALE;
    return true;
}

#if defined(__CUDACC__) || defined(TRL_CUDA_EMU)
#define TRLG_EMIT_PARAM char *trlg_stage
/* The slot of point e (slot bytes each), its error base, and nothing more after an error. */
#define TRLG_EMIT_POINT(e, slot)                                                                                       \
    char *const trlg_slot = trlg_stage + (e) * (long long)(slot);                                                      \
    const long long trlg_slot_cap = (slot);                                                                            \
    const char *const trlg_earena = trlg_error_base(trlg_slot);                                                        \
    (void)trlg_earena;                                                                                                 \
    if (trlg_stale(arena, trlg_slot)) continue;
#define TRLG_EMIT_SKIP(stream, index) trlg_put_record(trlg_slot, trlg_slot_cap, (index), nullptr, 0)
#define TRLG_EMIT(stream, index, fields, n) trlg_put_record(trlg_slot, trlg_slot_cap, (index), (fields), (n))
/* The stage is reserved once, before the launch (TRL_LAUNCH evaluates its arguments per thread
 * under TRL_CUDA_EMU). */
#define TRLG_EMIT_LAUNCH(kernel, n, slot, stream, ...)                                                                 \
    do {                                                                                                               \
        char *const trlg_at_ = trlg_stage_reserve(ctx, arena, (stream), (n), (slot));                                  \
        TRL_LAUNCH(kernel, n, 0, trlg_at_, arena, __VA_ARGS__);                                                        \
    } while (0)

/** The staged launches not yet written: stream, points, slot bytes, offset in the stage. */
struct trlg_stage_launch {
    int stream;
    long long points, slot, offset;
};
struct trlg_stage_state {
    char *dev = nullptr;  // the stage (trl_stage)
    size_t capacity = 0, used = 0;
    std::vector<trlg_stage_launch> launches;
    std::vector<char> host;  // its copy on the host
};
static trlg_stage_state trlg_stage_now;

/** Reads the field at host slot bytes p (trlg_put_fields' layout) into out (a tuple's elements
 *  into elems, which keeps them: a deque, whose elements stay where they are when nested tuples
 *  add more); returns the bytes after it. */
static const char *trlg_get_field(const char *p, trl_field *out, std::deque<std::vector<trl_field>> &elems) {
    int head[4];
    memcpy(head, p, sizeof head);
    p += sizeof head;
    out->dtype = head[0];
    out->rank = head[1];
    out->key = p;
    p += (head[2] + 8) / 8 * 8;
    if (out->dtype == TRL_TUPLE) {
        elems.emplace_back(head[1]);
        std::vector<trl_field> &e = elems.back();
        for (int k = 0; k < head[1]; ++k) p = trlg_get_field(p, &e[k], elems);
        out->shape = nullptr;
        out->data = e.data();
        return p;
    }
    out->shape = (const long long *)p;
    long long n = 1;
    for (int k = 0; k < out->rank; ++k) n *= out->shape[k];
    p += 8LL * out->rank;
    out->data = p;
    return p + (n * trlg_dtype_bytes(out->dtype) + 7) / 8 * 8;
}

/** Writes the staged records in order (one copy of the stage to the host: the wait for the
 *  device), stopping at the first point that failed or came after an error, then reports the
 *  arena's error record if any (trlg_check).  TRLG_SYNC on the device. */
static void trlg_flush(trl_ctx *ctx, const char *arena) {
    trlg_stage_state &s = trlg_stage_now;
    if (s.used > 0) {
        s.host.resize(s.used);
        TRL_CHECK(trl_to_host(ctx, s.host.data(), s.dev, s.used));
        std::vector<trlg_stage_launch> launches;
        launches.swap(s.launches);
        s.used = 0;
        for (const trlg_stage_launch &l : launches)
            for (long long e = 0; e < l.points; ++e) {
                const char *slot = s.host.data() + l.offset + e * l.slot;
                trlg_emit_head h;
                memcpy(&h, slot, sizeof h);
                const trlg_error_rec &r = h.err;
                if (r.kind != 0) trlg_report(r.file, r.line, r.col, r.kind, r.v[0], r.v[1], r.v[2]);
                if (h.status == TRLG_STAGED_STALE) {
                    trlg_check(ctx, arena);
                    trl_runtime_error("internal error: a staged emit is stale but no error was recorded");
                }
                if (h.status == TRLG_STAGED_OVERFLOW)
                    trl_runtime_error("internal error: an emit record overflowed its stage slot");
                if (h.status == TRLG_STAGED_SKIP) {
                    TRL_CHECK(trl_emit_skip(ctx, l.stream, h.index));
                    continue;
                }
                std::vector<trl_field> fields(h.num_fields > 0 ? h.num_fields : 1);
                std::deque<std::vector<trl_field>> elems;
                const char *p = slot + sizeof h;
                for (int k = 0; k < h.num_fields; ++k) p = trlg_get_field(p, &fields[k], elems);
                TRL_CHECK(trl_emit(ctx, l.stream, h.index, fields.data(), h.num_fields));
            }
    }
    trlg_check(ctx, arena);
}

/** The stage bytes of a launch of n points of `slot` bytes each for stream `stream`: flushes
 *  first when they do not fit (a wait mid-iteration), growing the stage (to 1 MiB at least)
 *  when one launch needs more. */
static char *trlg_stage_reserve(trl_ctx *ctx, const char *arena, int stream, long long n, long long slot) {
    trlg_stage_state &s = trlg_stage_now;
    size_t need = (size_t)(n * slot);
    if (s.used + need > s.capacity) {
        trlg_flush(ctx, arena);
        if (need > s.capacity) {
            size_t cap = need > ((size_t)1 << 20) ? need : ((size_t)1 << 20);
            void *p = nullptr;
            TRL_CHECK(trl_stage(ctx, cap, &p));
            s.dev = (char *)p;
            s.capacity = cap;
        }
    }
    char *at = s.dev + s.used;
    s.launches.push_back({stream, n, slot, (long long)s.used});
    s.used += need;
    return at;
}
#else
#define TRLG_EMIT_PARAM trl_ctx *ctx
#define TRLG_EMIT_POINT(e, slot)                                                                                       \
    const char *const trlg_earena = arena;                                                                             \
    (void)trlg_earena;
#define TRLG_EMIT_SKIP(stream, index) TRL_CHECK(trl_emit_skip(ctx, (stream), (index)))
#define TRLG_EMIT(stream, index, fields, n) TRL_CHECK(trl_emit(ctx, (stream), (index), (fields), (n)))
#define TRLG_EMIT_LAUNCH(kernel, n, slot, stream, ...) kernel(0, (n), ctx, arena, __VA_ARGS__)
#endif
