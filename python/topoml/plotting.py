"""Plots of persistence diagrams and barcodes with matplotlib, looking like
persim's ``plot_diagrams``. matplotlib is imported when one is drawn, not
when topoml is imported."""
import numpy as np


def _diagram_list(diagrams):
    if isinstance(diagrams, dict) and "dgms" in diagrams:
        diagrams = diagrams["dgms"]
    if hasattr(diagrams, "diagrams"):
        diagrams = diagrams.diagrams
    if isinstance(diagrams, np.ndarray) and diagrams.ndim == 2:
        diagrams = [diagrams]
    out = []
    for d in diagrams:
        a = np.asarray(d, dtype=np.float64).reshape(-1, 2) if np.size(d) else np.zeros((0, 2))
        out.append(a)
    return out


def plot_diagrams(diagrams, plot_only=None, title=None, xy_range=None, labels=None,
                  colormap="default", size=20, ax_color=np.array([0.0, 0.0, 0.0]),
                  diagonal=True, lifetime=False, legend=True, show=False, ax=None):
    """Persistence diagrams as a scatter plot, one colour per dimension;
    essential classes on a dashed line marked inf above the finite points.
    Same parameters as ``persim.plot_diagrams``. ``diagrams`` may also be
    :func:`topoml.ripser`'s dict or :func:`topoml.barcodes`'s result.
    Returns the axes.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import topoml
    >>> ax = topoml.plot_diagrams([[[0, 1], [0, float("inf")]], [[0.5, 0.8]]])
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['$H_{0}$', '$H_{1}$']
    """
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    plt.style.use(colormap) if colormap != "default" else None
    dgms = _diagram_list(diagrams)
    if plot_only is not None:
        dgms = [dgms[k] for k in plot_only]
        labels = labels or ["$H_{%d}$" % k for k in plot_only]
    labels = labels or ["$H_{%d}$" % k for k in range(len(dgms))]
    finite = np.concatenate([d[np.isfinite(d[:, 1])] for d in dgms] + [np.zeros((0, 2))])
    has_inf = any(np.isinf(d[:, 1]).any() for d in dgms)
    if xy_range is None:
        lo = min(0.0, finite.min()) if len(finite) else 0.0
        hi = finite.max() if len(finite) else 1.0
        pad = (hi - lo) * 0.05 or 0.05
        x_down, x_up, y_down, y_up = lo - pad, hi + pad, lo - pad, hi + pad
        y_inf = hi + 2 * pad if has_inf else None
        if has_inf:
            y_up = y_inf + pad
    else:
        x_down, x_up, y_down, y_up = xy_range
        y_inf = y_up - (y_up - y_down) * 0.05 if has_inf else None
    if lifetime:
        ax.set_ylabel("Lifetime")
    else:
        ax.set_ylabel("Death")
        if diagonal:
            ax.plot([x_down, x_up], [x_down, x_up], "--", c=ax_color)
    ax.set_xlabel("Birth")
    if has_inf:
        ax.plot([x_down, x_up], [y_inf, y_inf], "--", c="k", label=r"$\infty$")
    for d, label in zip(dgms, labels):
        death = np.where(np.isinf(d[:, 1]), y_inf if y_inf is not None else np.nan, d[:, 1])
        y = death - d[:, 0] if lifetime else death
        ax.scatter(d[:, 0], y, size, label=label, edgecolor="none")
    ax.set_xlim([x_down, x_up])
    ax.set_ylim([y_down, y_up])
    ax.set_aspect("equal", "box")
    if title is not None:
        ax.set_title(title)
    if legend:
        handles, names = ax.get_legend_handles_labels()
        keep = [(h, n) for h, n in zip(handles, names) if n != r"$\infty$"]
        ax.legend(*zip(*keep), loc="lower right") if keep else None
    if show:
        plt.show()
    return ax


def plot_barcode(diagrams, dims=None, ax=None, show=False, title=None):
    """Barcodes: one horizontal bar per interval, grouped by dimension,
    longest first; essential classes run to the right edge with an arrow.
    Returns the axes.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import topoml
    >>> ax = topoml.plot_barcode([[[0, 1], [0, 2]], [[0.5, 0.8]]])
    >>> len(ax.collections[0].get_segments())
    3
    """
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    dgms = _diagram_list(diagrams)
    dims = list(range(len(dgms))) if dims is None else list(dims)
    finite = np.concatenate([dgms[k][np.isfinite(dgms[k][:, 1])] for k in dims] +
                            [np.zeros((0, 2))])
    right = finite.max() * 1.1 if len(finite) and finite.max() > 0 else 1.0
    segments, colors, arrows, ticks = [], [], [], []
    row = 0
    cycle = plt.rcParams["axes.prop_cycle"].by_key().get("color", ["C0", "C1", "C2"])
    for k in dims:
        d = dgms[k]
        order = np.argsort(-(d[:, 1] - d[:, 0]), kind="stable")
        ticks.append((row + len(d) / 2.0, "$H_{%d}$" % k))
        for b, e in d[order]:
            end = right if np.isinf(e) else e
            segments.append([(b, row), (end, row)])
            colors.append(cycle[k % len(cycle)])
            if np.isinf(e):
                arrows.append((end, row))
            row += 1
        row += 1
    from matplotlib.collections import LineCollection
    ax.add_collection(LineCollection(segments, colors=colors, linewidths=2))
    if arrows:
        a = np.array(arrows)
        ax.plot(a[:, 0], a[:, 1], ">", c="k", markersize=4)
    ax.set_xlim(0 if not len(finite) else min(0.0, finite.min()), right * 1.02)
    ax.set_ylim(-1, max(row, 1))
    ax.invert_yaxis()
    ax.set_yticks([t for t, _ in ticks])
    ax.set_yticklabels([n for _, n in ticks])
    ax.set_xlabel("Filtration value")
    if title is not None:
        ax.set_title(title)
    if show:
        plt.show()
    return ax
