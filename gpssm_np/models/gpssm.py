"""The sparse-GP state-space model shared by ODGPSSM and PRSSM.

Model (docs/design.md, "Notation" and "Time convention", the authors' code's): x_0 ~ q(x0) emits nothing; for
t = 1..T, x_t = mu(x_{t-1}, u_t) + A h([x_{t-1}, u_t]) + v_t with v_t ~ N(0, diag q), and y_t = C x_t + e_t with
C = [I_{d_y}, 0] and e_t ~ N(0, diag r). mu is 0 (authors' code), the identity (PR-SSM) or linear
(``transition.py``).
"""
import inspect
import json
import numbers
from dataclasses import replace
from dataclasses import fields as dataclass_fields

import numpy as np
from autograd import value_and_grad

from .. import _validation as check
from .. import archive
from .._config import MAX_JITTER
from .._progress import check_progress, fit_started
from ..datasets.windowing import window_starts
from ..estimator import GradientTrainedModel
from ..forecast import free_run
from ..inference import check_objective, draw_noise, elbo, kl_weights, transition_regression_elbo
from ..filtering import kalman_filter_result
from ..kalman import as_covariance, forecast_trajectories, kalman_filter, output_variances, sample_smoothed
from ..online import KalmanOnlineFilter
from ..optim import Adam
from ..params import constrain, init_params
from ..recognition import NETWORKS
from ..training_loop import EpochPlan, changed_plan, checked_field, without_frozen
from ..transforms import positive
from ..transition import Transition, check_backend
from .training import REFITS, BlockPlan, block_fit, check_average, check_switch
from . import default_fit
from .default_fit import DefaultFit, Plan
from .floor import FLOOR_KINDS
from .warm_start import GP_SHARE, WARM_START_SETS, floor_warm_start, initial_params, zero_residual_variance

#: The two configurations of the GP models. ``"default"``: the linear mean, the linear floor chosen by every fit
#: (``init="linear"``; ``models/default_fit.py``) and EnVI's ensemble-Kalman objective (docs/defaults.md says why).
#: ``"authors"``: the configuration of the paper's code (zero mean, random initialisation, one q(x0), the paper's
#: prior objective, 70 epochs of 50-step windows).
MODEL_SETTINGS = {
    "default": {"mean_function": "linear", "init": "linear", "objective": "enkf"},
    "authors": {"mean_function": "zero", "init": "random", "objective": "prior"},
}
#: ``init``: the start from the linear floor (``floor.py``, ``warm_start.py``; "linear": the LGSSM or the ARX,
#: whichever forecasts better on the folds), or the authors' random initialisation.
WARM_STARTS = ("lgssm", "arx", "linear")
INITS = WARM_STARTS + ("random",)
#: Where each training window's q(x0) comes from: the floor's smoothed state before the window, or the model's own
#: q(x0) (one free Gaussian shared by all windows, or the recognition network applied to the window; under the default
#: fit the floor's filtered state before the window).
INITIAL_STATES = ("smoothed", "shared")


