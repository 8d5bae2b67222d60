"""Local evidence stays out of Generalization; a regression turns an optimization into a real
anti-pattern; an anti-pattern's evidence may not say it helps."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbopt import KbError, Store
from kbopt.lint import lint
from kbopt.model import EvidenceBlock, EvidenceRow, MetricEffect, Trigger
from kbopt.vocab import Kind, SourceType

REGRESSION = EvidenceBlock(
    source_type=SourceType.LOCAL_EXPERIMENT,
    source="kernels/mla_decode/results/run.json",
    device="NVIDIA H200",
    versions="triton 3.6.0",
    date="2026-12-02",
    command="python -m kernels.mla_decode.bench",
    rows=[
        EvidenceRow(config="b=32 s=1 t=64", before="10.0 us", after="13.0 us", change="+30.0% time")
    ],
)


def _problems(store: Store, name: str) -> list[str]:
    return [str(p) for p in lint(store) if f"/{name}.md" in str(p)]


def test_lint_flags_local_evidence_in_generalization(kb_copy: Path) -> None:
    store = Store(kb_copy)
    entry = store.get("split-kv-decode")
    entry.generalization = "On our H200 v2 ran 152.5 us vs 171 us; triton 3.6 helped."
    store.update(entry)
    found = "\n".join(_problems(store, "split-kv-decode"))
    for needle in ("'H200'", "'v2'", "'152.5 us'", "'171 us'", "'triton 3.6'"):
        assert needle in found, needle
    assert "move local figures, devices and versions to Performance Evidence" in found


def test_converting_rewrites_the_entry_as_an_anti_pattern(kb_copy: Path) -> None:
    store = Store(kb_copy)
    old = store.get("split-kv-decode")
    with pytest.raises(KbError, match="needs the failure pattern"):
        store.convert_kind("split-kv-decode", evidence=REGRESSION, context="Short KV caches.")
    store.convert_kind(
        "split-kv-decode",
        evidence=REGRESSION,
        context="Short KV caches, where each split gets one or two KV tiles.",
        situations=["Decode with a grid that already fills the SMs."],
        failure="The partial-output writes and the combine launch cost more than the split gains.",
        revealed_by=[MetricEffect(metric="kernel_count", note="the combine launch")],
        trigger=Trigger.parse("kv_len <= 64"),
    )
    new = store.get("split-kv-decode")
    assert new.kind is Kind.ANTI_PATTERN
    assert new.mechanism.startswith("The partial-output writes") and new.mechanism != old.mechanism
    assert [t.expression for t in new.triggers] == ["kv_len <= 64"]
    assert [m.metric for m in new.affected_metrics] == ["kernel_count"]
    assert new.contexts[0].startswith("Short KV caches") and len(new.contexts) == 2
    assert new.evidence == [REGRESSION]  # the regression, not the old "it helps" figures
    assert new.generalization != old.generalization
    assert new.pitfalls[0].startswith("History: filed as the optimization")
    assert _problems(store, "split-kv-decode") == []


def test_lint_refuses_an_anti_pattern_whose_evidence_says_it_helps(kb_copy: Path) -> None:
    store = Store(kb_copy)
    entry = store.get("too-many-kv-splits")
    helps = EvidenceRow(
        config="b=32 s=1 t=4096, 8 splits", before="300 us", after="270 us", change="-10.0% time"
    )
    entry.evidence = [entry.evidence[0].model_copy(update={"rows": [helps]}), *entry.evidence[1:]]
    store.update(entry)
    found = _problems(store, "too-many-kv-splits")
    assert any("anti-pattern evidence says the pattern helps" in p for p in found), found
    # the same figures written as the fix (with the pattern -> without it) are the harm
    fix = helps.model_copy(update={"config": "8 fixed splits -> splits sized from the SM count"})
    entry.evidence = [entry.evidence[0].model_copy(update={"rows": [fix]}), *entry.evidence[1:]]
    store.update(entry)
    assert _problems(store, "too-many-kv-splits") == []


def test_the_bundled_catalog_passes_the_new_checks() -> None:
    repo = Path(__file__).resolve().parents[2]
    assert [str(p) for p in lint(Store(repo))] == []


def test_kbopt_add_warns_about_local_evidence_in_generalization(
    kb_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from kbopt.cli import main
    from kbopt.template import render_entry

    entry = (
        Store(kb_copy)
        .get("split-kv-decode")
        .model_copy(
            update={
                "name": "split-kv-decode-local",
                "generalization": "On our H200 v2 ran 152.5 us vs 171 us.",
            }
        )
    )
    src = tmp_path / "split-kv-decode-local.md"
    src.write_text(render_entry(entry))
    assert main(["--root", str(kb_copy), "add", str(src), "--json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert any("'H200'" in w for w in warnings) and any("'152.5 us'" in w for w in warnings)
