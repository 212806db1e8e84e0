"""The OpenAPI 3 description of ``/api/v1``, served at ``/api/v1/openapi.json`` (no token needed).

The description is written by hand in ``openapi.yaml`` beside this module (YAML anchors share
the common responses). :func:`undocumented` compares it with the routes Flask really has, so a
test fails when an endpoint is added, renamed or removed on one side only.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from flask import Blueprint, Flask, jsonify

SPEC_FILE = Path(__file__).with_name("openapi.yaml")
API_PREFIX = "/api/v1"
IGNORED_METHODS = {"HEAD", "OPTIONS"}

bp = Blueprint("openapi", __name__)


@lru_cache(maxsize=1)
def description() -> dict[str, Any]:
    """The OpenAPI document as a dict (parsed once from ``openapi.yaml``)."""
    document: dict[str, Any] = yaml.safe_load(SPEC_FILE.read_text(encoding="utf-8"))
    return document


@bp.get(f"{API_PREFIX}/openapi.json")
def openapi_json() -> Any:
    """The OpenAPI 3 description of the JSON API."""
    return jsonify(description())


def openapi_path(rule: str) -> str:
    """A Flask rule as an OpenAPI path: ``/cases/<path:case_ref>`` -> ``/cases/{case_ref}``."""
    return re.sub(r"<(?:[a-zA-Z_]+(?:\([^)]*\))?:)?([a-zA-Z_][a-zA-Z0-9_]*)>", r"{\1}", rule)


def route_operations(app: Flask) -> set[tuple[str, str]]:
    """``(METHOD, openapi path)`` of every route Flask serves under ``/api/v1``."""
    found = set()
    for rule in app.url_map.iter_rules():
        if rule.rule == API_PREFIX or rule.rule.startswith(API_PREFIX + "/"):
            for method in rule.methods or ():
                if method not in IGNORED_METHODS:
                    found.add((method, openapi_path(rule.rule)))
    return found


def documented_operations() -> set[tuple[str, str]]:
    """``(METHOD, path)`` of every operation in the description."""
    methods = {"get", "put", "post", "delete", "patch"}
    return {(method.upper(), path) for path, item in description()["paths"].items()
            for method in item if method in methods}


def undocumented(app: Flask) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """``(served but not described, described but not served)``; both empty when in step."""
    served, described = route_operations(app), documented_operations()
    return served - described, described - served
