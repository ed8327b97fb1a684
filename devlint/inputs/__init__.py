"""What a lint reads, and what is kept of it between runs: ``reading`` a file's bytes
(regular files only, within ``limits``), ``decoding`` them to text, ``parsing`` the text
with LibCST (``limits``: what it parses in bounded time and memory; ``parse_failures``:
what to say when it refuses a file); the ``result_cache`` of each file's diagnostics and
the ``tree_cache`` of parsed project modules, both signed (``cache_signing``) with a secret
of the user's own."""
