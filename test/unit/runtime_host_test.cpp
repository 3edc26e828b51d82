// Unit tests of the host runtime of generated programs (runtime/rt, trl_rt.h): the command line
// (errors, --bound rules), the emit reorder buffer, save/load round trip and rejection, gemm,
// the exit summary, and the JSON text shared with the interpreter (trl_json.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

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
    EXPECT_NE(err.find(" bytes (max resident set)\n"), std::string::npos) << err;
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

// How many threads a host launch of n points and "work" element operations runs on
// (trl_rt.h): one unless every thread gets TRL_MIN_THREAD_WORK (2^19) and a point; never more
// than --threads (omp_set_num_threads) or n.  The rollout's launches of PPO CartPole (4 points,
// a few thousand operations) stay on one thread: splitting them made --threads 2 60x slower.
TEST(RuntimeLaunch, ThreadsOnlyWhereEachGetsEnoughWork) {
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
    omp_set_num_threads(2);
    EXPECT_EQ(trl_launch_threads(4, 4000), 1);
    EXPECT_EQ(trl_launch_threads(1, 1LL << 30), 1);         // one point: nothing to split
    EXPECT_EQ(trl_launch_threads(64, (2LL << 19) - 1), 1);  // just under two threads' share
    EXPECT_EQ(trl_launch_threads(64, 2LL << 19), 2);
    EXPECT_EQ(trl_launch_threads(1000, 3LL << 19), 2);  // capped by --threads
    omp_set_num_threads(8);
    EXPECT_EQ(trl_launch_threads(1000, 3LL << 19), 3);  // capped by the work
    EXPECT_EQ(trl_launch_threads(5, 1LL << 30), 5);     // capped by the points
    // A split launch covers every point once.
    std::vector<int> hits(1000, 0);
    trl_host_launch(1000, 1LL << 30, [&](long long lo, long long hi) {
        for (long long i = lo; i < hi; ++i) ++hits[i];
    });
    for (int h : hits) EXPECT_EQ(h, 1);
    omp_set_num_threads(saved);
#else
    EXPECT_EQ(trl_launch_threads(1000, 1LL << 30), 1);
#endif
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
