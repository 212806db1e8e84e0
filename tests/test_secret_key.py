"""Where the key that signs session cookies and form tokens comes from: ``RULE130_SECRET_KEY``, or
the file ``secret_key`` beside the SQLite database — never the folder the command was started in,
nor the code's ``instance/`` when the database is elsewhere; without a SQLite file and without the
variable (PostgreSQL), ``rule130 serve`` refuses to start, saying what to set."""

from __future__ import annotations

import socket
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from webapp import create_app
from webapp.cli import main
from webapp.store import db

CODE_INSTANCE = Path(__file__).resolve().parents[1] / "instance"


def _state(path: Path) -> tuple[bool, bytes | None]:
    return (path.exists(), path.read_bytes() if path.exists() else None)


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """A migrated SQLite database in a folder of its own, and the command started in another folder."""
    monkeypatch.delenv("RULE130_SECRET_KEY", raising=False)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    folder = tmp_path / "data"
    folder.mkdir()
    url = f"sqlite:///{folder / 'rule130.db'}"
    db.upgrade(url)
    started_in = tmp_path / "started-here"
    started_in.mkdir()
    monkeypatch.chdir(started_in)
    return url, folder, started_in


def test_the_key_sits_beside_the_sqlite_database_readable_by_its_owner_only(elsewhere):
    url, folder, started_in = elsewhere
    code_key = _state(CODE_INSTANCE / "secret_key")
    app = create_app({"DATABASE_URL": url})
    app.extensions["rule130.engine"].dispose()
    key_file = folder / "secret_key"
    key = key_file.read_text()
    assert len(key) == 64 and int(key, 16) >= 0  # 32 random bytes, in hex
    assert app.secret_key == key
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert sorted(p.name for p in folder.iterdir() if "secret" in p.name) == ["secret_key"]  # no draft left
    assert list(started_in.iterdir()) == []  # nothing in the folder the command was started in
    assert _state(CODE_INSTANCE / "secret_key") == code_key  # nor in the code's instance/
    again = create_app({"DATABASE_URL": url})  # another process on the same database: the same key
    again.extensions["rule130.engine"].dispose()
    assert again.secret_key == key


def test_the_variable_wins_and_writes_no_file(elsewhere, monkeypatch):
    url, folder, _started_in = elsewhere
    monkeypatch.setenv("RULE130_SECRET_KEY", "from-the-environment")
    app = create_app({"DATABASE_URL": url})
    app.extensions["rule130.engine"].dispose()
    assert app.secret_key == "from-the-environment"
    assert not (folder / "secret_key").exists()


def test_an_empty_key_file_is_refused_naming_it(elsewhere):
    url, folder, _started_in = elsewhere
    from webapp.app import SecretKeyMissing

    (folder / "secret_key").write_text("\n")
    with pytest.raises(SecretKeyMissing, match=f"the secret key file {folder / 'secret_key'} is empty"):
        create_app({"DATABASE_URL": url})


def test_serve_on_postgresql_without_a_key_refuses_to_start_saying_what_to_set(elsewhere):
    _url, _folder, started_in = elsewhere
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = CliRunner().invoke(main, ["serve", "--port", str(port), "--no-worker",
                                       "--database", "postgresql://rule130@db.example:5432/rule130"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("cannot serve: no secret key: set RULE130_SECRET_KEY to the same random text "
                                    "in every web process")
    assert list(started_in.iterdir()) == []
