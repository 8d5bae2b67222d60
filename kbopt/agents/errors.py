"""Errors of the agents' tools."""

from __future__ import annotations

from kbopt.errors import KbError


class ToolError(Exception):
    """A failure the model should see and can act on (returned with is_error=true)."""


class RunAborted(KbError):
    """A failure that ends the whole run (the API is unreachable): never fed to the model."""
