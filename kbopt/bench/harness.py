"""The measurement harness every kernel shares: correctness first, then timing, on a GPU.

- `check`: fresh inputs from the spec (`make_check_inputs` when it declares one), the
  reference computed first, the allocator's free memory filled with NaN (so an output
  element a version forgets to write shows up), then the version; the relative error of
  every output against the reference, with the spec's tolerance for the dtype.  With an
  `InputCache` (the real backend keeps one) the inputs and the reference output are made
  once per shape and each version gets copies.
- `bench_ms`: `triton.testing.do_bench` (median, p20, p80), which flushes the L2 before
  every timed call; `input_sets` + `rotating` add several input sets whose bytes together
  exceed the L2 several times, so no call finds its inputs cached.  A version that writes
  into its inputs is timed on restored inputs instead (`kbopt.bench.input_writes`).
- `measure_ceilings`: the device's copy bandwidth (bytes read + written, far beyond the L2)
  and its dense matmul rate in the kernel's dtype, measured in the same run as the kernel
  so that every percentage of floor is against this machine's own ceilings.
- `software`: the versions every results row and evidence block carries.

torch and triton are imported inside the functions: importing this module needs neither.
"""

from __future__ import annotations

import importlib.metadata
import platform
from collections.abc import Callable, Sequence
from typing import Any

from kbopt.bench.input_writes import PristineSets
from kbopt.kernel import Dims, KernelSpec, Version

L2_FALLBACK_BYTES = 60_000_000  # the H200's L2, when the device does not report it
MAX_SETS = 8


def torch_dtype(name: str) -> Any:
    import torch

    try:
        return getattr(torch, name)
    except AttributeError:
        raise ValueError(f"torch has no dtype {name!r}") from None


def software() -> dict[str, str]:
    """torch, triton, CUDA, Python and (when installed) the CuTe DSL versions."""
    import torch

    out = {
        "torch": torch.__version__,
        "cuda": str(torch.version.cuda),
        "python": platform.python_version(),
    }
    for dist, key in (("triton", "triton"), ("nvidia-cutlass-dsl", "cutlass_dsl")):
        try:
            out[key] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def outputs(value: Any) -> list[Any]:
    """A version's result as a list of tensors (a tuple of outputs, or one tensor)."""
    if isinstance(value, tuple | list):
        return list(value)
    return [value]


def rel_error(out: Any, ref: Any) -> float:
    """max over outputs of ||out - ref|| / ||ref|| in float64, over the finite elements.

    inf: a wrong number or shape of outputs, any NaN (an unwritten element of a poisoned
    output reads as NaN), or an infinity where the reference has none or the other sign.
    An infinity the reference has too is an exact match: a sampling filter writes -inf
    into the logits it masks out."""
    import torch

    got, want = outputs(out), outputs(ref)
    if len(got) != len(want):
        return float("inf")
    worst = 0.0
    for o, r in zip(got, want, strict=True):
        if tuple(o.shape) != tuple(r.shape):
            return float("inf")
        od, rd = o.double(), r.double().to(o.device)
        if torch.isnan(od).any():
            return float("inf")
        infinite = torch.isinf(od)
        if not torch.equal(infinite, torch.isinf(rd)) or not torch.equal(
            od[infinite], rd[infinite]
        ):
            return float("inf")
        od, rd = od.masked_fill(infinite, 0.0), rd.masked_fill(infinite, 0.0)
        worst = max(worst, float((od - rd).norm() / rd.norm().clamp_min(1e-30)))
    return worst


