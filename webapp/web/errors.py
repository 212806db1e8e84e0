"""(stub: to be written) Error pages."""


def register(app):
    pass
