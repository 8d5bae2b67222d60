"""The orchestrator's loop on the Anthropic Messages API, with LLM delegations.

`AgentRunner.run_agent(role, task)` is one agent conversation: the role's system
prompt and tools (from `roles.ROLES`), then messages.create -> tool_use -> tool
results -> ... until the model ends its turn.  The orchestrator's `delegate` tool
checks the routing rules and runs the delegated task as a fresh conversation of the
target role; the Remote Execution Context block is appended to the orchestrator's
request and to every delegated task, and the run's executor wraps every command.

Token use is summed over every call (`usage.input_tokens` / `output_tokens`, cache
tokens too) and priced from a configurable table ($ per million tokens).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kbopt.agents import roles
from kbopt.agents.remote import RemoteContext
from kbopt.agents.routing import RoutingError, route
from kbopt.agents.tools import RunAborted, ToolContext, ToolError, call_tool, tool_schemas
from kbopt.errors import KbError

DEFAULT_MODEL = "claude-sonnet-4-6"
API_KEY_ENV = "ANTHROPIC_API_KEY"


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float


# List prices in $/MTok as published on Anthropic's pricing page when this was written;
# override or extend with KBOPT_AGENT_PRICES='{"model": [input, output]}' or --price.
DEFAULT_PRICES: dict[str, Price] = {
    "claude-sonnet-4-6": Price(3.0, 15.0),
    "claude-sonnet-4-5": Price(3.0, 15.0),
    "claude-opus-4-5": Price(5.0, 25.0),
    "claude-haiku-4-5": Price(1.0, 5.0),
}
# Cache writes and reads are billed relative to the input price.
CACHE_WRITE_FACTOR = 1.25
CACHE_READ_FACTOR = 0.1


@dataclass
class AgentConfig:
    model: str = DEFAULT_MODEL
    max_tokens: int = 8192  # per model call
    max_turns: int = 40  # model calls per agent conversation
    max_delegations: int = 30  # per run
    sm: int | None = None  # target GPU's SM version, for the hardware routing rules
    existing_triton: bool = False
    command_timeout_s: float = 3600.0
    # A final answer that does not parse as the role's contract is sent back this many
    # times with the parser's problems (0: accept any answer as it is).
    contract_retries: int = 2
    # Mark the system prompt (and with it the tool definitions before it) as a prompt-cache
    # prefix: every turn of an agent's conversation re-sends them unchanged.
    cache_prompts: bool = True
    # The API client gives up on a server that does not answer: seconds to connect, and
    # to wait for a reply (a whole non-streamed reply of max_tokens must fit in it).
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 300.0
    max_retries: int = 2  # the SDK's retries of a failed call (each under the timeouts)
    prices: dict[str, Price] = field(default_factory=lambda: dict(DEFAULT_PRICES))

    @classmethod
    def from_env(cls, **overrides: Any) -> AgentConfig:
        """Defaults, then KBOPT_AGENT_* environment variables, then explicit overrides."""
        cfg = cls()
        env = os.environ
        if env.get("KBOPT_AGENT_MODEL"):
            cfg.model = env["KBOPT_AGENT_MODEL"]
        for key, attr in (
            ("KBOPT_AGENT_MAX_TOKENS", "max_tokens"),
            ("KBOPT_AGENT_MAX_TURNS", "max_turns"),
            ("KBOPT_AGENT_MAX_DELEGATIONS", "max_delegations"),
        ):
            if env.get(key):
                setattr(cfg, attr, _positive_int(env[key], key))
        for key, attr in (
            ("KBOPT_AGENT_CONNECT_TIMEOUT", "connect_timeout_s"),
            ("KBOPT_AGENT_READ_TIMEOUT", "read_timeout_s"),
        ):
            if env.get(key):
                setattr(cfg, attr, positive_seconds(env[key], key))
        if env.get("KBOPT_AGENT_MAX_RETRIES"):
            cfg.max_retries = _retries(env["KBOPT_AGENT_MAX_RETRIES"], "KBOPT_AGENT_MAX_RETRIES")
        if env.get("KBOPT_AGENT_PRICES"):
            cfg.prices.update(parse_prices(env["KBOPT_AGENT_PRICES"], "KBOPT_AGENT_PRICES"))
        for attr, value in overrides.items():
            if value is not None:
                setattr(cfg, attr, value)
        return cfg


def _positive_int(text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise KbError(f"{what} must be a positive integer, got {text!r}") from None
    if value < 1:
        raise KbError(f"{what} must be a positive integer, got {text!r}")
    return value


def positive_seconds(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 86400:  # NaN fails this too
        raise KbError(f"{what} must be seconds between 0 and 86400, got {text!r}")
    return value


def _retries(text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 10:
        raise KbError(f"{what} must be an integer from 0 to 10, got {text!r}")
    return value


def parse_prices(text: str, what: str = "prices") -> dict[str, Price]:
    """'{"model": [input, output]}' ($/MTok) or 'model=in,out'."""
    text = text.strip()
    try:
        if text.startswith("{"):
            raw = json.loads(text)
            prices = {str(m): Price(float(v[0]), float(v[1])) for m, v in raw.items()}
        else:
            model, _, pair = text.partition("=")
            inp, _, out = pair.partition(",")
            prices = {model.strip(): Price(float(inp), float(out))}
        # A price is a finite amount of dollars for a named model (nan and -1 parse too).
        for model, price in prices.items():
            if not model or not all(
                math.isfinite(v) and v >= 0 for v in (price.input, price.output)
            ):
                raise ValueError(model)
        return prices
    except (ValueError, TypeError, IndexError, KeyError, AttributeError):
        raise KbError(
            f"{what}: expected '{{\"model\": [input, output]}}' or 'model=input,output' "
            f"in $ per million tokens (numbers >= 0), got {text!r}"
        ) from None


@dataclass
class Usage:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    by_role: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, role: str, usage: Any) -> None:
        inp = int(getattr(usage, "input_tokens", 0) or 0)
        out = int(getattr(usage, "output_tokens", 0) or 0)
        self.calls += 1
        self.input_tokens += inp
        self.output_tokens += out
        self.cache_creation_input_tokens += int(
            getattr(usage, "cache_creation_input_tokens", 0) or 0
        )
        self.cache_read_input_tokens += int(getattr(usage, "cache_read_input_tokens", 0) or 0)
        row = self.by_role.setdefault(role, {"calls": 0, "input_tokens": 0, "output_tokens": 0})
        row["calls"] += 1
        row["input_tokens"] += inp
        row["output_tokens"] += out

    def cost(self, price: Price | None) -> float | None:
        if price is None:
            return None
        per_in = price.input / 1e6
        return (
            self.input_tokens * per_in
            + self.cache_creation_input_tokens * per_in * CACHE_WRITE_FACTOR
            + self.cache_read_input_tokens * per_in * CACHE_READ_FACTOR
            + self.output_tokens * price.output / 1e6
        )

    def as_dict(self, model: str, prices: dict[str, Price]) -> dict[str, Any]:
        price = prices.get(model)
        cost = self.cost(price)
        return {
            "model": model,
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "by_role": self.by_role,
            "price_per_mtok": None if price is None else [price.input, price.output],
            "cost_usd": None if cost is None else round(cost, 6),
        }

    def line(self, model: str, prices: dict[str, Price]) -> str:
        price = prices.get(model)
        cost = self.cost(price)
        shown = (
            f"${cost:.4f} at ${price.input:g}/${price.output:g} per MTok"
            if price is not None and cost is not None
            else f"cost unknown: no price for {model} (set KBOPT_AGENT_PRICES or --price)"
        )
        return (
            f"tokens: {self.input_tokens} in, {self.output_tokens} out over {self.calls} "
            f"call(s) to {model}; {shown}"
        )


@dataclass
class RunResult:
    text: str
    usage: Usage
    stopped: str = "end_turn"  # or "max_turns"
    contract_ok: bool = True  # the final report parsed as its contract
    pending_backups: list[str] = field(default_factory=list)  # backed up, not reverted/kept
    transcript: list[dict[str, Any]] = field(default_factory=list)


class AgentRunner:
    """Runs agent conversations for one request; every agent shares the run's ToolContext."""

    def __init__(
        self,
        client: Any,
        config: AgentConfig,
        ctx: ToolContext,
        remote: RemoteContext | None = None,
        log: Callable[[str], None] | None = None,
    ):
        self.client = client
        self.config = config
        self.ctx = ctx
        self.remote = remote
        self.log = log or (lambda _msg: None)
        self.usage = Usage()
        self.transcript: list[dict[str, Any]] = []
        self.stopped = "end_turn"
        self.contract_failures: list[dict[str, str]] = []
        ctx.sm = config.sm
        ctx.timeout_s = config.command_timeout_s
        ctx.state.existing_triton = ctx.state.existing_triton or config.existing_triton

    # ------------------------------------------------------------------ entry points

    def run_request(self, request: str) -> RunResult:
        """User-specified mode: one request, the orchestrator plans and delegates."""
        return self._finish(
            self.run_agent(roles.ORCHESTRATOR, user_mode_prompt(request, self.config))
        )

    def run_autopilot(self, analysis_text: str, path: str = "<analysis>") -> RunResult:
        """Autopilot mode: an analysis in, one optimization at a time, a summary out."""
        from kbopt.agents.autoplan import plan, render_plan
        from kbopt.contracts.analysis import Analysis

        analysis = Analysis.parse(analysis_text, path=path)
        steps = plan(
            analysis,
            self.ctx.store,
            sm=self.config.sm,
            existing_triton=self.config.existing_triton,
        )
        prompt = autopilot_prompt(analysis, render_plan(analysis, steps))
        return self._finish(self.run_agent(roles.ORCHESTRATOR, prompt, contract="summary"))

    def _finish(self, text: str) -> RunResult:
        from kbopt.agents.tools import pending_backups

        ok = not any(f["role"] == roles.ORCHESTRATOR for f in self.contract_failures)
        # Backups live beside the files: on the cluster when its files are remote-only.
        files_remote = self.remote is not None and self.remote.files == "remote"
        pending = [] if files_remote else pending_backups(self.ctx.root)
        return RunResult(text, self.usage, self.stopped, ok, pending, self.transcript)

    # ------------------------------------------------------------------ one conversation

    def run_agent(self, role_name: str, task: str, contract: str | None = None) -> str:
        """One conversation; returns the final text (checked against `contract`, by default
        the role's own output contract)."""
        role = roles.get_role(role_name)
        contract = contract or role.contract_kind
        retries = self.config.contract_retries
        ctx = self.ctx.for_role(role_name)
        ctx.delegate_fn = self._delegate if role.delegates else None
        content = task if self.remote is None else f"{task}\n\n{self.remote.block()}"
        # a skill the task asks to load (the designer's `Load /design-<language>-kernel`),
        # given in full as Claude Code would load it; preloaded ones are in the system prompt
        asked = [s for s in roles.skills_named_in(task) if s not in role.skills]
        if asked:
            content += "\n\n## Skills this task loads\n\n" + "\n".join(
                roles.skill_text(s) for s in asked
            )
        messages: list[dict[str, Any]] = [{"role": "user", "content": content}]
        system: Any = role.api_system_prompt()
        if self.config.cache_prompts:
            system = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
        tools = tool_schemas(role.tools)
        self._event(role_name, "task", task)
        for _ in range(self.config.max_turns):
            response = self._create(system=system, tools=tools, messages=messages)
            self.usage.add(role_name, response.usage)
            blocks = [_block_param(b) for b in response.content]
            messages.append({"role": "assistant", "content": blocks})
            uses = [b for b in response.content if getattr(b, "type", None) == "tool_use"]
            if response.stop_reason != "tool_use" or not uses:
                text = "\n".join(
                    b.text for b in response.content if getattr(b, "type", "") == "text"
                )
                if response.stop_reason == "max_tokens":
                    text += "\n[stopped: max_tokens reached for one reply]"
                checking = self.config.contract_retries > 0
                problems = contract_problems(contract, text) if checking else []
                if problems and retries > 0:
                    retries -= 1
                    self._event(role_name, "contract_error", "\n".join(problems))
                    messages.append(
                        {"role": "user", "content": _contract_retry(contract, problems)}
                    )
                    continue
                if problems:
                    self.contract_failures.append({"role": role_name, "contract": contract})
                self._event(role_name, "final", text)
                return text
            results = []
            for use in uses:
                self._event(
                    role_name, "tool_use", json.dumps({"name": use.name, "input": use.input})
                )
                self.log(f"[{role_name}] {use.name}")
                outcome = call_tool(ctx, use.name, use.input)
                self._event(
                    role_name, "tool_error" if outcome.is_error else "tool_result", outcome.content
                )
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": use.id,
                        "content": outcome.content,
                        "is_error": outcome.is_error,
                    }
                )
            messages.append({"role": "user", "content": results})
        if role_name == roles.ORCHESTRATOR:
            self.stopped = "max_turns"  # a specialist's limit is its report to the orchestrator
        note = f"[stopped: {role_name} reached max_turns={self.config.max_turns}]"
        self._event(role_name, "final", note)
        return note

    def _delegate(self, specialist: str, task: str) -> str:
        if len(self.ctx.state.delegations) > self.config.max_delegations:
            self.ctx.state.delegations.pop()  # recorded by the tool; it did not happen
            raise ToolError(
                f"delegation limit reached ({self.config.max_delegations} per run); report now"
            )
        self.log(f"delegate -> {specialist}")
        return self.run_agent(specialist, task)

    def _create(self, **kwargs: Any) -> Any:
        try:
            import anthropic
        except ImportError:  # pragma: no cover - the agents extra is installed in dev
            raise KbError("the anthropic package is missing: pip install 'kbopt[agents]'") from None
        try:
            return self.client.messages.create(
                model=self.config.model, max_tokens=self.config.max_tokens, **kwargs
            )
        except anthropic.APIStatusError as exc:
            raise RunAborted(
                f"Anthropic API error {exc.status_code}: {_api_message(exc)}"
            ) from None
        except anthropic.APITimeoutError:
            cfg = self.config
            raise RunAborted(
                f"the Anthropic API did not answer (connect timeout {cfg.connect_timeout_s:g} s, "
                f"read timeout {cfg.read_timeout_s:g} s, {cfg.max_retries} retries); set "
                "KBOPT_AGENT_READ_TIMEOUT / KBOPT_AGENT_CONNECT_TIMEOUT to wait longer"
            ) from None
        except anthropic.APIConnectionError as exc:
            raise RunAborted(f"cannot reach the Anthropic API: {exc}") from None

    def _event(self, role: str, kind: str, text: str) -> None:
        self.transcript.append({"role": role, "event": kind, "text": text})