class GPSSM(GradientTrainedModel):
    """Sparse-GP state-space model trained by the reparameterised ELBO of Lin et al. (2023), Eq. (11).

    Parameters
    ----------
    spec : GPSSMSpec
        Dimensions and structural options.
    seed : int
        Seeds the parameter initialisation.
    standardize : bool
        ``fit`` z-scores outputs and inputs with the statistics of its data (mean and population std of each
        column) and the model then takes and returns original units (``gpssm_np.units``; the
        statistics are in ``scaling_`` and the model file); False: the model works in the units it is given.
    backend : {"fused", "ops", "reference"}
        How the ELBO and its gradient are computed (``inference`` module docstring); all give the same numbers.
    kl_weighting : {"unbiased", "paper"}
        Weighting of the KL terms (``inference`` module docstring).
    recognition : {None, "lstm", "mlp"}
        q(x0): a free Gaussian (None; one for all sequences), the authors' LSTM over the reversed window, or a
        PR-SSM-style MLP over the window's first steps (``recognition`` module). ``spec.free_x0`` must be
        ``recognition is None``.
    recognition_options : dict, optional
        Keyword arguments of the recognition network (hidden, num_layers / num_steps).
    init : {"random", "lgssm", "arx", "linear"}
        Initial parameters: the authors' random ones, or the start of every ``fit`` from the linear floor
        (``floor.py``, ``warm_start.py``): an LGSSM, an ARX in state-space form, or ("linear") whichever of the two
        forecasts better on the rolling-origin folds that choose their orders (``warm_start_`` says which).
    settings : {"default", "authors"}
        Selects how :meth:`fit` trains by default (see there).
    objective : {None, "prior", "enkf"}
        What training maximises (``inference`` module docstring): the paper's ELBO, whose particles follow the prior
        transition and never see the outputs, or EnVI's objective, which filters each window's particles with an
        ensemble Kalman filter (``num_samples`` members, at least 2) and scores each output under the ensemble's
        one-step predictive. None: the settings' ("enkf" for "default", "prior" for "authors").
    filter_method : {"particle", "enkf"}
        How states are inferred from data by :meth:`filter`, and so by forecasts from past data and the evaluation
        protocols: the fully adapted particle filter, or the ensemble Kalman filter (``filtering`` module).
    initial_state : {None, "shared", "smoothed"}
        q(x0) of each training window. "shared" (the default): the model's own q(x0) (one free Gaussian, with a
        linear init the floor's stationary state distribution; or the recognition network), except under the
        default fit, which starts each window from the floor's filtered state before it (``models/default_fit.py``,
        stage 2) and keeps q(x0) for the filter and forecasts. "smoothed": the floor's smoothed state before the
        window (needs a linear init and no recognition network).
    **init_values
        Initial values forwarded to :func:`gpssm_np.params.init_params` (lengthscale, variance, process_noise,
        obs_noise, x0_var, inducing_range). Under a linear warm start (``init`` other than "random") the noises,
        x0_var and inducing_range come from the linear model (``warm_start.WARM_START_SETS``; PRSSM's variance
        too), and giving one is a ValueError; a lengthscale given replaces the warm start's (the spread of each GP
        input), a variance scales ODGPSSM's A.

    Attributes
    ----------
    params : dict of ndarray
        Unconstrained parameters (``gpssm_np.params`` lists names, shapes and transforms).
    history_ : list of float
        Training loss per Adam step (set by :meth:`fit`).
    """

    def __init__(self, spec, seed=0, backend="fused", kl_weighting="unbiased", recognition=None,
                 recognition_options=None, init="random", settings="default", initial_state=None, objective=None,
                 filter_method="particle", standardize=True, dim_x_choice=None, latent_follows_dim_x=True,
                 **init_values):
        super().__init__(seed, standardize)
        if settings not in MODEL_SETTINGS:
            raise ValueError(f"settings: expected one of {tuple(MODEL_SETTINGS)}, got {settings!r}")
        self.objective = check_objective(MODEL_SETTINGS[settings]["objective"] if objective is None else objective)
        self.filter_method = filter_method  # checked by the property
        if init not in INITS:
            raise ValueError(f"init: expected one of {INITS}, got {init!r}")
        if init in WARM_STARTS and spec.mean_function != "linear":
            raise ValueError(f"init: the {init!r} warm start needs mean_function='linear', got "
                             f"{spec.mean_function!r}")
        if init in WARM_STARTS:
            set_by_start = [name for name in WARM_START_SETS + ("variance",) * spec.independent if name in init_values]
            if set_by_start:
                one = len(set_by_start) == 1
                raise ValueError(f"{', '.join(set_by_start)}: the linear warm start (init={init!r}) sets "
                                 f"{'this initial value' if one else 'these initial values'} from the linear model "
                                 f"it starts from; give {'it' if one else 'them'} with init='random'")
        if init == "arx" and dim_x_choice is None and spec.dim_x % spec.dim_y:
            raise ValueError(f"dim_x: an ARX warm start needs a multiple of dim_y = {spec.dim_y}, got {spec.dim_x}")
        if initial_state is None:
            initial_state = "shared"  # the ablation's choice (research/results_history.md, section 5.1)
        if initial_state not in INITIAL_STATES or (initial_state == "smoothed" and
                                                   (init not in WARM_STARTS or recognition)):
            raise ValueError(f"initial_state: expected 'shared', or 'smoothed' with a warm start and no recognition "
                             f"network, got {initial_state!r}")
        if dim_x_choice is not None and (init not in WARM_STARTS or recognition is not None):
            raise ValueError("dim_x: 'auto' (or a list of candidates) takes the state dimension from the linear "
                             f"floor's cross-validation; it needs init in {WARM_STARTS} and no recognition network")
        # dim_x_choice: None (d_x fixed), "auto" or a list of candidate d_x, chosen by every fit
        self.dim_x_choice, self.latent_follows_dim_x, self.dim_x_scores_ = dim_x_choice, latent_follows_dim_x, {}
        self._floor = None  # (the floor, the sequences it was chosen on) from _choose_floor to _initialise
        self.warm_start_scores_ = {}
        self.settings, self.init, self.initial_state = settings, init, initial_state
        # the linear model the warm start comes from; for init="linear" every fit chooses it
        self.warm_start_ = init if init in FLOOR_KINDS else None
        self.init_values = dict(init_values)
        self.validation_, self.restart_scores_, self.refit_, self.lr_ = [], [], None, None
        self.lr_scale_, self.lr_scale_tests_ = None, []
        self.spec = spec
        self.init_jitter = spec.jitter  # a fit may raise the spec's (increase_jitter); every fit starts from this
        self.backend = check_backend(backend)
        kl_weights(kl_weighting, 1, 1)  # validates the name
        self.kl_weighting = kl_weighting
        self.recognition = make_recognition(recognition, spec, recognition_options)
        self.params = self._drawn_params(np.random.default_rng(seed))

    def get_config(self):
        """Constructor arguments as plain JSON types: ``type(model)(**model.get_config())`` rebuilds the model
        (with freshly initialised parameters)."""
        s = self.spec
        unresolved = self.dim_x_choice is not None and not self.dim_x_scores_  # until a fit has chosen dim_x
        config = {"dim_x": self.dim_x_choice if unresolved else s.dim_x, "dim_y": s.dim_y, "dim_u": s.dim_u,
                  "num_inducing": s.num_inducing, "kernel": s.kernel, "shared_inducing": s.shared_inducing,
                  "whiten": s.whiten,
                  "mean_function": s.mean_function, "seed": self.seed, "backend": self.backend,
                  "kl_weighting": self.kl_weighting, "recognition": None, "recognition_options": None,
                  "jitter": s.jitter, "init": self.warm_start_ or self.init, "settings": self.settings,
                  "initial_state": self.initial_state, "objective": self.objective,
                  "filter_method": self.filter_method, "standardize": self.standardize}
        if not s.independent:
            # a Q that follows d_x: until a floor sets it the spec holds d_x in its place (a Q equal to d_x is the
            # placeholder's value too, so either reads back alike)
            follows = self.latent_follows_dim_x and s.num_latent == s.dim_x
            config["num_latent"] = None if follows else s.num_latent
        if self.recognition is not None:
            rec = self.recognition.get_config()
            config["recognition"] = rec["kind"]
            config["recognition_options"] = {k: v for k, v in rec.items()
                                             if k not in ("kind", "dim_x", "dim_y", "dim_u")}
        return config

    # -- parameters ------------------------------------------------------------------------------------------
    def param_shapes(self):
        """Name -> shape of every unconstrained parameter (transition, emission, q(x0) or its network)."""
        shapes = self.spec.param_shapes()
        if self.recognition is not None:
            shapes.update(self.recognition.param_shapes())
        return shapes

    def params_from_format(self, params, version):
        """``params`` read from a model file of an older ``version`` (``archive.py``) as this model holds them: in
        format 1 every free q(x0) was diagonal (``x0_var``), so a warm-started model's full q(x0) (``x0_sqrt``)
        becomes the diagonal factor of the same Gaussian."""
        params = dict(params)
        if version < 2 and "x0_var" in params and "x0_sqrt" in self.param_shapes():
            params["x0_sqrt"] = np.diag(np.sqrt(positive(params.pop("x0_var"))))
        return params

    def constrained_params(self):
        """The parameters as the model uses them (positive values, Z as (Q, M, D), A = I for PRSSM)."""
        return {name: np.asarray(value) for name, value in constrain(self.params, self.spec).items()}

    # -- ELBO ------------------------------------------------------------------------------------------------
    def elbo_function(self, y, u, rng, num_samples, num_windows=None, backend=None, kl_weighting=None, x0=None):
        """The ELBO of windows y (B, T, d_y), u (B, T, d_u) (``inference.elbo``) as a function of the parameters,
        with noise drawn from ``rng``. ``backend`` and ``kl_weighting`` default to the model's; ``x0``: per-window
        q(x0) moments (mean (B, d_x), var (B, d_x)) instead of the model's own."""
        spec = self.spec
        _check_ensemble_size(self.objective, num_samples)
        noise = draw_noise(rng, y.shape[0], num_samples, y.shape[1], spec.dim_x, spec.num_latent,
                           spec.dim_y if self.objective == "enkf" else 0)
        backend = check_backend(backend or self.backend)
        kl_weighting = kl_weighting or self.kl_weighting
        kl_weights(kl_weighting, 1, 1)  # validates the name

        def objective(params):
            return elbo(params, spec, y, u, noise, backend, kl_weighting, num_windows, self.recognition, x0,
                        self.objective)

        return objective

    # -- training --------------------------------------------------------------------------------------------
    def fit(self, y, u=None, plan=None, max_steps=None, epochs=None, seed=None, progress=None, checkpoint=None,
            resume=False, data_name=None):
        """Fit the model to ``y`` (T, d_y) with inputs ``u`` (T, d_u), or to lists of such sequences; returns ``self``.

        How it trains is the regime of ``plan`` (:meth:`training_plan`), one of three frozen dataclasses:

        * :class:`gpssm_np.models.default_fit.Plan`: **the default fit** (``models/default_fit.py``: floor, selection on
          rolling-origin folds, acceptance, refit with a free-run guard, calibration; what it chose in ``selection_``,
          and as the block loop's record: the selection's evaluations in ``validation_``, the kept step-size candidate
          in ``lr_scale_``, the refit's steps and seed in ``refit_``). The regime of ``ODGPSSM(dim_y, dim_u).fit(y,
          u)``: the default settings with the linear floor chosen by the fit (a linear ``init``: "linear" lets the floor
          be either kind, "arx" or "lgssm" holds it to that one; ``dim_x="auto"``, a fixed d_x the floor then has, or a
          list of candidate d_x the floor chooses among; no recognition network).
        * :class:`gpssm_np.models.training.BlockPlan`: **until a validation score stops improving** on the last
          share of the training data (``models/training.py``, steps 1-8): the default settings' regime for the
          configurations ``init="random"`` and a recognition network (from the floor unless ``init="random"``), and
          any configuration's when given as ``plan``. The kept run's scores are in ``validation_``,
          the kept step-size candidate in ``lr_scale_`` and its paired tests in ``lr_scale_tests_``, every run's best
          score in ``restart_scores_``, the refit's steps and seed in ``refit_``.
        * :class:`gpssm_np.training_loop.EpochPlan`: **a fixed number of epochs**, the authors' loop
          (``settings="authors"``, or ``epochs`` given): :meth:`gpssm_np.estimator.GradientTrainedModel.fit`. With
          a linear warm start the windows are those of the validation-block loop without a validation block.

        ``plan``: None (the regime's defaults), one of those dataclasses, or a dict of changes to the regime's default
        plan (e.g. ``{"eval_every": 10}``; a name the regime's plan lacks is a ValueError naming its fields).
        ``max_steps`` and ``epochs``: the same change written directly (``epochs`` selects the epoch loop): on a
        dataclass they replace its own value (``plan=gp.BlockPlan(eval_every=1), max_steps=50``: that plan for 50
        steps); beside a dict that holds another value for them they are a ValueError (given twice). ``seed``: the
        training's random numbers (None: the model's seed). ``progress``: None (the default) shows progress lines on
        stderr once the fit has run for a few seconds, True from the start, False never.

        ``checkpoint=path`` (the default fit and the epoch loop) writes checkpoints atomically as the fit goes
        (``models/default_fit.py``, "Checkpoints"; the epoch loop's after epochs and every ``checkpoint_steps``
        steps); ``resume=True`` with the same data and plan continues from it where the file exists and ends
        bit-identical to an uninterrupted fit; a checkpoint of other data or settings is refused with a ValueError.
        The validation-block loop keeps its best parameters in memory and takes no checkpoint.

        With a linear ``init`` ("lgssm", "arx" or "linear") every call starts from the linear floor
        (``floor.py``, ``warm_start.py``) chosen and fitted on the training part (as scikit-learn's ``fit``, not a
        continuation).
        ``data_name``: the name of the training data (:meth:`gpssm_np.estimator.GradientTrainedModel.fit`).
        """
        self._record_data_name(data_name)
        progress = check_progress(progress)
        plan = self.training_plan(plan, max_steps, epochs)
        fit_started()
        self.interval_scale_ = None  # a former fit's calibration would scale the validation forecasts
        self.spec = replace(self.spec, jitter=self.init_jitter)  # nor its raised jitter hold in this one
        seed = self.seed if seed is None else check.seed(seed)
        if isinstance(plan, EpochPlan) and self.init == "random":
            return super().fit(y, u, plan=plan, seed=seed, progress=progress, checkpoint=checkpoint, resume=resume,
                               data_name=data_name)
        if isinstance(plan, Plan):
            self._fit_default(y, u, plan, progress, seed, checkpoint, resume)
        elif checkpoint is not None or resume:
            raise ValueError("checkpoint: checkpoints and resume need the default fit (models/default_fit.Plan) or "
                             "the epoch loop (init='random' with an EpochPlan); training with a validation block "
                             "keeps its best parameters in memory")
        elif isinstance(plan, EpochPlan) and plan.checkpoint_steps is not None:
            raise ValueError(f"checkpoint_steps: the epochs of a warm-started model (init={self.init!r}) run as "
                             "the validation-block loop, which writes no checkpoints")
        else:
            self._fit_block(y, u, plan, progress, seed)
        self._params_from_fit = True  # these regimes start from their own initialisation; the epoch loop would not
        return self

    def training_plan(self, plan=None, max_steps=None, epochs=None):
        """The plan :meth:`fit` trains by (its docstring): ``plan`` if it is a plan, with ``max_steps`` and ``epochs``
        (where given) in place of its own; otherwise the regime's default plan with the changes of ``plan`` (a dict),
        ``max_steps`` and ``epochs``. The regime without a plan: the
        epoch loop when ``epochs`` is given (as an argument or in the dict) or under ``settings="authors"`` (without
        ``max_steps``), the default fit for the configurations it covers, the validation-block loop for the
        others."""
        changes = {} if plan is None else plan
        if not isinstance(changes, (dict, Plan, BlockPlan, EpochPlan)):
            raise ValueError(f"plan: expected None, a dict of changes, Plan, BlockPlan or EpochPlan, got {plan!r}")
        if not isinstance(changes, dict):
            if isinstance(changes, Plan) and not self._fits_by_default_pipeline():
                raise ValueError("plan: the default fit (Plan) needs settings='default', a linear init ('linear', "
                                 "'arx' or 'lgssm') and no recognition network; use BlockPlan")
            plan, changes = changes, {}
        elif epochs is not None or "epochs" in changes or (self.settings == "authors" and max_steps is None
                                                           and "max_steps" not in changes):
            plan = EpochPlan()
        else:
            plan = Plan() if self._fits_by_default_pipeline() else BlockPlan()
        given = {"max_steps": max_steps, "epochs": epochs}
        for name, value in given.items():
            if value is not None and name in changes and changes[name] != value:
                raise ValueError(f"{name}: given as {value!r} and in plan as {changes[name]!r}; give it once")
        changes = dict(changes, **{name: value for name, value in given.items() if value is not None})
        return check_plan(changed_plan(plan, changes), self)

    def _fits_by_default_pipeline(self):
        """Whether the default fit (``models/default_fit.py``) covers this configuration: the default settings with
        the linear floor chosen by the fit (a linear ``init``; ``dim_x="auto"``, a fixed d_x or a list of candidates,
        which the floor then has or chooses among), no recognition network."""
        return self.settings == "default" and self.init in WARM_STARTS and self.recognition is None

    def _floor_dim_x(self):
        """The state dimension the default fit's floor must have: None for ``dim_x="auto"``, the list of candidates
        for a list, else the fixed d_x."""
        if self.dim_x_choice is None:
            return self.spec.dim_x
        return None if self.dim_x_choice == "auto" else list(self.dim_x_choice)

    def _floor_kinds(self):
        """The linear kinds the default fit's floor may take: both for ``init="linear"``, else the one named."""
        return FLOOR_KINDS if self.init == "linear" else (self.init,)

    def _fit_block(self, y, u, plan, progress, seed):
        """The validation-block loop (``training.block_fit``) under ``plan`` (a checked :class:`BlockPlan`, or an
        :class:`EpochPlan` for a warm-started model: its epochs as steps over windows with no validation block)."""
        ys, us = (list(part) for part in zip(*self._training_data(y, u)))
        block_fit(self, ys, us, plan, progress, seed)
        self._remember_tail(list(zip(ys, us)))
        return self._attach_scaling()

    def _fit_default(self, y, u, plan, progress, seed, checkpoint=None, resume=False):
        """The default pipeline (``models/default_fit.py``) on ``y``, ``u`` under ``plan`` (a checked :class:`Plan`),
        writing ``checkpoint`` (a path or None) and with ``resume`` continuing from it where it exists."""
        archive.check_checkpoint(checkpoint, resume)
        ys, us = (list(part) for part in zip(*self._training_data(y, u)))
        self._record_floor(default_fit.fit(self, ys, us, plan, progress, seed, checkpoint, bool(resume),
                                           self._floor_kinds(), self._floor_dim_x()))
        # the training record in the block loop's terms: the kept step-size candidate and the refit's own steps
        self.validation_ = self.selection_["record"]
        self.restart_scores_, self.lr_, self.lr_scale_tests_ = [], plan.lr, []
        self.lr_scale_ = dict(self.selection_["lr_scale"] or {})
        self.refit_ = {"steps": self.selection_["refit_steps"], "seed": seed}
        self._remember_tail(list(zip(ys, us)))
        return self._attach_scaling()

    #: How a fit trained (``fit``'s docstring): a model file keeps it beside ``selection_``.
    FIT_RECORD = ("validation_", "restart_scores_", "refit_", "lr_", "lr_scale_", "lr_scale_tests_")

    def extra_state(self):
        """:meth:`GradientTrainedModel.extra_state` (with the fit's record, :data:`FIT_RECORD`) and what the fit
        chose (``selection_``, as JSON), so that a loaded model says it too."""
        state = super().extra_state()
        if getattr(self, "selection_", None) is not None:
            state["selection"] = np.array(json.dumps(self.selection_, default=_plain))
        return state

    def set_extra_state(self, state):
        """Restore :meth:`extra_state`'s dict: the fit's record, ``selection_`` and the records
        :meth:`_record_floor` derives from it (JSON's keys are strings: the candidate state dimensions of
        "dim_x_scores" are read back as ints)."""
        state = dict(state)
        selection = state.pop("selection", None)
        super().set_extra_state(state)
        if selection is not None:
            selection = json.loads(str(np.asarray(selection)[()]))
            floor = selection.get("floor") or {}
            if floor.get("dim_x_scores"):
                floor["dim_x_scores"] = {int(d): scores for d, scores in floor["dim_x_scores"].items()}
            self._record_floor(selection)
            if "record" in selection and not self.validation_:  # a file written before the fit's record was kept
                self.validation_ = selection["record"]

    def _fitted_choices(self):
        """What the default fit (or a linear warm start) chose, for the repr's bracket: the floor's kind and orders,
        the state dimension and whether the GP part was kept; "" for a model no such fit has chosen for."""
        selection = getattr(self, "selection_", None)
        if selection is None:
            return ""
        floor = selection["floor"]
        text = f"floor={floor['kind']} {tuple(floor['orders'])}, d_x={self.spec.dim_x}"
        if "gp_part" in selection:
            text += ", GP part " + ("kept" if selection["gp_part"] else "not kept")
        return text

    def _record_floor(self, selection):
        """Keep the default fit's ``selection`` (at least its "floor") in ``selection_`` and the floor's kind and
        fold errors in ``warm_start_`` (the kind), ``warm_start_scores_`` (kind -> its best mean fold error) and
        ``dim_x_scores_`` (d_x -> the chosen kind's mean fold error at each candidate d_x)."""
        self.selection_ = selection
        floor = selection["floor"]
        self.warm_start_, self.warm_start_scores_ = floor["kind"], floor["scores"]
        by_dim_x = floor.get("dim_x_scores") or {self.spec.dim_x: floor["scores"]}
        self.dim_x_scores_ = {d: scores.get(floor["kind"], np.inf) for d, scores in by_dim_x.items()}

    def _check_lr_scales(self, lr_scales, default=False, field="lr_scales"):
        """A plan's step-size candidates (its ``lr_scales``; ``field``: the name in messages) as a list, each a
        dict of parameter name -> factor > 0: one dict is one candidate, a list or tuple of dicts several (step 8 of
        ``models/training.py``); ValueError naming ``field`` otherwise. ``default``: the value is
        :class:`BlockPlan`'s default, whose candidates that name parameters the model lacks (the linear part of a
        model without the linear mean) are dropped instead."""
        candidates = [lr_scales] if isinstance(lr_scales, dict) else lr_scales
        if not isinstance(candidates, (list, tuple)) or not candidates or not all(isinstance(c, dict)
                                                                                  for c in candidates):
            raise ValueError(f"{field}: expected a dict of parameter name -> factor or a non-empty list of such "
                             f"dicts, got {lr_scales!r}")
        if default:
            candidates = [c for c in candidates if set(c) <= set(self.params)]
        for candidate in candidates:
            self._check_param_names(candidate, field)
        return [{name: check.positive_float(value, f"{field}[{name!r}]") for name, value in candidate.items()}
                for candidate in candidates]

    def initialise(self, y, u=None, seed=None):
        """Set the initial parameters of a fit without training: the start from the linear floor on ``y``, ``u``
        (T, d) or lists of them (a linear ``init``; ``models/floor.py``, ``warm_start.floor_warm_start``), or the
        random initialisation. Returns ``self``; before any gradient step the warm-started model forecasts like the
        linear model it came from. Every regime of :meth:`fit` starts there (the default fit on the folds' parts
        and for its refit on all the data, the validation-block loop on its training part). A loaded model starts
        from what its constructor arguments build, as its ``fit`` does (``arguments._rebuilt_for_fit``)."""
        self._rebuilt_for_fit()
        ys, us = (list(part) for part in zip(*self._training_data(y, u)))
        self.interval_scale_ = None  # the calibration belongs to a fit
        self._choose_floor(ys, us)
        self._initialise(ys, us, min(len(t) for t in ys), 1, self.seed if seed is None else check.seed(seed))
        return self._attach_scaling()

    def _choose_floor(self, ys, us, progress=False):
        """A linear ``init``: the linear floor on ``ys``, ``us`` (the training part, model units; the default fit's
        stage 1, :meth:`DefaultFit.floor`: the better of the two kinds allowed, at the d_x given or chosen), the spec's
        d_x and Q set to hold it, the choice recorded (``selection_``'s "floor", ``warm_start_``,
        ``warm_start_scores_``, ``dim_x_scores_``); :meth:`_initialise` starts from it. Nothing for ``init="random"``.
        ``progress``: say so."""
        if self.init not in WARM_STARTS:
            return
        stage_1 = DefaultFit(self, progress=progress, kinds=self._floor_kinds(), dim_x=self._floor_dim_x())
        floor = stage_1.floor(ys, us)
        self._record_floor({"floor": stage_1.floor_record(floor)})
        self._floor = (floor, ys)

    def _initialise(self, ys, us, seq_len, stride, seed):
        """Fresh parameters for one training run: the start from the floor :meth:`_choose_floor` chose (as fitted to
        ``ys``, ``us``: the floor's own model on the data it was chosen on, else its kind and orders refitted) or
        the random initialisation, from ``seed``; returns the per-window initial states (mean (W, d_x), var (W, d_x))
        of the windows of ``ys`` (None when q(x0) is the model's own)."""
        if self.init == "random":
            self.params = self._drawn_params(np.random.default_rng(seed))
            return None
        floor, chosen_on = self._floor
        start = self.start_from_floor(floor.model if ys is chosen_on else floor.refit(ys, us), ys, us, seed)
        if self.initial_state == "shared":
            return None
        moments = [start.initial_states(i, window_starts(len(y), seq_len, stride)) for i, y in enumerate(ys)]
        return np.concatenate([m for m, _ in moments]), np.concatenate([v for _, v in moments])

    def _start_afresh(self):
        """The random initialisation drawn from ``seed``, as construction draws it (the constructor's jitter is every
        fit's, :meth:`fit` sets it back first)."""
        self.params = self._drawn_params(np.random.default_rng(self.seed))

    def _drawn_params(self, rng):
        """The random initialisation (``params.init_params``, and a recognition network's) drawn from ``rng``."""
        params = init_params(self.spec, rng, **self.init_values)
        if self.recognition is not None:
            params.update(self.recognition.init_params(rng))
        return params

    def start_from_floor(self, floor_model, ys, us, seed, gp_share=GP_SHARE):
        """Set the parameters to the warm start from the fitted linear ``floor_model`` on ``ys``, ``us``
        (``warm_start.initial_params``; ``gp_share`` 0: the floor itself, with a zero GP residual), the parameters it
        does not set drawn from ``seed`` as :meth:`_drawn_params` draws them; returns the
        :class:`warm_start.WarmStart`."""
        rng = np.random.default_rng(seed)
        params = self._drawn_params(rng)
        start = floor_warm_start(floor_model, ys, us)
        self.params = initial_params(self.spec, params, start, us, rng, gp_share=gp_share,
                                     lengthscale=self.init_values.get("lengthscale"))
        return start

    def increase_jitter(self):
        """Multiply the jitter of K(Z, Z) by 10 after a failed Cholesky; False once it would exceed MAX_JITTER."""
        jitter = self.spec.jitter * 10.0
        if jitter > MAX_JITTER:
            return False
        self.spec = replace(self.spec, jitter=jitter)
        return True

    def transition(self):
        """The model's :class:`gpssm_np.transition.Transition` at the current parameters (plain NumPy values)."""
        return Transition(self.constrained_params(), self.spec, "fused")

    def transition_moments(self):
        """x_t | x_{t-1} ~ N(mu + A m_h, A S_h A^T + diag q) as a function for ``filtering.particle_filter``."""
        return self.transition().moments_function()

    def filter_transition(self):
        """:meth:`transition_moments` with the particle filter's fused fully adapted step
        (``transition.FilterTransition``)."""
        return self.transition().filter_function()

    def obs_var(self):
        return np.asarray(constrain(self.params, self.spec)["obs_var"])

    def _free_run(self, x0, u, rng):
        return free_run(self.transition(), x0, u, rng)

    def linear_gaussian(self):
        """The model as the linear Gaussian state-space model of ``kalman.py`` when it is one: a dict F, G, b, H, Q,
        R; else None.

        With a zero GP residual and the linear mean, the transition (paper Eq. (12)) is x_t = F x_{t-1} + G u_t +
        b + v_t, v_t ~ N(0, diag(q + s2)), and y_t = C x_t + e_t, C = [I, 0] (H), e_t ~ N(0, R): the default fit's
        floor with a zero GP residual (``models/default_fit.py``, stage 4) is such a model. The zero residual is
        ``warm_start.zero_residual_variance``'s: A = 0 for ODGPSSM (s2 = 0), whatever q(u) holds; for PRSSM
        (A = I fixed) q(u) at its prior with zero mean and the kernel variances s2 at the warm start's floor. None
        for a model with a GP residual, another mean function, or a recognition network (its q(x0) is not one
        Gaussian a Kalman filter could start from)."""
        spec = self.spec
        if spec.mean_function != "linear" or self.recognition is not None:
            return None
        residual_var = zero_residual_variance(spec, self.params)
        if residual_var is None:
            return None
        p = constrain(self.params, spec)
        return {"F": np.asarray(p["F"]), "G": np.asarray(p["G"]), "b": np.asarray(p["b"]),
                "H": np.eye(spec.dim_y, spec.dim_x), "Q": np.diag(np.asarray(p["process_var"]) + residual_var),
                "R": np.diag(np.asarray(p["obs_var"]))}

    def _forecast(self, u_future, y_past, u_past, num_samples, seed, x0, num_particles, init_window):
        """:meth:`GradientTrainedModel._forecast`, exactly for a linear Gaussian model (:meth:`linear_gaussian`):
        the start state is the Kalman filter's over the same data (from q(x0)) instead of a particle filter's, and
        the ``num_samples`` trajectories are re-centred on the exact predictive mean
        (``kalman.forecast_trajectories``), so that the point forecast carries no Monte-Carlo error (``num_particles``
        and ``init_window`` are then not used). Assumption: the exact forecast is what the model means; the
        particle forecast approximates it, and on an ARX floor, whose lag states only later outputs inform, its
        filter degenerates (up to 10 % of the RMSE on the default check's data, docs/results.md section 1)."""
        params = self.linear_gaussian()
        if params is None:
            return super()._forecast(u_future, y_past, u_past, num_samples, seed, x0, num_particles, init_window)
        spec = self.spec
        num_samples = check.positive_int(num_samples, "num_samples")
        rng = np.random.default_rng(check.seed(seed))
        y_past, u_past, origin = self._forecast_origin(y_past, u_past, x0)
        mean, cov = self._q_x0(full_cov=True) if x0 is None else as_covariance(*check.x0(x0, spec.dim_x))
        if x0 is None and y_past is not None:  # checked by _forecast_origin, or the data tail fit kept
            result = kalman_filter(params, y_past, u_past, mean, cov)
            mean, cov = result.means[-1], result.covs[-1]
        states, covs = forecast_trajectories(params, u_future, mean, cov, num_samples, rng)
        return self._forecast_result(states[:, :, :spec.dim_y], states, self.obs_var(), origin,
                                     output_variances(params["H"], covs))

    def _filter(self, transition, y, u, num_particles=1000, seed=0, init_window=50, **kwargs):
        """:meth:`GradientTrainedModel._filter`, exactly for a linear Gaussian model (:meth:`linear_gaussian`) when no
        particle filter option (``proposal``, ``ess_threshold``) is given: the Kalman filter from q(x0)
        (``filtering.kalman_filter_result``, proposal "kalman"; its ``num_particles`` particles are draws from the
        exact filtered distributions, drawn with ``seed``). Assumption, as for :meth:`_forecast`: the exact filter is
        what the model means; on an ARX floor's lag states, which only later outputs inform, the fully adapted
        particle filter degenerates (its filtered means 1-7 standard deviations from the Kalman filter's)."""
        params = self.linear_gaussian()
        if params is None or set(kwargs) - {"store_particles"}:
            return super()._filter(transition, y, u, num_particles, seed, init_window, **kwargs)
        check.positive_int(init_window, "init_window")  # not used here, refused alike
        y, u = check.one_sequence(y, u, self.spec.dim_y, self.spec.dim_u, allow_missing=True)
        mean, cov = self._q_x0(full_cov=True)
        return kalman_filter_result(params, y, u, mean, cov, num_particles, np.random.default_rng(seed),
                                    store_particles=kwargs.get("store_particles", False))

    def smooth(self, y, u=None, num_particles=1000, num_trajectories=100, seed=0, init_window=50):
        """:meth:`GradientTrainedModel.smooth`, exactly for a linear Gaussian model (:meth:`linear_gaussian`):
        ``num_trajectories`` joint draws from p(x_{1:T} | y_{1:T}) by the Kalman filter from q(x0) and backward
        sampling (``kalman.sample_smoothed``, with the generator of ``seed + 1``, as backward simulation's);
        ``num_particles`` and ``init_window`` are then not used."""
        params = self.linear_gaussian()
        if params is None:
            return super().smooth(y, u, num_particles, num_trajectories, seed, init_window)
        check.unused_particle_options(num_particles, seed)
        check.positive_int(init_window, "init_window")
        y, u = check.one_sequence(self._y_to_model(y), self._u_to_model(u), self.spec.dim_y, self.spec.dim_u,
                                  allow_missing=True)
        mean, cov = self._q_x0(full_cov=True)
        result = kalman_filter(params, y, u, mean, cov)
        return sample_smoothed(params, result, check.positive_int(num_trajectories, "num_trajectories"),
                               np.random.default_rng(check.seed(seed) + 1))

    def online_filter(self, num_particles=500, seed=0, state=None, x0=None, ess_threshold=0.5, proposal=None):
        """:meth:`GradientTrainedModel.online_filter`; for a linear Gaussian model (:meth:`linear_gaussian`) without
        a ``proposal``, and for the state of such a filter, the exact Kalman filter one measurement at a time
        (``online.KalmanOnlineFilter``: its updates reproduce :meth:`filter`'s moments; ``num_particles``, ``seed``
        and ``ess_threshold`` are then not used)."""
        params = self.linear_gaussian()
        particle_state = isinstance(state, dict) and "particles" in state
        if params is None or proposal is not None or particle_state:
            return super().online_filter(num_particles, seed, state, x0, ess_threshold, proposal)
        check.unused_particle_options(num_particles, seed)
        check.unit_interval(ess_threshold, "ess_threshold")  # not used here, refused alike
        return KalmanOnlineFilter.start(self, params, self._q_x0(full_cov=True), x0, state)

    def _q_x0(self, y=None, u=None, full_cov=False):
        """Mean and variance (each (d_x,)) of q(x0): the free Gaussian, or the recognition network applied to the
        window y (T, d_y) with inputs u (T, d_u) (model units); ``full_cov``: the covariance (d_x, d_x) instead of
        the variances (diagonal but for a full free q(x0), ``spec.x0_covariance == "full"``)."""
        if self.recognition is None:
            p = constrain(self.params, self.spec)
            mean = np.asarray(p["x0_mean"])
            if self.spec.x0_covariance == "full":
                L = np.asarray(p["x0_sqrt"])
                cov = L @ L.T
                return mean, (cov if full_cov else np.diag(cov).copy())
            var = np.asarray(p["x0_var"])
        else:
            if y is None:
                raise ValueError("y: the model's q(x0) comes from a recognition network, which needs the window y")
            y, u = check.one_sequence(y, u, self.spec.dim_y, self.spec.dim_u)
            mean, var = (np.asarray(v)[0] for v in self.recognition.q_x0(self.params, y[None], u[None]))
        return as_covariance(mean, var) if full_cov else (mean, var)

    def _free_x0(self):
        """:meth:`GradientTrainedModel._free_x0`: the covariance of a full q(x0), else the variances (a
        diagonal q(x0)'s particles are drawn from its variances)."""
        return self._q_x0(full_cov=self.spec.x0_covariance == "full")

    # -- training --------------------------------------------------------------------------------------------
    def pretrain_transition(self, x_prev, x_next, u=None, iterations=500, lr=0.01, fixed=()):
        """Fit the transition GP to observed state pairs x_next ~ f([x_prev, u]) (paper Section 4.1: the
        car-tracking transition GPs are pre-trained on 20 true state pairs).

        Maximises :func:`gpssm_np.inference.transition_regression_elbo` with Adam; only the transition's
        parameters move (Z, kernel, q(u), A, process noise). ``x_prev``, ``x_next``: (P, d_x); ``u``: (P, d_u) or
        None. Returns ``self``.
        """
        spec = self.spec
        x_prev = check.finite_array(x_prev, "x_prev", (2,))
        x_next = check.finite_array(x_next, "x_next", (2,))
        if x_prev.shape[1] != spec.dim_x or x_next.shape != x_prev.shape:
            raise ValueError(f"x_prev, x_next: expected two arrays of shape (P, {spec.dim_x}), got {x_prev.shape} "
                             f"and {x_next.shape}")
        u = check.inputs(u, (len(x_prev),), spec.dim_u, "x_prev")
        iterations = check.positive_int(iterations, "iterations")
        frozen = self._check_fixed(fixed) + tuple(name for name in self.params
                                                  if name.startswith(("obs_", "x0_", "rec_")))
        optimizer = Adam(lr=check.positive_float(lr, "lr"))
        scale = 1.0 / len(x_prev)

        def loss(params):
            return -scale * transition_regression_elbo(params, spec, x_prev, u, x_next)

        for _ in range(iterations):
            value, grads = value_and_grad(loss)(self.params)
            self.params = optimizer.step(self.params, without_frozen(grads, frozen))
        return self


