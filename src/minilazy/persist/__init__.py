"""The persistent compile cache: programs compiled by earlier processes, on disk."""