# contract kind -> (title that opens it, module, class with a `parse(text, path)`)
CONTRACTS: dict[str, tuple[str, str, str]] = {
    "profile": ("## Profile:", "kbopt.contracts.profile", "Profile"),
    "new_version": ("## New Version:", "kbopt.contracts.new_version", "NewVersion"),
    "applied": ("## Optimization Applied:", "kbopt.contracts.reports", "OptimizationApplied"),
    "summary": ("## Optimization Summary", "kbopt.contracts.reports", "OptimizationSummary"),
}


def contract_problems(kind: str, text: str) -> list[str]:
    """Why `text` is not a valid `kind` contract (empty when it is), via kbopt.contracts."""
    import importlib

    title, module, cls = CONTRACTS[kind]
    start = text.find(title)
    if start < 0:
        return [f"the answer has no `{title}` section"]
    parser = getattr(importlib.import_module(module), cls)
    try:
        parser.parse(text[start:], path="<answer>")
    except KbError as exc:
        return str(exc).splitlines()
    return []


def _contract_retry(kind: str, problems: list[str]) -> str:
    title = CONTRACTS[kind][0]
    listed = "\n".join(f"- {p}" for p in problems[:20])
    return (
        f"Your final answer does not follow the output contract `{title}`:\n{listed}\n"
        "Answer again with the contract exactly as specified in your instructions, filled in "
        "with what this conversation established."
    )


