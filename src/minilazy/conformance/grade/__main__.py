"""``python -m minilazy.conformance.grade``: the course's grader (see the package)."""

from minilazy.conformance.grade import main

raise SystemExit(main())
