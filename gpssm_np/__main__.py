"""``python -m gpssm_np`` is the ``gpssm-np`` command."""
import sys

from .cli import main

sys.exit(main())
