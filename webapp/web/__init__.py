"""Web blueprints: server-rendered pages (work without JavaScript) and the JSON API."""

from __future__ import annotations

from flask import Flask


def register(app: Flask) -> None:
    from . import hardening
    hardening.install_converters(app)  # before any rule is added: the path parts they refuse
    from . import (
        admin_versions,
        api,
        auth,
        diagrams,
        errors,
        modeler,  # adds POST /api/v1/process-versions to the API blueprint before it is registered
        notify,
        officer,
        officer_cases,  # noqa: F401 (adds the case pages to the officers' blueprint before it is registered)
        ops,
        public,
    )
    app.register_blueprint(auth.bp)
    app.register_blueprint(officer.bp)  # with the case pages of officer_cases
    app.register_blueprint(public.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(diagrams.bp)
    app.register_blueprint(ops.bp)
    from . import openapi, security
    app.register_blueprint(openapi.bp)
    app.register_blueprint(security.bp)
    app.register_blueprint(notify.bp)
    from . import monitor
    app.register_blueprint(monitor.bp)
    from . import incidents
    app.register_blueprint(incidents.bp)
    app.register_blueprint(modeler.bp)
    app.register_blueprint(admin_versions.bp)
    app.register_blueprint(admin_versions.api_bp)
    from . import admin_tariffs
    app.register_blueprint(admin_tariffs.bp)
    app.register_blueprint(admin_tariffs.api_bp)
    errors.register(app)
    from . import language
    app.register_blueprint(language.bp)
    from . import registers
    app.register_blueprint(registers.bp)
    from . import documents
    app.register_blueprint(documents.bp)
    from . import account
    app.register_blueprint(account.bp)
    from . import training
    training.init_app(app)
