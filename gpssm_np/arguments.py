"""The constructor arguments of a model: :class:`ConstructorArguments`, the base of ``estimator.StateSpaceModel``
that gives them scikit-learn's meanings.

A model's configuration is its constructor arguments, the learned arrays are not among them: as in scikit-learn,
``get_params()`` gives the arguments (name -> value, as given to the constructor, the defaults filled in) and
``set_params(name=value, ...)`` changes them, so that ``type(model)(**model.get_params())`` builds the same
unfitted model (what scikit-learn's ``clone`` does). The learned arrays are ``get_learned_params()`` and
``set_learned_params(params)`` (``estimator.py``); ``get_config()`` gives the arguments as plain JSON types, as a
model file keeps them.

Until this release ``get_params()``/``set_params(params)`` meant the learned arrays. ``set_params`` with one dict as
its positional argument still sets them, with a DeprecationWarning; ``get_params()`` cannot mean both and gives the
arguments.
"""
import inspect

from ._warn import warn


class ConstructorArguments:
    """scikit-learn's ``get_params``/``set_params`` over the constructor arguments (module docstring), and a
    ``repr`` with those that differ from their defaults. A subclass supplies ``get_config()`` and
    ``set_learned_params(params)``."""

    #: Constructor arguments renamed since model files were written, {old name: new name}: ``io.load`` reads an
    #: older file's configuration and arguments under the new names.
    RENAMED_ARGUMENTS = {}

    def __new__(cls, *args, **kwargs):
        model = super().__new__(cls)
        model._arguments = (args, kwargs)  # what the constructor was given: get_params reads it
        return model

    def get_params(self, deep=True):
        """The constructor arguments, name -> value: those given, the others at their defaults, and the keyword
        arguments a constructor collects in ``**values`` (a GP model's initial values) when given. A copy of the
        model as it was built, unfitted: ``type(model)(**model.get_params())``. ``deep``: scikit-learn's argument,
        kept for its ``clone``; no argument of a model is itself an estimator, so it changes nothing."""
        signature = inspect.signature(type(self))
        args, kwargs = self._arguments
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        params = {}
        for name, value in bound.arguments.items():
            if signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
                params.update(value)
            else:
                params[name] = value
        return params

    def restore_arguments(self, arguments):
        """Make :meth:`get_params` give ``arguments`` (name -> value), the constructor arguments of the model this one
        was rebuilt from by its configuration (``io.load``: the configuration holds fitted choices, e.g. a ``dim_x``
        chosen from "auto"); arguments the constructor would not take are ignored, and it keeps its own. Where the
        arguments build another configuration than the one it was rebuilt from, its next ``fit`` starts from what
        they build (:meth:`_rebuilt_for_fit`), as the fit of the model it was saved from would have."""
        try:
            inspect.signature(type(self)).bind(**arguments)
        except TypeError:
            return
        try:
            rebuilds = type(self)(**arguments).get_config() != self.get_config()
        except (TypeError, ValueError):  # arguments this version would refuse: the model keeps its own
            return
        self._arguments, self._fit_rebuilds = ((), dict(arguments)), rebuilds

    def _rebuilt_for_fit(self):
        """Before a ``fit``: a model loaded from a configuration that holds a former fit's choices (a chosen
        ``dim_x``, floor kind, ...; :meth:`restore_arguments`) is built again from its constructor arguments, so
        that the fit chooses afresh; any other model is left as it is."""
        if getattr(self, "_fit_rebuilds", False):
            self._rebuild()

    def _rebuild(self, **changes):
        """Build the model again from :meth:`get_params` with ``changes`` in place, in this object."""
        built = type(self)(**dict(self.get_params(), **changes))
        self.__dict__.clear()
        self.__dict__.update(built.__dict__)

    def set_params(self, *params_dict, **params):
        """Set constructor arguments by name and return the model: it is built again from :meth:`get_params` with
        ``params`` in place (the constructor checks them: an unknown name is a ValueError naming it), so it is
        unfitted afterwards, with freshly initialised parameters, as scikit-learn's ``set_params`` before a ``fit``.

        Deprecated: ``set_params(params)`` with one dict of learned arrays sets them (``set_learned_params``, what
        ``set_params`` meant until this release) and warns."""
        if params_dict:
            if len(params_dict) > 1 or params or not isinstance(params_dict[0], dict):
                raise TypeError("set_params: takes constructor arguments by name, set_params(name=value, ...); "
                                "the learned arrays are set by set_learned_params(params)")
            warn("set_params(params) with a dict of learned arrays is deprecated: use "
                 "set_learned_params(params); set_params(name=value, ...) sets constructor arguments, as "
                 "in scikit-learn", DeprecationWarning)
            return self.set_learned_params(params_dict[0])
        if params:
            self._rebuild(**params)
        return self

    def __repr__(self):
        """The constructor arguments as given (:meth:`get_params`) that differ from their defaults, so that
        evaluating it builds the model as it was built, unfitted; then, once a fit has chosen something the
        arguments left open (orders, a state dimension, a floor), those choices in brackets (:meth:`_fitted_choices`).
        As in scikit-learn, the repr says how a model was asked for; what the fit made of it follows it."""
        as_built = type(self)(**self.get_params())
        named = inspect.signature(type(self)).parameters
        collected = {name: value for name, value in self.get_params().items() if name not in named}  # **values
        arguments = ", ".join(f"{name}={value!r}" for name, value in
                              dict(as_built._changed_config(), **collected).items())
        choices = self._fitted_choices()
        return f"{type(self).__name__}({arguments})" + (f" [{choices}]" if choices else "")

    def _fitted_choices(self):
        """What the fit chose that the constructor arguments left open, as text for the repr ("" for nothing)."""
        return ""

    def _changed_config(self):
        """The entries of ``get_config()`` that rebuild the model with every other argument at its default: the
        required arguments, then each argument whose value differs from the model rebuilt so far; arguments with a
        fixed default come first, those defaulting to None (decided by others, e.g. ``settings``) after them."""
        config = self.get_config()
        parameters = {name: p for name, p in inspect.signature(type(self)).parameters.items()
                      if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
        required = [name for name, p in parameters.items() if p.default is p.empty]
        if not set(required) <= set(config):  # a constructor that takes other objects (GPSSM's spec)
            return config
        shown = {name: config[name] for name in required}
        optional = [name for name in parameters if name in config and name not in shown]
        reference = type(self)(**shown).get_config()
        for name in sorted(optional, key=lambda name: parameters[name].default is None):
            if config[name] != reference.get(name):
                shown[name] = config[name]
                reference = self._config_of(shown) or reference  # one needing a later argument: kept, built later
        for name in [name for name in shown if name not in required]:  # one that a later argument decides anyway
            fewer = {key: value for key, value in shown.items() if key != name}  # (init="random" resolves dim_x)
            if _same_config(self._config_of(fewer), config):
                shown = fewer
        return shown

    def _config_of(self, arguments):
        """``get_config()`` of the model built from ``arguments``, or None where the constructor refuses them (one
        argument needs another that is not among them: ``recognition_options`` without ``recognition``)."""
        try:
            return type(self)(**arguments).get_config()
        except ValueError:
            return None


def _same_config(a, b):
    return a is not None and a.keys() == b.keys() and not any(a[name] != b[name] for name in a)
