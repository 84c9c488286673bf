"""The only package that imports the kubernetes client (imported lazily, inside functions)."""
