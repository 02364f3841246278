"""Model facades: configuration in the constructor, learned arrays in ``params``, maths in the functional core."""
from ..estimator import GradientTrainedModel, StateSpaceModel
from ..training_loop import EpochPlan
from .default_fit import Plan
from .dssm import DSSM
from .gpssm import GPSSM
from .odgpssm import ODGPSSM
from .prssm import PRSSM
from .training import BlockPlan

__all__ = ["StateSpaceModel", "GradientTrainedModel", "GPSSM", "ODGPSSM", "PRSSM", "DSSM", "Plan", "BlockPlan",
           "EpochPlan"]
