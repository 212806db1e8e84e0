"""(stub: to be written)"""

from flask import Blueprint

bp = Blueprint("officer", __name__)
