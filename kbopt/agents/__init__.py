"""Agents on the Anthropic API, and their Claude Code twins.

- `roles`: the one source of truth for the eight roles and the skills (prompts, tools,
  output contracts); both the Python agents and `.claude/` are generated from it.
- `routing`: which specialist gets a task (delegation and routing rules) as code.
- `tools`: the tools the agents call, bound to the kbopt library.
- `remote`: the Remote Execution Context (ssh + srun, one allocation for everyone).
- `runner`: the orchestrator's loop with LLM delegations (needs `anthropic`).
- `claude_export`: writes and checks `.claude/agents/*.md` and `.claude/skills/*/SKILL.md`.

Nothing here imports `anthropic` at import time: only `runner.make_client` does.
"""
