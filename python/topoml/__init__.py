"""topoml: persistent homology on plugin backends checked against an exact
reference.

numpy in, diagrams out::

    import topoml
    dgms = topoml.ripser(X)["dgms"]              # ripser.py's call
    dgms = topoml.ripser_parallel(X)["dgms"]     # giotto-ph's call
    r = topoml.barcodes(X, maxdim=2)             # topoml's own: r.diagrams, r.backend

Importing topoml loads numpy and the compiled binding only. matplotlib
(``plot_diagrams``, ``plot_barcode``) and scikit-learn (``topoml.sklearn``)
are imported when first used; see docs/python.md.
"""
from . import _core
from ._backends import (BackendInfo, Capability, available_backends, backends, select_backend,
                        selected_backend)
from ._core import BackendWarning, CancelledError, MemoryLimitError
from ._rips import BarcodeResult, barcodes, ripser, ripser_parallel
from .features import (betti_curve, bottleneck, distances, entropy, landscapes,
                       persistence_images, total_persistence, wasserstein)

library_version = _core.version()
__version__ = library_version  # one version: CMakeLists.txt project()

_LAZY = {
    "plot_diagrams": "plotting", "plot_barcode": "plotting",
    "VietorisRipsPersistence": "sklearn", "PersistenceImage": "sklearn",
    "BettiCurve": "sklearn", "PersistenceLandscape": "sklearn",
    "PersistenceEntropy": "sklearn",
}

__all__ = ["BackendInfo", "Capability", "available_backends", "backends", "select_backend",
           "selected_backend", "BackendWarning", "CancelledError", "MemoryLimitError",
           "BarcodeResult", "barcodes", "ripser", "ripser_parallel", "betti_curve", "bottleneck",
           "distances", "entropy", "landscapes", "persistence_images", "total_persistence",
           "wasserstein"] + sorted(_LAZY)


def __getattr__(name):
    # The modules that import matplotlib or scikit-learn load on first use.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError("module 'topoml' has no attribute %r" % (name,))
    import importlib
    value = getattr(importlib.import_module("." + module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
