"""Schemathesis against the OpenAPI description (/api/v1/openapi.json) with a secretary's token:
no request generated from the description gets a 500, a status the description does not list,
or a body that breaks its schema. Bounded (max examples per operation) so it runs in minutes; the
number of requests sent is printed."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from webapp.services.people import users

from .driver import TWO_COWS, Driver

MAX_EXAMPLES = 30
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def test_schemathesis_finds_no_500_and_no_response_breaking_its_schema(app, sessions, officers, virtual_clock):
    Driver(sessions, officers, virtual_clock).start(TWO_COWS)  # a case in scope for the ids tried
    with sessions() as session:
        token = users.create_token(session, "sec")
        session.commit()
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)
    headers = {"Authorization": f"Bearer {token}"}
    sent: dict[str, int] = {}
    def fuzz(operation) -> None:
        @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def check(case):
            sent[operation.label] = sent.get(operation.label, 0) + 1
            case.call_and_validate(headers=headers, checks=CHECKS)

        check()

    for result in schema.get_all_operations():
        fuzz(result.ok())
    total = sum(sent.values())
    print(f"schemathesis: {total} generated requests over {len(sent)} operations "
          f"(at most {MAX_EXAMPLES} examples each)")
    documented = len(list(schema.get_all_operations()))  # every operation of the OpenAPI document was tried
    # every operation schemathesis reads off the document was tried (the document against Flask's
    # routes: tests/test_openapi_tokens.py)
    assert documented > 30 and len(sent) == documented and total >= documented * 5
