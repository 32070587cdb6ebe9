"""The event feed: every event of the organization in store order, paged by position."""
