"""The study over the number of latent GPs Q (paper Fig. 4): ODGPSSM with Q = 1..8 on the five data sets.

The runs are a ``table1.sweep`` over the models ``odgpssm_q1`` .. ``odgpssm_q8`` (``gpssm-np reproduce qstudy``);
this module draws the figure: test RMSE against Q, one line per data set, under each protocol.
"""
import numpy as np

from ..models.registry import Q_MODEL
from .table1 import summarise


def q_curves(document, protocol="paper"):
    """{dataset: (Qs, mean RMSE, std RMSE)} from a sweep document over odgpssm_q<Q> models."""
    table = summarise(document["runs"]).get(protocol, {})
    curves = {}
    for model, by_dataset in table.items():
        match = Q_MODEL.match(model)
        if not match:
            continue
        for dataset, (mean, std, _) in by_dataset.items():
            curves.setdefault(dataset, []).append((int(match.group(1)), mean, std))
    return {d: tuple(np.array(v) for v in zip(*sorted(points))) for d, points in curves.items()}


def figure(document):
    """The figure of RMSE vs Q under the paper and causal protocols (matplotlib Figure, two panels): a tick at
    every Q that was run and at no other value (Q is a count), and a legend of the data sets on each panel that
    has curves."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    for ax, protocol in zip(axes, ("paper", "causal")):
        curves = sorted(q_curves(document, protocol).items())
        for dataset, (qs, mean, std) in curves:
            ax.errorbar(qs, mean, yerr=std, marker="o", capsize=3, label=dataset)
        ax.set_xticks(sorted({int(q) for _, (qs, _, _) in curves for q in qs}))
        ax.set_xlabel("Q (number of latent GPs)")
        ax.set_ylabel("test RMSE (standardised)")
        ax.set_title(f"protocol: {protocol}")
        if curves:
            ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def write_figure(document, path):
    """Draw :func:`figure` into the image file ``path`` (Agg backend); returns ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = figure(document)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
