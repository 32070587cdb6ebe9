"""From an agent: the console as an MCP server (000's start_training and the read side an agent needs), served by
the web process at /mcp and reached from a local agent through `verity mcp` (stdio)."""

from app.agent.server import agent_endpoint, agent_lifespan, agent_server
from app.agent.tools import ConsoleTools

__all__ = ["ConsoleTools", "agent_endpoint", "agent_lifespan", "agent_server"]
