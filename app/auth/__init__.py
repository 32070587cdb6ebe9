"""Sign-in, sessions, API tokens, CSRF, security headers and the owner's settings pages."""
