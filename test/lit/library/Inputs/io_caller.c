/* A C99 caller of the library of io.trl: the outputs of good calls, and each error as a status
 * with its message (a run-time error of the program leaves the context usable). */
#include <stdio.h>

#include "io.h"

static void run(io_ctx *ctx, int32_t idx) {
    const float obs[IO_obs_SIZE] = {0.5f, 0.25f, 1.0f, 2.0f};
    float v = -1, q[IO_q_SIZE] = {-1, -1};
    int rc = io_run(ctx, &idx, obs, &v, q);
    if (rc == IO_OK)
        printf("idx %d: v %g q %g %g\n", (int)idx, v, q[0], q[1]);
    else
        printf("idx %d: status %d: %s\n", (int)idx, rc, io_error(ctx));
}

int main(int argc, char **argv) {
    char err[256] = "";
    io_ctx *ctx = NULL;
    int rc = io_create(&ctx, "no-such-dir", err, sizeof err);
    printf("create in no-such-dir: status %d, ctx %s: %s\n", rc, ctx ? "set" : "NULL", err);
    rc = io_create(&ctx, argc > 1 ? argv[1] : NULL, err, sizeof err);
    if (rc != IO_OK) {
        printf("create: status %d: %s\n", rc, err);
        return 1;
    }
    run(ctx, 1);
    run(ctx, 7);
    run(ctx, -1);
    rc = io_run(ctx, NULL, NULL, NULL, NULL);
    printf("null input: status %d: %s\n", rc, io_error(ctx));
    io_destroy(ctx);
    io_destroy(NULL);
    return 0;
}
