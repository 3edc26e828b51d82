# A program of 2·N + 1 scheduled statements (N chained recurrences over i < I), for the size rule
# of run-time bounds (runtime-bound-flag.trl): python3 runtime-bound-many.py N
import sys

n = int(sys.argv[1])
print("dim i < I = 5")
print("a0[0] = 0.0")
print("a0[i+1] = a0[i] + 1.0")
for k in range(1, n):
    print(f"a{k}[0] = 0.0")
    print(f"a{k}[i+1] = a{k}[i] + a{k - 1}[i]")
print(f'emit "last"[i] {{ a: a{n - 1}[i] }}')
