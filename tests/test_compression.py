"""PostgreSQL stores a case's engine state and case file, rewritten by every save, compressed with
lz4 (migration 0029_lz4_compression); the documents' HTML, written once, keeps pglz (it packs
tighter).

Real PostgreSQL (RULE130_TEST_POSTGRES), real services; nothing to check on SQLite.
"""

from __future__ import annotations

import pytest
from sqlalchemy import text

from .bench import bench

pytestmark = pytest.mark.usefixtures("virtual_clock")


def test_a_case_state_is_stored_with_lz4_and_its_documents_with_pglz(sessions, officers, virtual_clock):
    engine = sessions.kw["bind"]
    if engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's column compression")
    with sessions() as session:
        if not session.execute(text("SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' "
                                    "AND 'lz4' = ANY(enumvals)")).first():
            pytest.skip("this PostgreSQL server is built without lz4")
    case_id = bench.service_case(sessions, officers, virtual_clock)  # scenario s1, to its close
    with sessions() as session:
        size, method = session.execute(text(
            "SELECT octet_length(state_json), pg_column_compression(state_json) FROM case_instance WHERE id = :id"),
            {"id": case_id}).one()
        documents = session.execute(text(
            "SELECT count(*), count(*) FILTER (WHERE pg_column_compression(html) = 'pglz') FROM case_document "
            "WHERE case_id = :id AND octet_length(html) > 2048"), {"id": case_id}).one()
        declared = dict(session.execute(text(
            "SELECT attrelid::regclass::text || '.' || attname, attcompression FROM pg_attribute "
            "WHERE attrelid IN ('case_instance'::regclass, 'case_document'::regclass) "
            "AND attname IN ('state_json', 'file_json', 'html')")).all())
    assert size > 30_000 and method == "lz4"  # the state of a whole s1 case, some 40 KB
    assert documents[0] >= 6 and documents[1] == documents[0]  # 3 documents in 2 languages
    # "l": lz4; "": the server's default (pglz unless default_toast_compression says otherwise)
    assert declared == {"case_instance.state_json": "l", "case_instance.file_json": "l", "case_document.html": ""}
