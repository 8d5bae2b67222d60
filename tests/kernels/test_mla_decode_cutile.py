"""MLA decode, cuTile version (``kernels/mla_decode/cutile_v1.py``).

cuTile has no CPU interpreter, so on the CPU:

- the build (``cutile_build``, needs the ``cutile`` extra; skipped without it) must produce the
  images and a manifest whose parameter list equals what the launcher packs;
- :func:`emulate_tiles` replays the kernel's tiling in float32 torch (64-row query blocks,
  64-row KV tiles, the masked tail tile, 256-column output halves, base-2 online softmax, P
  rounded to bf16) against the reference. That checks the ALGORITHM the tile program
  implements, not the compiled kernel.

Tests marked ``gpu`` run the prebuilt image on the GPU against the fp32 reference; without the
images they skip, unless ``KBOPT_CUTILE_REQUIRE=1`` (set by ``cutile_gpu_check.sh``).
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import re
from pathlib import Path

import pytest
import torch

from kernels.mla_decode import cutile_build, cutile_v1, registry
from kernels.mla_decode import reference as ref

REL_TOL = 2e-2  # bf16 operands and a bf16 P matrix (as the CuTe tests)
HAS_CUTILE = importlib.util.find_spec("cuda") is not None and (
    importlib.util.find_spec("cuda.tile") is not None
)


def emulate_tiles(
    q: torch.Tensor, kv: torch.Tensor, lens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    """The tile program's arithmetic in float32 torch, tile for tile (see the module doc)."""
    bm, bn, dout = cutile_v1.BLOCK_M, cutile_v1.BLOCK_N, cutile_v1.D_OUT
    b, s, h, _ = q.shape
    t = kv.shape[1]
    q3 = q.float().reshape(b, s * h, ref.D_QK)
    out = torch.empty(b, s * h, ref.D_V)
    qk_scale = sm_scale * cutile_v1.LOG2_E
    for i in range(b):
        n = int(lens[i])
        # rows past the cache end read as garbage (NaN here); the kernel masks them
        kv_i = torch.full((-(-t // bn) * bn, ref.D_QK), float("nan"))
        kv_i[:t] = kv[i].float()
        n_full = n // bn
        tiles = list(range(n_full)) + ([n_full] if n_full * bn < n else [])
        for m0 in range(0, s * h, bm):
            qb = q3[i, m0 : m0 + bm]
            for c in range(ref.D_V // dout):
                m_i = torch.full((qb.shape[0], 1), -1e30)
                l_i = torch.zeros(qb.shape[0], 1)
                acc = torch.zeros(qb.shape[0], dout)
                for j in tiles:
                    rows = kv_i[j * bn : (j + 1) * bn]
                    sc = qb[:, :512] @ rows[:, :512].T + qb[:, 512:] @ rows[:, 512:].T
                    sc = sc * qk_scale
                    v = rows[:, c * dout : (c + 1) * dout]
                    if j == n_full:  # the partial tile
                        valid = torch.arange(j * bn, (j + 1) * bn) < n
                        sc = torch.where(valid[None, :], sc, torch.tensor(-1e30))
                        v = torch.where(valid[:, None], v, torch.tensor(0.0))
                    m_new = torch.maximum(m_i, sc.amax(1, keepdim=True))
                    p = torch.exp2(sc - m_new)
                    alpha = torch.exp2(m_i - m_new)
                    l_i = l_i * alpha + p.sum(1, keepdim=True)
                    acc = acc * alpha + p.to(torch.bfloat16).float() @ v
                    m_i = m_new
                out[i, m0 : m0 + bm, c * dout : (c + 1) * dout] = acc / l_i
    return out.reshape(b, s, h, ref.D_V).to(q.dtype)


def _poison(kv: torch.Tensor, lens: torch.Tensor) -> None:
    for i in range(kv.shape[0]):
        kv[i, int(lens[i]) :] = float("nan")


# ------------------------------------------------------------------------------ CPU, always
def test_cutile_v1_is_registered_in_its_own_family() -> None:
    v = registry.versions()["cutile_v1"]
    assert v.family == "cutile" and v.fn is cutile_v1.mla_decode
    assert "cutile_v1" not in [n for n, x in registry.versions().items() if x.family == "triton"]


def test_module_does_not_import_cuda_tile() -> None:
    src = Path(cutile_v1.__file__).read_text()
    top = [ln for ln in src.splitlines() if ln.startswith(("import ", "from "))]
    assert not any("cuda.tile" in ln for ln in top)


def test_missing_image_names_the_file_and_the_build_command(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as exc:
        cutile_v1.read_manifest(tmp_path)
    msg = str(exc.value)
    assert cutile_v1.MANIFEST_NAME in msg and cutile_v1.BUILD_COMMAND in msg


def test_cpu_tensors_and_other_dtypes_are_rejected() -> None:
    q, kv, lens, sc = ref.make_inputs(1, 1, 8, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="CUDA"):
        cutile_v1.mla_decode(q, kv, lens, sc)


def test_param_layout_is_the_cutile_python_v1_abi() -> None:
    lay = cutile_v1.param_layout()
    assert len(lay) == 25
    assert [p["offset"] for p in lay if p["type"] == "u64"] == [0, 32, 64, 80]
    assert lay[-1] == {"name": "qk_scale", "type": "f32", "offset": 112, "size": 4}
    # the launcher packs one value per parameter, of the parameter's size, in this order
    q = torch.zeros(1, 128, ref.D_QK, dtype=torch.bfloat16)
    kv = torch.zeros(1, 70, ref.D_QK, dtype=torch.bfloat16)
    lens = torch.ones(1, dtype=torch.int32)
    o = torch.zeros(1, 128, ref.D_V, dtype=torch.bfloat16)
    vals, argv = cutile_v1._args(q, kv, lens, o, 0.5)
    assert [ctypes.sizeof(v) for v in vals] == [p["size"] for p in lay]
    assert len(argv) == len(lay)
    assert [v.value for v in vals[1:7]] == [1, 128, ref.D_QK, 128 * ref.D_QK, ref.D_QK, 1]


@pytest.mark.parametrize(
    "b,s,t,lens",
    [
        (3, 1, 200, [1, 64, 130]),  # one row, exactly one tile, a partial tail
        (2, 16, 150, [150, 77]),  # speculative s=16: 2048 query rows per sequence
    ],
)
def test_tiling_emulation_matches_reference(b: int, s: int, t: int, lens: list[int]) -> None:
    """float32 replay of the tile program (NOT the kernel): tiles, masks, base-2 softmax."""
    q, kv, _, sc = ref.make_inputs(b, s, t, dtype=torch.bfloat16, seed=1)
    lt = torch.tensor(lens, dtype=torch.int32)
    _poison(kv, lt)
    expect = ref.reference(q, kv, lt, sc)
    got = emulate_tiles(q, kv, lt, sc)
    assert torch.isfinite(got.float()).all()
    assert ref.rel_error(got, expect) < REL_TOL


def test_build_reports_a_missing_toolchain_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def missing(pkg: str) -> str:
        raise cutile_build.metadata.PackageNotFoundError(pkg)

    monkeypatch.setattr(cutile_build.metadata, "version", missing)
    assert cutile_build.main(["--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "cuda-tile==1.7.0" in err and "nvidia-cuda-tileiras==13.4.92" in err


def test_jit_ptx_is_lowered_to_isa_9_0() -> None:
    ptx = (
        '.version 9.4\n.target sm_90a\n.language 7\n\t.loc 1 2 3\n\t.pragma "next knob 0x1";\nx;\n'
    )
    assert cutile_build.jit_ptx(ptx) == ".version 9.0\n.target sm_90a\nx;\n"


# ------------------------------------------------------------------ CPU, needs the cutile extra
@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    if not HAS_CUTILE:
        pytest.skip("cuda-tile is not installed (pip install -e '.[cutile]')")
    try:
        cutile_build.toolchain()
    except cutile_build.ToolchainMissing as exc:
        pytest.skip(str(exc))
    out = tmp_path_factory.mktemp("cutile")
    assert cutile_build.main(["--out", str(out)]) == 0
    return out, json.loads((out / cutile_v1.MANIFEST_NAME).read_text())


@pytest.mark.slow
def test_build_produces_images_and_manifest(built: tuple[Path, dict]) -> None:
    out, man = built
    for kind in cutile_v1.IMAGE_KINDS:
        assert (out / man["images"][kind]).stat().st_size > 0, kind
    assert man["entry"].startswith(cutile_v1.KERNEL_NAME)
    assert man["params"] == cutile_v1.param_layout() and man["param_bytes"] == 116
    assert man["block"] in (128, 256, 384, 512)
    assert man["tiles"] == {"BLOCK_M": 64, "BLOCK_N": 64, "D_OUT": 256}
    assert man["toolchain"]["cuda-tile"] == "1.7.0"
    assert man["instructions"]["wgmma"] > 0 and man["instructions"]["tma"] == 0
    assert (out / man["images"]["tileiras"]).read_bytes()[:4] == b"\x7fELF"
    jit = (out / man["images"]["ptx"]).read_text()
    assert re.search(r"^\.version 9\.0$", jit, re.M) and ".language" not in jit
    # the launcher finds the images through the manifest
    m = cutile_v1.read_manifest(out)
    assert [k for k, _ in cutile_v1.image_paths(m)] == list(cutile_v1.IMAGE_KINDS)


# ------------------------------------------------------------------------------ GPU
def _require_images() -> None:
    try:
        cutile_v1.read_manifest()
    except FileNotFoundError as exc:
        if os.environ.get("KBOPT_CUTILE_REQUIRE") == "1":
            raise
        pytest.skip(str(exc))


GPU_CASES = [
    (2, 1, 300, [300, 1]),
    (4, 1, 1000, [1000, 64, 65, 517]),  # lengths that are and are not multiples of 64
    (3, 16, 517, [517, 200, 64]),  # speculative s=16
    (32, 1, 4096, None),  # the full decode configuration
]


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: f"b{c[0]}-s{c[1]}-t{c[2]}")
def test_bf16_matches_fp32_reference_on_gpu(case: tuple) -> None:
    _require_images()
    b, s, t, lens = case
    q, kv, lt, sc = ref.make_inputs(b, s, t, dtype=torch.bfloat16, device="cuda", seed=3)
    if lens is not None:
        lt = torch.tensor(lens, dtype=torch.int32, device="cuda")
    # Poison: freed allocator blocks full of NaN, reused by the kernel's output.
    junk = torch.full((b * s * ref.N_HEADS * ref.D_V * 4,), float("nan"), device="cuda")
    del junk
    _poison(kv, lt)  # NaN in cache rows past each length must not leak into the output
    out = cutile_v1.mla_decode(q, kv, lt, sc)
    torch.cuda.synchronize()
    expect = ref.reference(q, kv, lt, sc)
    assert out.shape == expect.shape and out.dtype == torch.bfloat16
    assert torch.isfinite(out.float()).all(), f"unwritten or NaN output ({cutile_v1.LAST_INFO})"
    err = ref.rel_error(out, expect)
    assert err < REL_TOL, f"cutile_v1 {case}: relative error {err:.3g} ({cutile_v1.LAST_INFO})"
    print("cutile_v1 launch:", cutile_v1.LAST_INFO)


@pytest.mark.gpu
def test_repeated_calls_and_graph_capture_on_gpu() -> None:
    _require_images()
    q, kv, lt, sc = ref.make_inputs(2, 2, 700, dtype=torch.bfloat16, device="cuda", ragged=True)
    expect = ref.reference(q, kv, lt, sc)
    for _ in range(3):
        assert ref.rel_error(cutile_v1.mla_decode(q, kv, lt, sc), expect) < REL_TOL
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        cutile_v1.mla_decode(q, kv, lt, sc)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = cutile_v1.mla_decode(q, kv, lt, sc)
    g.replay()
    torch.cuda.synchronize()
    assert ref.rel_error(out, expect) < REL_TOL
