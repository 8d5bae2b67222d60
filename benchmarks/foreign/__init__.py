"""Foreign kernels: specs that wrap kernels nobody on this project wrote (see README.md)."""