#: Fields of the plans that are shares or relative improvements in [0, 1), and non-negative numbers.
SHARES = ("validation", "min_delta")
NON_NEGATIVE = ("switch_t",)


def check_plan(plan, model):
    """``plan`` (:class:`Plan`, :class:`BlockPlan` or :class:`EpochPlan`) with every field checked (a ValueError
    naming the field and what it expects) and normalised (``fixed`` and ``lr_scales`` candidates as tuples,
    ``average`` False as None); parameter names are checked against ``model``'s, and ``seq_len`` against the steps
    its recognition network reads."""
    changes = {}
    for f in dataclass_fields(plan):
        name, value = f.name, getattr(plan, f.name)
        if name == "fixed":
            value = model._check_fixed(value)
        elif name in SHARES + NON_NEGATIVE + ("free_run_factor",):
            number = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
            bad = (not number or not np.isfinite(value) or value < 0 or (name in SHARES and value >= 1)
                   or (name == "free_run_factor" and value <= 0))
            if bad:
                expected = "in [0, 1)" if name in SHARES else ">= 0" if name in NON_NEGATIVE else "> 0"
                raise ValueError(f"{name}: expected a number {expected}, got {value!r}")
            value = float(value)
        elif name == "average":
            value = check_average(value)
        elif name == "refit":
            value = check_switch(value, name, REFITS)
        elif name == "calibrate":
            value = check_switch(value, name, (False, True))
        elif name == "lr_scales":
            value = tuple(model._check_lr_scales(value, isinstance(plan, BlockPlan) and value == BlockPlan.lr_scales))
        elif name == "seq_lens":
            if not isinstance(value, (tuple, list)) or not value:
                raise ValueError(f"seq_lens: expected a non-empty sequence of positive window lengths, got {value!r}")
            value = tuple(check.positive_int(n, "seq_lens") for n in value)
        else:
            value = checked_field(name, value)
        changes[name] = value
    if changes.get("gp_folds", 0) > changes.get("origins", np.inf):  # the selection's folds are among the origins
        raise ValueError(f"gp_folds: expected at most the plan's origins ({changes['origins']}) latest folds, got "
                         f"{changes['gp_folds']}")
    _check_ensemble_size(model.objective, changes.get("num_samples", 2))  # said before any work, not at the first step
    needed = 1 if model.recognition is None else model.recognition.min_steps
    if "seq_len" in changes and changes["seq_len"] < needed:  # the network reads q(x0) from each training window
        raise ValueError(f"seq_len: the recognition network reads the first {needed} steps of a window "
                         f"(recognition_options num_steps), more than the plan's windows of {changes['seq_len']}; "
                         f"give a seq_len of at least {needed}")
    return replace(plan, **changes)


