"""The engine: the Session every effect goes through, its journal, and a session's result."""
