"""Web blueprints: server-rendered pages (work without JavaScript) and the JSON API."""

from __future__ import annotations

from flask import Flask


def register(app: Flask) -> None:
    from webapp.web.access import hardening
    hardening.install_converters(app)  # before any rule is added: the path parts they refuse
    from webapp.web import errors, ops
    from webapp.web.access import auth
    from webapp.web.admin import (
        modeler,  # adds POST /api/v1/process-versions to the API blueprint before it is registered
    )
    from webapp.web.admin import versions as admin_versions
    from webapp.web.api import paper_cases as api_paper_cases  # noqa: F401 (adds POST /api/v1/paper-cases)
    from webapp.web.api import routes as api
    from webapp.web.pages import (
        cases as officer_cases,  # noqa: F401 (adds the case pages to the officers' blueprint before it is registered)
    )
    from webapp.web.pages import (
        corrigenda as officer_corrigenda,  # noqa: F401 (adds the corrigendum pages to the officers' blueprint)
    )
    from webapp.web.pages import (
        diagrams,
        notify,
        officer,
        paper_cases,  # noqa: F401 (adds the paper-case pages to the officers' blueprint before it is registered)
        public,
    )
    app.register_blueprint(auth.bp)
    app.register_blueprint(officer.bp)  # with the case pages of officer_cases
    app.register_blueprint(public.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(diagrams.bp)
    app.register_blueprint(ops.bp)
    from webapp.web.admin import security
    from webapp.web.api import openapi
    app.register_blueprint(openapi.bp)
    app.register_blueprint(security.bp)
    app.register_blueprint(notify.bp)
    from webapp.web.admin import monitor
    app.register_blueprint(monitor.bp)
    from webapp.web.admin import incidents
    app.register_blueprint(incidents.bp)
    app.register_blueprint(modeler.bp)
    app.register_blueprint(admin_versions.bp)
    app.register_blueprint(admin_versions.api_bp)
    from webapp.web.admin import tariffs as admin_tariffs
    app.register_blueprint(admin_tariffs.bp)
    app.register_blueprint(admin_tariffs.api_bp)
    from webapp.web.admin import officers as admin_officers
    admin_officers.init_app(app)
    errors.register(app)
    from webapp.web import language
    app.register_blueprint(language.bp)
    from webapp.web.pages import registers
    app.register_blueprint(registers.bp)
    from webapp.web.pages import oversight
    app.register_blueprint(oversight.bp)
    from webapp.web.pages import documents
    app.register_blueprint(documents.bp)
    from webapp.web.access import account
    app.register_blueprint(account.bp)
    from webapp.web.pages import training
    training.init_app(app)