def _check_ensemble_size(objective, num_samples):
    """The ensemble Kalman filter's sample covariance needs at least 2 members (``num_samples``) per window."""
    if objective == "enkf":
        check.int_at_least(num_samples, "num_samples", 2, "ensemble members per window (the 'enkf' objective)")


def _plain(value):
    """A NumPy scalar or array in ``selection_`` as the Python number or list JSON takes (``json.dumps``'s
    ``default``)."""
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    raise TypeError(f"selection_: {type(value).__name__} is not JSON serialisable")


def parse_dim_x(dim_x, dim_y, init, recognition):
    """(d_x the spec holds, dim_x_choice) of a constructor's ``dim_x``: an int is fixed (choice None); "auto" or a
    list of candidate ints is chosen by ``fit``, the spec holding the smallest candidate (d_y for "auto"; 1 for a
    bad dim_y, so that the spec reports it) until then. None (the default): "auto" where the linear warm start can
    choose (init in :data:`WARM_STARTS`, no recognition network), else max(4, d_y), the authors' d_x = 4 where
    C = [I, 0] allows it."""
    valid_dim_y = isinstance(dim_y, (int, np.integer)) and not isinstance(dim_y, bool) and dim_y >= 1
    if dim_x is None:
        dim_x = "auto" if init in WARM_STARTS and recognition is None else max(4, dim_y if valid_dim_y else 1)
    if isinstance(dim_x, str):
        if dim_x != "auto":
            raise ValueError(f"dim_x: expected a positive integer, 'auto' or a list of them, got {dim_x!r}")
        return (dim_y if valid_dim_y else 1), "auto"
    if isinstance(dim_x, np.ndarray) and dim_x.ndim == 1:  # a list given as an array
        dim_x = dim_x.tolist()
    if isinstance(dim_x, (list, tuple)):
        if not dim_x or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 1
                                for d in dim_x):
            raise ValueError(f"dim_x: expected a non-empty list of positive integers, got {dim_x!r}")
        candidates = sorted({int(d) for d in dim_x})
        if valid_dim_y and candidates[0] < dim_y:
            raise ValueError(f"dim_x: every candidate needs at least dim_y = {dim_y} states (the emission C = [I, 0]), "
                             f"got {candidates[0]} in {list(dim_x)}")
        return candidates[0], candidates
    return dim_x, None


