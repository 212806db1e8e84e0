"""Signing in and staying signed in: sign-in and out (auth), how long a session lasts
(sessions), limits on failed sign-ins (signin_limits), the officer's own password (account) and
the security headers (hardening)."""
