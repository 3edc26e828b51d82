// Unit tests of the host runtime of generated programs (runtime/rt, trl_rt.h): the command line
// (errors, --bound rules), the emit reorder buffer, save/load round trip and rejection, gemm,
// the exit summary, and the JSON text shared with the interpreter (trl_json.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "codegen/expr_emitter.h"
#include "trl_json.h"
#include "trl_rt.h"

namespace {

const char *const kBoundNames[] = {"N", "T"};
const long long kBoundDefaults[] = {4, 100};
const unsigned char kBoundRuntime[] = {0, 1};  // N sizes a buffer; T is the iteration count
const char *const kStreamNames[] = {"a", "b"};
const long long kStreamPoints[] = {3, 2};

trl_program_info test_info() {
    trl_program_info info{};
    info.name = "prog";
    info.source = "prog.trl";
    info.arena_bytes = 512;
    info.num_bounds = 2;
    info.bound_names = kBoundNames;
    info.bound_defaults = kBoundDefaults;
    info.bound_runtime = kBoundRuntime;
    info.num_streams = 2;
    info.stream_names = kStreamNames;
    info.stream_points = kStreamPoints;
    info.default_seed = 7;
    return info;
}

/** Run trl_init on "args" (argv[0] = "prog"); returns the status, stderr in "err". */
int init_with(const trl_program_info &info, std::vector<std::string> args, trl_ctx **ctx, std::string *err) {
    args.insert(args.begin(), "prog");
    std::vector<char *> argv;
    for (std::string &a : args) argv.push_back(a.data());
    testing::internal::CaptureStderr();
    testing::internal::CaptureStdout();
    int rc = trl_init(ctx, &info, static_cast<int>(argv.size()), argv.data());
    std::string out = testing::internal::GetCapturedStdout();
    *err = testing::internal::GetCapturedStderr() + out;
    return rc;
}

std::string temp_path(const std::string &name) {
    return testing::TempDir() + "trl_rt_" + std::to_string(getpid()) + "_" + name;
}

std::string read_file(const std::string &p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

int finish_quietly(trl_ctx *ctx, std::string *err = nullptr) {
    testing::internal::CaptureStderr();
    int rc = trl_finish(ctx);
    std::string e = testing::internal::GetCapturedStderr();
    if (err) *err = e;
    return rc;
}

TEST(RuntimeCli, DefaultsAndOverrides) {
    trl_program_info info = test_info();
    trl_ctx *ctx = nullptr;
    std::string err;
    ASSERT_EQ(init_with(info, {"--seed", "42", "--bound", "T=5", "--quiet", "--threads=2"}, &ctx, &err), TRL_OK) << err;
    EXPECT_EQ(trl_seed(ctx), 42u);
    EXPECT_EQ(trl_bound(ctx, 0), 4);
    EXPECT_EQ(trl_bound(ctx, 1), 5);
    ASSERT_NE(trl_arena(ctx), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(trl_arena(ctx)) % 256, 0u);
    EXPECT_EQ(finish_quietly(ctx), 0);

    ASSERT_EQ(init_with(info, {"--seed=9", "--quiet"}, &ctx, &err), TRL_OK) << err;
    EXPECT_EQ(trl_seed(ctx), 9u);
    EXPECT_EQ(trl_bound(ctx, 1), 100);
    EXPECT_EQ(finish_quietly(ctx), 0);
}

TEST(RuntimeCli, ErrorsAreMessagesAndExitOne) {
    trl_program_info info = test_info();
    trl_ctx *ctx = nullptr;
    std::string err;
    struct Case {
        std::vector<std::string> args;
        const char *message;
    } cases[] = {
        {{"--frobnicate"}, "prog: error: unknown argument '--frobnicate' (see --help)\n"},
        {{"--seed"}, "prog: error: --seed needs a value: --seed N (see --help)\n"},
        {{"--seed", "-3"}, "prog: error: --seed '-3' is not a non-negative integer (see --help)\n"},
        {{"--seed", "12x"}, "prog: error: --seed '12x' is not a non-negative integer (see --help)\n"},
        {{"--threads", "0"}, "prog: error: --threads '0' is not a positive integer (see --help)\n"},
        {{"--log"}, "prog: error: --log needs a file name: --log FILE (see --help)\n"},
        {{"--bound", "T"}, "prog: error: invalid --bound 'T': expected NAME=VALUE\n"},
        {{"--bound", "T=abc"}, "prog: error: --bound T=abc: 'abc' is not a positive integer\n"},
        {{"--bound", "U=3"}, "prog: error: --bound U=3: the program has no bound 'U'; its bounds are N, T\n"},
    };
    for (const Case &c : cases) {
        ctx = nullptr;
        EXPECT_EQ(init_with(info, c.args, &ctx, &err), TRL_EUSAGE) << c.args[0];
        EXPECT_EQ(err, c.message);
        EXPECT_EQ(ctx, nullptr);
    }
    EXPECT_EQ(trl_exit_code(TRL_EUSAGE), 1);
    EXPECT_EQ(trl_exit_code(TRL_EIO), 1);
    EXPECT_EQ(trl_exit_code(TRL_EXIT_SUCCESS), 0);
    EXPECT_EQ(trl_exit_code(TRL_EDEVICE), 2);
}

TEST(RuntimeCli, CompiledInBoundIsRejected) {
    trl_program_info info = test_info();
    trl_ctx *ctx = nullptr;
    std::string err;
    EXPECT_EQ(init_with(info, {"--bound", "N=8"}, &ctx, &err), TRL_EUSAGE);
    EXPECT_EQ(err, "prog: error: --bound N=8: bound 'N' is fixed at compile time in this program "
                   "(N = 4); recompile with trlc -D N=8\n");
}

TEST(RuntimeCli, HelpListsBoundsAndStreams) {
    trl_program_info info = test_info();
    trl_ctx *ctx = nullptr;
    std::string out;
    EXPECT_EQ(init_with(info, {"--help"}, &ctx, &out), TRL_EXIT_SUCCESS);
    EXPECT_NE(out.find("Usage: prog [options]"), std::string::npos) << out;
    EXPECT_NE(out.find("--bound NAME=V"), std::string::npos);
    EXPECT_NE(out.find("  N                = 4  (sizes buffers: fixed; recompile with trlc -D)"), std::string::npos)
        << out;
    EXPECT_NE(out.find("  T                = 100  (--bound may change it)"), std::string::npos);
    EXPECT_NE(out.find("  b                2 records"), std::string::npos);
}

TEST(RuntimeCli, UnwritableLogIsAnIoError) {
    trl_program_info info = test_info();
    trl_ctx *ctx = nullptr;
    std::string err;
    EXPECT_EQ(init_with(info, {"--log", "/nonexistent-dir/x.jsonl"}, &ctx, &err), TRL_EIO);
    EXPECT_EQ(err, "prog: error: cannot open log file '/nonexistent-dir/x.jsonl': No such file or "
                   "directory\n");
}

TEST(RuntimeEmit, RecordsComeOutInStreamThenIndexOrder) {
    trl_program_info info = test_info();
    std::string log = temp_path("emit.jsonl"), err;
    trl_ctx *ctx = nullptr;
    ASSERT_EQ(init_with(info, {"--log", log, "--quiet"}, &ctx, &err), TRL_OK) << err;
    auto emit = [&](int stream, long long index) {
        int32_t v = static_cast<int32_t>(stream * 10 + index);
        trl_field f{"v", TRL_I32, 0, nullptr, &v};
        return trl_emit(ctx, stream, index, &f, 1);
    };
    // Arrival order of a schedule that interleaves the two streams and runs one backwards.
    EXPECT_EQ(emit(1, 1), TRL_OK);
    EXPECT_EQ(emit(0, 2), TRL_OK);
    EXPECT_EQ(emit(1, 0), TRL_OK);
    EXPECT_EQ(emit(0, 0), TRL_OK);
    EXPECT_EQ(emit(0, 1), TRL_OK);
    EXPECT_EQ(emit(0, 1), TRL_EINTERNAL);  // twice
    EXPECT_EQ(finish_quietly(ctx), 0);
    EXPECT_EQ(read_file(log), "{\"v\":0}\n{\"v\":1}\n{\"v\":2}\n{\"v\":10}\n{\"v\":11}\n");
    std::remove(log.c_str());
}

TEST(RuntimeEmit, FieldsAreJsonLikeTheInterpreter) {
    trl_program_info info = test_info();
    info.num_streams = 1;
    std::string log = temp_path("fields.jsonl"), err;
    trl_ctx *ctx = nullptr;
    ASSERT_EQ(init_with(info, {"--log", log, "--quiet"}, &ctx, &err), TRL_OK) << err;
    const long long shape[] = {2, 2};
    float xs[] = {0.1f, 1.0f, -2.5f, std::numeric_limits<float>::infinity()};
    unsigned char bs[] = {1, 0};
    const long long bshape[] = {2};
    double d = 1e300;
    trl_field fs[] = {{"x", TRL_F32, 2, shape, xs}, {"done", TRL_BOOL, 1, bshape, bs}, {"d", TRL_F64, 0, nullptr, &d}};
    EXPECT_EQ(trl_emit(ctx, 0, 0, fs, 3), TRL_OK);
    trl_set_stream_points(ctx, 0, 1);
    EXPECT_EQ(finish_quietly(ctx), 0);
    EXPECT_EQ(read_file(log), "{\"x\":[[0.1,1.0],[-2.5,Infinity]],\"done\":[true,false],\"d\":1e+300}\n");
    std::remove(log.c_str());
}

TEST(RuntimeFinish, PrintsArenaAndPeak) {
    trl_program_info info = test_info();
    trl_ctx *ctx = nullptr;
    std::string err;
    ASSERT_EQ(init_with(info, {}, &ctx, &err), TRL_OK) << err;
    testing::internal::CaptureStdout();
    EXPECT_EQ(finish_quietly(ctx, &err), 0);
    testing::internal::GetCapturedStdout();
    EXPECT_EQ(err.rfind("arena: 512 bytes, peak memory: ", 0), 0u) << err;
    EXPECT_NE(err.find(" bytes (max resident set), run time: "), std::string::npos) << err;
}

TEST(RuntimeFiles, SaveLoadRoundTripAndRejection) {
    trl_program_info info = test_info();
    trl_ctx *ctx = nullptr;
    std::string err;
    ASSERT_EQ(init_with(info, {"--quiet"}, &ctx, &err), TRL_OK) << err;
    std::string path = temp_path("a.npy");
    const long long shape[] = {2, 3};
    float xs[] = {1, 2, 3, 4.5f, -0.0f, 6};
    trl_field f{"arr_0", TRL_F32, 2, shape, xs};
    ASSERT_EQ(trl_save(ctx, path.c_str(), &f, 1), TRL_OK);
    float back[6] = {};
    ASSERT_EQ(trl_load(ctx, path.c_str(), TRL_F32, 2, shape, back), TRL_OK);
    EXPECT_EQ(std::memcmp(xs, back, sizeof xs), 0);

    const long long other[] = {3, 2};
    EXPECT_EQ(trl_load(ctx, path.c_str(), TRL_F32, 2, other, back), TRL_EIO);
    EXPECT_EXIT(trl_fail(ctx, TRL_EIO, "trl_load(...)", "prog.cu", 12), testing::ExitedWithCode(1),
                "prog: error: cannot load .*a.npy: it holds f32\\[2, 3\\], the program expects "
                "f32\\[3, 2\\]");
    EXPECT_EQ(trl_load(ctx, path.c_str(), TRL_F64, 2, shape, back), TRL_EIO);
    std::string missing = temp_path("missing.npy");
    EXPECT_EQ(trl_load(ctx, missing.c_str(), TRL_F32, 2, shape, back), TRL_EIO);

    // Two arrays → an .npz the interpreter's reader accepts.
    std::string npz = temp_path("b.npz");
    int32_t is[] = {7, 8};
    const long long ishape[] = {2};
    trl_field two[] = {f, {"arr_1", TRL_I32, 1, ishape, is}};
    ASSERT_EQ(trl_save(ctx, npz.c_str(), two, 2), TRL_OK);
    std::vector<trl::NpzMember> ms;
    ASSERT_TRUE(trl::npz_load(npz, &ms, &err)) << err;
    ASSERT_EQ(ms.size(), 2u);
    EXPECT_EQ(ms[1].first, "arr_1");
    EXPECT_EQ(ms[1].second.shape, std::vector<int64_t>{2});
    EXPECT_EQ(finish_quietly(ctx), 0);
    std::remove(path.c_str());
    std::remove(npz.c_str());
}

TEST(RuntimeFiles, InternalFailureNamesTheCall) {
    trl_program_info info = test_info();
    trl_ctx *ctx = nullptr;
    std::string err;
    ASSERT_EQ(init_with(info, {"--quiet"}, &ctx, &err), TRL_OK) << err;
    EXPECT_EQ(trl_emit(ctx, 5, 0, nullptr, 0), TRL_EINTERNAL);
    EXPECT_EXIT(trl_fail(ctx, TRL_EINTERNAL, "trl_emit(ctx, 5, 0, f, 0)", "prog.cu", 77), testing::ExitedWithCode(2),
                "prog: error: emit to unknown stream 5\nprog: note: in trl_emit\\(ctx, 5, 0, f, "
                "0\\) at prog.cu:77");
    EXPECT_EQ(finish_quietly(ctx), 0);  // a failed call is its caller's to check (TRL_CHECK)
}

// The team splits only while its cores exchange data quickly (trl_rt_host.cpp measures an
// empty split's round trip); the tests below are about what a split does, so they split
// whatever the machine's state (read once per process, before its first team starts).
void force_splits() { setenv("TRL_SPLIT_MAX_ROUND_TRIP_US", "1e9", 1); }

// How many threads a host launch of n points and "work" element operations runs on
// (trl_rt.h): one unless every thread gets TRL_MIN_THREAD_WORK (2^13) and a point; never more
// than --threads or n.  The rollout's launches of PPO CartPole (4 points, a few hundred
// operations) stay on one thread.
TEST(RuntimeLaunch, ThreadsOnlyWhereEachGetsEnoughWork) {
    force_splits();
    trl_program_info info = test_info();
    trl_ctx *ctx2 = nullptr, *ctx8 = nullptr;
    std::string err;
    ASSERT_EQ(init_with(info, {"--quiet", "--threads", "2"}, &ctx2, &err), TRL_OK) << err;
    ASSERT_EQ(init_with(info, {"--quiet", "--threads", "8"}, &ctx8, &err), TRL_OK) << err;
    const long long w = TRL_MIN_THREAD_WORK;
    EXPECT_EQ(w, 1LL << 13);
    EXPECT_EQ(trl_launch_threads(ctx2, 4, 1536), 1);
    EXPECT_EQ(trl_launch_threads(ctx2, 1, 1LL << 30), 1);   // one point: nothing to split
    EXPECT_EQ(trl_launch_threads(ctx2, 64, 2 * w - 1), 1);  // just under two threads' share
    EXPECT_EQ(trl_launch_threads(ctx2, 64, 2 * w), 2);
    EXPECT_EQ(trl_launch_threads(ctx2, 1000, 3 * w), 2);   // capped by --threads
    EXPECT_EQ(trl_launch_threads(ctx8, 1000, 3 * w), 3);   // capped by the work
    EXPECT_EQ(trl_launch_threads(ctx8, 5, 1LL << 30), 5);  // capped by the points
    // A split launch covers every point once, in the static shares [n·t/nt, n·(t+1)/nt).
    for (trl_ctx *ctx : {ctx2, ctx8}) {
        std::vector<int> hits(1000, 0);
        trl_host_launch(ctx, 1000, 1LL << 30, [&](long long lo, long long hi) {
            EXPECT_EQ(trl_team_member(), 1);
            EXPECT_EQ(trl_team_threads(ctx), 1);  // no split inside a split
            for (long long i = lo; i < hi; ++i) ++hits[i];
        });
        for (int h : hits) EXPECT_EQ(h, 1);
        EXPECT_EQ(trl_team_member(), 0);
    }
    EXPECT_EQ(finish_quietly(ctx2), 0);  // stops and joins the team's threads
    EXPECT_EQ(finish_quietly(ctx8), 0);
}

// trl_team_run: part t runs once for each t < nt, each on its own thread, t = 0 on the caller;
// thousands of consecutive splits (the update's pattern) neither lose nor repeat a part, also
// after the team threads fell asleep.
TEST(RuntimeTeam, EveryPartOnceOnItsOwnThread) {
    force_splits();
    trl_program_info info = test_info();
    trl_ctx *ctx = nullptr;
    std::string err;
    ASSERT_EQ(init_with(info, {"--quiet", "--threads", "3"}, &ctx, &err), TRL_OK) << err;
    EXPECT_EQ(trl_team_threads(ctx), 3);
    struct Log {
        std::atomic<int> runs[3];
        std::thread::id ids[3];
        int nt[3];
    } log;
    for (auto &r : log.runs) r = 0;
    auto part = [](void *arg, int t, int nt) {
        Log *l = static_cast<Log *>(arg);
        l->runs[t].fetch_add(1);
        l->ids[t] = std::this_thread::get_id();
        l->nt[t] = nt;
    };
    const int kSplits = 3000;
    for (int i = 0; i < kSplits; ++i) {
        trl_team_run(ctx, 3, part, &log);
        if (i == 10) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // workers asleep
    }
    for (int t = 0; t < 3; ++t) {
        EXPECT_EQ(log.runs[t].load(), kSplits);
        EXPECT_EQ(log.nt[t], 3);
    }
    EXPECT_EQ(log.ids[0], std::this_thread::get_id());
    EXPECT_NE(log.ids[1], log.ids[0]);
    EXPECT_NE(log.ids[2], log.ids[0]);
    EXPECT_NE(log.ids[1], log.ids[2]);
    // A split over fewer threads than the team leaves the others out.
    for (auto &r : log.runs) r = 0;
    trl_team_run(ctx, 2, part, &log);
    EXPECT_EQ(log.runs[0].load(), 1);
    EXPECT_EQ(log.runs[1].load(), 1);
    EXPECT_EQ(log.runs[2].load(), 0);
    EXPECT_EQ(finish_quietly(ctx), 0);
}

// trl_team_barrier: no part passes it before every part reached it (what each wrote before is
// read by the others after); outside a split it returns at once.
TEST(RuntimeTeam, BarrierOrdersThePartsWrites) {
    force_splits();
    trl_program_info info = test_info();
    trl_ctx *ctx = nullptr;
    std::string err;
    ASSERT_EQ(init_with(info, {"--quiet", "--threads", "3"}, &ctx, &err), TRL_OK) << err;
    trl_team_barrier();  // not in a split: no wait
    struct Shared {
        int before[3];
        int seen[3][3];
    } sh;
    for (int round = 0; round < 200; ++round) {
        std::memset(&sh, 0, sizeof sh);
        trl_team_run(
            ctx, 3,
            [](void *arg, int t, int nt) {
                Shared *s = static_cast<Shared *>(arg);
                volatile int *mine = &s->before[t];
                *mine = 1 + t;
                trl_team_barrier();
                for (int u = 0; u < nt; ++u) s->seen[t][u] = static_cast<volatile int *>(s->before)[u];
                trl_team_barrier();  // a second barrier in the same split
            },
            &sh);
        for (int t = 0; t < 3; ++t)
            for (int u = 0; u < 3; ++u) ASSERT_EQ(sh.seen[t][u], 1 + u) << "round " << round;
    }
    EXPECT_EQ(finish_quietly(ctx), 0);
}

// A product split by rows over the team (trl_rt_host.cpp: libxsmm products of at least 2^17
// multiply-adds and 16 rows) has the bits of the product on one thread: the same kernel order
// over k for every element.  Shapes of PPO's update ([128,64]·[64,64], [64,128]ᵀ·[128,64]) and
// odd ones (rows not a multiple of 8, k not a power of two); both layouts of A.
TEST(RuntimeGemm, SplitByRowsKeepsTheBits) {
    force_splits();
    trl_program_info info = test_info();
    trl_ctx *one = nullptr, *team = nullptr;
    std::string err;
    ASSERT_EQ(init_with(info, {"--quiet", "--threads", "1"}, &one, &err), TRL_OK) << err;
    ASSERT_EQ(init_with(info, {"--quiet", "--threads", "3"}, &team, &err), TRL_OK) << err;
    struct Shape {
        long long m, n, k;
    };
    unsigned state = 12345;
    auto next = [&] {
        state = state * 1664525u + 1013904223u;
        return static_cast<float>(static_cast<int>(state >> 8) - (1 << 23)) / static_cast<float>(1 << 20);
    };
    for (Shape s :
         {Shape{128, 64, 64}, Shape{64, 64, 128}, Shape{200, 40, 37}, Shape{96, 128, 100}, Shape{130, 64, 64}}) {
        for (int ta = 0; ta < 2; ++ta) {
            std::vector<float> a(s.m * s.k), b(s.k * s.n), c1(s.m * s.n, -1), c3(s.m * s.n, -2);
            for (float &x : a) x = next();
            for (float &x : b) x = next();
            auto gemm = ta ? trl_gemm_tn : trl_gemm;
            ASSERT_EQ(gemm(one, TRL_F32, s.m, s.n, s.k, a.data(), b.data(), c1.data()), TRL_OK);
            ASSERT_EQ(gemm(team, TRL_F32, s.m, s.n, s.k, a.data(), b.data(), c3.data()), TRL_OK);
            EXPECT_EQ(std::memcmp(c1.data(), c3.data(), c1.size() * sizeof(float)), 0)
                << s.m << "x" << s.n << "x" << s.k << (ta ? " (A transposed)" : "");
            // and the product is right: one element against a double-precision sum
            double ref = 0;
            for (long long q = 0; q < s.k; ++q) ref += double(ta ? a[q * s.m + 5] : a[5 * s.k + q]) * b[q * s.n + 3];
            EXPECT_NEAR(c3[5 * s.n + 3], ref, 1e-3 * (1 + std::fabs(ref)));
        }
    }
    EXPECT_EQ(finish_quietly(one), 0);
    EXPECT_EQ(finish_quietly(team), 0);
}

TEST(RuntimeGemm, RowMajorProduct) {
    trl_program_info info = test_info();
    trl_ctx *ctx = nullptr;
    std::string err;
    ASSERT_EQ(init_with(info, {"--quiet"}, &ctx, &err), TRL_OK) << err;
    float a[] = {1, 2, 3, 4, 5, 6};   // 2x3
    float b[] = {1, 0, 0, 1, 2, -1};  // 3x2
    float c[4] = {};
    ASSERT_EQ(trl_gemm(ctx, TRL_F32, 2, 2, 3, a, b, c), TRL_OK);
    EXPECT_EQ(c[0], 7);   // 1 + 6
    EXPECT_EQ(c[1], -1);  // 2 - 3
    EXPECT_EQ(c[2], 16);  // 4 + 12
    EXPECT_EQ(c[3], -1);  // 5 - 6
    double da[] = {2}, db[] = {3, 4}, dc[2] = {};
    ASSERT_EQ(trl_gemm(ctx, TRL_F64, 1, 2, 1, da, db, dc), TRL_OK);
    EXPECT_EQ(dc[0], 6);
    EXPECT_EQ(dc[1], 8);
    EXPECT_EQ(trl_gemm(ctx, TRL_I32, 1, 1, 1, a, b, c), TRL_EINTERNAL);
    EXPECT_EQ(finish_quietly(ctx), 0);
}

// trl_gemm against a naive loop in long double on products of the sizes codegen hands it
// (K·N >= 4096, ragged M): within γ_K · Σ_k |a_ik| |b_kj| (γ_K = K·u / (1 - K·u), u the unit
// roundoff), the bound that holds for every summation order (dsl/README §7.7).
template <typename T>
static void check_gemm_against_loop(int dtype, long long m, long long n, long long k, double u) {
    trl_program_info info = test_info();
    trl_ctx *ctx = nullptr;
    std::string err;
    ASSERT_EQ(init_with(info, {"--quiet"}, &ctx, &err), TRL_OK) << err;
    std::vector<T> a(m * k), b(k * n), c(m * n, T(7));
    uint32_t s = 12345;
    auto next = [&]() {
        s = s * 1664525u + 1013904223u;
        return static_cast<T>((static_cast<double>(s >> 8) / 16777216.0) * 2 - 1);
    };
    for (auto &x : a) x = next();
    for (auto &x : b) x = next();
    ASSERT_EQ(trl_gemm(ctx, dtype, m, n, k, a.data(), b.data(), c.data()), TRL_OK);
    double gamma = k * u / (1 - k * u);
    for (long long i = 0; i < m; ++i)
        for (long long j = 0; j < n; ++j) {
            long double exact = 0, mag = 0;
            for (long long q = 0; q < k; ++q) {
                exact += static_cast<long double>(a[i * k + q]) * b[q * n + j];
                mag += std::fabs(static_cast<long double>(a[i * k + q]) * b[q * n + j]);
            }
            ASSERT_LE(std::fabs(static_cast<long double>(c[i * n + j]) - exact), gamma * mag)
                << "C[" << i << ", " << j << "]";
        }
    // The same call again gives the same bits (no state, one OpenBLAS thread).
    std::vector<T> again(m * n);
    ASSERT_EQ(trl_gemm(ctx, dtype, m, n, k, a.data(), b.data(), again.data()), TRL_OK);
    EXPECT_EQ(std::memcmp(again.data(), c.data(), sizeof(T) * m * n), 0);
    EXPECT_EQ(finish_quietly(ctx), 0);
}

TEST(RuntimeGemm, WithinTheOrderIndependentBoundOfANaiveLoop) {
    check_gemm_against_loop<float>(TRL_F32, 37, 96, 64, std::ldexp(1.0, -24));
    check_gemm_against_loop<double>(TRL_F64, 131, 64, 72, std::ldexp(1.0, -53));
}

// The f32 shapes of samples/ppo_cartpole.trl's products (libxsmm kernels when the runtime is
// built with TRL_USE_LIBXSMM: m·n·k <= 128³), and one above that limit (OpenBLAS).
TEST(RuntimeGemm, SmallNetworkShapesWithinTheBound) {
    const double u = std::ldexp(1.0, -24);
    check_gemm_against_loop<float>(TRL_F32, 4, 64, 64, u);
    check_gemm_against_loop<float>(TRL_F32, 128, 64, 64, u);
    check_gemm_against_loop<float>(TRL_F32, 4, 64, 128, u);
    check_gemm_against_loop<float>(TRL_F32, 64, 64, 128, u);
    check_gemm_against_loop<float>(TRL_F32, 3, 70, 65, u);      // ragged: masked vector tails
    check_gemm_against_loop<float>(TRL_F32, 160, 128, 128, u);  // 2.6M > 128³: OpenBLAS
}

TEST(RuntimeGemm, ZeroInnerDimensionGivesZeros) {
    trl_program_info info = test_info();
    trl_ctx *ctx = nullptr;
    std::string err;
    ASSERT_EQ(init_with(info, {"--quiet"}, &ctx, &err), TRL_OK) << err;
    float c[6] = {1, 2, 3, 4, 5, 6};
    ASSERT_EQ(trl_gemm(ctx, TRL_F32, 2, 3, 0, nullptr, nullptr, c), TRL_OK);
    for (float x : c) EXPECT_EQ(x, 0.0f);
    EXPECT_EQ(trl_gemm(ctx, TRL_F32, -1, 3, 2, c, c, c), TRL_EINTERNAL);
    EXPECT_EQ(finish_quietly(ctx), 0);
}

// Codegen sizes the device kernels' frames for the grid the runtime launches: the two
// definitions of its thread count (trlc::codegen::device_grid_threads, TRL_GRID_THREADS) agree,
// across the warp rounding, the 256-thread blocks and the 256-block cap.
TEST(RuntimeHost, DeviceGridThreadsMatch) {
    for (long long n :
         {1LL, 2LL, 31LL, 32LL, 33LL, 40LL, 255LL, 256LL, 257LL, 511LL, 65535LL, 65536LL, 65537LL, 70000LL, 1000000LL})
        EXPECT_EQ(trlc::codegen::device_grid_threads(n), TRL_GRID_THREADS(n)) << "n = " << n;
    EXPECT_EQ(TRL_GRID_THREADS(40LL), 64);        // a 40-point launch: two warps
    EXPECT_EQ(TRL_GRID_THREADS(70000LL), 65536);  // capped: 256 blocks of 256
    // a row-split kernel's frames are sized for the largest block trl_rows_block launches
    EXPECT_EQ(trlc::codegen::kDeviceRowsMaxBlock, TRL_ROWS_MAX_BLOCK);
}

TEST(RuntimeWorkspace, AlignedAndGrowing) {
    trl_program_info info = test_info();
    trl_ctx *ctx = nullptr;
    std::string err;
    ASSERT_EQ(init_with(info, {"--quiet"}, &ctx, &err), TRL_OK) << err;
    void *w1 = nullptr, *w2 = nullptr, *w3 = nullptr;
    ASSERT_EQ(trl_workspace(ctx, 1000, &w1), TRL_OK);
    ASSERT_NE(w1, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(w1) % 256, 0u);
    std::memset(w1, 1, 1000);  // usable
    ASSERT_EQ(trl_workspace(ctx, 500, &w2), TRL_OK);
    EXPECT_EQ(w2, w1);  // big enough: the same block
    ASSERT_EQ(trl_workspace(ctx, 1 << 20, &w3), TRL_OK);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(w3) % 256, 0u);
    std::memset(w3, 2, 1 << 20);
    EXPECT_EQ(finish_quietly(ctx), 0);  // frees it
}

TEST(RuntimeJson, ScalarsAsTheInterpreterWritesThem) {
    using trl::NpyDType;
    EXPECT_EQ(trl::json_scalar(NpyDType::F32, 0.1f), "0.1");
    EXPECT_EQ(trl::json_scalar(NpyDType::F64, 0.1f), "0.10000000149011612");
    EXPECT_EQ(trl::json_scalar(NpyDType::F32, 3), "3.0");
    EXPECT_EQ(trl::json_scalar(NpyDType::F64, 1e21), "1e+21");
    EXPECT_EQ(trl::json_scalar(NpyDType::F32, -INFINITY), "-Infinity");
    EXPECT_EQ(trl::json_scalar(NpyDType::F64, NAN), "NaN");
    EXPECT_EQ(trl::json_scalar(NpyDType::I32, -7), "-7");
    EXPECT_EQ(trl::json_scalar(NpyDType::Bool, 1), "true");
    std::string s;
    const int64_t shape[] = {2, 0};
    trl::json_append_array(s, NpyDType::F32, 2, shape, nullptr);
    EXPECT_EQ(s, "[[],[]]");
}

}  // namespace
