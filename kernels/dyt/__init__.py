"""dyt: a kernel measured and tuned with kbopt."""
