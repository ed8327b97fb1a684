"""Thin adapters over ``devlint.running.engine``: the command line (``cli``, with ``text_output``
and ``sarif``), the flake8 plugin and the language server (``lsp``)."""
