"""Car tracking (paper Section 4.1): ODGPSSM vs PRSSM inferring unobserved velocities.

    python examples/car_tracking.py [--quick] [--seeds N] [--out DIR]

Trains both models on the positions of a simulated car (``gpssm_np.experiments.car_tracking``), smooths the latent
states with a particle filter + backward simulation, prints the RMSE of each state dimension per seed and their
mean, and saves a figure of the first seed's states.
"""
import argparse
import os

import numpy as np

from gpssm_np.cli import positive_count
from gpssm_np.experiments import car_tracking


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few seconds: few training steps and particles")
    parser.add_argument("--seeds", type=positive_count, default=1, help="how many seeds (0, 1, ...; default 1)")
    parser.add_argument("--out", default="examples_out", help="output folder (default ./examples_out)")
    args = parser.parse_args()
    epochs, particles = (20, 100) if args.quick else (300, 500)
    table = {}
    for seed in range(args.seeds):
        res = car_tracking.run(seed=seed, epochs=epochs, num_particles=particles)
        for name, m in res["models"].items():
            table.setdefault(name, []).append([m["rmse"][k] for k in car_tracking.STATE_NAMES])
            print(f"seed {seed} {name:8s} " + "  ".join(f"{k}={v:.3f}" for k, v in m["rmse"].items()))
        if seed == 0:
            first = res
    for name, rows in table.items():
        print(f"mean     {name:8s} " + "  ".join(f"{k}={v:.3f}" for k, v in
                                              zip(car_tracking.STATE_NAMES, np.mean(rows, axis=0))))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gpssm_np.plotting import plot_states

    fig, axes = plt.subplots(4, 1, figsize=(8, 9), sharex=True)
    estimates = {name.upper(): (m["mean"], m["std"]) for name, m in first["models"].items()}
    plot_states(np.arange(1, first["T"] + 1), truth=first["truth"], estimates=estimates, axes=axes,
                names=car_tracking.STATE_NAMES)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "car_tracking_states.png")
    fig.savefig(path, dpi=100)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
