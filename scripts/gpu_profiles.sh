#!/bin/bash
# Real profiles for the labelled set: `kbopt profile --json` with ncu on every line of a plan,
# run on the GPU machine from the repository root (the device `run` tool), carrying .whl/
# (kbopt's pure-Python dependencies and liger-kernel: scripts/device_wheels.sh) and third_party/ (the foreign kernels'
# sources, from scripts/fetch_third_party.py).
#
#   PLAN=benchmarks/real_profiles/plan.txt BUDGET_S=120 bash scripts/gpu_profiles.sh
#   PLAN=benchmarks/real_profiles_fresh/plan.txt bash scripts/gpu_profiles.sh   # the held-out set
#   PLAN="benchmarks/real_profiles_blind25/plan.txt benchmarks/real_profiles_blind26/plan.txt" ...
#                                                   # several plans, one after the other
#
# A plan line is `SPEC VERSION CONFIG` (SPEC: a kernel name or a spec path; CONFIG: a trial
# name or dims); `#` starts a comment.  Each profile is written to profiles/<kernel>--
# <version>--<config>.json with ncu's raw CSV under ncu/<same name>/, in a work folder
# packed into $OUT/profiles.tgz after every line (the device machine returns at most eight
# files, and a run stopped at its limit keeps what was packed); a table of what each took
# (wall seconds against the budget) is printed last and saved as summary.txt.
# SESSION_S (560): the whole run's wall-time limit, under the device call's 600 s.  A line
# starts only when the longest line so far (BUDGET_S before the first) still fits; the
# lines left out are listed as "not started" in the summary (run them again with ONLY=...),
# rather than cut by the call's limit.
# INTO (optional): a folder of the checkout the finished profiles' JSON files are also copied
# into (e.g. results/profiles/h100-blind51), so held-out ablations in the same call can read
# them with --start-profile without unpacking the archive.
set -u
OUT=${OUT:-/tmp/out}
PLAN=${PLAN:-benchmarks/real_profiles/plan.txt}
BUDGET_S=${BUDGET_S:-120}
ONLY=${ONLY:-}  # a substring: profile only the plan lines that contain it
LANGUAGE=${LANGUAGE:-triton}  # the language the recommendations are for (cute-dsl for FlashMLA: CUTLASS CuTe)
REPO=$PWD
WORK=${WORK:-/tmp/profiles-work}
mkdir -p "$OUT" "$WORK/profiles" "$WORK/ncu"
for plan in $PLAN; do
    [[ -f "$plan" ]] || { echo "error: plan $plan does not exist" >&2; exit 2; }
done

python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$REPO
export PYTHONUNBUFFERED=1
KB="python3 -m kbopt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ncu --version | tail -1

deadline=$(( $(date +%s) + ${SESSION_S:-560} ))
# Warm-up, so a fresh machine's one-time costs are not billed to the first line's budget
# (on the seventh set the first line's ncu pass ran out of its share: the timing before it
# had paid for Triton building its launcher stubs with gcc and for CUDA's first start under
# ncu).  A tiny Triton kernel, once plain and once under ncu.
warm=$(date +%s)
# (Triton compiles only functions defined in a file, hence the script file.)
cat > "$WORK/warm_up.py" <<'PY'
import torch, triton, triton.language as tl

@triton.jit
def _add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)

x = torch.zeros(64, device="cuda")
_add_one[(1,)](x, 64, BLOCK=64)
torch.cuda.synchronize()
assert float(x.sum()) == 64.0
PY
timeout 120 ncu --metrics gpu__time_duration.sum python3 "$WORK/warm_up.py" > "$WORK/warm-up.log" 2>&1
echo "warm-up (Triton's first compile, ncu's first start): rc=$? $(( $(date +%s) - warm ))s"

table=()
longest=0  # the longest a line has taken so far (a profile may pass its budget a little)
while read -r spec version config rest; do
    [[ -z "${spec:-}" || "$spec" == \#* ]] && continue
    line="$spec $version $config"
    [[ -n "$ONLY" && "$line" != *"$ONLY"* ]] && continue
    kernel=$(basename "$(dirname "$spec")")
    [[ "$spec" != *.py ]] && kernel=$spec
    name="$kernel--$version--${config//[=,]/_}"
    start=$(date +%s)
    # before the first line, its budget; after, the longest a line has taken (the budget
    # alone left each plan's last line out with twice its time still left)
    need=$(( longest > 0 ? longest : BUDGET_S ))
    if (( start + need + 10 > deadline )); then
        echo "=== $name: not started ($(( deadline - start ))s of the session left)"
        table+=("$(printf '%-60s not started (session time)' "$name")")
        printf '%s\n' "${table[@]}" > "$WORK/summary.txt"
        continue
    fi
    echo "=== $name ($(date -u +%H:%M:%S))"
    KBOPT_NCU_SAVE_DIR="$WORK/ncu/$name" timeout $((BUDGET_S + 120)) $KB --root "$REPO" \
        profile "$spec" "$version" --config "$config" --counters auto --no-devlog \
        --budget-s "$BUDGET_S" --language "$LANGUAGE" --json > "$WORK/profiles/$name.json" \
        2> "$WORK/profiles/$name.log"
    rc=$?
    took=$(( $(date +%s) - start ))
    (( took > longest )) && longest=$took
    tail -4 "$WORK/profiles/$name.log"
    python3 - "$WORK/profiles/$name.json" <<'PY' || true
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:  # the profile failed: its log's last lines are printed above
    print("(no profile written)")
else:
    for run in d if isinstance(d, list) else [d]:
        # `kbopt profile --json` answers {"error": [...]} when the kernel could not run
        print(run["profile"] if "profile" in run else "\n".join(run.get("error", ["(no profile)"])))
PY
    table+=("$(printf '%-60s rc=%-3s %4ss (budget %ss)' "$name" "$rc" "$took" "$BUDGET_S")")
    printf '%s\n' "${table[@]}" > "$WORK/summary.txt"
    tar czf "$OUT/profiles.tgz" -C "$WORK" .
done < <(cat $PLAN)  # unquoted: PLAN may name several files

tar czf "$OUT/profiles.tgz" -C "$WORK" .
if [[ -n "${INTO:-}" ]]; then
    # only the profiles that were written (a failed line leaves an empty or partial file)
    python3 - "$WORK/profiles" "$INTO" <<'PY'
import json, shutil, sys
from pathlib import Path
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
dst.mkdir(parents=True, exist_ok=True)
copied = []
for path in sorted(src.glob("*.json")):
    try:
        doc = json.loads(path.read_text())
    except ValueError:
        continue
    if isinstance(doc, dict) and "error" in doc:  # the kernel did not run: no profile
        continue
    shutil.copy(path, dst / path.name)
    copied.append(path.name)
print(f"copied {len(copied)} profile(s) into {dst}")
PY
fi
echo "=== summary"
printf '%s\n' "${table[@]}"
