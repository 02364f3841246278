"""Experiments of the paper and beyond, each a function returning plain results (used by the CLI and examples)."""
