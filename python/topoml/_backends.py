"""The backends libtopoml knows, as Python dataclasses mirroring the C
capability records (``topoml_backend_info``, ``topoml_capability_v1``), and
the process-wide backend choice."""
from dataclasses import dataclass
from typing import Dict, List, Optional

from . import _context

OPS = ("distances", "edges", "h0", "rips", "image")
DTYPES = ("float32", "float64")
METRICS = ("euclidean", "sqeuclidean", "manhattan", "chebyshev", "cosine")
INPUTS = ("points", "condensed", "sparse")
GATE_STATES = ("enabled", "disabled", "unsupported", "rejected")
SELECTIONS = ("auto", "by-name")


def _bits(mask, names):
    return tuple(name for k, name in enumerate(names) if mask & (1 << k))


@dataclass(frozen=True)
class Capability:
    """One capability record: what a backend can do for one op."""

    op: str
    dtypes: tuple
    metrics: tuple
    inputs: tuple
    max_dim: int
    max_modulus: int
    max_points: int  # 0: no limit of the backend's own
    device: Optional[str]
    schedule: Optional[str]  # "key=value ..." tiles, warps, stages, target; or free text

    @property
    def schedule_params(self) -> Dict[str, str]:
        """The ``key=value`` items of ``schedule`` as a dict."""
        return dict(item.split("=", 1) for item in (self.schedule or "").split() if "=" in item)


@dataclass(frozen=True)
class BackendInfo:
    """A backend as the context found it: identity, probe result, gate
    state and why, and its capability records."""

    name: str
    version: Optional[str]
    vendor: Optional[str]
    description: Optional[str]
    path: Optional[str]  # None for the scalar reference built into libtopoml
    abi_version: int
    probe_ok: bool
    probe_message: Optional[str]
    gate_state: str  # one of GATE_STATES; only "enabled" backends run work
    gate_reason: Optional[str]
    selection: str  # "auto", or "by-name": runs only when named
    capabilities: List[Capability]
    warnings: List[str]
    # "host": its ops run in this process; "process": in a helper process of
    # its own (the configuration's `isolation`); None if the core is older
    isolation: Optional[str] = None
    # for a backend in a helper process, the walls of its sandbox this kernel
    # offers ("seccomp, landlock (ABI 7), ..." or "partial: ..."); else None
    sandbox: Optional[str] = None

    @property
    def enabled(self):
        return self.gate_state == "enabled"

    @property
    def ops(self):
        return tuple(dict.fromkeys(c.op for c in self.capabilities))


def _info(d, warnings):
    caps = [Capability(op=OPS[c["op"]] if c["op"] < len(OPS) else str(c["op"]),
                       dtypes=_bits(c["dtypes"], DTYPES), metrics=_bits(c["metrics"], METRICS),
                       inputs=_bits(c["inputs"], INPUTS), max_dim=c["max_dim"],
                       max_modulus=c["max_modulus"], max_points=c["max_points"],
                       device=c["device"], schedule=c["schedule"])
            for c in d["capabilities"]]
    state = d["gate_state"]
    mine = [w for w in warnings if d["name"] and d["name"] in w]
    if d["probe_status"] != 0 and d["probe_message"]:
        mine.insert(0, "probe: " + d["probe_message"])
    return BackendInfo(name=d["name"], version=d["version"], vendor=d["vendor"],
                       description=d["description"], path=d["path"],
                       abi_version=d["abi_version"], probe_ok=d["probe_status"] == 0,
                       probe_message=d["probe_message"],
                       gate_state=GATE_STATES[state] if state < len(GATE_STATES) else str(state),
                       gate_reason=d["gate_reason"],
                       selection=SELECTIONS[d["selection"]] if d["selection"] < 2 else "auto",
                       capabilities=caps, warnings=mine, isolation=d.get("isolation"),
                       sandbox=d.get("sandbox"))


def backends():
    """Every backend found: the built-in scalar reference first, then the
    plugin files (rejected ones too), as :class:`BackendInfo`.

    Examples
    --------
    >>> import topoml
    >>> b = topoml.backends()[0]
    >>> b.name, b.gate_state, "rips" in b.ops
    ('scalar', 'enabled', True)
    """
    ctx = _context.context()
    warnings = ctx.take_warnings()
    return [_info(d, warnings) for d in ctx.backends()]


def available_backends():
    """Names of the backends that may run work now (gate state enabled).

    Examples
    --------
    >>> import topoml
    >>> "scalar" in topoml.available_backends()
    True
    """
    return [b.name for b in backends() if b.enabled]


def select_backend(name):
    """Run every following computation, in every thread, on backend `name`
    only (None: let topoml choose again). An op the backend cannot do then
    fails instead of running elsewhere. ValueError for a backend that does
    not exist or is not enabled.

    Examples
    --------
    >>> import topoml
    >>> topoml.select_backend("scalar")
    >>> topoml.barcodes([[0.0], [1.0]]).backend
    'scalar'
    >>> topoml.select_backend(None)
    """
    # Only what naming the backend needs is probed: nothing for "scalar",
    # the file named for a plugin (docs/architecture.md, "Loading a plugin");
    # every plugin only for a name no file is named for.
    if name is not None and name != "scalar":
        ctx = _context.context()
        found = ctx.find_backend(name)
        if found is None:
            names = dict.fromkeys(b.name for b in backends() if b.name)
            raise ValueError("no backend named %r; found: %s" % (name, ", ".join(names)))
        b = _info(found, ctx.take_warnings())
        if not b.enabled:
            raise ValueError("backend %r is %s: %s" % (name, b.gate_state, b.gate_reason))
    _context.set_selected(name)


def selected_backend():
    """The name given to :func:`select_backend`, or None."""
    return _context.selected()
