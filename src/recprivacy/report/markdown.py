"""The report outline and its Markdown rendering.

``outline(doc)`` turns a results document into the ordered list of sections both renderers
show: the study's own sections (in the order the study added them), then any table or figure
no section refers to, then an appendix (dataset, configuration, timings, environment).
Each outlined section is ``{"title", "text" (Markdown), "tables": [table], "figures": [figure]}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from recprivacy.report.tables import markdown_table


def outline(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Ordered sections of the report of ``doc`` (see module docstring)."""
    tables, figures = doc.get("tables", {}), doc.get("figures", {})
    out = [
        {
            "title": s["title"],
            "text": s.get("text", ""),
            "tables": [tables[t] for t in s.get("tables", [])],
            "figures": [figures[f] for f in s.get("figures", [])],
        }
        for s in doc.get("sections", [])
    ]
    used_t = {t for s in doc.get("sections", []) for t in s.get("tables", [])}
    used_f = {f for s in doc.get("sections", []) for f in s.get("figures", [])}
    rest_t = [tables[t] for t in tables if t not in used_t]
    rest_f = [figures[f] for f in figures if f not in used_f]
    if rest_t or rest_f:
        out.append({"title": "Other results", "text": "", "tables": rest_t, "figures": rest_f})
    return out + appendix(doc)


def appendix(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Dataset, configuration, timings and environment sections."""
    dataset = {k: v for k, v in doc.get("dataset", {}).items() if k != "provenance"}
    steps = doc.get("dataset", {}).get("provenance", [])
    step_text = "\n".join(f"{i}. {_step(s)}" for i, s in enumerate(steps, 1))
    config_text = "```yaml\n" + yaml.safe_dump(doc.get("config", {}), sort_keys=False).rstrip() + "\n```"
    seeds = ", ".join(f"{k}={v}" for k, v in doc.get("seeds", {}).items()) or "none recorded"
    return [
        {
            "title": "Dataset",
            "text": ("Processing steps:\n\n" + step_text) if steps else "",
            "tables": [_key_value(dataset, "Dataset summary and fingerprint")] if dataset else [],
            "figures": [],
        },
        {"title": "Configuration", "text": f"Seeds: {seeds}.{_noise_sentence(doc)}\n\n{config_text}", "tables": [],
         "figures": []},
        {
            "title": "Timings and environment",
            "text": "",
            "tables": [
                _key_value({k: float(v) for k, v in doc.get("timings", {}).items()}, "Wall-clock seconds"),
                _key_value(doc.get("versions", {}), "Library versions"),
            ],
            "figures": [],
        },
    ]


def _noise_sentence(doc: Mapping[str, Any]) -> str:
    """Where the privacy noise came from, when the run recorded it."""
    return f" Privacy noise: {doc['noise']}." if doc.get("noise") else ""


def _key_value(mapping: Mapping[str, Any], caption: str) -> dict[str, Any]:
    rows = [[k, v if isinstance(v, (int, float, str, bool)) or v is None else _inline(v)] for k, v in mapping.items()]
    return {"columns": ["", "value"], "rows": rows, "caption": caption}


def _inline(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()


def _step(step: Any) -> str:
    """One processing step as words: its name in bold, then its settings as ``key = value``."""
    if not isinstance(step, Mapping) or "step" not in step:
        return f"`{_inline(step)}`"
    settings = ", ".join(f"{k} = {v}" for k, v in step.items() if k != "step")
    return f"**{step['step']}**" + (f": {settings}" if settings else "")


def title_of(doc: Mapping[str, Any]) -> str:
    return f"{doc['name']} — recprivacy {doc['study']} report"


def subtitle_of(doc: Mapping[str, Any]) -> str:
    """One line: when, which dataset (with its content hash), which recprivacy, which noise."""
    data = doc.get("dataset", {})
    dataset = f"dataset {data.get('name', '?')} (sha256 {data.get('sha256', '?')})" if data else "no dataset"
    version = doc.get("versions", {}).get("recprivacy", "?")
    noise = f" · privacy noise {doc['noise']}" if doc.get("noise") else ""
    return f"Created {doc.get('created', '?')} · {dataset} · recprivacy {version}{noise}"


def render_markdown(doc: Mapping[str, Any]) -> str:
    """The whole report as Markdown; figures are linked by their relative paths."""
    parts = [f"# {title_of(doc)}", "", subtitle_of(doc), ""]
    for section in outline(doc):
        parts += [f"## {section['title']}", ""]
        if section["text"]:
            parts += [section["text"].strip(), ""]
        for table in section["tables"]:
            parts += [markdown_table(table), ""]
        for figure in section["figures"]:
            parts += [f"![{figure.get('caption') or figure['path']}]({figure['path']})", ""]
            if figure.get("caption"):
                parts += [f"*{figure['caption']}*", ""]
    return "\n".join(parts).rstrip() + "\n"
