"""The project a file belongs to, and the files a run visits: ``finder`` finds a file's
project root and the project file an import names, ``index`` keeps the project's modules
as their importers see them (``mentions``: which names its code mentions), and ``files``
walks the paths a run is given, leaving out what ``exclusions`` and ``gitignore`` say.
Reading a file never needs the project: ``devlint.inputs`` imports nothing from here."""
