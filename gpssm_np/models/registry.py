"""The models by name, beside their classes: what the command line's ``fit``, the examples and the experiments build.

:data:`MODELS` maps each name to its class; :func:`make_model` builds the model of a name for a data set under one
of the named settings (:data:`RUN_SETTINGS`): the authors' (docs/design.md, authors' code s12), the PR-SSM style, or the
package's defaults. ``odgpssm_q<Q>`` names ODGPSSM with Q latent GPs (the study over Q).
"""
import re

from ..baselines import ARX, LGSSM
from .dssm import DSSM
from .odgpssm import ODGPSSM
from .prssm import PRSSM

#: The models by name: every model of the package.
MODELS = {"odgpssm": ODGPSSM, "prssm": PRSSM, "dssm": DSSM, "arx": ARX, "lgssm": LGSSM}

#: The authors' settings (docs/design.md, authors' code s7 and s12): the model (d_x, Q, M, kernel, recognition, KL
#: weighting, inducing points, mean function, initial noises; None: the model's default), the training loop
#: (epochs, window length and stride, batch size, step size, particles) and the evaluation's samples and particles.
AUTHORS_SETTINGS = {"epochs": 70, "seq_len": 50, "stride": 1, "batch_size": 16, "lr": 0.01, "num_samples": 50,
                    "dim_x": 4, "num_latent": 4, "num_inducing": 20, "kernel": "matern52", "recognition": "lstm",
                    "kl_weighting": "paper", "shared_inducing": False, "eval_num_samples": 50,
                    "eval_num_particles": 1000, "mean_function": "zero", "process_noise": None, "obs_noise": None}

#: A second configuration fixed before any result was seen, from the PR-SSM reference settings (docs/design.md,
#: authors' code s9): residual dynamics (identity mean) and small initial process noise, everything else as the
#: authors'.
PRSSM_STYLE_SETTINGS = dict(AUTHORS_SETTINGS, mean_function="identity", process_noise=0.002**2, obs_noise=1.0)

#: The package's defaults: the GP models built as ``ODGPSSM(dim_y=..., dim_u=..., seed=...)`` and fitted with
#: ``fit(y, u)`` (the default fit of ``models/default_fit.py``; the LGSSM baseline with ``dim_x="auto"``, the DSSM
#: at max(4, d_y)); the other models as in the authors' settings. ``None`` means "the model's default".
DEFAULT_SETTINGS = dict(AUTHORS_SETTINGS, gp_settings="default", epochs=None, seq_len=None, stride=None,
                        batch_size=None, lr=None, num_samples=None, num_latent=None, num_inducing=None, kernel=None,
                        recognition=None, kl_weighting=None, shared_inducing=None, mean_function=None,
                        objective="enkf", dim_x="auto")

#: The named settings (the command line's ``--settings``).
RUN_SETTINGS = {"authors": AUTHORS_SETTINGS, "prssm_style": PRSSM_STYLE_SETTINGS, "default": DEFAULT_SETTINGS}

#: Data sets on which the authors' code initialises lengthscale 2 and outputscale 0.5 (with ARD).
ARD_INIT_DATASETS = ("ballbeam", "drive")

Q_MODEL = re.compile(r"^odgpssm_q([1-9][0-9]*)$")  # Q >= 1, written without leading zeros


def make_model(name, dataset, seed, settings=AUTHORS_SETTINGS):
    """The model ``name`` (one of :data:`MODELS`, or ``odgpssm_q<Q>`` for ODGPSSM with Q latent GPs) for
    ``dataset`` (a ``datasets.Dataset``, whose dimensions it takes) with ``settings``."""
    d_y, d_u = dataset.y_train.shape[1], dataset.u_train.shape[1]
    fixed_dim_x = max(4 if settings["dim_x"] == "auto" else settings["dim_x"], d_y)  # C = [I, 0] needs d_x >= d_y
    dims = dict(dim_x=settings["dim_x"] if settings["dim_x"] == "auto" else fixed_dim_x, dim_y=d_y, dim_u=d_u)
    if settings.get("gp_settings") == "default":  # the constructor's defaults, nothing tuned per data set
        gp_common = {"seed": seed, "objective": settings.get("objective")}
    else:
        gp_common = dict(num_inducing=settings["num_inducing"], kernel=settings["kernel"], seed=seed,
                         recognition=settings["recognition"], kl_weighting=settings["kl_weighting"],
                         shared_inducing=settings["shared_inducing"], mean_function=settings["mean_function"],
                         settings="authors")
        for noise in ("process_noise", "obs_noise"):
            if settings.get(noise) is not None:
                gp_common[noise] = settings[noise]
        if dataset.name in ARD_INIT_DATASETS:
            gp_common.update(lengthscale=2.0, variance=0.5)
    q_match = Q_MODEL.match(name)
    if name == "odgpssm" or q_match:
        num_latent = int(q_match.group(1)) if q_match else settings["num_latent"]
        model = ODGPSSM(**({} if num_latent is None else {"num_latent": num_latent}), **dims, **gp_common)
    elif name == "prssm":
        model = PRSSM(**dims, **gp_common)
    elif name == "dssm":
        model = DSSM(**dict(dims, dim_x=fixed_dim_x), seed=seed)  # no warm start to choose d_x
    elif name == "arx":
        model = ARX(dim_y=d_y, dim_u=d_u, seed=seed)
    elif name == "lgssm":
        model = LGSSM(**dims, seed=seed)
    else:
        raise ValueError(f"model: expected one of {tuple(MODELS)} or odgpssm_q<Q>, got {name!r}")
    return model
