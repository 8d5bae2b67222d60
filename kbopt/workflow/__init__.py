"""The optimization cycle and its safety net.

- `kbopt.workflow.cycle`: the ANALYZE -> ... -> LEARN state machine, `start` / `resume`;
- `kbopt.workflow.record`: the persisted run record (`runs/<run-id>/record.json`);
- `kbopt.workflow.safe`: backup / byte-identical restore;
- `kbopt.workflow.designers`: the pluggable DESIGN step (scripted, human, registered agents);
- `kbopt.workflow.profiler`: PROFILE / VERIFY measurements as Profile contracts;
- `kbopt.workflow.learn`: LEARN through the store.
"""
