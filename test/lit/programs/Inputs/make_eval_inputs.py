"""make_eval_inputs.py DIR — the weights eval-loaded-policy.trl loads: pol.npz (a 4-8-2 tanh MLP,
f32) and vw.npy (a linear value, f64), from numpy's seeded generator."""
import os
import sys

import numpy as np

d = sys.argv[1]
rng = np.random.default_rng(0)
np.savez(os.path.join(d, "pol.npz"), (rng.normal(size=(4, 8)) * 0.5).astype(np.float32),
         np.zeros(8, np.float32), (rng.normal(size=(8, 2)) * 0.5).astype(np.float32),
         np.zeros(2, np.float32))
np.save(os.path.join(d, "vw.npy"), rng.normal(size=4).astype(np.float64))
