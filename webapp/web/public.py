"""(stub: to be written)"""

from flask import Blueprint

bp = Blueprint("public", __name__)
