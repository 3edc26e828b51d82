#!/usr/bin/env bash
# gpu_check.sh — every sample and test program on the GPU against the host build, under
# compute-sanitizer; without a GPU it says so and exits 0 (tools/gpu_check.py has the details).
exec python3 "$(dirname "$0")/gpu_check.py" "$@"
