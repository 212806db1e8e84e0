"""rule130: Rule 130 of the Rajasthan Panchayati Raj Rules, 1996, as a BPMN workflow.

Layers (one direction): web / api / cli / timer worker -> services -> engine -> store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """See :func:`webapp.app.create_app`."""
    from webapp.app import create_app as _create_app
    return _create_app(test_config)
