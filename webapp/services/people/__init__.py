"""People: officers' accounts, roles and scope (users), the password rule (passwords), and
loading a case within a user's scope (scope). Imports the store and the value types only."""
