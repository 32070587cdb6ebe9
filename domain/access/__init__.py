"""Who may do what: accounts that sign in, API tokens, an organization's storage and its training providers."""
