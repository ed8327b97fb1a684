"""What rules are written with, over the core's facts: message text (``describe``, and
``message``: the places in other files a message names travel with its text), the
questions rules ask about wrappers (``wrapping``), what a scope loaded from a checkpoint
(``loaded_values``) and which file a save or load names (``checkpoint_paths``), and the
building blocks of fixes (``fixes``). It depends on the core only; the core is the
interpreter and its domain, and knows nothing of rules."""
