"""Analyses over the results store (no model needed)."""
