"""``python -m webapp.cli``: the ``rule130`` command line (:func:`webapp.cli.run`), for a checkout
run without installing it (``PYTHONPATH=. python -m webapp.cli …``)."""

from webapp.cli import run

run()
