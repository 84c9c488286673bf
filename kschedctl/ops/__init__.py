"""Use cases, one module per command workflow: plain arguments in, a result dataclass out."""
