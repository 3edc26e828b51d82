/* Calls the library of dims.trl: a good call, one whose kernel fails, a good one again. */
#include <stdio.h>

#include "dims.h"

int main(void) {
    char err[256];
    dims_ctx *c = NULL;
    if (dims_create(&c, NULL, err, sizeof err) != DIMS_OK) {
        printf("create: %s\n", err);
        return 1;
    }
    const float x0 = 3;
    const int32_t idx[3] = {1, 5, 0};
    for (int k = 0; k < 3; ++k) {
        float last = -1, ys[DIMS_ys_SIZE] = {-1, -1, -1};
        int rc = dims_run(c, &x0, &idx[k], &last, ys);
        if (rc == DIMS_OK)
            printf("idx %d: last %g ys %g %g %g\n", (int)idx[k], last, ys[0], ys[1], ys[2]);
        else
            printf("idx %d: status %d: %s\n", (int)idx[k], rc, dims_error(c));
    }
    dims_destroy(c);
    return 0;
}
