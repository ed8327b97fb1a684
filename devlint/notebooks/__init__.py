"""Jupyter notebooks: their code cells linted, fixed and run as one program.

``reading`` finds the cells in a notebook's JSON (and where each source line
sits in the file), ``magics`` turns IPython syntax into inert Python of the
same shape, ``program`` joins the code cells and maps lines back to cells,
``linting`` and ``fixing`` are the engine and ``--fix`` for a notebook, and
``writing`` puts edited cell sources back, leaving every other byte alone.
"""