def poison_pool(nbytes: int) -> None:
    """Fill freed allocator memory with NaN so an unwritten output element shows up."""
    import torch

    junk = torch.full((nbytes // 4 + 1,), float("nan"), device="cuda", dtype=torch.float32)
    del junk


def _nbytes(value: Any) -> int:
    return sum(int(t.numel()) * int(t.element_size()) for t in outputs(value))


def tensor_bytes(inputs: Sequence[Any]) -> int:
    """Bytes of the tensors among a call's inputs (scalars and other values count nothing)."""
    return sum(int(x.numel()) * int(x.element_size()) for x in inputs if hasattr(x, "element_size"))


def launch_of(version: Version, inputs: Sequence[Any]) -> Callable[[], Any]:
    """The call to time for one input set: the launch the version's prepare step returns
    (its per-set set-up done here, untimed), else the version bound to the inputs."""
    if version.prepare is not None:
        return version.prepare(*inputs)
    return _bound(version.fn, tuple(inputs))


def call(version: Version, inputs: Sequence[Any]) -> Any:
    """One call of a version (through its prepare step when it declares one)."""
    return launch_of(version, inputs)()


RAISED = "the version raised"  # how `check` words a version that crashed (not timed then)


class InputCache:
    """The inputs of one (kernel, shape, dtype), kept from one measurement to the next.

    A search (`kbopt ablate`, `kbopt tune`, a cycle at one configuration) measures one
    kernel at one shape many times with other knob values.  Making its inputs anew each
    time costs more than timing it for some kernels (packing an int4 weight of 4096 x 28672
    on the host takes seconds), so they are made once: the correctness check's inputs with
    their reference output, and the timing's input sets.  The check hands each version
    copies (a kernel that writes into its inputs must not change the next one's).  One
    shape is kept at a time; another shape replaces it.  For a version that writes into its
    inputs the timing's sets are made anew once, with pristine copies of what it writes
    (`restorable_sets`, `kbopt.bench.input_writes`)."""

    def __init__(self) -> None:
        self.key: tuple[Any, ...] | None = None
        self.checked: tuple[tuple[Any, ...], Any] | None = None  # (inputs, reference output)
        self.sets: list[tuple[Any, ...]] | None = None
        self.pristine: PristineSets | None = None

    @staticmethod
    def key_of(spec: KernelSpec, dims: Dims, dtype: str, device: str) -> tuple[Any, ...]:
        return (spec.name, spec.source, tuple(sorted(dims.items())), dtype, device)

    def _for(self, key: tuple[Any, ...]) -> None:
        if key != self.key:
            self.clear()
            self.key = key

    def clear(self) -> None:
        """Let go of every tensor (before another shape, or after running out of memory)."""
        self.key, self.checked, self.sets, self.pristine = None, None, None, None

    def check_inputs(
        self, spec: KernelSpec, dims: Dims, dtype: str, device: str
    ) -> tuple[tuple[Any, ...], Any]:
        """(copies of the check's inputs, the reference output), made on first use."""
        self._for(self.key_of(spec, dims, dtype, device))
        if self.checked is None:
            make = spec.make_check_inputs or spec.make_inputs
            inputs = make(dims, dtype=torch_dtype(dtype), device=device)
            self.checked = (tuple(inputs), spec.reference(*inputs))
        pristine, expect = self.checked
        return tuple(_copy(x) for x in pristine), expect

    def input_sets(self, spec: KernelSpec, dims: Dims, dtype: str) -> list[tuple[Any, ...]]:
        """`input_sets` for this shape, made on first use."""
        self._for(self.key_of(spec, dims, dtype, "cuda"))
        if self.sets is None:
            self.sets = input_sets(spec, dims, dtype)
        return self.sets

    def restorable_sets(
        self, spec: KernelSpec, dims: Dims, dtype: str, written: frozenset[int]
    ) -> tuple[list[tuple[Any, ...]], PristineSets]:
        """Timing sets with pristine copies of the `written` positions: the kept ones when
        they cover them, else sets made anew (a call has changed the kept ones)."""
        self._for(self.key_of(spec, dims, dtype, "cuda"))
        if self.sets is not None and self.pristine is not None and self.pristine.covers(written):
            return self.sets, self.pristine
        positions = written | (
            self.pristine.positions if self.pristine is not None else frozenset()
        )
        self.sets, self.pristine = None, None  # let go of the changed sets before making new ones
        sets = input_sets(spec, dims, dtype)
        self.sets, self.pristine = sets, PristineSets(sets, positions)
        return sets, self.pristine


def _copy(x: Any) -> Any:
    import torch

    return x.clone() if isinstance(x, torch.Tensor) else x


def check(
    spec: KernelSpec,
    version: Version,
    dims: Dims,
    dtype: str,
    device: str = "cuda",
    cache: InputCache | None = None,
) -> tuple[float, str | None]:
    """(relative error, problem or None) of one version at one point (see module doc);
    with a `cache`, the inputs and the reference output are made once per shape."""
    import torch

    if cache is not None:
        inputs, expect = cache.check_inputs(spec, dims, dtype, device)
    else:
        make = spec.make_check_inputs or spec.make_inputs
        inputs = make(dims, dtype=torch_dtype(dtype), device=device)
        expect = spec.reference(*inputs)
    if device == "cuda":
        poison_pool(16 * _nbytes(expect))
    try:
        out = call(version, inputs)
        if device == "cuda":
            torch.cuda.synchronize()
    except torch.cuda.OutOfMemoryError:
        raise  # the caller backs off on the spec's backoff dimension
    except Exception as exc:  # a version that crashes is a failed check, not a crash of kbopt
        return float("inf"), f"{RAISED} {type(exc).__name__}: {exc}"
    err = rel_error(out, expect)
    tol = spec.tolerance(dtype)
    if err == float("inf"):
        return (
            err,
            "output has NaN, an infinity the reference does not have, or the wrong number or shape of outputs",
        )
    if err > tol:
        return err, f"relative error {err:.3g} > {tol:g}"
    return err, None


def l2_bytes() -> int:
    import torch

    props = torch.cuda.get_device_properties(0)
    return int(getattr(props, "L2_cache_size", 0) or L2_FALLBACK_BYTES)


def input_sets(spec: KernelSpec, dims: Dims, dtype: str) -> list[tuple[Any, ...]]:
    """Enough input sets that together they exceed the L2 four times (2 to 8 sets)."""
    first = spec.make_inputs(dims, dtype=torch_dtype(dtype), device="cuda")
    per_set = max(1, tensor_bytes(first))
    n = max(2, min(MAX_SETS, -(-4 * l2_bytes() // per_set)))
    return [first] + [
        spec.make_inputs(dims, dtype=torch_dtype(dtype), device="cuda") for _ in range(n - 1)
    ]


def rotating(version: Version, sets: list[tuple[Any, ...]]) -> Callable[[], Any]:
    """A call that takes the next input set each time (prepared once per set, untimed)."""
    launches = [launch_of(version, s) for s in sets]
    state = {"i": 0}

    def run() -> Any:
        state["i"] += 1
        return launches[state["i"] % len(launches)]()

    return run


def _bound(fn: Callable[..., Any], args: tuple[Any, ...]) -> Callable[[], Any]:
    return lambda: fn(*args)


def bench_ms(fn: Callable[[], object], rep_ms: int) -> tuple[float, float, float]:
    """(median, p20, p80) in ms; do_bench flushes the L2 before each timed call."""
    from triton.testing import do_bench

    med, p20, p80 = do_bench(fn, warmup=25, rep=rep_ms, quantiles=[0.5, 0.2, 0.8])
    return float(med), float(p20), float(p80)


def host_us_per_call(version: Version, inputs: Sequence[Any], n: int = 50) -> float:
    """Python time of one call, back to back (launch overhead, argument checks)."""
    import time

    import torch

    launch = launch_of(version, inputs)
    launch()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        launch()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def graph_ms(version: Version, sets: list[tuple[Any, ...]], rep_ms: int) -> float:
    """Median time of each set's call captured in a CUDA graph and replayed (rotated)."""
    import torch

    launches = [launch_of(version, s) for s in sets]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up (compiles, loads modules) off the capture
        for launch in launches:
            launch()
    torch.cuda.current_stream().wait_stream(side)
    graphs = []
    for launch in launches:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            launch()
        graphs.append(g)
    state = {"i": 0}

    def replay() -> None:
        graphs[state["i"] % len(graphs)].replay()
        state["i"] += 1

    return bench_ms(replay, rep_ms)[0]


def copy_gbps(rep_ms: int) -> float:
    import torch

    n = 1 << 30  # 2 GiB of bf16 per buffer: far beyond any L2
    src = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    ms, _, _ = bench_ms(lambda: dst.copy_(src), rep_ms)
    return 2 * n * 2 / (ms * 1e-3) / 1e9  # bytes read + written


def matmul_tflops(rep_ms: int, dtype: str = "bfloat16") -> float:
    """The dense matmul rate of an 8192-cube product in `dtype`: torch's matmul, or for the
    fp8 formats torch's scaled matmul (fp8 operands, per-tensor scales, bf16 out), which
    runs at about twice the bf16 rate on Hopper."""
    import torch

    m = 8192
    if dtype.startswith("float8"):
        fp8 = getattr(torch, dtype)
        a = torch.randn(m, m, device="cuda").to(fp8)
        b = torch.randn(m, m, device="cuda").to(fp8).t()  # column-major, as it requires
        one = torch.ones((), device="cuda")

        def product() -> object:
            return torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16)
    else:
        dt = torch_dtype(dtype if dtype in ("bfloat16", "float16", "float32") else "bfloat16")
        a = torch.randn(m, m, device="cuda", dtype=dt)
        b = torch.randn(m, m, device="cuda", dtype=dt)

        def product() -> object:
            return a @ b

    ms, _, _ = bench_ms(product, rep_ms)
    return 2 * m**3 / (ms * 1e-3) / 1e12


def measure_ceilings(rep_ms: int, dtype: str = "bfloat16") -> dict[str, float]:
    """Copy bandwidth (GB/s, read + written) and the dense matmul rate (TFLOP/s)."""
    import torch

    out = {"copy_bw_gbps": copy_gbps(rep_ms), "matmul_tflops": matmul_tflops(rep_ms, dtype)}
    torch.cuda.empty_cache()
    return out
