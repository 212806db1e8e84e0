"""(stub: to be written)"""

from flask import Blueprint

bp = Blueprint("auth", __name__)


class LoginUser:
    """Flask-Login's view of a user."""

    def __init__(self, user):
        self.user = user
        self.id = user.id
        self.is_authenticated = True
        self.is_active = user.active
        self.is_anonymous = False

    def get_id(self):
        return str(self.id)
