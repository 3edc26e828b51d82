"""jax_cartpole — what the JAX arms (ppo_cartpole_jax.py, dqn_cartpole_jax.py) share.

Importing it limits XLA's CPU backend to one thread (XLA_FLAGS --xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1, set before jax is imported; JAX_PLATFORMS defaults to cpu, so
tools/device_check.sh's JAX_PLATFORMS=cuda still wins), imports jax, jax.numpy and optax (exit
status 3 with a message naming the calling script when they are missing: benchmark-only
packages, not in tools/setup.sh), and gives CartPole-v1 in float32 (gymnasium's
classic_control/cartpole.py: its equations and explicit Euler order, gravity 9.8, masses 1.0 and
0.1, half-length 0.5, force ±10, tau 0.02, |x| > 2.4 or |θ| > 12° terminates, 500-step limit).
"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + ONE_THREAD).strip()
os.environ.setdefault("OMP_NUM_THREADS", "1")

try:
    import jax  # noqa: F401  (re-exported to the arms)
    import jax.numpy as jnp
    import optax  # noqa: F401
except ImportError as err:
    sys.stderr.write(f"{os.path.basename(sys.argv[0])}: {err}; install the benchmark-only packages with "
                     "'pip install jax optax'\n")
    sys.exit(3)

GRAVITY, MASSPOLE, TOTAL_MASS, LENGTH = 9.8, 0.1, 1.1, 0.5
POLEMASS_LENGTH, FORCE_MAG, TAU = 0.05, 10.0, 0.02
THETA_LIMIT, X_LIMIT, MAX_STEPS = 12 * 2 * 3.141592653589793 / 360, 2.4, 500


def cartpole_step(s, action):
    """(next state before any reset, terminated) of one CartPole step.  s: [..., 4] float32
    (x, ẋ, θ, θ̇), action: [...] in {0, 1}; one env ([4]) or a batch ([E, 4])."""
    x, x_dot, theta, theta_dot = s[..., 0], s[..., 1], s[..., 2], s[..., 3]
    force = jnp.where(action == 1, FORCE_MAG, -FORCE_MAG)
    c, sn = jnp.cos(theta), jnp.sin(theta)
    temp = (force + POLEMASS_LENGTH * theta_dot * theta_dot * sn) / TOTAL_MASS
    theta_acc = (GRAVITY * sn - c * temp) / (LENGTH * (4.0 / 3.0 - MASSPOLE * c * c / TOTAL_MASS))
    x_acc = temp - POLEMASS_LENGTH * theta_acc * c / TOTAL_MASS
    s2 = jnp.stack([x + TAU * x_dot, x_dot + TAU * x_acc,
                    theta + TAU * theta_dot, theta_dot + TAU * theta_acc], axis=-1)
    terminated = ((s2[..., 0] < -X_LIMIT) | (s2[..., 0] > X_LIMIT) |
                  (s2[..., 2] < -THETA_LIMIT) | (s2[..., 2] > THETA_LIMIT))
    return s2, terminated
