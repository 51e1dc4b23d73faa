"""A study's table as a picture (``mechfmu plot-study``): one metric against one or two varied settings.

- one setting: the metric against it, one line per combination of the other varied settings (labelled);
- two settings: the metric as colour over the plane, a filled contour through the runs (cells where the
  runs form a grid, triangles where they are samples), each run a dot;
- a run that failed (status not ok, or a metric that is not finite) is a red x and is left out of lines
  and contours; its message is in the table.

Axes are labelled with the setting and its unit (from the scenario's FMUs or components), the colour bar
or y axis with the metric and its expression. The table's sidecar ``<table>.study.json`` (written by
``run_study``) says what was varied and measured; without it every non-fixed column is offered.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from mechfmu.studies import needs
from mechfmu.studies.runner import _value
from mechfmu.studies.study import FIXED_COLUMNS, INDEX_COLUMN


def read_table(path: str | Path) -> tuple[list[str], list[dict[str, Any]]]:
    """(columns, rows) of a study table (.csv or .parquet); numbers as int or float."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"study table {path} not found")
    if path.suffix == ".parquet":
        needs("pyarrow", f"reading the Parquet table {path}")
        import pyarrow.parquet as pq
        table = pq.read_table(path)
        return list(table.column_names), table.to_pylist()
    import csv
    with path.open(newline="") as f:
        lines = list(csv.reader(f))
    if not lines:
        raise ValueError(f"study table {path} is empty")
    columns = lines[0]
    return columns, [dict(zip(columns, map(_value, line))) for line in lines[1:] if len(line) == len(columns)]


def _definition(path: Path) -> dict[str, Any]:
    sidecar = path.with_name(path.name + ".study.json")
    return json.loads(sidecar.read_text())["study"] if sidecar.exists() else {}


def _unit(study: dict[str, Any], setting: str) -> str:
    """The unit of COMPONENT.PARAMETER in the study's scenario ('' if none or not a parameter)."""
    if setting in ("step", "stop"):
        return "s"
    component, _, parameter = setting.partition(".")
    try:
        from mechfmu.ssp.scenario import component_variables, load_scenario
        scenario = load_scenario(study["scenario"], local=study.get("local", False))
        variable = component_variables(scenario.components[component], study.get("local", False)).get(parameter)
    except Exception:  # a label is no reason to fail: the scenario may have moved since the study ran
        return ""
    unit = getattr(variable, "unit", None) or (getattr(getattr(variable, "declaredType", None), "unit", None))
    return unit or ""


def plot_study(table: str | Path, metric: str, x: str, y: str | None = None, out: str | Path | None = None,
               log: tuple[str, ...] = ()) -> Path:
    """Draw ``metric`` against setting ``x`` (and ``y``) from a study table; returns the picture's path: PNG,
    or SVG when ``out`` ends in .svg (default: the table's with ``.<metric>.png``). ``log`` names the settings
    (or "metric") drawn on a log scale. ValueError naming what is missing."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    path = Path(table)
    columns, rows = read_table(path)
    study = _definition(path)
    axes = [a for a in (*study.get("grid", {}), *study.get("ranges", {}))] or [
        c for c in columns if c not in (INDEX_COLUMN, *FIXED_COLUMNS) and c not in study.get("metrics", {})]
    metrics = list(study.get("metrics", {})) or [c for c in columns if c not in (INDEX_COLUMN, *FIXED_COLUMNS)]
    for name, kind, known in ((metric, "metric", metrics), (x, "varied setting", axes), (y, "varied setting", axes)):
        if name is not None and (name not in known or name not in columns):
            raise ValueError(f"{path}: no {kind} {name!r}; the table has {', '.join(known) or 'none'}")
    if not rows:
        raise ValueError(f"{path}: no runs in the table yet")
    good = [r for r in rows if r["status"] == "ok" and isinstance(r[metric], float) and math.isfinite(r[metric])]
    bad = [r for r in rows if r not in good]
    expression = study.get("metrics", {}).get(metric, "")
    metric_label = metric

    def label(setting: str) -> str:
        unit = _unit(study, setting) if study else ""
        return f"{setting} [{unit}]" if unit else setting

    fig, ax = plt.subplots(figsize=(7, 5))
    if y is None:
        others = [a for a in axes if a != x]
        groups: dict[tuple, list[dict[str, Any]]] = {}
        for r in good:
            groups.setdefault(tuple(r[o] for o in others), []).append(r)
        def order(item: tuple[tuple, list]) -> tuple:  # numbers by value, then texts
            return tuple((0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v)) for v in item[0])

        for key, members in sorted(groups.items(), key=order):
            members.sort(key=lambda r: r[x])
            name = ", ".join(f"{o} = {v:g}" if isinstance(v, float) else f"{o} = {v}" for o, v in zip(others, key))
            ax.plot([r[x] for r in members], [r[metric] for r in members], "o-", ms=4, label=name or None)
        if bad:  # along the bottom edge: a failed run has no value
            ax.plot([r[x] for r in bad], [0.02] * len(bad), "rx", transform=ax.get_xaxis_transform(),
                    label="failed runs")
        ax.set_ylabel(metric_label)
        if "metric" in log:
            ax.set_yscale("log")
        if len(groups) > 1 or bad:
            ax.legend(fontsize="small")
    else:
        for setting in (x, y):
            if not all(isinstance(r[setting], (int, float)) for r in rows):
                raise ValueError(f"{path}: {setting} is not numeric; plot the metric against the other setting, "
                                 f"one line per {setting}")
        xs, ys = (np.array([r[a] for r in good], dtype=float) for a in (x, y))
        zs = np.array([r[metric] for r in good], dtype=float)
        norm = LogNorm() if "metric" in log and zs.size and zs.min() > 0 else None
        ux, uy = np.unique(xs), np.unique(ys)
        filled: Any
        if ux.size * uy.size == zs.size == len(set(zip(xs, ys))) and ux.size > 1 and uy.size > 1:  # a full grid
            grid = np.full((uy.size, ux.size), np.nan)
            grid[np.searchsorted(uy, ys), np.searchsorted(ux, xs)] = zs
            filled = ax.pcolormesh(ux, uy, grid, shading="nearest", norm=norm, cmap="viridis")
        elif zs.size >= 3:
            filled = ax.tricontourf(xs, ys, zs, levels=14, norm=norm, cmap="viridis")
        else:
            filled = ax.scatter(xs, ys, c=zs, norm=norm, cmap="viridis")
        solids = fig.colorbar(filled, ax=ax, label=metric_label).solids
        if solids is not None:
            solids.set_rasterized(False)  # an SVG stays all vectors
        ax.plot(xs, ys, "k.", ms=3)
        if bad:
            ax.plot([r[x] for r in bad], [r[y] for r in bad], "rx", label="failed runs")
            ax.legend(fontsize="small")
        ax.set_ylabel(label(y))
        if y in log:
            ax.set_yscale("log")
    ax.set_xlabel(label(x))
    if x in log:
        ax.set_xscale("log")
    ax.set_title(f"{Path(study.get('scenario', '')).name or path.stem}, {len(good)} runs"
                 + (f", {len(bad)} failed" if bad else "") + (f"\n{metric} = {expression}" if expression else ""),
                 fontsize="medium")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    target = Path(out) if out is not None else path.with_name(f"{path.stem}.{metric}.png")
    if target.suffix == ".svg":  # text, reproducible: fonts as text, no date, fixed element ids
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "mechfmu"}):
            fig.savefig(target, metadata={"Date": None})
    else:
        fig.savefig(target, dpi=110)
    plt.close(fig)
    return target
