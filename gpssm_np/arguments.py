"""The constructor arguments of a model: :class:`ConstructorArguments`, the base of ``estimator.StateSpaceModel``
that shows them in the model's ``repr``.

A model's configuration is its constructor arguments (``get_config`` gives them as plain JSON types, so that
``type(model)(**model.get_config())`` rebuilds it); the learned arrays are not among them.
"""
import inspect


class ConstructorArguments:
    """A ``repr`` with the class and the constructor arguments that differ from their defaults, as scikit-learn
    shows them. A subclass supplies ``get_config()``."""

    def __repr__(self):
        arguments = ", ".join(f"{name}={value!r}" for name, value in self._changed_config().items())
        return f"{type(self).__name__}({arguments})"

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
                reference = type(self)(**shown).get_config()
        return shown
