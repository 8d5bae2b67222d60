"""GPU kernels that the optimization cycle works on (see docs/kernels/)."""
