"""FlashMLA as an MLA decode baseline, on the CPU: the paged view of our cache, the clean skip
without `flash_mla`, and the adapter end to end against a stand-in `flash_mla` package that
reads the cache through its block table the way FlashMLA documents it (pages of 64 rows).

The real extension is built and timed on the GPU machine (scripts/build_flashmla.sh, then
`kbopt bench mla_decode`); nothing here needs it.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from kbopt.bench.harness import check
from kbopt.kernel import load_spec
from kernels.mla_decode import flashmla_baseline, reference

REPO = Path(__file__).resolve().parents[2]

# A stand-in for FlashMLA's Python interface (flash_mla_interface.py at 9241ae3): the same
# signatures, an empty metadata object filled by the first call, and attention computed in
# fp32 by reading row j of sequence i at k_cache[block_table[i, j // 64], j % 64, 0].
FAKE_FLASH_MLA = """
import torch

CALLS = {"calls": 0, "metadata_filled": 0}


class FlashMLASchedMeta:
    have_initialized = False


def get_mla_metadata(*args, **kwargs):
    return FlashMLASchedMeta(), None


def flash_mla_with_kvcache(q, k_cache, block_table, cache_seqlens, head_dim_v,
                           tile_scheduler_metadata, num_splits=None, softmax_scale=None,
                           causal=False):
    assert isinstance(tile_scheduler_metadata, FlashMLASchedMeta) and num_splits is None
    assert k_cache.shape[1] == 64 and k_cache.shape[2] == 1 and head_dim_v == 512
    assert block_table.dtype == torch.int32 and cache_seqlens.dtype == torch.int32
    assert not causal
    if not tile_scheduler_metadata.have_initialized:
        tile_scheduler_metadata.have_initialized = True
        CALLS["metadata_filled"] += 1
    CALLS["calls"] += 1
    b, s, h, d = q.shape
    out = torch.empty(b, s, h, head_dim_v, dtype=q.dtype)
    lse = torch.empty(b, h, s, dtype=torch.float32)
    for i in range(b):
        rows = torch.arange(int(cache_seqlens[i]))
        pages = block_table[i, rows // 64].long()
        kv = k_cache[pages, rows % 64, 0].float()
        scores = q[i].float().reshape(s * h, d) @ kv.T * softmax_scale
        out[i] = (torch.softmax(scores, -1) @ kv[:, :head_dim_v]).reshape(s, h, -1).to(q.dtype)
        lse[i] = torch.logsumexp(scores, -1).reshape(s, h).T
    return out, lse
"""


@pytest.fixture
def no_flash_mla(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(flashmla_baseline.PATH_ENV, raising=False)
    monkeypatch.setattr(sys, "path", [p for p in sys.path])
    monkeypatch.delitem(sys.modules, "flash_mla", raising=False)
    if importlib.util.find_spec("flash_mla") is not None:
        pytest.skip("a real flash_mla is installed here")


@pytest.fixture
def fake_flash_mla(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    pkg = tmp_path / "built" / "flash_mla"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(textwrap.dedent(FAKE_FLASH_MLA))
    monkeypatch.setenv(flashmla_baseline.PATH_ENV, str(tmp_path / "built"))
    monkeypatch.setattr(sys, "path", [p for p in sys.path])
    monkeypatch.delitem(sys.modules, "flash_mla", raising=False)
    ok, why = flashmla_baseline.available()
    assert ok, why
    yield importlib.import_module("flash_mla")
    sys.modules.pop("flash_mla", None)


def test_paged_view_is_the_same_memory_in_64_row_pages() -> None:
    b, t = 3, 192
    kv = torch.randn(b, t, reference.D_QK)
    k_cache, block_table = flashmla_baseline.paged_view(kv)
    assert k_cache.shape == (b * t // 64, 64, 1, reference.D_QK)
    assert k_cache.data_ptr() == kv.data_ptr()  # a view, not a copy
    assert block_table.dtype == torch.int32 and block_table.shape == (b, t // 64)
    assert block_table.tolist() == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    rows = torch.arange(t)
    for i in range(b):
        gathered = k_cache[block_table[i, rows // 64].long(), rows % 64, 0]
        assert torch.equal(gathered, kv[i])


def test_paged_view_refuses_what_it_cannot_page() -> None:
    with pytest.raises(ValueError, match="t=100 is not a multiple of 64"):
        flashmla_baseline.paged_view(torch.zeros(2, 100, reference.D_QK))
    with pytest.raises(ValueError, match=r"kv_cache must be \[b, t, 576\]"):
        flashmla_baseline.paged_view(torch.zeros(2, 128, 512))
    with pytest.raises(ValueError, match="contiguous"):
        flashmla_baseline.paged_view(torch.zeros(128, 2, reference.D_QK).transpose(0, 1))


def test_without_flash_mla_the_baseline_is_left_out_with_one_line(
    no_flash_mla: None, capsys: pytest.CaptureFixture[str]
) -> None:
    ok, why = flashmla_baseline.available()
    assert not ok
    assert "flash_mla is not importable" in why and "scripts/build_flashmla.sh" in why
    spec = load_spec("mla_decode", REPO)
    names = spec.load_baselines()
    assert "flashmla" not in names and "torch" in names
    lines = [x for x in capsys.readouterr().err.splitlines() if "FlashMLA" in x]
    assert len(lines) == 1 and lines[0].startswith("[mla_decode] FlashMLA baseline skipped:")
    with pytest.raises(ImportError, match="flash_mla is not importable"):
        flashmla_baseline.prepare(*reference.make_inputs(1, 1, 64, seed=0))


def test_kernel_check_names_the_missing_baseline(no_flash_mla: None) -> None:
    from kbopt.cli.kernel_cmds import _baseline_report

    names, notes = _baseline_report(load_spec("mla_decode", REPO))
    assert "flashmla" not in names
    assert any(n.startswith("[mla_decode] FlashMLA baseline skipped:") for n in notes)


def test_adapter_matches_the_reference_and_prepares_the_metadata_once(
    fake_flash_mla: object,
) -> None:
    calls = fake_flash_mla.CALLS  # type: ignore[attr-defined]
    q, kv, lens, scale = reference.make_inputs(3, 2, 192, ragged=True, seed=7)
    launch = flashmla_baseline.prepare(q, kv, lens, scale)
    assert calls == {"calls": 1, "metadata_filled": 1}  # the untimed set-up call
    out = launch()
    out = launch()
    assert calls == {"calls": 3, "metadata_filled": 1}  # the timed launches reuse it
    expect = reference.reference(q, kv, lens, scale)
    assert out.shape == expect.shape == (3, 2, reference.N_HEADS, reference.D_V)
    assert reference.rel_error(out, expect) < 1e-2


def test_the_spec_checks_flashmla_like_every_version(fake_flash_mla: object) -> None:
    spec = load_spec("mla_decode", REPO)
    version = spec.load_baselines()["flashmla"]
    assert version.prepare is flashmla_baseline.prepare and version.family == "flashmla"
    err, problem = check(spec, version, {"b": 2, "s": 1, "t": 128}, "float32", device="cpu")
    assert problem is None and err < 1e-3
