/* A C caller of the library trlc_add_library(policy ...) builds (test/install/run.sh). */
#include <stdio.h>

#include "policy.h"

int main(void) {
    char err[256];
    policy_ctx *ctx = NULL;
    if (policy_create(&ctx, NULL, err, sizeof err) != POLICY_OK) {
        fprintf(stderr, "policy_create: %s\n", err);
        return 1;
    }
    const float x[POLICY_x_SIZE] = {0.5f, 3.0f, -1.0f};
    float y[POLICY_y_SIZE];
    int32_t best = -1;
    if (policy_run(ctx, x, y, &best) != POLICY_OK) {
        fprintf(stderr, "policy_run: %s\n", policy_error(ctx));
        return 1;
    }
    printf("y %g %g %g best %d\n", y[0], y[1], y[2], (int)best);
    policy_destroy(ctx);
    return 0;
}
