"""The oracle's tools: the report, reproducers, crash and hang isolation, expected failures."""
