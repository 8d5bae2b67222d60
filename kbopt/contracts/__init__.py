"""The agents' contracts and reports, typed: each module renders and parses one shape.

Import the submodule you need (`kbopt.contracts.profile`, ...); this package keeps no
re-exports so that modules written in parallel never collide here.
"""