def resolve_settings(settings, mean_function, init):
    """(mean_function, init) with the values of ``settings`` (:data:`MODEL_SETTINGS`) where they are None; a mean
    function other than "linear" given explicitly implies init="random" (the warm start needs the linear mean)."""
    if settings not in MODEL_SETTINGS:
        raise ValueError(f"settings: expected one of {tuple(MODEL_SETTINGS)}, got {settings!r}")
    chosen = MODEL_SETTINGS[settings]
    mean_function = chosen["mean_function"] if mean_function is None else mean_function
    if init is None:
        init = chosen["init"] if mean_function == "linear" else "random"
    return mean_function, init


def x0_covariance_of(init):
    """The covariance of the free q(x0) (``GPSSMSpec.x0_covariance``) of a model started by ``init``: "full" with a
    linear warm start, whose stationary prior N(E m0, E P0 E^T) it then holds exactly (``warm_start.py``, step 4),
    so that a floor with a zero GP part filters and forecasts as the linear model does from any number of outputs;
    "diagonal" with the authors' random start (their code's q(x0))."""
    return "full" if init in WARM_STARTS else "diagonal"


def make_recognition(kind, spec, options=None):
    """The recognition network ``kind`` (None, "lstm" or "mlp") for a model with ``spec``, built with ``options`` (a
    dict of the network's constructor arguments but its dimensions; ValueError naming an unknown one, or options
    given without a network)."""
    if options is not None and not isinstance(options, dict):
        raise ValueError(f"recognition_options: expected a dict of the network's arguments, got {options!r}")
    if kind is None:
        if not spec.free_x0:
            raise ValueError("recognition: spec.free_x0 is False, so a recognition network ('lstm' or 'mlp') is needed")
        if options:
            raise ValueError(f"recognition_options: {sorted(options)} given without a recognition network "
                             "(recognition='lstm' or 'mlp')")
        return None
    if kind not in NETWORKS:
        raise ValueError(f"recognition: expected None, 'lstm' or 'mlp', got {kind!r}")
    if spec.free_x0:
        raise ValueError("recognition: a recognition network replaces the free q(x0); "
                         "build the spec with free_x0=False")
    network = NETWORKS[kind]
    check.keywords(dict(options or {}), allowed=[name for name in inspect.signature(network).parameters
                                                 if name not in ("dim_x", "dim_y", "dim_u")],
                   owner=f"recognition_options of recognition={kind!r}")
    return network(spec.dim_x, spec.dim_y, spec.dim_u, **(options or {}))
