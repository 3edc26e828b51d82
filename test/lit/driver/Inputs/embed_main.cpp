// embed_main — an application with its own main that embeds trlc's host runtime
// (driver/omp-wait-reexec.test).  Without EMBED_PROGRAM it only uses the runtime and runs an
// OpenMP region; with EMBED_PROGRAM it includes a generated program (prog.cu, found through -I)
// with TRL_NO_MAIN defined and runs it as the generated main would.
#include <cstdio>

#ifdef EMBED_PROGRAM
#define TRL_NO_MAIN
#include "prog.cu"
#else
#include "trl_rt.h"
#endif

int main(int argc, char **argv) {
#ifdef EMBED_PROGRAM
    trl_ctx *ctx = nullptr;
    int rc = trl_init(&ctx, &kProgramInfo, argc, argv);
    if (rc != TRL_OK) return trl_exit_code(rc);
    run_program(ctx);
    return trl_finish(ctx);
#else
    (void)argc;
    (void)argv;
    long long sum = 0;
#pragma omp parallel for reduction(+ : sum)
    for (int i = 0; i < 100; ++i) sum += i;
    std::printf("sum %lld, clock %s\n", sum, trl_now_seconds() >= 0 ? "ok" : "negative");
    return 0;
#endif
}