def _api_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(exc, "message", exc))


def _block_param(block: Any) -> dict[str, Any]:
    """A response content block as a request content block."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    data: dict[str, Any] = block.model_dump(mode="json", exclude_none=True)
    return data


# --------------------------------------------------------------------------- kickoff prompts


def user_mode_prompt(request: str, config: AgentConfig) -> str:
    try:
        r = route(request, sm=config.sm, existing_triton=config.existing_triton)
        routing = f"{' -> '.join(r.stages)} (rule {r.rule}: {r.reason})"
        if r.alternatives:
            routing += f"; also acceptable: {', '.join(r.alternatives)}"
    except RoutingError as exc:
        routing = f"undecided: {exc}"
    hardware = f"SM{config.sm}" if config.sm is not None else "not given"
    return "\n".join(
        [
            "Mode: user-specified optimization.",
            f"Request: {request}",
            f"Target hardware: {hardware}. Existing Triton kernel: "
            f"{'yes' if config.existing_triton else 'not stated'}.",
            f"Routing under the rules: {routing}.",
            "Analyse the request, check prerequisites, plan, delegate (back up files first), "
            "validate before/after, and report in the 'Optimization Applied' format.",
        ]
    )


def autopilot_prompt(analysis: Any, plan_text: str) -> str:
    """The orchestrator's autopilot task: the analysis and the plan built from it
    (`kbopt.agents.autoplan`: catalog entries, specialists, order, dependencies)."""
    return "\n".join(
        [
            "Mode: autopilot (goal-driven).",
            "Analysis received:",
            analysis.render().rstrip(),
            "",
            plan_text.rstrip(),
            "",
            "Follow the plan one optimization at a time, in its order: measure the baseline, "
            "back up, delegate the step's task, validate; revert_file on a regression (more "
            "than 5% slower or a correctness problem) and go on with the next. Report in the "
            "'Optimization Summary' format.",
        ]
    )


# --------------------------------------------------------------------------- client


def make_client(api_key: str | None = None, config: AgentConfig | None = None) -> Any:
    """An Anthropic client with connect and read timeouts (from `config`, by default the
    environment's); a missing key is one clear KbError, checked before any import."""
    key = api_key or os.environ.get(API_KEY_ENV)
    if not key:
        raise KbError(
            f"{API_KEY_ENV} is not set: export your Anthropic API key to run agents "
            "(`kbopt agent route` and `kbopt agent export-claude` work without one)"
        )
    try:
        import anthropic
    except ImportError:
        raise KbError("the anthropic package is missing: pip install 'kbopt[agents]'") from None
    cfg = config or AgentConfig.from_env()
    timeout = anthropic.Timeout(cfg.read_timeout_s, connect=cfg.connect_timeout_s)
    return anthropic.Anthropic(api_key=key, timeout=timeout, max_retries=cfg.max_retries)
