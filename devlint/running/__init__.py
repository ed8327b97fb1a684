"""Running a lint: the ``engine`` lints one file (``noqa``: the comments it honours;
``gc_thresholds``: the collector's thresholds while it does), ``workers`` lint many in a
process pool (``memory``: freed memory handed back between batches), ``fix`` applies fixes
(``fix_count``: what ``--fix`` would apply; ``safe_write``: how a fixed file is written) and
``add_noqa`` silences findings with comments. Only the front ends and notebooks import
it; it holds no imports of its own here, so importing one module loads only what it needs."""
