-- Who may do what (issue 8): an organization's members with their roles, and its API tokens (never the secret:
-- the token's SHA-256 stays in the event store, which the sign-in checks read directly).
CREATE TABLE memberships (
    org_id TEXT NOT NULL, account_id TEXT NOT NULL, email TEXT NOT NULL, role TEXT NOT NULL, added_at TEXT NOT NULL,
    PRIMARY KEY (org_id, account_id)
);
CREATE INDEX memberships_by_account ON memberships (account_id);

CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, name TEXT NOT NULL, role TEXT NOT NULL, issued_by TEXT NOT NULL,
    issued_at TEXT NOT NULL, revoked_at TEXT, revoked_by TEXT
);
CREATE INDEX api_tokens_by_org ON api_tokens (org_id, issued_at);
