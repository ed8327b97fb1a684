"""Thin adapters over ``devlint.engine``: the command line and the flake8 plugin."""
