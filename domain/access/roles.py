"""What each role may do, and the words that refuse the others: the one table that the domain's commands, the
console's guard, its handlers and its templates all ask ("may this identity do X?").

Owners manage the organization (members, plan, tokens, providers, storage); members and owners make and change
the organization's work (runs, datasets, metrics, evaluations, loops, experiments); viewers read everything.

>>> may("member", LAUNCH), may("viewer", CHANGE), may("member", MANAGE), may("owner", MANAGE)
(True, False, False, True)
>>> refusal("owner", MERGE) is None, refusal("viewer", MERGE)
(True, 'Merging a model needs the member or owner role.')
"""

from __future__ import annotations

CHANGE = "change"  # make or change the organization's work: save, edit, cancel, duplicate, upload, register, stop
LAUNCH = "launch"  # launch or retry a run, start a loop or an experiment
MERGE = "merge"  # Merge model
MANAGE = "manage"  # Settings: members and roles, Plan and billing, API tokens, providers, storage

VIEWERS_READ_ONLY = (
    "Viewers can read everything but change nothing. Ask an owner of your organization to make you a member."
)
ROLE_NEEDED = (
    "Launching a run needs the member or owner role, and you are a viewer. Ask an owner of your "
    "organization to change your role."
)
MERGE_ROLE_NEEDED = "Merging a model needs the member or owner role."
OWNERS_ONLY = "Only an owner of the organization can do this. Ask an owner to do it, or to make you an owner."

ROLES_THAT_MAY: dict[str, frozenset[str]] = {
    CHANGE: frozenset({"owner", "member"}),
    LAUNCH: frozenset({"owner", "member"}),
    MERGE: frozenset({"owner", "member"}),
    MANAGE: frozenset({"owner"}),
}
REFUSALS = {CHANGE: VIEWERS_READ_ONLY, LAUNCH: ROLE_NEEDED, MERGE: MERGE_ROLE_NEEDED, MANAGE: OWNERS_ONLY}


def may(role: str, action: str) -> bool:
    """Whether `role` may do `action`; an action nobody declared is refused to everyone."""
    return role in ROLES_THAT_MAY.get(action, frozenset())


def refusal(role: str, action: str) -> str | None:
    """None when `role` may do `action`, else the words that say why not and whom to ask."""
    return None if may(role, action) else REFUSALS.get(action, OWNERS_ONLY)
