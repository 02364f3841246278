"""A real data set end to end: train ODGPSSM on the hydraulic actuator, evaluate it under the three protocols,
save it, and plot a causal 100-step forecast.

    GPSSM_NP_DATA=/path/to/data python examples/actuator.py [--quick] [--out DIR]

The authors' settings (70 epochs of windows of 50, batch 16, lr 0.01, 50 particles, LSTM recognition); --quick
trains one epoch with 10 particles.
"""
import argparse
import os

import gpssm_np as gp
from gpssm_np.models.registry import make_model
from gpssm_np.protocols import evaluate


def main():
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--quick", action="store_true", help="one epoch with 10 particles (seconds)")
    parser.add_argument("--out", default="examples_out", help="output folder (default ./examples_out)")
    args = parser.parse_args()
    ds = gp.datasets.load("actuator")
    model = make_model("odgpssm", ds, seed=0)
    epochs, samples = (1, 10) if args.quick else (70, 50)
    n = len(ds.y_train)
    # the raw training half (the model standardises it itself, with the same statistics as ds.y_train), so that its
    # forecasts and its model file are in the data's units; data_name: the file says which data it was fitted on
    model.fit(ds.y_raw[:n], ds.u_raw[:n], epochs=epochs, progress=True, data_name=ds.name,
              plan=dict(seq_len=50, batch_size=16, lr=0.01, num_samples=samples))
    for protocol in ("paper", "causal", "freerun"):
        res = evaluate(model, ds, protocol, num_samples=samples)
        print(f"{protocol:8s} RMSE {res['rmse']:.4f} (original units {res['rmse_original_units']:.4f})  "
              f"NLPD {res['nlpd']:.3f}  95% coverage {res['coverage95']:.2f}")
    os.makedirs(args.out, exist_ok=True)
    print(f"wrote {gp.save(model, os.path.join(args.out, 'actuator_odgpssm.npz'))}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gpssm_np.plotting import plot_forecast_figure

    start = 100
    y_all, u_all = ds.y_raw, ds.u_raw  # the data's units, those the model takes and returns
    g = n + start
    past, future = slice(g - 100, g), slice(g, g + 100)
    fc = model.forecast(u_all[future], y_past=y_all[past], u_past=u_all[past], num_samples=samples)
    axes = plot_forecast_figure(fc, u_all[future], y_past=y_all[past], u_past=u_all[past], y_true=y_all[future],
                                y_label="oil pressure", u_labels=["valve opening"])
    axes[0].set_title(f"actuator: causal forecast from test step {start}")
    fig = axes[0].figure
    fig.tight_layout()
    path = os.path.join(args.out, "actuator_forecast.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
